public import Dispatch

/// Timers: work that runs at a time on the store's scheduler, cancelled by id. See <doc:DeadlinesAndTimers>.
extension MiddlewareAPI {
    /// Runs `work` on the store's scheduler once `delay` has passed, unless the timer is cancelled first.
    ///
    /// The store's scheduler is ``StoreDependencies/scheduler``: a `TestScheduler` in a test runs `work`
    /// synchronously inside the `advance` that reaches its time, as it runs the time-based modifiers.
    ///
    /// ```swift
    /// api.schedule(id: AuctionDeadline(auctionID), after: .minutes(5)) { api in
    ///     api.dispatch(.close(auctionID))
    /// }
    /// ```
    ///
    /// The timer is cancelled by ``cancel(id:)`` (and ``Store/cancel(id:)``) with its id, which it shares with
    /// effects: an effect and a timer with the same id are cancelled together, and `cancelInFlight` here, or on
    /// ``start(id:cancelInFlight:_:)``, replaces both. It is also cancelled when the run whose API scheduled it is
    /// (a `takeLatest` run superseded), when ``Store/shutdown(timeout:)`` begins (its dispatches would be refused:
    /// recompute the deadlines that must survive a restart from the recovered state, see <doc:DeadlinesAndTimers>),
    /// and when the store goes away. A timer does not keep the store alive, and shutdown does not wait for it.
    ///
    /// `work` runs on the scheduler's thread (its queue, or the test's thread inside `advance`), with the store's
    /// dependencies bound, and with this API: its dispatches are outer dispatches. Keep it short: start an effect
    /// from it (`api.start`) for work that awaits.
    ///
    /// - Parameters:
    ///   - id: Identifies the timer for cancellation. Several timers (and effects) may share an id.
    ///   - cancelInFlight: Whether to cancel the timers and effects with `id` first: `true` moves a deadline.
    ///   - delay: How long from now, in whole nanoseconds (a fraction of one rounds up). A delay of zero or less
    ///     runs `work` as soon as the scheduler gets to it (a deadline that passed while the service was down);
    ///     one of 2⁶⁴ ns or more never passes (the timer waits to be cancelled).
    ///   - work: What to do at that time.
    /// - Returns: Whether the timer was set: `false` if it was cancelled before it could be (its run was cancelled,
    ///   the store is gone, or its shutdown began).
    @discardableResult
    public func schedule(
        id: some Hashable & Sendable,
        cancelInFlight: Bool = false,
        after delay: Duration,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) -> Void
    ) -> Bool {
        let scheduler = core.dependencies.scheduler
        let nanoseconds = max(delay, .zero).nanoseconds(checking: "MiddlewareAPI.schedule(id:after:)")
        return schedule(
            id: id,
            cancelInFlight: cancelInFlight,
            at: scheduler.now.adding(nanoseconds),
            on: scheduler,
            work
        )
    }

    /// Runs `work` on the store's scheduler at `deadline`, a time of that scheduler (``EffectScheduler/now``),
    /// unless the timer is cancelled first; see ``schedule(id:cancelInFlight:after:_:)``.
    ///
    /// A deadline in the past runs `work` as soon as the scheduler gets to it.
    @discardableResult
    public func schedule(
        id: some Hashable & Sendable,
        cancelInFlight: Bool = false,
        at deadline: DispatchTime,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) -> Void
    ) -> Bool {
        schedule(id: id, cancelInFlight: cancelInFlight, at: deadline, on: core.dependencies.scheduler, work)
    }

    /// Sets a timer on `scheduler` at `deadline` (`nil`: never).
    func schedule(
        id: some Hashable & Sendable,
        cancelInFlight: Bool,
        at deadline: DispatchTime?,
        on scheduler: any EffectScheduler,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) -> Void
    ) -> Bool {
        let effectID = EffectID(base: id)
        if cancelInFlight {
            core.work.cancel(id: effectID)
        }
        let api = self
        return core.work.timers.schedule(
            id: effectID,
            at: deadline,
            on: scheduler,
            cancellation: Cancellation(parent: runCancellation)
        ) {
            guard !api.isCancelled else { return }
            api.runWithDependenciesBound { work(api) }
        }
    }
}

extension Store {
    /// Runs `work` on the store's scheduler once `delay` has passed, unless the timer is cancelled first; see
    /// ``MiddlewareAPI/schedule(id:cancelInFlight:after:_:)``.
    @discardableResult
    public func schedule(
        id: some Hashable & Sendable,
        cancelInFlight: Bool = false,
        after delay: Duration,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) -> Void
    ) -> Bool {
        MiddlewareAPI(core: core).schedule(id: id, cancelInFlight: cancelInFlight, after: delay, work)
    }

    /// Runs `work` on the store's scheduler at `deadline`, unless the timer is cancelled first; see
    /// ``MiddlewareAPI/schedule(id:cancelInFlight:at:_:)``.
    @discardableResult
    public func schedule(
        id: some Hashable & Sendable,
        cancelInFlight: Bool = false,
        at deadline: DispatchTime,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) -> Void
    ) -> Bool {
        MiddlewareAPI(core: core).schedule(id: id, cancelInFlight: cancelInFlight, at: deadline, work)
    }

    /// The number of timers set and neither run nor cancelled (for tests).
    package var pendingTimerCount: Int {
        core.work.timers.count
    }

    /// The number of pending timers with `id` (for tests).
    package func pendingTimerCount(id: some Hashable & Sendable) -> Int {
        core.work.timers.count(id: EffectID(base: id))
    }
}

/// The pending timers of a store, by id: what ``MiddlewareAPI/schedule(id:cancelInFlight:after:_:)`` set and what
/// cancels them.
///
/// A timer is a ``ScheduledWork`` on the scheduler and a ``Cancellation`` that follows the run that set it (the
/// store's lifetime, or a `takeLatest` run): cancelling it, by id, with its run, or when shutdown closes the
/// timers, cancels the scheduled work, which releases its closure at once. Exactly one of firing and cancelling
/// takes the timer out of the table, under the lock, so a cancelled timer's work never starts.
///
/// A timer is not an entry of the store's ledger of running work: a `send` does not wait for a timer that its
/// action set, and shutdown does not wait for one either (it cancels them all when it begins).
final class StoreTimers: Sendable {
    private struct Timer: Sendable {
        let id: EffectID
        let cancellation: Cancellation
        /// The scheduled work, once the scheduler returned it.
        var work: ScheduledWork?
    }

    private struct Table: Sendable {
        var timers = Slab<Timer>()
        var tokensByID: [EffectID: Set<UInt64>] = [:]
        var count = 0
        /// Set when shutdown begins: no timer is set from then on.
        var isClosed = false

        /// Takes timer `token` out of the table.
        mutating func remove(_ token: UInt64) -> Timer? {
            guard let timer = timers.remove(token) else { return nil }
            count -= 1
            if let index = tokensByID.index(forKey: timer.id) {
                tokensByID.values[index].remove(token)
                if tokensByID.values[index].isEmpty {
                    tokensByID.remove(at: index)
                }
            }
            return timer
        }
    }

    private let table = Locked(Table())

    init() {}

    /// Sets a timer: `fire` runs at `deadline` on `scheduler` (never, for `nil`) unless `cancellation` is cancelled
    /// first. Returns `false` if the timer was cancelled before it was set.
    func schedule(
        id: EffectID,
        at deadline: DispatchTime?,
        on scheduler: any EffectScheduler,
        cancellation: Cancellation,
        fire: @escaping @Sendable () -> Void
    ) -> Bool {
        let token: UInt64? = table.withLock { table in
            if table.isClosed { return nil }
            let token = table.timers.insert(Timer(id: id, cancellation: cancellation))
            table.tokensByID[id, default: []].insert(token)
            table.count += 1
            return token
        }
        guard let token else { return false }
        guard cancellation.onCancel({ [weak self] in self?.cancelled(token) }) != nil else {
            // The run (or the store) was cancelled already: the handler ran and took the timer out.
            return false
        }
        guard let deadline else { return true }
        let work = scheduler.schedule(after: deadline) { [weak self] in self?.fire(token, fire) }
        let isPending: Bool = table.withLock { table in
            table.timers.modify(token) { $0.work = work } != nil
        }
        if !isPending {
            work.cancel()  // cancelled while it was being scheduled
        }
        return isPending
    }

    /// The timer's time came: runs `body` unless the timer was cancelled.
    private func fire(_ token: UInt64, _ body: () -> Void) {
        guard let timer = table.withLock({ $0.remove(token) }) else { return }
        // It no longer needs to follow its run; what `body` starts follows the run itself.
        timer.cancellation.detachFromParent()
        body()
    }

    /// The timer's cancellation was cancelled (its run, the store, or ``cancel(id:)``).
    private func cancelled(_ token: UInt64) {
        let timer = table.withLock { $0.remove(token) }
        timer?.work?.cancel()
    }

    /// Cancels every pending timer with `id`.
    func cancel(id: EffectID) {
        let cancelled: [Timer] = table.withLock { table in
            guard let tokens = table.tokensByID[id] else { return [] }
            return tokens.sorted().compactMap { table.remove($0) }
        }
        for timer in cancelled {
            timer.work?.cancel()
            timer.cancellation.cancel()
        }
    }

    /// Shutdown began: cancels every pending timer, and sets none from now on.
    func close() {
        let cancelled: [Timer] = table.withLock { table in
            table.isClosed = true
            return table.tokensByID.values.flatMap { $0 }.sorted().compactMap { table.remove($0) }
        }
        for timer in cancelled {
            timer.work?.cancel()
            timer.cancellation.cancel()
        }
    }

    /// The number of pending timers.
    var count: Int {
        table.withLock { $0.count }
    }

    /// The number of pending timers with `id`.
    func count(id: EffectID) -> Int {
        table.withLock { $0.tokensByID[id]?.count ?? 0 }
    }
}
