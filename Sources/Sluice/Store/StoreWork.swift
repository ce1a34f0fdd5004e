/// The work of a store that ``Store/shutdown(timeout:)`` settles, and where failing effects are reported.
///
/// - Tracked tasks: every effect's task and every `async` side effect's task registers here while it runs, with a
///   token that it also carries in a task-local value, so that a shutdown called from inside one of them knows
///   not to wait for its caller, and with its kind, so that the test store can tell running side-effect tasks
///   from running effects. This is the one count of running tasks of the store.
/// - Owed runs: each time-based modifier installed in the store registers its ``TimedEffect`` (weakly), so that
///   shutdown can run what it owes now. Once flushed, a modifier reports here whether it is busy (performing runs,
///   on whatever thread) and whether it owes runs again; shutdown waits on these counts (see
///   ``settleTimedEffects(until:)``).
/// - The failure handler given to the store, called for errors of effects that nobody else sees.
/// - The shutdown's progress: the first call performs it, later and concurrent calls wait for its report.
///
/// `@unchecked Sendable`: every mutable property is guarded by `lock`.
final class StoreWork: @unchecked Sendable {
    private let lock = Lock()
    private var running: [UInt64: TaskKind] = [:]
    /// How many of `running` are side-effect tasks.
    private var runningSideEffectTasks = 0
    private var nextToken: UInt64 = 0
    private var waiters: [UInt64: Waiter] = [:]
    private var cancelledWaiters: Set<UInt64> = []
    private var timedEffects: [TimedEffectHandle] = []
    /// How many flushed modifiers are busy, and how many owe runs (see ``TimedEffect/noteClosingStateLocked()``).
    private var busyTimedEffects = 0
    private var owingTimedEffects = 0
    private var failureHandler: (@Sendable (EffectFailure) -> Void)?
    private var phase = Phase.open
    /// Tracked tasks that ended while shutdown was waiting.
    private var finishedDuringShutdown = 0

    /// What a waiter waits for.
    private enum Awaited {
        /// No tracked task runs besides `excluded`.
        case tasksIdle(excluding: UInt64?)
        /// No flushed modifier is busy.
        case timedRunsDone
    }

    private struct Waiter {
        let awaited: Awaited
        let continuation: CheckedContinuation<Void, Never>
    }

    /// A time-based modifier, seen by shutdown without keeping it alive.
    private struct TimedEffectHandle {
        let flush: @Sendable (StoreWork) -> Int
    }

    private enum Phase {
        case open
        case shuttingDown(waiters: [CheckedContinuation<ShutdownReport, Never>])
        case shutDown(ShutdownReport)
    }

    /// The tracked task that the current task runs in (or descends from), if any.
    @TaskLocal static var current: Mark?

    /// What a tracked task runs.
    enum TaskKind {
        /// An asynchronous effect started with `run(id:cancelInFlight:_:)`.
        case effect
        /// The task of an `async` side effect.
        case sideEffect
    }

    /// A tracked task: which store's work, which token.
    struct Mark: Sendable {
        let work: ObjectIdentifier
        let token: UInt64
    }

    init() {}

    // MARK: Failures

    func setFailureHandler(_ handler: (@Sendable (EffectFailure) -> Void)?) {
        lock.withLock { failureHandler = handler }
    }

    /// Reports `error` to the store's handler, unless it is a cancellation: a `CancellationError`, or any error
    /// thrown by work that was cancelled.
    func report(_ error: any Error, wasCancelled: Bool, makeFailure: () -> EffectFailure) {
        if wasCancelled || error is CancellationError { return }
        guard let handler = lock.withLock({ failureHandler }) else { return }
        handler(makeFailure())
    }

    // MARK: Tracked tasks

    /// Registers a task of `kind` that is about to start; pass the token to ``track(_:_:)`` and ``end(_:)``.
    func begin(_ kind: TaskKind) -> UInt64 {
        lock.withLock {
            nextToken &+= 1
            running[nextToken] = kind
            if kind == .sideEffect {
                runningSideEffectTasks += 1
            }
            return nextToken
        }
    }

    /// Runs `body` marked as the tracked task `token`.
    func track<T>(_ token: UInt64, _ body: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(Mark(work: ObjectIdentifier(self), token: token), operation: body)
    }

    /// The tracked task `token` ended.
    func end(_ token: UInt64) {
        let ready: [CheckedContinuation<Void, Never>] = lock.withLock {
            guard let kind = running.removeValue(forKey: token) else { return [] }
            if kind == .sideEffect {
                runningSideEffectTasks -= 1
            }
            if case .shuttingDown = phase {
                finishedDuringShutdown += 1
            }
            return takeReadyWaitersLocked()
        }
        for continuation in ready {
            continuation.resume()
        }
    }

    /// Removes the waiters whose condition holds and returns their continuations; called with `lock` held.
    private func takeReadyWaitersLocked() -> [CheckedContinuation<Void, Never>] {
        if waiters.isEmpty { return [] }
        let ids = waiters.filter { holds($0.value.awaited) }.map(\.key)
        return ids.compactMap { waiters.removeValue(forKey: $0)?.continuation }
    }

    /// Whether `awaited` holds now; called with `lock` held.
    private func holds(_ awaited: Awaited) -> Bool {
        switch awaited {
        case .tasksIdle(let excluded): isIdle(excluding: excluded)
        case .timedRunsDone: busyTimedEffects == 0
        }
    }

    /// The token of the calling task if it is a tracked task of this store.
    var callerToken: UInt64? {
        guard let mark = Self.current, mark.work == ObjectIdentifier(self) else { return nil }
        return mark.token
    }

    /// The number of tracked tasks running, besides `excluded`.
    func runningCount(excluding excluded: UInt64?) -> Int {
        lock.withLock { running.count - (excluded.map { running[$0] != nil ? 1 : 0 } ?? 0) }
    }

    /// The number of side-effect tasks running (the test store's exhaustivity reads it).
    var runningSideEffectTaskCount: Int {
        lock.withLock { runningSideEffectTasks }
    }

    private func isIdle(excluding excluded: UInt64?) -> Bool {
        running.isEmpty || (running.count == 1 && excluded.map { running[$0] != nil } == true)
    }

    /// Waits until no tracked task besides `excluded` runs, or until `deadline`; returns whether they all ended.
    func waitForTasks(excluding excluded: UInt64?, until deadline: ContinuousClock.Instant) async -> Bool {
        await wait(for: .tasksIdle(excluding: excluded), until: deadline)
    }

    /// Waits until `awaited` holds, until `deadline`, or until the calling task is cancelled; returns whether it
    /// holds.
    private func wait(for awaited: Awaited, until deadline: ContinuousClock.Instant) async -> Bool {
        if lock.withLock({ holds(awaited) }) { return true }
        let held = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.waitUntil(awaited)
                return true
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        return held && lock.withLock { holds(awaited) }
    }

    /// Returns when `awaited` holds, or when the calling task is cancelled.
    private func waitUntil(_ awaited: Awaited) async {
        let id: UInt64 = lock.withLock {
            nextToken &+= 1
            return nextToken
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow: Bool = lock.withLock {
                    if holds(awaited) || cancelledWaiters.contains(id) { return true }
                    waiters[id] = Waiter(awaited: awaited, continuation: continuation)
                    return false
                }
                if resumeNow {
                    continuation.resume()
                }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, Never>? = lock.withLock {
                if let waiter = waiters.removeValue(forKey: id) { return waiter.continuation }
                cancelledWaiters.insert(id)
                return nil
            }
            continuation?.resume()
        }
        lock.withLock { _ = cancelledWaiters.remove(id) }
    }

    // MARK: Time-based modifiers

    /// Lets shutdown flush `timed`, for as long as it exists.
    func register<Machine>(_ timed: TimedEffect<Machine>) {
        let handle = TimedEffectHandle(flush: { [weak timed] work in timed?.flush(settlingWith: work) ?? 0 })
        lock.withLock { timedEffects.append(handle) }
    }

    /// Runs what every time-based modifier of the store owes, until none is busy and none owes runs: flushes them
    /// all (which closes them), waits until no run of theirs is in progress on any thread, and flushes again while
    /// one owes runs (left by runs performed meanwhile: a `debounce` behind a `delay`, fed by the delayed runs).
    /// Stops early at `deadline` or when the calling task is cancelled; returns how many owed runs it released.
    ///
    /// Each pass releases only what the machines owe at that moment, so no run is released twice.
    func settleTimedEffects(until deadline: ContinuousClock.Instant) async -> Int {
        let handles = lock.withLock { timedEffects }
        var released = 0
        while true {
            released += handles.reduce(0) { $0 + $1.flush(self) }
            guard await wait(for: .timedRunsDone, until: deadline) else { return released }
            if lock.withLock({ owingTimedEffects == 0 }) { return released }
        }
    }

    /// A flushed modifier became busy or idle (`busy` +1 or -1) or started or stopped owing runs (`owing`);
    /// called with that modifier's lock held.
    func timedEffectChanged(busy: Int, owing: Int) {
        let ready: [CheckedContinuation<Void, Never>] = lock.withLock {
            busyTimedEffects += busy
            owingTimedEffects += owing
            return busy < 0 ? takeReadyWaitersLocked() : []
        }
        for continuation in ready {
            continuation.resume()
        }
    }

    /// Whether all the work that shutdown waits for is done: no flushed modifier is busy or owes runs, and no tracked
    /// task besides `excluded` runs. Read at once, under one lock: once it is `true` after every modifier was
    /// flushed and dispatches are refused, nothing can start any more work.
    func isSettled(excluding excluded: UInt64?) -> Bool {
        lock.withLock { busyTimedEffects == 0 && owingTimedEffects == 0 && isIdle(excluding: excluded) }
    }

    // MARK: Shutdown

    enum ShutdownTurn {
        /// This caller performs the shutdown.
        case perform
        /// Another caller performs it: wait for its report.
        case wait
        /// It is over.
        case done(ShutdownReport)
    }

    func takeShutdownTurn() -> ShutdownTurn {
        lock.withLock {
            switch phase {
            case .open:
                phase = .shuttingDown(waiters: [])
                return .perform
            case .shuttingDown: return .wait
            case .shutDown(let report): return .done(report)
            }
        }
    }

    /// Waits for the report of the shutdown that another caller performs.
    func awaitReport() async -> ShutdownReport {
        await withCheckedContinuation { (continuation: CheckedContinuation<ShutdownReport, Never>) in
            let report: ShutdownReport? = lock.withLock {
                switch phase {
                case .open: return nil  // not reached: a caller waits only once a shutdown began
                case .shuttingDown(var waiters):
                    waiters.append(continuation)
                    phase = .shuttingDown(waiters: waiters)
                    return nil
                case .shutDown(let report): return report
                }
            }
            if let report {
                continuation.resume(returning: report)
            }
        }
    }

    /// The number of tracked tasks that ended since shutdown began.
    var tasksFinishedDuringShutdown: Int {
        lock.withLock { finishedDuringShutdown }
    }

    /// Records the report and hands it to the callers that wait for it.
    func finishShutdown(_ report: ShutdownReport) {
        let waiters: [CheckedContinuation<ShutdownReport, Never>] = lock.withLock {
            defer { phase = .shutDown(report) }
            if case .shuttingDown(let waiters) = phase { return waiters }
            return []
        }
        for waiter in waiters {
            waiter.resume(returning: report)
        }
    }
}
