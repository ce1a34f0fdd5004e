// Not a test: the cost per dispatch of each bridge, against the same store without it. Run in release mode:
//
//   swift run -c release SluiceServerBench
//
// Each line is the median of 7 rounds of 200,000 dispatches on one thread, in nanoseconds per dispatch, after a
// warm-up; "+" is the difference from the store without the bridge.

import CoreMetrics
import InMemoryTracing
import Logging
import Sluice
import SluiceLogging
import SluiceMetrics
import SluiceTracing
import Tracing

enum BenchAction: Sendable {
    case add(Int)
    case reset
}

let benchReducer = Reducer<Int, BenchAction>(mutating: { state, action in
    switch action {
    case .add(let amount): state &+= amount
    case .reset: state = 0
    }
})

let fastCaseName: @Sendable (BenchAction) -> String = { action in
    switch action {
    case .add: "add"
    case .reset: "reset"
    }
}

let rounds = 7
let dispatchesPerRound = 200_000

/// The median nanoseconds per dispatch of `store`; `between` runs after each round, not timed.
func measure(_ store: Store<Int, BenchAction>, between: () -> Void = {}) -> Double {
    for index in 0..<20_000 { store.dispatch(index & 63 == 0 ? .reset : .add(index)) }
    between()
    var perDispatch: [Double] = []
    let clock = ContinuousClock()
    for _ in 0..<rounds {
        let elapsed = clock.measure {
            for index in 0..<dispatchesPerRound { store.dispatch(index & 63 == 0 ? .reset : .add(index)) }
        }
        let (seconds, attoseconds) = elapsed.components
        let nanoseconds = Double(seconds) * 1e9 + Double(attoseconds) / 1e9
        perDispatch.append(nanoseconds / Double(dispatchesPerRound))
        between()
    }
    return perDispatch.sorted()[rounds / 2]
}

func makeStore(
    middleware: [Middleware<Int, BenchAction>] = [],
    instrumentation: StoreInstrumentation<BenchAction>? = nil
) -> Store<Int, BenchAction> {
    Store(initialState: 0, reducer: benchReducer, middleware: middleware, instrumentation: instrumentation)
}

func report(_ name: String, _ value: Double, baseline: Double?) {
    let padded = name + String(repeating: " ", count: max(1, 58 - name.count))
    let delta = baseline.map { " (+" + format($0 < value ? value - $0 : 0) + ")" } ?? ""
    print(padded + format(value) + " ns" + delta)
}

func format(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

/// A swift-log handler that drops every entry but lets every level through: the cost of making the entry.
struct DroppingLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {}
}

let baseline = measure(makeStore())
report("store without a bridge", baseline, baseline: nil)
let passThrough = Middleware<Int, BenchAction> { _ in { next in { action in next(action) } } }
report(
    "store with one pass-through middleware (no bridge)",
    measure(makeStore(middleware: [passThrough])),
    baseline: baseline
)

var disabled = Logger(label: "bench") { _ in DroppingLogHandler() }
disabled.logLevel = .warning
report(
    "SluiceLogging, level disabled (debug < warning)",
    measure(makeStore(middleware: [Middlewares.logging(to: disabled, level: .debug)])),
    baseline: baseline
)
let enabled = Logger(label: "bench") { _ in DroppingLogHandler() }
report(
    "SluiceLogging, enabled, a handler that drops entries",
    measure(makeStore(middleware: [Middlewares.logging(to: enabled, level: .debug)])),
    baseline: baseline
)

report(
    "StoreInstrumentation calling an empty closure (no bridge)",
    measure(makeStore(instrumentation: StoreInstrumentation { _ in })),
    baseline: baseline
)
let noop = NOOPMetricsHandler.instance
report(
    "SluiceMetrics, no-op factory, case names by reflection",
    measure(makeStore(instrumentation: .metrics(actionCases: ["add", "reset"], factory: noop))),
    baseline: baseline
)
report(
    "SluiceMetrics, no-op factory, caseName: switch",
    measure(
        makeStore(instrumentation: .metrics(actionCases: ["add", "reset"], caseName: fastCaseName, factory: noop))
    ),
    baseline: baseline
)

report(
    "SluiceTracing, NoOpTracer (not bootstrapped)",
    measure(makeStore(middleware: [Middlewares.tracing(store: "bench")])),
    baseline: baseline
)
let tracer = InMemoryTracer()
report(
    "SluiceTracing, InMemoryTracer, caseName: switch",
    measure(
        makeStore(middleware: [Middlewares.tracing(store: "bench", tracer: tracer, caseName: fastCaseName)]),
        between: { tracer.clearFinishedSpans() }
    ),
    baseline: baseline
)
