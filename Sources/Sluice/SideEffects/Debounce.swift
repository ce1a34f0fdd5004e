public import Dispatch

extension Middlewares {
    /// Runs a side effect once with the last action after `interval` of quiet, and, with `maxWait`, at least once
    /// every `maxWait` while actions keep coming.
    ///
    /// Each accepted action restarts the timer; when `interval` passes with no new accepted action, the effect runs
    /// on `scheduler` with the last one. A superseded action's run never starts. On a late scheduler, an action that
    /// arrives after the quiet time passed but before the run started supersedes it too: the effect runs once, with
    /// the last action. Runs happen one at a time, in the order of their actions.
    ///
    /// Under steady load (an action more often than every `interval`) a plain debounce never runs. With `maxWait`
    /// (lodash's option of that name), a waiting run also happens once `maxWait` has passed since the previous run,
    /// or since the first action of the burst if there was no run in it yet. If the scheduler is so late that an
    /// action arrives after that deadline while a run is waiting, that action runs at once (on `scheduler`, or inside
    /// `dispatch` with `runs: .inDispatch`), superseding the waiting one.
    ///
    /// ```
    /// actions (ms):   0  50  100            400  450
    /// interval 200:                  ● (100, at 300)      ● (450, at 650)
    ///
    /// actions (ms):   0  50  100 … 250 300 … 550 600 … 850 900 950 1000
    /// interval 100,
    ///   maxWait 300:                  ● (250, at 300)  ● (550, at 600)  ● (850, at 900)  ● (1000, at 1100)
    /// ```
    ///
    /// - Parameters:
    ///   - interval: The quiet time, in whole nanoseconds (a fraction of one rounds up). `.zero` runs every action at
    ///     once (on `scheduler`, or inside `dispatch` with `runs: .inDispatch`). An interval of 2⁶⁴ ns or more
    ///     (about 584 years, e.g. `.seconds(Int64.max)`) never passes: without `maxWait`, the last action's run
    ///     waits for ``Store/shutdown(timeout:)``, which runs it. A negative interval stops the program.
    ///   - maxWait: The longest a waiting run is put off; `nil` (the default) for no limit, as is a `maxWait` of
    ///     2⁶⁴ ns or more. A negative `maxWait` or one shorter than `interval` stops the program.
    ///   - placement: Where a run that an action decides happens (only a zero `interval` and a late `maxWait` run do):
    ///     on `scheduler` (the default) or inside `dispatch` (`.inDispatch`).
    ///   - scheduler: Where the runs happen and what time it is; by default the store's
    ///     ``StoreDependencies/scheduler`` if its dependencies set one, else a serial queue of this modifier.
    ///   - effect: The effect to debounce; only the actions it accepts restart the timer.
    @inlinable
    public static func debounce<State, Action>(
        _ interval: Duration,
        maxWait: Duration? = nil,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        let maxWaitNanoseconds = checkedMaxWait(maxWait, interval: interval)
        return effect.timed(interval, "Middlewares.debounce", runs: placement, on: scheduler) {
            DebounceStateMachine(interval: $0, maxWait: maxWaitNanoseconds)
        }
    }

    /// Runs `run` once with the last action after `interval` of quiet; see
    /// ``debounce(_:maxWait:runs:on:_:)-(Duration,_,_,_,SideEffect<State,Action>)``.
    @inlinable
    public static func debounce<State, Action>(
        _ interval: Duration,
        maxWait: Duration? = nil,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        debounce(interval, maxWait: maxWait, runs: placement, on: scheduler, SideEffect(run))
    }

    /// `maxWait` in nanoseconds (`nil` for no limit), after checking it against `interval`.
    @usableFromInline
    static func checkedMaxWait(_ maxWait: Duration?, interval: Duration) -> UInt64? {
        guard let maxWait else { return nil }
        if maxWait < .zero {
            usageError("Middlewares.debounce: maxWait must not be negative, got \(maxWait).")
        }
        if maxWait < interval {
            usageError(
                "Middlewares.debounce: maxWait must not be shorter than the interval, got maxWait \(maxWait) "
                    + "for interval \(interval)."
            )
        }
        return maxWait.nanoseconds(checking: "Middlewares.debounce")
    }
}

/// The quiet timer of `debounce`, and its `maxWait` deadline.
///
/// A restart only moves the deadline; the armed timer, when it fires early, re-arms itself for the nearer of the
/// quiet deadline and the `maxWait` deadline. So a burst of actions costs one timer, not one per action.
///
/// The `maxWait` deadline follows lodash: it is `maxWait` after the previous run, as long as actions keep coming
/// (no quiet time passed since the last action), or else `maxWait` after the first action of the new burst.
@usableFromInline
struct DebounceStateMachine<Run: Sendable>: TimedStateMachine, Sendable {
    /// The quiet time; `nil` for never.
    @usableFromInline
    let interval: UInt64?
    /// The longest wait; `nil` for no limit.
    @usableFromInline
    let maxWait: UInt64?
    @usableFromInline
    var pending: Run?
    /// When the pending run is due for quiet.
    @usableFromInline
    var deadline: DispatchTime?
    /// When the pending run is due at the latest (with `maxWait`).
    @usableFromInline
    var maxDeadline: DispatchTime?
    /// When the last action arrived and when the last run happened (with `maxWait`).
    @usableFromInline
    var lastActionAt: DispatchTime?
    @usableFromInline
    var lastRunAt: DispatchTime?
    @usableFromInline
    var isTimerArmed = false
    @usableFromInline
    var timerGeneration: UInt64 = 0

    @inlinable
    init(interval: UInt64?, maxWait: UInt64? = nil) {
        self.interval = interval
        self.maxWait = maxWait
    }

    @inlinable
    mutating func receive(_ run: consuming Run, at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest? {
        // A pending run whose quiet time has passed, but whose timer has not fired yet (the scheduler is late),
        // is superseded like any other: the run happens when the timer fires, with the last action.
        guard maxWait != nil else {
            // Without `maxWait` only the quiet deadline counts (and `lastActionAt` is never read).
            pending = run
            guard let newDeadline = now.adding(interval) else {
                // An interval that never passes: no timer; the run stays owed until shutdown runs it.
                deadline = nil
                return nil
            }
            deadline = newDeadline
            if isTimerArmed {
                return nil
            }
            isTimerArmed = true
            timerGeneration &+= 1
            return (newDeadline, timerGeneration)
        }
        defer { lastActionAt = now }
        if maxWait != nil {
            if pending != nil, let latest = maxDeadline, now >= latest {
                // The timer is so late that the longest wait passed: this action, the newest, runs now.
                pending = nil
                deadline = nil
                lastRunAt = now
                maxDeadline = now.adding(maxWait)
                runs.append(run)
                return nil
            }
            if pending == nil {
                let burstGoesOn = lastActionAt.map { now < ($0.adding(interval) ?? .distantFuture) } ?? false
                let start = burstGoesOn ? (lastRunAt ?? now) : now
                maxDeadline = start.adding(maxWait)
            }
        }
        let newDeadline = now.adding(interval)
        pending = run
        deadline = newDeadline
        guard let due = Self.earliest(newDeadline, maxDeadline) else {
            // An interval that never passes and no `maxWait`: no timer; the run stays owed until shutdown runs it.
            return nil
        }
        if !isTimerArmed {
            isTimerArmed = true
            timerGeneration &+= 1
            return (due, timerGeneration)
        }
        return nil
    }

    @inlinable
    mutating func timerFired(at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest? {
        isTimerArmed = false
        guard let run = pending, let due = Self.earliest(deadline, maxDeadline) else { return nil }
        if now < due {
            isTimerArmed = true
            timerGeneration &+= 1
            return (due, timerGeneration)
        }
        pending = nil
        if deadline.map({ now >= $0 }) ?? false {
            // Quiet: the burst is over.
            maxDeadline = nil
        } else {
            // The longest wait: the next one counts from this run, while the actions go on.
            maxDeadline = now.adding(maxWait)
        }
        deadline = nil
        lastRunAt = now
        runs.append(run)
        return nil
    }

    /// The earlier of two deadlines, either of which may be never.
    @inlinable
    static func earliest(_ a: DispatchTime?, _ b: DispatchTime?) -> DispatchTime? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    @inlinable
    mutating func flush(runs: inout RunQueue<Run>) -> Int {
        timerGeneration &+= 1
        isTimerArmed = false
        deadline = nil
        maxDeadline = nil
        guard let run = pending else { return 0 }
        pending = nil
        runs.append(run)
        return 1
    }

    /// None: every action restarts the quiet time or runs at its own time.
    @inlinable
    var alikeUntil: UInt64 { 0 }

    @inlinable
    var dropsUntilThen: Bool { false }

    /// Never called: ``alikeUntil`` is 0.
    @inlinable
    mutating func receiveAlike(_ hold: (inout Run?) -> Void) -> TimerRequest? {
        preconditionFailure("receiveAlike on a machine without an alike instant")
    }

    /// Without `maxWait`, an action only moves the quiet deadline, which may then be late by `lateness` if that is
    /// at most a tenth of the interval. With `maxWait`, a late time would run a waiting run early (its longest wait
    /// would seem to have passed), so never.
    @inlinable
    func toleratesLateTime(by lateness: UInt64) -> Bool {
        guard maxWait == nil, let interval, interval > 0 else { return false }
        return lateness <= interval / 10
    }

    @inlinable
    var owesRuns: Bool {
        pending != nil
    }

    @inlinable
    mutating func reset() {
        pending = nil
        deadline = nil
        maxDeadline = nil
        isTimerArmed = false
        timerGeneration &+= 1
    }
}
