public import Dispatch

extension Middlewares {
    /// Runs a side effect at most once per `interval`: on the leading edge, on the trailing edge with the newest
    /// action, or both.
    ///
    /// An accepted action that finds no open window opens the window `[t, t + interval)`; with `leading` it runs the
    /// effect at once: on `scheduler`, as soon as it gets to it, or, with `runs: .inDispatch`, synchronously inside
    /// `dispatch` (see ``RunPlacement``). The actions inside the window
    /// are dropped, or, with `trailing`, the newest of them runs when the window ends (on `scheduler`) and opens a new
    /// window from there. With `leading: false`, the action that opens a window is the first candidate for its
    /// trailing run. These are lodash's `throttle` options; `leading: true, trailing: true` is redux-saga's
    /// `throttle`. Work due at an instant runs before an action dispatched at that instant.
    ///
    /// Runs happen one at a time, in the order of their actions, however late the scheduler is: a trailing run
    /// that is due but not started when the next action arrives runs first, and the windows advance as if the timer
    /// had been on time. A run that falls due while another run of this throttle is in progress runs right after
    /// it, on that run's thread.
    ///
    /// ```
    /// actions (ms):          0  10  20 … 90 100 110 … 190 200 … 300 … 340
    /// interval 100:          ●                ●               ●       ●           runs with 0, 100, 200, 300
    /// trailing: true:        ●                ● (90)          ● (190) ● (290)  ● (340, at 400)
    /// leading: false,
    ///   trailing: true:                       ● (90)          ● (190) ● (290)  ● (340, at 400)
    /// ```
    ///
    /// - Parameters:
    ///   - interval: The length of a window, in whole nanoseconds (a fraction of one rounds up). `.zero` runs every
    ///     action. An interval of 2⁶⁴ ns or more (about 584 years, e.g. `.seconds(Int64.max)`) never ends: only the
    ///     first action runs (and, with `leading: false`, nothing). A negative interval stops the program.
    ///   - leading: Whether the action that opens a window runs at once.
    ///   - trailing: Whether the newest action of a window (not counting a leading run) runs when the window ends.
    ///     `leading: false, trailing: false` would never run and stops the program.
    ///   - placement: Where a leading run happens: on `scheduler` (the default), so that `dispatch` never waits for
    ///     the effect, or synchronously inside `dispatch` (`.inDispatch`).
    ///   - scheduler: Where trailing runs happen and what time it is; by default the store's
    ///     ``StoreDependencies/scheduler`` if its dependencies set one, else a serial queue of this modifier.
    ///   - effect: The effect to throttle; only the actions it accepts count.
    @inlinable
    public static func throttle<State, Action>(
        _ interval: Duration,
        leading: Bool = true,
        trailing: Bool = false,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        if !leading && !trailing {
            usageError("Middlewares.throttle: leading: false and trailing: false would never run the effect.")
        }
        return effect.timed(interval, "Middlewares.throttle", runs: placement, on: scheduler) {
            ThrottleStateMachine(interval: $0, leading: leading, trailing: trailing)
        }
    }

    /// Runs `run` at most once per `interval`; see
    /// ``throttle(_:leading:trailing:runs:on:_:)-(Duration,_,_,_,_,SideEffect<State,Action>)``.
    @inlinable
    public static func throttle<State, Action>(
        _ interval: Duration,
        leading: Bool = true,
        trailing: Bool = false,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        throttle(interval, leading: leading, trailing: trailing, runs: placement, on: scheduler, SideEffect(run))
    }

    /// Runs a side effect at most once per `interval`, on the leading edge, and with `latest: true` also with the
    /// newest action on the trailing edge.
    ///
    /// The first spelling of throttle's options, kept as a shorthand: `latest: false` is
    /// `leading: true, trailing: false`, and `latest: true` is `leading: true, trailing: true`. See
    /// ``throttle(_:leading:trailing:runs:on:_:)-(Duration,_,_,_,_,SideEffect<State,Action>)``.
    @inlinable
    public static func throttle<State, Action>(
        _ interval: Duration,
        latest: Bool,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        throttle(interval, leading: true, trailing: latest, runs: placement, on: scheduler, effect)
    }

    /// Runs `run` at most once per `interval`; see
    /// ``throttle(_:latest:runs:on:_:)-(Duration,_,_,_,SideEffect<State,Action>)``.
    @inlinable
    public static func throttle<State, Action>(
        _ interval: Duration,
        latest: Bool,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        throttle(interval, leading: true, trailing: latest, runs: placement, on: scheduler, SideEffect(run))
    }
}

/// The windows of `throttle`.
@usableFromInline
struct ThrottleStateMachine<Run: Sendable>: TimedStateMachine, Sendable {
    /// The window length; `nil` for a window that never ends.
    @usableFromInline
    let interval: UInt64?
    @usableFromInline
    let leading: Bool
    @usableFromInline
    let trailing: Bool
    /// The end of the current window; `nil` before the first run, or for a window that never ends.
    @usableFromInline
    var windowEnd: DispatchTime?
    @usableFromInline
    var isOpen = false
    /// The newest action of the window that has not run (with `trailing`), which runs when it ends.
    @usableFromInline
    var pending: Run?
    @usableFromInline
    var timerGeneration: UInt64 = 0

    @inlinable
    init(interval: UInt64?, leading: Bool, trailing: Bool) {
        self.interval = interval
        self.leading = leading
        self.trailing = trailing
    }

    @inlinable
    mutating func receive(_ run: consuming Run, at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest? {
        if isOpen, let end = windowEnd, now >= end {
            if let owed = pending {
                // The trailing run was due at `end` and the timer is late: it runs now, before this action's run,
                // and opens the window [end, end + interval) as if the timer had been on time. The late timer
                // becomes stale.
                pending = nil
                timerGeneration &+= 1
                runs.append(owed)
                windowEnd = end.adding(interval)
                if windowEnd.map({ now >= $0 }) ?? false {
                    isOpen = false
                }
            } else {
                isOpen = false
            }
        }
        guard isOpen else {
            isOpen = true
            windowEnd = now.adding(interval)
            if leading {
                runs.append(run)
                return nil
            }
            // Trailing only: the action that opens the window waits for its end, like the ones inside it.
            pending = run
            guard let end = windowEnd else { return nil }
            timerGeneration &+= 1
            return (end, timerGeneration)
        }
        guard trailing else { return nil }
        let hadPending = pending != nil
        pending = run
        if !hadPending, let end = windowEnd {
            timerGeneration &+= 1
            return (end, timerGeneration)
        }
        return nil
    }

    /// An action inside the open window (before ``alikeUntil``): with `trailing`, it becomes the pending run, and
    /// the first one of the window arms the timer; as ``receive(_:at:runs:)`` decides for any time before the end.
    @inlinable
    mutating func receiveAlike(_ hold: (inout Run?) -> Void) -> TimerRequest? {
        guard trailing else { return nil }
        let hadPending = pending != nil
        hold(&pending)
        if !hadPending, let end = windowEnd {
            timerGeneration &+= 1
            return (end, timerGeneration)
        }
        return nil
    }

    @inlinable
    mutating func timerFired(at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest? {
        guard let run = pending, let end = windowEnd else { return nil }
        pending = nil
        // The trailing run opens the next window at the end of this one.
        windowEnd = end.adding(interval)
        isOpen = true
        runs.append(run)
        return nil
    }

    @inlinable
    mutating func flush(runs: inout RunQueue<Run>) -> Int {
        timerGeneration &+= 1
        guard let run = pending else { return 0 }
        pending = nil
        runs.append(run)
        return 1
    }

    @inlinable
    var owesRuns: Bool {
        pending != nil
    }

    /// The end of the open window (never, for a window that never ends): before it, an action is dropped (without
    /// `trailing`) or becomes the pending trailing run, whatever the time. A window closes only when an action at
    /// or after its end opens the next one, which ends later, so the instant never moves backward.
    @inlinable
    var alikeUntil: UInt64 {
        guard isOpen else { return 0 }
        return windowEnd?.uptimeNanoseconds ?? .max
    }

    /// Without `trailing`, an action inside an open window changes nothing.
    @inlinable
    var dropsUntilThen: Bool {
        leading && !trailing
    }

    /// Never: a window opened late would drop an action that comes after its real end instead of running it.
    @inlinable
    func toleratesLateTime(by lateness: UInt64) -> Bool {
        false
    }

    @inlinable
    mutating func reset() {
        pending = nil
        timerGeneration &+= 1
    }
}
