public import Dispatch

extension Middlewares {
    /// Runs a side effect once with the last action after `interval` of quiet.
    ///
    /// Each accepted action restarts the timer; when `interval` passes with no new accepted action, the effect runs
    /// on `scheduler` with the last one. A superseded action's run never starts. On a late scheduler, an action that
    /// arrives after the quiet time passed but before the run started supersedes it too: the effect runs once, with
    /// the last action. Runs happen one at a time, in the order of their actions.
    ///
    /// ```
    /// actions (ms):  0  50  100            400  450
    /// interval 200:                  ● (100, at 300)      ● (450, at 650)
    /// ```
    ///
    /// - Parameters:
    ///   - interval: The quiet time. `.nanoseconds(0)` runs every action at once; `.never` never runs.
    ///     A negative interval stops the program.
    ///   - scheduler: Where the runs happen and what time it is; by default a serial queue of this modifier.
    ///   - effect: The effect to debounce; only the actions it accepts restart the timer.
    @inlinable
    public static func debounce<State, Action>(
        _ interval: DispatchTimeInterval,
        on scheduler: any EffectScheduler = .storeClockOrOwnQueue,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        effect.timed(interval, "Middlewares.debounce", on: scheduler) { DebounceStateMachine(interval: $0) }
    }

    /// Runs `run` once with the last action after `interval` of quiet; see ``debounce(_:on:_:)``.
    @inlinable
    public static func debounce<State, Action>(
        _ interval: DispatchTimeInterval,
        on scheduler: any EffectScheduler = .storeClockOrOwnQueue,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        debounce(interval, on: scheduler, SideEffect(run))
    }
}

/// The quiet timer of `debounce`.
///
/// A restart only moves the deadline; the armed timer, when it fires early, re-arms itself for the new deadline.
/// So a burst of actions costs one timer, not one per action.
@usableFromInline
struct DebounceStateMachine<Run: Sendable>: TimedStateMachine, Sendable {
    /// The quiet time; `nil` for never.
    @usableFromInline
    let interval: UInt64?
    @usableFromInline
    var pending: Run?
    @usableFromInline
    var deadline: DispatchTime?
    @usableFromInline
    var isTimerArmed = false
    @usableFromInline
    var timerGeneration: UInt64 = 0

    @inlinable
    init(interval: UInt64?) {
        self.interval = interval
    }

    @inlinable
    mutating func receive(_ run: Run, at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest? {
        // A pending run whose quiet time has passed, but whose timer has not fired yet (the scheduler is late),
        // is superseded like any other: the run happens when the timer fires, with the last action.
        guard let newDeadline = now.adding(interval) else {
            // `.never`: nothing ever runs.
            pending = nil
            return nil
        }
        pending = run
        deadline = newDeadline
        if !isTimerArmed {
            isTimerArmed = true
            timerGeneration &+= 1
            return (newDeadline, timerGeneration)
        }
        return nil
    }

    @inlinable
    mutating func timerFired(at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest? {
        isTimerArmed = false
        guard let run = pending, let due = deadline else { return nil }
        if now < due {
            isTimerArmed = true
            timerGeneration &+= 1
            return (due, timerGeneration)
        }
        pending = nil
        deadline = nil
        runs.append(run)
        return nil
    }

    @inlinable
    mutating func reset() {
        pending = nil
        deadline = nil
        isTimerArmed = false
        timerGeneration &+= 1
    }
}
