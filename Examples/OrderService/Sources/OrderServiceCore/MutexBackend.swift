import Dispatch
public import Logging
import ServiceLifecycle
import Sluice
public import SluiceMetrics
import Synchronization

/// The same reducer and follow-ups on a `Mutex`-guarded `ShopState`: the floor that ``SluiceBackend`` is compared
/// with (`--backend mutex`).
///
/// Each order runs, under the lock: the reducer, then its follow-ups (fulfilment, restock), each reduced in turn,
/// with the same per-action metrics as the Sluice backend's middleware. No journal.
public final class MutexBackend: OrderBackend {
    /// `mutex`.
    public let name = "mutex"
    private let state: Mutex<ShopState>
    private let metrics: StoreMetrics?
    private let logger: Logger

    /// A backend starting from `initialState`.
    ///
    /// - Parameters:
    ///   - initialState: The state to start from.
    ///   - metrics: Where to count actions, as the Sluice backend's instrumentation hook does.
    ///   - logger: Where actions are logged at `.debug`, and the shutdown at `.info`.
    public init(initialState: ShopState = ShopState(), metrics: StoreMetrics?, logger: Logger) {
        state = Mutex(initialState)
        self.metrics = metrics
        self.logger = logger
    }

    public func place(_ request: PlaceOrder) async throws(BackendError) -> Order {
        state.withLock { state in
            let action = ShopAction.place(request)
            reduce(&state, action)
            // The reading, before the follow-ups: what the Sluice backend answers.
            let order = state.orders.byID[state.orders.lastID]!
            if let next = fulfilment(after: action, in: state) { reduce(&state, next) }
            if let next = restock(after: action, in: state) { reduce(&state, next) }
            return order
        }
    }

    private func reduce(_ state: inout ShopState, _ action: ShopAction) {
        if logger.logLevel <= .debug {
            logger.debug("\(action)", metadata: ["sluice.store": "shop"])
        }
        guard let metrics else {
            shopReducer.reduce(into: &state, action)
            return
        }
        let start = DispatchTime.now().uptimeNanoseconds
        shopReducer.reduce(into: &state, action)
        metrics.record(
            caseName: action.caseName,
            durationNanoseconds: Int64(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds &- start)
        )
    }

    public func order(id: Int) -> Order? {
        state.withLock { $0.orders.byID[id] }
    }

    public func stats() -> ServiceStats {
        state.withLock { ServiceStats(backend: name, state: $0) }
    }

    /// Nothing to run: waits for graceful shutdown.
    public func run() async throws {
        try? await gracefulShutdown()
        logger.info("mutex backend stopped")
    }
}
