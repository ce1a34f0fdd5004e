public import Dispatch

extension Middlewares {
    /// Runs a side effect at most once per `interval`, on the leading edge, optionally also with the newest
    /// action on the trailing edge.
    ///
    /// An accepted action that finds no open window runs the effect at once, synchronously inside `dispatch`,
    /// and opens the window `[t, t + interval)`. Actions inside the window are dropped, or, with `latest: true`,
    /// the newest of them runs when the window ends (on `scheduler`) and opens a new window from there, as
    /// redux-saga's `throttle`. Work due at an instant runs before an action dispatched at that instant.
    ///
    /// Runs happen one at a time, in the order of their actions, however late the scheduler is: a trailing run
    /// that is due but not started when the next action arrives runs first, on the dispatching thread, and the
    /// windows advance as if the timer had been on time. A run that falls due while another run of this throttle is
    /// in progress runs right after it, on that run's thread.
    ///
    /// ```
    /// actions (ms):       0  10  20 … 90 100 110 … 190 200 … 300 … 340
    /// interval 100:       ●                ●               ●       ●          runs with 0, 100, 200, 300
    /// latest: true:       ●                ● (90)          ● (190) ● (290)  ● (340, at 400)
    /// ```
    ///
    /// - Parameters:
    ///   - interval: The length of a window. `.nanoseconds(0)` runs every action; `.never` runs only the first.
    ///     A negative interval stops the program.
    ///   - latest: Whether the newest action dropped inside a window runs when the window ends.
    ///   - scheduler: Where trailing runs happen and what time it is; by default a serial queue of this modifier.
    ///   - effect: The effect to throttle; only the actions it accepts count.
    @inlinable
    public static func throttle<State, Action>(
        _ interval: DispatchTimeInterval,
        latest: Bool = false,
        on scheduler: any EffectScheduler = .storeClockOrOwnQueue,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        effect.timed(interval, "Middlewares.throttle", on: scheduler) {
            ThrottleStateMachine(interval: $0, latest: latest)
        }
    }

    /// Runs `run` at most once per `interval`; see ``throttle(_:latest:on:_:)``.
    @inlinable
    public static func throttle<State, Action>(
        _ interval: DispatchTimeInterval,
        latest: Bool = false,
        on scheduler: any EffectScheduler = .storeClockOrOwnQueue,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        throttle(interval, latest: latest, on: scheduler, SideEffect(run))
    }
}

/// The windows of `throttle`.
@usableFromInline
struct ThrottleStateMachine<Run: Sendable>: TimedStateMachine, Sendable {
    /// The window length; `nil` for a window that never ends.
    @usableFromInline
    let interval: UInt64?
    @usableFromInline
    let latest: Bool
    /// The end of the current window; `nil` before the first run, or for a window that never ends.
    @usableFromInline
    var windowEnd: DispatchTime?
    @usableFromInline
    var isOpen = false
    /// The newest action dropped inside the window (with `latest`), which runs when it ends.
    @usableFromInline
    var pending: Run?
    @usableFromInline
    var timerGeneration: UInt64 = 0

    @inlinable
    init(interval: UInt64?, latest: Bool) {
        self.interval = interval
        self.latest = latest
    }

    @inlinable
    mutating func receive(_ run: Run, at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest? {
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
            runs.append(run)
            return nil
        }
        guard latest else { return nil }
        let hadPending = pending != nil
        pending = run
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
    mutating func reset() {
        pending = nil
        timerGeneration &+= 1
    }
}
