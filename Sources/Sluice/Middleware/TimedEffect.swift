public import Dispatch

/// One accepted action and the API of its run, as the time-based modifiers hold them until they run.
@usableFromInline
struct EffectRun<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline
    let action: Action
    @usableFromInline
    let api: MiddlewareAPI<State, Action>

    @inlinable
    init(action: Action, api: MiddlewareAPI<State, Action>) {
        self.action = action
        self.api = api
    }
}

/// The per-store part of a time-based modifier: a state machine behind a lock, a scheduler, and the handler of
/// the wrapped effect.
///
/// The state machine decides; this class runs what it decided, always outside the lock: runs of the effect,
/// and timers on the scheduler. When the store goes away the timer is cancelled and the machine is reset, so no
/// work runs afterwards and nothing that the work captured stays alive.
///
/// `@unchecked Sendable`: `machine` and `timer` are guarded by `lock`.
///
/// The per-action path is `@inlinable`, so that it is specialized for the store's state and action types in the
/// caller's module: unspecialized, it built generic type metadata on every action (about 2,000 instructions for
/// an action that `throttle` drops).
@usableFromInline
final class TimedEffect<Machine: TimedStateMachine>: @unchecked Sendable {
    @usableFromInline
    typealias Run = Machine.Run
    @usableFromInline
    let lock = Lock()
    @usableFromInline @exclusivity(unchecked)
    var machine: Machine
    @usableFromInline @exclusivity(unchecked)
    var timer: ScheduledWork?
    @usableFromInline
    let scheduler: any EffectScheduler
    @usableFromInline
    let handler: @Sendable (Run) -> Void

    @usableFromInline
    init(
        machine: Machine,
        scheduler: any EffectScheduler,
        lifetime: Cancellation,
        handler: @escaping @Sendable (Run) -> Void
    ) {
        self.machine = machine
        self.scheduler = scheduler
        self.handler = handler
        lifetime.onCancel { [weak self] in self?.tearDown() }
    }

    /// An accepted action arrived (on the dispatching thread).
    @inlinable
    func receive(_ run: Run) {
        let now = scheduler.now
        let decision = lock.withLock { machine.receive(run, at: now) }
        perform(decision)
    }

    @usableFromInline
    func fire(_ generation: UInt64) {
        let now = scheduler.now
        let decision: TimedDecision<Run>? = lock.withLock {
            guard machine.timerGeneration == generation else { return nil }
            timer = nil
            return machine.timerFired(at: now)
        }
        if let decision { perform(decision) }
    }

    @inlinable
    func perform(_ decision: TimedDecision<Run>) {
        if decision.isEmpty { return }
        performSlowly(decision)
    }

    @usableFromInline
    func performSlowly(_ decision: TimedDecision<Run>) {
        for run in decision.owed {
            // Due before this moment but not yet run because the scheduler was late: run it on the scheduler.
            _ = scheduler.schedule(after: DispatchTime(uptimeNanoseconds: 1)) { [handler] in handler(run) }
        }
        if let (deadline, generation) = decision.armTimer {
            let work = scheduler.schedule(after: deadline) { [weak self] in self?.fire(generation) }
            let stale: ScheduledWork? = lock.withLock {
                guard machine.timerGeneration == generation else { return work }
                defer { timer = work }
                return timer
            }
            stale?.cancel()
        }
        for run in decision.runNow {
            handler(run)
        }
    }

    private func tearDown() {
        let timer: ScheduledWork? = lock.withLock {
            machine.reset()
            defer { self.timer = nil }
            return self.timer
        }
        timer?.cancel()
    }
}

/// What a time-based modifier does next.
@usableFromInline
struct TimedDecision<Run> {
    /// Runs of the effect to perform now, in order, on the calling thread.
    @usableFromInline
    var runNow: [Run] = []
    /// Runs that were due before now: performed on the scheduler as soon as possible.
    @usableFromInline
    var owed: [Run] = []
    /// A timer to arm at this deadline, replacing any armed one; it fires with this generation.
    @usableFromInline
    var armTimer: (deadline: DispatchTime, generation: UInt64)?

    @inlinable
    init() {}

    /// Nothing to do: the common case of an action that a modifier drops or only records.
    @inlinable
    var isEmpty: Bool {
        runNow.isEmpty && owed.isEmpty && armTimer == nil
    }
}

/// The state machine of a time-based modifier; pure and synchronous, so that it is easy to reason about.
@usableFromInline
protocol TimedStateMachine: SendableMetatype {
    associatedtype Run: Sendable
    /// Changes whenever the armed timer is replaced or disarmed; a timer that fires with an old generation is stale.
    var timerGeneration: UInt64 { get }
    /// An action arrived at `now`.
    mutating func receive(_ run: Run, at now: DispatchTime) -> TimedDecision<Run>
    /// The armed timer fired at `now`.
    mutating func timerFired(at now: DispatchTime) -> TimedDecision<Run>
    /// The store went away: forget everything.
    mutating func reset()
}

extension SideEffect {
    /// This effect under a time-based modifier: `interval` checked (negative stops the program, naming
    /// `operatorName`; zero means no rate limit, so the effect is returned as it is), then each store that
    /// installs the effect gets its own state machine from `makeMachine` on `scheduler`.
    @inlinable
    func timed<Machine: TimedStateMachine & Sendable>(
        _ interval: DispatchTimeInterval,
        _ operatorName: String,
        on scheduler: any EffectScheduler,
        _ makeMachine: (_ nanoseconds: UInt64?) -> Machine
    ) -> SideEffect where Machine.Run == EffectRun<State, Action> {
        let nanoseconds = interval.nanoseconds(checking: operatorName)
        if nanoseconds == 0 {
            return self
        }
        let machine = makeMachine(nanoseconds)
        return SideEffect(accepts: accepts) { storeAPI in
            let handler = install(storeAPI)
            let timed = TimedEffect(machine: machine, scheduler: scheduler, lifetime: storeAPI.storeLifetime) { run in
                run.api.runUnlessCancelled(handler, run.action)
            }
            return { action, api in timed.receive(EffectRun(action: action, api: api)) }
        }
    }
}

extension MiddlewareAPI {
    /// Runs the wrapped effect's handler unless this run was cancelled (superseded, or the store is gone).
    @inlinable
    func runUnlessCancelled(_ handler: SideEffect<State, Action>.Handler, _ action: Action) {
        if !isCancelled {
            handler(action, self)
        }
    }
}
