public import Logging
import ServiceLifecycle
public import Sluice
public import SluiceJournal
import SluiceLifecycle

/// The orders in a Sluice `Store`, optionally journaled.
///
/// `POST /orders` sends `.place` with `send(_:reading:)`: the task suspends (instead of blocking a thread) while
/// another request's action runs, and gets the order as the reducer left it right after its own action. With a
/// journal it sends with `send(_:durableIn:reading:)`, which returns that reading only once the action is on stable
/// storage: nothing is acknowledged that a crash could lose.
public final class SluiceBackend: OrderBackend {
    /// `sluice`.
    public let name = "sluice"
    /// The store.
    public let store: Store<ShopState, ShopAction>
    /// The journal, when the service keeps one (`--data-dir`).
    public let journal: Journal?
    private let logger: Logger
    private let shutdownTimeout: Duration

    /// A store without a journal.
    ///
    /// - Parameters:
    ///   - initialState: The state to start from.
    ///   - middleware: Middleware in front of the side effects (logging).
    ///   - instrumentation: The store's per-action measurements (metrics).
    ///   - logger: Where the service reports its start and shutdown.
    ///   - shutdownTimeout: How long shutdown waits for running effects.
    public init(
        initialState: ShopState = ShopState(),
        middleware: [Middleware<ShopState, ShopAction>] = [],
        instrumentation: StoreInstrumentation<ShopAction>? = nil,
        logger: Logger,
        shutdownTimeout: Duration = .seconds(10)
    ) {
        store = Store(
            initialState: initialState,
            reducer: shopReducer,
            middleware: middleware + shopSideEffects,
            instrumentation: instrumentation
        )
        journal = nil
        self.logger = logger
        self.shutdownTimeout = shutdownTimeout
    }

    /// A store recovered from the journal in `directory` (a new one starts from `initialState`), which records
    /// every later action with `durability`.
    ///
    /// - Throws: A `JournalError` when the directory is locked by another process or the journal is damaged.
    public init(
        recoveringFrom directory: String,
        durability: JournalDurability,
        initialState: ShopState = ShopState(),
        middleware: [Middleware<ShopState, ShopAction>] = [],
        instrumentation: StoreInstrumentation<ShopAction>? = nil,
        logger: Logger,
        shutdownTimeout: Duration = .seconds(10)
    ) throws(JournalError) {
        let journal = try Journal(
            directory: directory,
            onError: { [logger] error in logger.error("journal stopped", metadata: ["error": "\(error)"]) }
        )
        store = try Store(
            recoveringFrom: journal,
            durability: durability,
            initialState: initialState,
            reducer: shopReducer,
            middleware: middleware + shopSideEffects,
            instrumentation: instrumentation
        )
        self.journal = journal
        self.logger = logger
        self.shutdownTimeout = shutdownTimeout
        if let recovery = journal.recovery {
            logger.info(
                "recovered",
                metadata: [
                    "journal.directory": "\(directory)",
                    "journal.snapshot": "\(recovery.snapshotSequence)",
                    "journal.replayed": "\(recovery.replayedActions)",
                    "journal.last": "\(recovery.lastSequence)",
                ]
            )
        }
    }

    public func place(_ request: PlaceOrder) async throws(BackendError) -> Order {
        guard let journal else {
            guard let order = await store.send(.place(request), reading: { $0.orders.byID[$0.orders.lastID] }) ?? nil
            else { throw .shuttingDown }
            return order
        }
        let placed: Order?
        do {
            placed = try await store.send(.place(request), durableIn: journal) { $0.orders.byID[$0.orders.lastID] }
        } catch .refused {
            throw .shuttingDown
        } catch {
            throw .journalFailed("\(error)")
        }
        guard let order = placed else { throw .shuttingDown }
        return order
    }

    public func order(id: Int) -> Order? {
        store.read { $0.orders.byID[id] }
    }

    public func stats() -> ServiceStats {
        var stats = store.read { ServiceStats(backend: name, state: $0) }
        let figures = store.statistics
        stats.store = .init(
            waits: figures.waits,
            blockedWaits: figures.blockedWaits,
            totalWaitMicroseconds: figures.totalWait.microseconds,
            longestWaitMicroseconds: figures.longestWait.microseconds,
            queuedActions: figures.queuedActions,
            deepestQueue: figures.deepestQueue,
            refusedDispatches: figures.refusedDispatches
        )
        if let journal {
            stats.journal = .init(lastSequence: journal.lastSequence, durableThrough: journal.durableThrough)
        }
        return stats
    }

    /// Runs the journal's writer until graceful shutdown; then shuts the store down (it refuses new actions and
    /// finishes its work), writes a final snapshot, lets the writer flush, and closes the journal.
    ///
    /// The HTTP server is a later service of the same group, so it stops first: the requests in flight get their
    /// answers (their actions made durable by the writer, still running) before the store refuses anything.
    public func run() async throws {
        // SluiceLifecycle's `StoreService` does exactly that, and reports it through the logger.
        let service =
            if let journal {
                StoreService(
                    store: store,
                    journal: journal,
                    label: "shop",
                    shutdownTimeout: shutdownTimeout,
                    logger: logger
                )
            } else {
                StoreService(store: store, label: "shop", shutdownTimeout: shutdownTimeout, logger: logger)
            }
        try await service.run()
    }
}

extension Duration {
    var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
