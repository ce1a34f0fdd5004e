import SluiceDemoKit
import SluiceReplay

// The demo's journal inspector: `sluice-demo-replay DIR --find "stock never negative"`, on a `--data-dir` of
// `sluice-demo`. A service builds its own the same way, with its state, reducer and invariants.
SluiceReplay.main(
    initialState: ServiceState(stock: demoCatalogue),
    reducer: serviceReducer,
    invariants: demoInvariants.map { ReplayInvariant($0.name, holds: $0.holds) }
)
