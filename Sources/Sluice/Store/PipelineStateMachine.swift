/// The dispatch pipeline of one store: who runs the work of actions, what is queued for it, who waits for it.
///
/// The pipeline is *idle* (`owner == .none`) or *owned* by one thread, which runs the middleware, the reducer and
/// the subscribers for an action and for every action queued meanwhile. While it is owned:
///
/// - `queue` holds the actions dispatched from inside the owner's work (rule 2) and those handed over by threads
///   that own another store's pipeline; the owner processes them in order before it gives the pipeline up.
/// - `waiters` is one first-in, first-out line of the dispatches that wait for the pipeline: threads blocked in
///   `dispatch` and tasks suspended in `send`. When the owner is done with its queue it calls ``release(now:)``,
///   which serves the line in order: a waiting thread is woken to take the pipeline, which goes idle meanwhile (a
///   thread that dispatches before the woken one runs may take it first; the woken one then waits again at the
///   head of the line, and once it has waited ``starvation`` it is handed the pipeline directly); a waiting task's
///   action is processed by the owner itself, which then resumes the task. A task is never handed the pipeline: it
///   might not get a thread to run on while blocked dispatchers hold every thread of the cooperative pool, and they
///   would wait for it forever.
///
/// Invariant: an idle pipeline has waiters only while a thread woken to take it (`woken`) has not come back for it
/// (see ``release(now:)``).
///
/// The machine also holds the store's ``Phase`` and decides, in one place, what happens to every dispatch and send
/// (``admit(_:from:ownsAnotherPipeline:superseded:)``, and ``admitOwner(superseded:)`` for one that waited in line):
/// run it now, queue it, wait, refuse it or drop it. `StoreCore` performs the answer. The only admission outside the
/// machine is the lock-free fast path (`PipelineEntry.swift`), which runs only while the machine is idle and the
/// store open: the machine takes over, for good, before the phase changes.
///
/// The machine is pure: it neither locks, nor blocks, nor runs actions. Its transitions return what the caller
/// must do (in the style of swift-async-algorithms' `DebounceStateMachine`). `StoreCore` holds it under its lock
/// and performs the answers after the transition. It is generic over what wakes a thread and what resumes a task,
/// so that it can be tested without either.
@usableFromInline
struct PipelineStateMachine<Action, WakeUp, Continuation> {
    /// A dispatch or a send waiting for the pipeline.
    @usableFromInline
    enum Waiter {
        /// A thread blocked in `dispatch` since `since`; `wakeUp` wakes it once it owns the pipeline, or once the
        /// pipeline is free for it to take.
        case thread(ThreadID, wakeUp: WakeUp, since: UInt64)
        /// A task suspended in `send`; the owner processes `action` for it, then resumes `continuation`.
        case task(ticket: UInt64, action: Action, continuation: Continuation, since: UInt64)
    }

    /// What the owner must do when its queue is empty; see ``release(now:)``.
    @usableFromInline
    enum Release {
        /// The pipeline is idle: nothing more to do (a thread woken earlier is on its way to take it, if any).
        case idle
        /// The pipeline now belongs to a waiting thread that has waited longer than ``starvation``: wake it (with
        /// the lock held, so that it cannot see itself owner, finish and exit before it was woken), and forget the
        /// pipeline.
        case handOver(WakeUp)
        /// The pipeline is idle, and the oldest waiting thread must be woken to take it; a thread that arrives
        /// meanwhile may take it first (then the woken thread gets back in line, at its head).
        case wake(WakeUp)
        /// Still the owner: process `action` for a waiting task (with everything it queues), then resume it.
        case serve(Action, Continuation, waited: UInt64)
    }

    /// Whether the store accepts dispatches.
    @usableFromInline
    enum Phase: Sendable {
        /// Accepting.
        case open
        /// Shutdown began: every dispatch and send is refused, and counted in ``StoreStatistics/refusedDispatches``.
        case refusing
        /// The store went away: every dispatch and send is dropped, and the queue with them.
        case gone
    }

    /// What to do with a dispatch or a send; see ``admit(_:from:ownsAnotherPipeline:superseded:)``.
    @usableFromInline
    enum Admission: Equatable, Sendable {
        /// The pipeline is free: the caller takes it (``take(by:)``) and runs the action, then drains and releases;
        /// or, with nothing to run but the reducer and nobody to notify, reduces it in this critical section.
        case run
        /// The action was queued for the owner (rule 2, or the hand-over between stores): return at once.
        case queued
        /// Wait for the pipeline (a thread: ``waitAsThread(_:wakeUp:since:)``; a task:
        /// ``waitAsTask(ticket:action:continuation:now:)``), then ask ``admitOwner(superseded:)``.
        case wait
        /// Shutdown began: not processed, counted.
        case refused
        /// The store is gone, or the side-effect run that dispatches was superseded: not processed.
        case dropped

        /// Whether the answer is ``run``; a pattern match, which the optimizer reduces to one compare even before
        /// it specializes (`==` on this enum nested in a generic type is a call until then).
        @inlinable
        var isRun: Bool {
            if case .run = self { true } else { false }
        }
    }

    /// What the action that the owner processes now needs from the pipeline: how long it waited for it, and whether a
    /// `dispatch(_:reading:)` reads the state after it. Written and read only by the owner, with the lock held.
    @usableFromInline
    struct RunContext {
        /// The nanoseconds the action waited for the pipeline; 0 unless it waited.
        @usableFromInline
        var waited: UInt64 = 0
        /// A reading dispatch runs its action through the chain and no action has reached the reducer yet.
        @usableFromInline
        var isReading = false
        /// An action reached the reducer during that reading dispatch's run of the chain.
        @usableFromInline
        var reducedWhileReading = false

        @inlinable
        init() {}

        /// A reading dispatch begins its run of the chain: the first reduce will note itself.
        @inlinable
        mutating func beginReading() {
            isReading = true
            reducedWhileReading = false
        }

        /// An action reached the reducer during the reading run.
        @inlinable
        mutating func noteReduce() {
            isReading = false
            reducedWhileReading = true
        }

        /// The reading run of the chain returned.
        @inlinable
        mutating func endReading() {
            isReading = false
            reducedWhileReading = false
        }
    }

    /// The thread that owns the pipeline; `.none` when it is idle.
    @usableFromInline
    var owner = ThreadID.none
    /// Actions queued for the owner.
    @usableFromInline
    var queue = FIFO<Action>()
    /// The dispatches and sends waiting for the pipeline, oldest first (from `waitersHead` on).
    @usableFromInline
    var waiters: [Waiter] = []
    @usableFromInline
    var waitersHead = 0
    /// `waiters.count - waitersHead`, stored: the owner tests it on every release.
    @usableFromInline
    var waiterCount = 0
    /// The threads taken out of the line and woken to take the free pipeline, which have not come back for it yet.
    @usableFromInline
    var woken: [ThreadID] = []

    /// The dispatches and sends waiting for the pipeline: those in line, and the threads woken to take it that have
    /// not come back for it yet (they still wait, from their callers' point of view).
    @usableFromInline
    var waitingCount: Int {
        waiterCount + woken.count
    }
    /// How long a thread waits in line before the pipeline is handed to it directly instead of set free for it to
    /// take: one millisecond, as Go's `sync.Mutex` switches to its starvation mode.
    @inlinable
    static var starvation: UInt64 { 1_000_000 }
    @usableFromInline
    var nextTicket: UInt64 = 0
    /// Counted only off the fast path: when a dispatch waits, an action is queued, or one is refused.
    @usableFromInline
    var statistics = StoreStatistics()
    /// Whether the store accepts dispatches; it only moves forward, from ``Phase/open``.
    @usableFromInline
    private(set) var phase = Phase.open
    /// The run of the owner's current action.
    @usableFromInline
    var run = RunContext()

    @inlinable
    init() {}

    /// Whether a thread owns the pipeline.
    ///
    /// Compares the raw value: `ThreadID.none` is a global, read through a lazy accessor on every use.
    @inlinable
    var isOwned: Bool { owner.raw != 0 }

    // MARK: Transitions

    /// Idle to owned by `thread`.
    @inlinable
    mutating func take(by thread: ThreadID) {
        owner = thread
    }

    /// The admission of a dispatch or a send of `action` from `thread`, the one decision behind every entry.
    ///
    /// In order: a store that is gone drops it, one that shuts down refuses it (counted); on an owned pipeline it is
    /// queued if `thread` is the owner (rule 2) or owns another store's pipeline (the hand-over between stores), or
    /// else waits in line; on a free pipeline it is dropped if the side-effect run that dispatches it was
    /// `superseded`, or else it runs now, on `thread`. A queued action is processed
    /// whatever happens to its run afterwards: it was accepted. A waiting one is checked again once it has the
    /// pipeline (``admitOwner(superseded:)``).
    ///
    /// `thread`, `ownsAnotherPipeline` and `superseded` are evaluated only when the answer depends on them (they read
    /// the thread's identity, a thread-local variable, a run's cancellation); so the machine does not take the free
    /// pipeline itself: the caller does, if it needs to own it beyond this critical section.
    @inlinable
    mutating func admit(
        _ action: Action,
        from thread: @autoclosure () -> ThreadID,
        ownsAnotherPipeline: @autoclosure () -> Bool,
        superseded: @autoclosure () -> Bool
    ) -> Admission {
        if _slowPath(phase != .open) {
            return turnAway()
        }
        if isOwned {
            if owner == thread() || ownsAnotherPipeline() {
                enqueue(action)
                return .queued
            }
            return .wait
        }
        if _slowPath(superseded()) {
            return .dropped
        }
        return .run
    }

    /// The admission of a dispatch or send that waited in line and now has the pipeline (a thread woken or handed
    /// it, a task's action served by the owner): the store may have closed, or its run been superseded, meanwhile.
    /// On ``Admission/run`` the caller runs the action; otherwise it drains what is queued and releases.
    @inlinable
    mutating func admitOwner(superseded: Bool) -> Admission {
        if _slowPath(phase != .open) {
            return turnAway()
        }
        return superseded ? .dropped : .run
    }

    /// Refuses (counted) or drops what arrives while the store is not open.
    @inlinable
    mutating func turnAway() -> Admission {
        if phase == .gone {
            return .dropped
        }
        statistics.refusedDispatches += 1
        return .refused
    }

    /// Shutdown began: refuse every dispatch and send from now on. Actions already queued are processed.
    @usableFromInline
    mutating func beginRefusing() {
        if phase == .open {
            phase = .refusing
        }
    }

    /// The store went away: drop every dispatch and send from now on, and what is queued.
    mutating func storeWentAway() {
        phase = .gone
    }

    /// Appends `action` to the owner's queue.
    @inlinable @inline(__always)
    mutating func enqueue(_ action: Action) {
        queue.append(action)
        statistics.queuedActions += 1
        noteDepth()
    }

    /// A thread starts waiting, at the end of the line.
    mutating func waitAsThread(_ thread: ThreadID, wakeUp: WakeUp, since: UInt64) {
        append(.thread(thread, wakeUp: wakeUp, since: since))
    }

    /// A thread woken to take the free pipeline is back (`true`), or this was not its wake-up (`false`: it is still
    /// in line, or already the owner).
    mutating func wokenThreadIsBack(_ thread: ThreadID) -> Bool {
        guard let index = woken.firstIndex(of: thread) else { return false }
        woken.remove(at: index)
        return true
    }

    /// A woken thread found the pipeline taken by a thread that came meanwhile: it waits again, at the head of the
    /// line, keeping the time it first got in line (so that it is handed the pipeline once it has starved).
    mutating func waitAgainAtHead(_ thread: ThreadID, wakeUp: WakeUp, since: UInt64) {
        let waiter = Waiter.thread(thread, wakeUp: wakeUp, since: since)
        if waitersHead > 0 {
            waitersHead -= 1
            waiters[waitersHead] = waiter
        } else {
            waiters.insert(waiter, at: 0)
        }
        waiterCount += 1
        noteDepth()
    }

    /// A new ticket for a task that is about to wait (to find it again if it is cancelled).
    @inlinable
    mutating func makeTicket() -> UInt64 {
        nextTicket &+= 1
        return nextTicket
    }

    /// A task starts waiting, at the end of the line, with the action it sends.
    @inlinable
    mutating func waitAsTask(ticket: UInt64, action: Action, continuation: Continuation, now: UInt64) {
        append(.task(ticket: ticket, action: action, continuation: continuation, since: now))
    }

    /// A waiting task was cancelled: removes it from the line and returns its continuation, to resume as
    /// cancelled; `nil` if it is no longer waiting (its action was already taken by the owner).
    @usableFromInline
    mutating func cancelTask(ticket: UInt64) -> Continuation? {
        for index in waitersHead..<waiters.count {
            if case .task(ticket, _, let continuation, _) = waiters[index] {
                waiters.remove(at: index)
                waiterCount -= 1
                return continuation
            }
        }
        return nil
    }

    /// A woken thread has waited `waited` nanoseconds for the pipeline, which it now owns.
    mutating func threadDidWait(_ waited: UInt64) {
        statistics.blockedWaits += 1
        noteWait(waited)
    }

    /// The next queued action for the owner, `nil` when the queue is empty; the queue is dropped once the store is
    /// gone.
    @inlinable @inline(__always)
    mutating func nextQueuedAction() -> Action? {
        if queue.isEmpty {
            return nil
        }
        if _slowPath(phase == .gone) {
            _ = queue.removeAll()
            return nil
        }
        return queue.removeFirst()
    }

    /// The owner is done with its queue: give the pipeline to the oldest waiter, or go idle.
    ///
    /// A waiting task's action is handed to the current owner (``Release/serve(_:_:waited:)``), which stays the
    /// owner and calls `release` again afterwards. A waiting thread is woken to take the pipeline, which goes
    /// idle (``Release/wake(_:)``): a running thread that dispatches before it has been scheduled takes it first,
    /// instead of every dispatch waiting for the next thread in line to be scheduled (the convoy of strict hand-over,
    /// where every dispatch pays a thread's wake-up). If a thread woken earlier has
    /// not come back yet, the pipeline just goes idle (``Release/idle``): that thread takes it. A thread that has
    /// waited longer than ``starvation`` is handed the pipeline directly (``Release/handOver(_:)``).
    @inlinable
    mutating func release(now: UInt64) -> Release {
        guard waiterCount > 0 else {
            owner = .none
            return .idle
        }
        if case .thread(let thread, let wakeUp, let since) = waiters[waitersHead],
            now &- since < PipelineStateMachine.starvation || now < since
        {
            owner = .none
            guard woken.isEmpty else {
                return .idle
            }
            removeHead()
            woken.append(thread)
            return .wake(wakeUp)
        }
        let waiter = waiters[waitersHead]
        waitersHead += 1
        waiterCount -= 1
        if waiterCount == 0 {
            waiters.removeAll(keepingCapacity: true)
            waitersHead = 0
        }
        switch waiter {
        case .thread(let thread, let wakeUp, _):
            owner = thread
            return .handOver(wakeUp)
        case .task(_, let action, let continuation, let since):
            let waited = now >= since ? now - since : 0
            noteWait(waited)
            return .serve(action, continuation, waited: waited)
        }
    }

    /// The owner gives up a pipeline that nobody waits for (the fast release: ``release(now:)`` without a clock).
    @inlinable
    mutating func releaseIdle() {
        owner = ThreadID(raw: 0)
    }

    // MARK: Bookkeeping

    @usableFromInline
    mutating func removeHead() {
        waitersHead += 1
        waiterCount -= 1
        if waiterCount == 0 {
            waiters.removeAll(keepingCapacity: true)
            waitersHead = 0
        }
    }

    @inlinable
    mutating func append(_ waiter: Waiter) {
        waiters.append(waiter)
        waiterCount += 1
        noteDepth()
    }

    @inlinable
    mutating func noteDepth() {
        let depth = queue.count + waitingCount
        if depth > statistics.deepestQueue {
            statistics.deepestQueue = depth
        }
    }

    @usableFromInline
    mutating func noteWait(_ waited: UInt64) {
        let wait = Duration.nanoseconds(Int64(clamping: waited))
        statistics.waits += 1
        statistics.totalWait += wait
        if wait > statistics.longestWait {
            statistics.longestWait = wait
        }
    }
}
