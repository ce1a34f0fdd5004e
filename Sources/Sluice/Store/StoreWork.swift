/// The ledger of a store's running work, and what ``Store/shutdown(timeout:)`` settles.
///
/// - Running work: one entry per piece of work, from one ``begin(_:id:cancelInFlight:cancellation:group:)`` (or
///   ``beginRun(onIdle:)``) to one ``end(_:)``: the task of an effect (with its id, if it has one), the task of an
///   `async` side effect, and a `takeLeading` run, which lasts until its synchronous call and every task started
///   in it ended. Each entry knows its kind, its id, the run it belongs to (its parent), what cancels it, and the
///   send group (``TrackedWork``, the ``StoreTask`` of a `send`) that follows it. Every wait for running work is a
///   continuation that the `end` which makes the condition true resumes: shutdown and the test store wait for the
///   tasks, a ``StoreTask`` for its group.
/// - Tasks carry their token in a task-local value, so that a shutdown called from inside one of them knows not to
///   wait for its caller.
/// - Owed runs: each time-based modifier installed in the store registers its ``TimedEffect`` (weakly), so that
///   shutdown can run what it owes now. Once flushed, a modifier reports here whether it is busy (performing runs,
///   on whatever thread) and whether it owes runs again; shutdown waits on these counts (see
///   ``settleTimedEffects(until:)``).
/// - Left work: what an owner left for after it gave the pipeline up (a logged line), from the release that took it
///   to the end of its run; shutdown's wait for a free pipeline waits for it too.
/// - The failure handler given to the store, called for errors of effects that nobody else sees.
/// - The shutdown's progress: the first call performs it, later and concurrent calls wait for its report.
///
/// Everything is one ``Locked`` value; what a change calls for (cancelling, resuming a waiter, ending a run) is
/// performed after the lock is released. Every operation costs O(1) per entry it starts, ends or cancels
/// (amortized), except cancelling a send group, which looks at every running entry.
@usableFromInline
package final class StoreWork: Sendable {
    private let state = Locked(Ledger())
    /// The store's pending timers, which share the ids of its effects.
    let timers = StoreTimers()

    /// The tracked task that the current task runs in (or descends from), if any.
    @TaskLocal static var current: Mark?

    /// What an entry of the ledger is.
    enum Kind: Sendable {
        /// The task of an asynchronous effect (`start` or `run`).
        case effect
        /// The task of an `async` side effect.
        case sideEffect
        /// A run of a `takeLeading`: its synchronous call and the tasks started in it.
        case run
    }

    /// A tracked task: which store's work, which token.
    struct Mark: Sendable {
        let work: ObjectIdentifier
        let token: UInt64
    }

    init() {}

    // MARK: Failures

    func setFailureHandler(_ handler: (@Sendable (EffectFailure) -> Void)?) {
        state.withLock { $0.failureHandler = handler }
    }

    /// Reports `error` to the store's handler, unless it is a cancellation: a `CancellationError`, or any error
    /// thrown by work that was cancelled.
    package func report(_ error: any Error, wasCancelled: Bool, makeFailure: () -> EffectFailure) {
        if wasCancelled || error is CancellationError { return }
        guard let handler = state.withLock({ $0.failureHandler }) else { return }
        handler(makeFailure())
    }

    // MARK: Running work

    /// Enters a task of `kind` (`.effect` or `.sideEffect`) that is about to start, and returns its token, which
    /// the task passes to ``track(_:_:)`` and ``end(_:)``.
    ///
    /// - Parameters:
    ///   - id: The effect's id; with `cancelInFlight`, the running effects with that id are cancelled before this
    ///     returns (so before the new work starts).
    ///   - cancellation: What cancels the work. For an effect, cancelling it by id or through its send group
    ///     cancels `cancellation`; for a side effect, only its task is cancelled (see ``attach(_:_:)``).
    ///   - group: The send group that follows the task, if it starts while a `send` is processed.
    func begin(
        _ kind: Kind,
        id: EffectID? = nil,
        cancelInFlight: Bool = false,
        cancellation: Cancellation,
        group: TrackedWork? = nil
    ) -> UInt64 {
        let (token, superseded, cancelNow) = state.withLock {
            $0.begin(kind, id: id, cancelInFlight: cancelInFlight, cancellation: cancellation, group: group)
        }
        for old in superseded {
            old.cancel()
        }
        if cancelInFlight, let id {
            timers.cancel(id: id)
        }
        if cancelNow && kind == .effect {
            cancellation.cancel()
        }
        return token
    }

    /// Gives the side-effect task of entry `token` its `Task`, created after ``begin(_:id:cancelInFlight:cancellation:group:)``;
    /// cancels it at once if the entry was cancelled meanwhile.
    func attach(_ token: UInt64, _ task: Task<Void, Never>) {
        let cancelNow = state.withLock { $0.attach(token, task) }
        if cancelNow {
            task.cancel()
        }
    }

    /// Cancels the task of the side-effect entry `token` (now, or as soon as it is attached).
    func cancelTask(_ token: UInt64) {
        let task = state.withLock { $0.cancelTask(token) }
        task?.cancel()
    }

    /// Runs `body` marked as the tracked task `token`.
    func track<T>(_ token: UInt64, _ body: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(Mark(work: ObjectIdentifier(self), token: token), operation: body)
    }

    /// The work of entry `token` ended. `ran`: `false` for a task that never started (its run was cancelled
    /// first), which shutdown does not count as finished.
    func end(_ token: UInt64, ran: Bool = true) {
        perform(state.withLock { $0.end(token, ran: ran) })
    }

    /// Enters a run of a `takeLeading`, inside the run `parent` if any, and returns its token; the run is under way
    /// until ``endRun(_:)`` and every entry begun inside it ended, and then `onIdle` runs, once.
    @usableFromInline
    func beginRun(in parent: UInt64?, onIdle: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { $0.beginRun(parent: parent, onIdle: onIdle) }
    }

    /// The synchronous call of run `token` returned.
    @usableFromInline
    func endRun(_ token: UInt64) {
        perform(state.withLock { $0.endRun(token) })
    }

    private func perform(_ ended: Ledger.Ended) {
        // The runs first: a task that waited for this work to end finds them over.
        ended.idleRun?()
        for onIdle in ended.moreIdleRuns {
            onIdle()
        }
        for continuation in ended.ready {
            continuation.resume()
        }
        _ = ended.removed  // released here, outside the lock: the last reference to a group or a cancellation
    }

    /// Cancels every effect with `id`, in the order they started (they no longer count as running effects), then
    /// every pending timer with `id`.
    func cancel(id: EffectID) {
        let cancelled = state.withLock { $0.cancel(id: id) }
        for cancellation in cancelled {
            cancellation.cancel()
        }
        timers.cancel(id: id)
    }

    /// Cancels the work of `group` (and work that joins it later).
    func cancel(group: TrackedWork) {
        let (cancellations, tasks) = state.withLock { $0.cancel(group: group.token) }
        for cancellation in cancellations {
            cancellation.cancel()
        }
        for task in tasks {
            task.cancel()
        }
    }

    /// Whether `group` was cancelled.
    func isCancelled(_ group: TrackedWork) -> Bool {
        state.withLock { $0.groups[group.token]?.isCancelled ?? false }
    }

    /// Returns when no work of `group` runs.
    func waitUntilDone(_ group: TrackedWork) async {
        let token = group.token
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done: Bool = state.withLock {
                $0.groups.modify(token) { group in
                    guard group.running > 0 else { return true }
                    group.waiters.append(continuation)
                    return false
                } ?? true
            }
            if done {
                continuation.resume()
            }
        }
    }

    /// Makes a send group for a new ``TrackedWork`` and returns its token.
    func makeGroup() -> UInt64 {
        state.withLock { $0.groups.insert(Ledger.Group()) }
    }

    /// Forgets the send group `token`: its ``TrackedWork`` is gone, and so is every entry that held it.
    func forgetGroup(_ token: UInt64) {
        let removed = state.withLock { $0.groups.remove(token) }
        _ = removed
    }

    /// The token of the calling task if it is a tracked task of this store.
    var callerToken: UInt64? {
        guard let mark = Self.current, mark.work == ObjectIdentifier(self) else { return nil }
        return mark.token
    }

    /// The number of tasks running, besides `excluded`.
    func runningCount(excluding excluded: UInt64?) -> Int {
        state.withLock { $0.runningTasks - ($0.isTask(excluded) ? 1 : 0) }
    }

    /// The number of side-effect tasks running (the test store's exhaustivity reads it).
    var runningSideEffectTaskCount: Int {
        state.withLock { $0.runningSideEffectTasks }
    }

    /// The number of effects started and neither finished nor cancelled by id.
    var listedEffectCount: Int {
        state.withLock { $0.listedEffects }
    }

    /// The number of ids with at least one running effect.
    var effectIDCount: Int {
        state.withLock { $0.tokensByID.count }
    }

    /// The number of running effects with `id`.
    func effectCount(id: EffectID) -> Int {
        state.withLock { $0.tokensByID[id]?.count ?? 0 }
    }

    /// Waits until no task besides `excluded` runs, or until `deadline`; returns whether they all ended.
    func waitForTasks(excluding excluded: UInt64?, until deadline: ContinuousClock.Instant) async -> Bool {
        await wait(for: .tasksIdle(excluding: excluded), until: deadline)
    }

    /// Waits until `awaited` holds, until `deadline`, or until the calling task is cancelled; returns whether it
    /// holds. The deadline is a timer racing the wait, not a poll.
    private func wait(for awaited: Ledger.Awaited, until deadline: ContinuousClock.Instant) async -> Bool {
        if state.withLock({ $0.holds(awaited) }) { return true }
        let held = await Sluice.wait(until: deadline) { await self.waitUntil(awaited) }
        return held && state.withLock { $0.holds(awaited) }
    }

    /// Returns when `awaited` holds, or when the calling task is cancelled.
    private func waitUntil(_ awaited: Ledger.Awaited) async {
        let id: UInt64 = state.withLock { $0.makeWaiterKey() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow: Bool = state.withLock {
                    if $0.holds(awaited) || $0.cancelledWaiters.contains(id) { return true }
                    $0.waiters[id] = Ledger.Waiter(awaited: awaited, continuation: continuation)
                    return false
                }
                if resumeNow {
                    continuation.resume()
                }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, Never>? = state.withLock {
                if let waiter = $0.waiters.removeValue(forKey: id) { return waiter.continuation }
                $0.cancelledWaiters.insert(id)
                return nil
            }
            continuation?.resume()
        }
        state.withLock { _ = $0.cancelledWaiters.remove(id) }
    }

    // MARK: Time-based modifiers

    /// Lets shutdown flush `timed`, for as long as it exists.
    func register<Machine>(_ timed: TimedEffect<Machine>) {
        let handle = Ledger.TimedEffectHandle(flush: { [weak timed] work in timed?.flush(settlingWith: work) ?? 0 })
        state.withLock { $0.timedEffects.append(handle) }
    }

    /// Lets shutdown flush a modifier applied per key (every key of it), and tests count its keys.
    func register(flush: @escaping @Sendable (StoreWork) -> Int, keyCount: @escaping @Sendable () -> Int) {
        let handle = Ledger.TimedEffectHandle(flush: flush, keyCount: keyCount)
        state.withLock { $0.timedEffects.append(handle) }
    }

    /// The number of keys that the store's modifiers applied per key hold now (for tests).
    var perKeyModifierKeyCount: Int {
        let handles = state.withLock { $0.timedEffects }
        return handles.reduce(0) { $0 + ($1.keyCount?() ?? 0) }
    }

    /// Runs what every time-based modifier of the store owes, until none is busy and none owes runs: flushes them
    /// all (which closes them), waits until no run of theirs is in progress on any thread, and flushes again while
    /// one owes runs (left by runs performed meanwhile: a `debounce` behind a `delay`, fed by the delayed runs).
    /// Stops early at `deadline` or when the calling task is cancelled; returns how many owed runs it released.
    ///
    /// Each pass releases only what the machines owe at that moment, so no run is released twice.
    func settleTimedEffects(until deadline: ContinuousClock.Instant) async -> Int {
        let handles = state.withLock { $0.timedEffects }
        var released = 0
        while true {
            released += handles.reduce(0) { $0 + $1.flush(self) }
            guard await wait(for: .timedRunsDone, until: deadline) else { return released }
            if state.withLock({ $0.owingTimedEffects == 0 }) { return released }
        }
    }

    /// A flushed modifier became busy or idle (`busy` +1 or -1) or started or stopped owing runs (`owing`);
    /// called with that modifier's lock held.
    func timedEffectChanged(busy: Int, owing: Int) {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock {
            $0.busyTimedEffects += busy
            $0.owingTimedEffects += owing
            return busy < 0 ? $0.takeReadyWaiters() : []
        }
        for continuation in ready {
            continuation.resume()
        }
    }

    /// Whether all the work that shutdown waits for is done: no flushed modifier is busy or owes runs, and no task
    /// besides `excluded` runs. Read at once, under one lock: once it is `true` after every modifier was flushed and
    /// dispatches are refused, nothing can start any more work.
    func isSettled(excluding excluded: UInt64?) -> Bool {
        state.withLock { $0.busyTimedEffects == 0 && $0.owingTimedEffects == 0 && $0.isIdle(excluding: excluded) }
    }

    // MARK: Shutdown

    /// How many times the pipeline went idle while shutdown waited for it; read before looking at the pipeline, then
    /// passed to ``waitForPipelineIdle(after:until:)``.
    var pipelineIdleGeneration: UInt64 {
        state.withLock { $0.pipelineIdleGeneration }
    }

    /// The pipeline went idle while the store refuses dispatches: wakes shutdown, which looks at it again. Called by
    /// the owner that released it, with the store's lock held (the ledger's lock is taken inside it, never around
    /// it).
    @usableFromInline
    func pipelineWentIdle() {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock {
            $0.pipelineIdleGeneration &+= 1
            return $0.takeReadyWaiters()
        }
        for continuation in ready {
            continuation.resume()
        }
    }

    /// `count` items of work left for after a release (``StoreCore/runAfterRelease(_:)``: a logged line) were taken
    /// and run from now until ``leftWorkEnded(_:)``; shutdown's wait for a free pipeline waits for them too, so that
    /// it returns after the last logged line. Called by the owner that gives the pipeline up, with the store's lock
    /// held.
    @usableFromInline
    func leftWorkBegan(_ count: Int) {
        state.withLock { $0.leftWorkRunning += count }
    }

    /// `count` items of left work finished running: once none runs, wakes a shutdown that waits for the pipeline,
    /// which looks at it again.
    @usableFromInline
    func leftWorkEnded(_ count: Int) {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock {
            $0.leftWorkRunning -= count
            guard $0.leftWorkRunning == 0 else { return [] }
            // A new generation even with nobody waiting yet: a shutdown that saw the work running, and is about to
            // wait for the generation it read before looking, must not miss this end.
            $0.pipelineIdleGeneration &+= 1
            return $0.takeReadyWaiters()
        }
        for continuation in ready {
            continuation.resume()
        }
    }

    /// Whether work left for after a release is running.
    var isLeftWorkRunning: Bool {
        state.withLock { $0.leftWorkRunning > 0 }
    }

    /// Whether a shutdown waits for the pipeline to go idle now (for tests, which cannot see that wait otherwise).
    var isWaitingForPipelineIdle: Bool {
        state.withLock { ledger in
            ledger.waiters.values.contains { waiter in
                if case .pipelineIdle = waiter.awaited { true } else { false }
            }
        }
    }

    /// Waits until the pipeline went idle after `generation`, until `deadline`, or until the calling task is
    /// cancelled; returns whether it went idle.
    func waitForPipelineIdle(after generation: UInt64, until deadline: ContinuousClock.Instant) async -> Bool {
        await wait(for: .pipelineIdle(after: generation), until: deadline)
    }

    enum ShutdownTurn {
        /// This caller performs the shutdown.
        case perform
        /// Another caller performs it: wait for its report.
        case wait
        /// It is over.
        case done(ShutdownReport)
    }

    func takeShutdownTurn() -> ShutdownTurn {
        state.withLock {
            switch $0.phase {
            case .open:
                $0.phase = .shuttingDown(waiters: [])
                return .perform
            case .shuttingDown: return .wait
            case .shutDown(let report): return .done(report)
            }
        }
    }

    /// Waits for the report of the shutdown that another caller performs.
    func awaitReport() async -> ShutdownReport {
        await withCheckedContinuation { (continuation: CheckedContinuation<ShutdownReport, Never>) in
            let report: ShutdownReport? = state.withLock {
                switch $0.phase {
                case .open: return nil  // not reached: a caller waits only once a shutdown began
                case .shuttingDown(var waiters):
                    waiters.append(continuation)
                    $0.phase = .shuttingDown(waiters: waiters)
                    return nil
                case .shutDown(let report): return report
                }
            }
            if let report {
                continuation.resume(returning: report)
            }
        }
    }

    /// The number of tasks that ended since shutdown began.
    var tasksFinishedDuringShutdown: Int {
        state.withLock { $0.finishedDuringShutdown }
    }

    /// A modifier that shutdown flushed was cancelled with `count` runs still owed or queued: the timeout passed
    /// while another thread was still performing its runs, or before the runs that those left owed were flushed.
    /// Called by the modifier when the store's lifetime ends, outside its lock.
    func timedRunsDropped(_ count: Int) {
        state.withLock { $0.droppedTimedRuns += count }
    }

    /// The owed runs dropped when shutdown cancelled the modifiers (``timedRunsDropped(_:)``).
    var droppedTimedRuns: Int {
        state.withLock { $0.droppedTimedRuns }
    }

    /// Records the report and hands it to the callers that wait for it.
    func finishShutdown(_ report: ShutdownReport) {
        let waiters: [CheckedContinuation<ShutdownReport, Never>] = state.withLock {
            state in
            defer { state.phase = .shutDown(report) }
            if case .shuttingDown(let waiters) = state.phase { return waiters }
            return []
        }
        for waiter in waiters {
            waiter.resume(returning: report)
        }
    }
}

/// The id of an effect, as the ledger keys it.
///
/// The id is boxed, so that a ledger entry holds one reference rather than an existential: entries are moved in
/// and out of the ledger on every run of a `takeLeading`, and an existential is copied through its value witnesses.
struct EffectID: Hashable, Sendable {
    private final class Box: Sendable {
        let base: any Hashable & Sendable

        init(_ base: any Hashable & Sendable) {
            self.base = base
        }
    }

    private let box: Box

    init(base: any Hashable & Sendable) {
        box = Box(base)
    }

    var base: any Hashable & Sendable { box.base }

    static func == (lhs: EffectID, rhs: EffectID) -> Bool {
        AnyHashable(lhs.base) == AnyHashable(rhs.base)
    }

    func hash(into hasher: inout Hasher) {
        AnyHashable(base).hash(into: &hasher)
    }
}

/// The state of a ``StoreWork``, behind its lock: the entries of running work and what waits for them. Its
/// methods decide and return what the caller performs once the lock is released.
private struct Ledger: Sendable {
    struct Entry: Sendable {
        let kind: StoreWork.Kind
        /// The effect's id, if it has one.
        let id: EffectID?
        /// An effect counts as running (and is found by its id) until it ends or is cancelled by id.
        var isListed: Bool
        /// What cancels an effect; `nil` for a side effect (only its task is cancelled) and for a run.
        let cancellation: Cancellation?
        /// The task of a side effect, once attached.
        var task: Task<Void, Never>?
        /// The side effect's task was cancelled (before it was attached, perhaps).
        var isTaskCancelled = false
        /// The send group that follows the work; held so that its identity is not reused while the entry lives.
        let group: TrackedWork?
        /// The run that the work belongs to.
        let parent: UInt64?
        /// For a run: whether its synchronous call is under way, the entries inside it, and what runs when both
        /// are over.
        var isOpen = false
        var children = 0
        let onIdle: (@Sendable () -> Void)?
    }

    /// A send group: how many of its entries run, whether it was cancelled, who waits for it to be done.
    struct Group: Sendable {
        var running = 0
        var isCancelled = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What a waiter waits for.
    enum Awaited: Sendable {
        /// No task runs besides `excluded`.
        case tasksIdle(excluding: UInt64?)
        /// No flushed modifier is busy.
        case timedRunsDone
        /// The pipeline went idle since it had gone idle `generation` times.
        case pipelineIdle(after: UInt64)
    }

    struct Waiter: Sendable {
        let awaited: Awaited
        let continuation: CheckedContinuation<Void, Never>
    }

    /// A time-based modifier, seen by shutdown without keeping it alive.
    struct TimedEffectHandle: Sendable {
        let flush: @Sendable (StoreWork) -> Int
        /// How many keys a modifier applied per key holds; `nil` for a store-wide one.
        var keyCount: (@Sendable () -> Int)? = nil
    }

    enum Phase: Sendable {
        case open
        case shuttingDown(waiters: [CheckedContinuation<ShutdownReport, Never>])
        case shutDown(ShutdownReport)
    }

    /// What ending an entry calls for.
    ///
    /// The first run that ends is held inline and the entries of runs are not kept in `removed` (a run's entry
    /// holds nothing but its `onIdle`, which is kept here): ending a `takeLeading` run, on every action it lets
    /// through, then allocates no array.
    struct Ended {
        var ready: [CheckedContinuation<Void, Never>] = []
        var idleRun: (@Sendable () -> Void)?
        var moreIdleRuns: [@Sendable () -> Void] = []
        var removed: [Entry] = []

        mutating func appendIdleRun(_ onIdle: @escaping @Sendable () -> Void) {
            if idleRun == nil {
                idleRun = onIdle
            } else {
                moreIdleRuns.append(onIdle)
            }
        }
    }

    var entries = Slab<Entry>()
    var nextWaiterKey: UInt64 = 0
    /// The tokens of the listed effects that have an id; never an empty set. Tokens increase, so sorting them
    /// gives the start order back.
    var tokensByID: [EffectID: Set<UInt64>] = [:]
    /// Entries of kind `.effect` and `.sideEffect`.
    var runningTasks = 0
    var runningSideEffectTasks = 0
    /// Effects neither ended nor cancelled by id.
    var listedEffects = 0
    var groups = Slab<Group>()
    var waiters: [UInt64: Waiter] = [:]
    var cancelledWaiters: Set<UInt64> = []
    var timedEffects: [TimedEffectHandle] = []
    /// How many flushed modifiers are busy, and how many owe runs (see ``TimedEffect/noteClosingStateLocked()``).
    var busyTimedEffects = 0
    var owingTimedEffects = 0
    var failureHandler: (@Sendable (EffectFailure) -> Void)?
    var phase = Phase.open
    /// Tasks that ended while shutdown was waiting.
    var finishedDuringShutdown = 0
    /// Owed runs that closing modifiers dropped when shutdown cancelled them (see ``StoreWork/timedRunsDropped(_:)``).
    var droppedTimedRuns = 0
    /// How many times the pipeline went idle while the store refused dispatches, or the work left for after a
    /// release finished.
    var pipelineIdleGeneration: UInt64 = 0
    /// Items of work left for after a release that were taken and have not finished running.
    var leftWorkRunning = 0

    mutating func makeWaiterKey() -> UInt64 {
        nextWaiterKey &+= 1
        return nextWaiterKey
    }

    /// Returns the token, the effects that `cancelInFlight` supersedes, and whether the group was cancelled.
    mutating func begin(
        _ kind: StoreWork.Kind,
        id: EffectID?,
        cancelInFlight: Bool,
        cancellation: Cancellation,
        group: TrackedWork?
    ) -> (UInt64, [Cancellation], Bool) {
        var superseded: [Cancellation] = []
        if let id, cancelInFlight, let tokens = tokensByID.removeValue(forKey: id) {
            superseded = unlist(tokens)
        }
        let parent = cancellation.run.flatMap { entries.modify($0) { $0.children += 1 } != nil ? $0 : nil }
        var cancelNow = false
        if let group {
            cancelNow =
                groups.modify(group.token) {
                    $0.running += 1
                    return $0.isCancelled
                } ?? false
        }
        let token = entries.insert(
            Entry(
                kind: kind,
                id: id,
                isListed: kind == .effect,
                cancellation: kind == .effect ? cancellation : nil,
                isTaskCancelled: cancelNow,
                group: group,
                parent: parent,
                onIdle: nil
            )
        )
        if let id {
            tokensByID[id, default: []].insert(token)
        }
        runningTasks += 1
        if kind == .sideEffect {
            runningSideEffectTasks += 1
        } else {
            listedEffects += 1
        }
        return (token, superseded, cancelNow)
    }

    /// Returns whether the task must be cancelled at once.
    mutating func attach(_ token: UInt64, _ task: Task<Void, Never>) -> Bool {
        entries.modify(token) {
            $0.task = task
            return $0.isTaskCancelled
        } ?? false
    }

    mutating func cancelTask(_ token: UInt64) -> Task<Void, Never>? {
        entries.modify(token) {
            $0.isTaskCancelled = true
            return $0.task
        } ?? nil
    }

    mutating func beginRun(parent: UInt64?, onIdle: @escaping @Sendable () -> Void) -> UInt64 {
        let parent = parent.flatMap { entries.modify($0) { $0.children += 1 } != nil ? $0 : nil }
        return entries.insert(
            Entry(
                kind: .run,
                id: nil,
                isListed: false,
                cancellation: nil,
                group: nil,
                parent: parent,
                isOpen: true,
                onIdle: onIdle
            )
        )
    }

    mutating func endRun(_ token: UInt64) -> Ended {
        var ended = Ended()
        let idle = entries.modify(token) {
            $0.isOpen = false
            return $0.children == 0
        }
        if idle == true {
            closeRunIfIdle(token, &ended)
        }
        return ended
    }

    mutating func end(_ token: UInt64, ran: Bool) -> Ended {
        var ended = Ended()
        guard let entry = entries.remove(token) else { return ended }
        runningTasks -= 1
        if entry.kind == .sideEffect {
            runningSideEffectTasks -= 1
        }
        if entry.isListed {
            listedEffects -= 1
            // Mutated in place through the index (one hash of the id); a copy of the set would cost O(n).
            if let id = entry.id, let index = tokensByID.index(forKey: id) {
                tokensByID.values[index].remove(token)
                if tokensByID.values[index].isEmpty {
                    tokensByID.remove(at: index)
                }
            }
        }
        if ran, case .shuttingDown = phase {
            finishedDuringShutdown += 1
        }
        if let group = entry.group {
            ended.ready =
                groups.modify(group.token) { group in
                    group.running -= 1
                    guard group.running == 0 else { return [] }
                    defer { group.waiters = [] }
                    return group.waiters
                } ?? []
        }
        ended.ready += takeReadyWaiters()
        if let parent = entry.parent {
            entries.modify(parent) { $0.children -= 1 }
            closeRunIfIdle(parent, &ended)
        }
        ended.removed.append(entry)
        return ended
    }

    /// Removes run `token` if its call returned and nothing inside it runs, then its parent if that closes it too.
    ///
    /// The entry is tested in place and moved out once (a copy of an entry retains each of its references). A
    /// run's entry holds no reference but its `onIdle` (no id, cancellation, task or group), which `ended` keeps,
    /// so the entry itself is released here, under the lock, without releasing anything for the last time.
    private mutating func closeRunIfIdle(_ token: UInt64, _ ended: inout Ended) {
        var token = token
        while entries.modify(token, { !$0.isOpen && $0.children == 0 }) == true,
            let run = entries.remove(token)
        {
            if let onIdle = run.onIdle {
                ended.appendIdleRun(onIdle)
            }
            guard let parent = run.parent else { return }
            entries.modify(parent) { $0.children -= 1 }
            token = parent
        }
    }

    /// Takes the effects with `id` out of the list and returns their cancellations in start order.
    mutating func cancel(id: EffectID) -> [Cancellation] {
        guard let tokens = tokensByID.removeValue(forKey: id) else { return [] }
        return unlist(tokens)
    }

    /// Unlists the effects with `tokens` (already taken out of `tokensByID`); returns their cancellations in start
    /// order.
    private mutating func unlist(_ tokens: Set<UInt64>) -> [Cancellation] {
        var cancellations: [Cancellation] = []
        for token in tokens.sorted() {
            let found = entries.modify(token) { entry in
                entry.isListed = false
                return entry.cancellation
            }
            guard let cancellation = found else { continue }
            listedEffects -= 1
            if let cancellation {
                cancellations.append(cancellation)
            }
        }
        return cancellations
    }

    mutating func cancel(group token: UInt64) -> ([Cancellation], [Task<Void, Never>]) {
        groups.modify(token) { $0.isCancelled = true }
        var cancellations: [Cancellation] = []
        var tasks: [Task<Void, Never>] = []
        entries.modifyAll { entry in
            guard entry.group?.token == token else { return }
            if let cancellation = entry.cancellation {
                cancellations.append(cancellation)
            } else if entry.kind == .sideEffect {
                entry.isTaskCancelled = true
                if let task = entry.task {
                    tasks.append(task)
                }
            }
        }
        return (cancellations, tasks)
    }

    func isTask(_ token: UInt64?) -> Bool {
        guard let token, let entry = entries[token] else { return false }
        return entry.kind != .run
    }

    func isIdle(excluding excluded: UInt64?) -> Bool {
        runningTasks == 0 || (runningTasks == 1 && isTask(excluded))
    }

    /// Whether `awaited` holds now.
    func holds(_ awaited: Awaited) -> Bool {
        switch awaited {
        case .tasksIdle(let excluded): isIdle(excluding: excluded)
        case .timedRunsDone: busyTimedEffects == 0
        case .pipelineIdle(let generation): pipelineIdleGeneration != generation
        }
    }

    /// Removes the waiters whose condition holds and returns their continuations.
    mutating func takeReadyWaiters() -> [CheckedContinuation<Void, Never>] {
        if waiters.isEmpty { return [] }
        let ids = waiters.filter { holds($0.value.awaited) }.map(\.key)
        return ids.compactMap { waiters.removeValue(forKey: $0)?.continuation }
    }
}

/// Values by token without hashing: a token is the value's slot and a serial number, so that the token of a value
/// that was removed (whose slot a newer value may hold) finds nothing.
struct Slab<Element: Sendable>: Sendable {
    private var items: [Element?] = []
    private var tokens: [UInt64] = []
    private var free: [Int] = []
    private var serial: UInt64 = 0

    init() {}

    /// A slab whose next insertion takes the serial after `serial`, for the tests of its wrap-around.
    init(serialForTesting serial: UInt64) {
        self.serial = serial
    }

    /// Stores `element` and returns its token, never 0 (the mark of an empty slot).
    mutating func insert(_ element: consuming Element) -> UInt64 {
        serial &+= 1
        if serial & 0xFFFF_FFFF == 0 {
            // Only the serial's low 32 bits are in the token: skip the serial that would make slot 0's token 0,
            // which an empty slot also has, so that a removal of it would free the slot twice.
            serial &+= 1
        }
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            items[slot] = element
        } else {
            slot = items.count
            items.append(element)
            tokens.append(0)
        }
        let token = serial << 32 | UInt64(slot)
        tokens[slot] = token
        return token
    }

    /// The slot of `token`, if it holds a value: `insert` sets the slot's token and `remove` clears it, so a slot
    /// whose token matches holds a value (tested without looking at the value, which would copy it).
    private func slot(_ token: UInt64) -> Int? {
        let slot = Int(truncatingIfNeeded: token & 0xFFFF_FFFF)
        return slot < tokens.count && tokens[slot] == token ? slot : nil
    }

    subscript(token: UInt64) -> Element? {
        slot(token).flatMap { items[$0] }
    }

    /// Changes the value of `token` in place and returns what `body` returns; `nil` if there is none.
    @discardableResult
    mutating func modify<T>(_ token: UInt64, _ body: (inout Element) -> T) -> T? {
        guard let slot = slot(token) else { return nil }
        return body(&items[slot]!)
    }

    /// Changes every value in place.
    mutating func modifyAll(_ body: (inout Element) -> Void) {
        for slot in items.indices where items[slot] != nil {
            body(&items[slot]!)
        }
    }

    /// Removes the value of `token` and returns it.
    @discardableResult
    mutating func remove(_ token: UInt64) -> Element? {
        guard let slot = slot(token) else { return nil }
        tokens[slot] = 0
        free.append(slot)
        return items[slot].take()
    }
}
