public import ServiceLifecycle

/// Where the routes take their orders: a Sluice store (``SluiceBackend``) or a `Mutex`-guarded struct
/// (``MutexBackend``), with the same reducer and the same follow-ups.
///
/// A backend is a `Service`: `run()` runs it until graceful shutdown, then shuts it down.
public protocol OrderBackend: Service {
    /// `sluice` or `mutex`.
    var name: String { get }
    /// Places an order and returns it as the reducer left it, right after this order (before any later action).
    ///
    /// With a journal, returns only once the order is on stable storage.
    func place(_ request: PlaceOrder) async throws(BackendError) -> Order
    /// The order with this id, if there is one.
    func order(id: Int) -> Order?
    /// The figures of `GET /stats`.
    func stats() -> ServiceStats
}

/// Why a backend could not take an order.
public enum BackendError: Error, Sendable {
    /// The service is shutting down and takes no more orders.
    case shuttingDown
    /// The journal stopped; the order was not acknowledged.
    case journalFailed(String)
}

/// The figures of `GET /stats`.
public struct ServiceStats: Codable, Sendable, Equatable {
    /// `sluice` or `mutex`.
    public var backend: String
    /// Orders placed (accepted and rejected).
    public var orders: Int
    /// Orders accepted.
    public var accepted: Int
    /// Orders rejected.
    public var rejected: Int
    /// Orders fulfilled.
    public var fulfilled: Int
    /// Units in stock by product.
    public var stock: [String: Int]
    /// Units received by restocks.
    public var restockedUnits: Int
    /// The store's contention figures (Sluice backend only).
    public var store: StoreFigures?
    /// The journal's sequence numbers (when one is configured).
    public var journal: JournalFigures?

    init(backend: String, state: borrowing ShopState) {
        self.backend = backend
        orders = state.orders.lastID
        accepted = state.orders.accepted
        rejected = state.orders.rejected
        fulfilled = state.orders.fulfilled
        stock = state.inventory.stock
        restockedUnits = state.inventory.restockedUnits
    }

    /// `Store.statistics`, with durations in microseconds.
    public struct StoreFigures: Codable, Sendable, Equatable {
        /// Dispatches and sends that waited for another thread's work.
        public var waits: Int
        /// Of those, dispatches that blocked their thread.
        public var blockedWaits: Int
        /// Total time waited.
        public var totalWaitMicroseconds: Int64
        /// Longest single wait.
        public var longestWaitMicroseconds: Int64
        /// Actions queued instead of run at once.
        public var queuedActions: Int
        /// Most actions waiting at once.
        public var deepestQueue: Int
        /// Dispatches refused during shutdown.
        public var refusedDispatches: Int
    }

    /// Where the journal is.
    public struct JournalFigures: Codable, Sendable, Equatable {
        /// The last recorded action's sequence number.
        public var lastSequence: UInt64
        /// Everything up to this sequence number is on stable storage.
        public var durableThrough: UInt64
    }
}
