extension Store {
    /// How much dispatches and sends have waited for this store's pipeline so far.
    ///
    /// A dispatch *waits* when another thread is running the work of an action on this store: a ``dispatch(_:)``
    /// blocks its thread, a ``send(_:)`` suspends its task. Read it to learn whether a store is a point of contention
    /// in a service (several request handlers dispatching into one store, say).
    ///
    /// Counted only off the fast path: an uncontended dispatch updates nothing, so the figures cost nothing until
    /// threads meet. The figures only grow; subtract two readings to see an interval.
    public var statistics: StoreStatistics {
        core.lock.withLock {
            var statistics = core.pipelineStorage.statistics
            // The actions that the pipeline's owner queued without the lock (`StoreCore.ownerQueue`); the machine
            // was idle then, so the owner's queue was the whole line.
            statistics.queuedActions += core.ownerQueueCounts.queued
            statistics.deepestQueue = max(statistics.deepestQueue, core.ownerQueueCounts.deepest)
            return statistics
        }
    }
}

/// How much the dispatches of a store have waited for its pipeline; see ``Store/statistics``.
public struct StoreStatistics: Sendable, Hashable {
    /// The dispatches and sends that found another thread running the store's work and waited for it.
    public var waits = 0
    /// Of ``waits``, those that blocked their thread: dispatches (a send suspends its task instead). In async code,
    /// each one held a thread of the cooperative pool; see <doc:DispatchContract#Send-and-dispatch>.
    public var blockedWaits = 0
    /// The time that those dispatches and sends waited, in total.
    public var totalWait = Duration.zero
    /// The longest time that one dispatch or send waited.
    public var longestWait = Duration.zero
    /// The actions that were queued instead of run at once: dispatched from inside the store's own work (rule 2),
    /// or handed over by a thread that was dispatching on another store.
    public var queuedActions = 0
    /// The most actions waiting at one time: queued for the thread that runs the store's work, plus the dispatches
    /// and sends waiting for it.
    public var deepestQueue = 0
    /// The dispatches and sends refused because ``Store/shutdown(timeout:)`` had begun.
    public var refusedDispatches = 0

    /// Statistics of a store that nobody has dispatched to yet.
    public init() {}
}
