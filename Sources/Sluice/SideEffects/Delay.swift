public import Dispatch

extension Middlewares {
    /// Runs a side effect for every accepted action, `interval` later, in order.
    ///
    /// Runs happen one at a time, in the order of their actions, however late the scheduler is: the runs that fell
    /// due while it was busy run when it gets to them, in order.
    ///
    /// ```
    /// actions (ms):  0  30        100
    /// delay 50:          ● (0, at 50)  ● (30, at 80)   ● (100, at 150)
    /// ```
    ///
    /// - Parameters:
    ///   - interval: How much later, in whole nanoseconds (a fraction of one rounds up). `.zero` runs on `scheduler`
    ///     as soon as it gets to it, or synchronously inside `dispatch` with `runs: .inDispatch`. An interval of
    ///     2⁶⁴ ns or more (about 584 years, e.g. `.seconds(Int64.max)`) never passes: the runs wait for
    ///     ``Store/shutdown(timeout:)``, which runs them. A negative interval stops the program.
    ///   - placement: Where the runs of a zero `interval` happen: on `scheduler` (the default) or inside `dispatch`
    ///     (`.inDispatch`). Other runs always happen on `scheduler`.
    ///   - scheduler: Where the runs happen and what time it is; by default the store's
    ///     ``StoreDependencies/scheduler`` if its dependencies set one, else a serial queue of this modifier.
    ///   - effect: The effect to delay.
    @inlinable
    public static func delay<State, Action>(
        _ interval: Duration,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        effect.timed(interval, "Middlewares.delay", runs: placement, on: scheduler) { DelayStateMachine(interval: $0) }
    }

    /// Runs `run` for every action, `interval` later, in order; see
    /// ``delay(_:runs:on:_:)-(Duration,_,_,SideEffect<State,Action>)``.
    @inlinable
    public static func delay<State, Action>(
        _ interval: Duration,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        delay(interval, runs: placement, on: scheduler, SideEffect(run))
    }
}

/// The queue of `delay`: one armed timer, for the oldest entry; entries fire in arrival order.
@usableFromInline
struct DelayStateMachine<Run: Sendable>: TimedStateMachine, Sendable {
    /// The delay; `nil` for never.
    @usableFromInline
    let interval: UInt64?
    @usableFromInline
    var entries: [(deadline: DispatchTime, run: Run)] = []
    @usableFromInline
    var head = 0
    @usableFromInline
    var isTimerArmed = false
    @usableFromInline
    var timerGeneration: UInt64 = 0

    @inlinable
    init(interval: UInt64?) {
        self.interval = interval
    }

    @inlinable
    mutating func receive(_ run: consuming Run, at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest? {
        // An interval that never passes: the run is queued with no deadline (`distantFuture`, which no timer is
        // armed for), owed until shutdown runs it. Deadlines only grow, so every entry after it has none either.
        let deadline = now.adding(interval) ?? .distantFuture
        entries.append((deadline, run))
        if !isTimerArmed && entries[head].deadline != .distantFuture {
            isTimerArmed = true
            timerGeneration &+= 1
            return (entries[head].deadline, timerGeneration)
        }
        return nil
    }

    @inlinable
    mutating func timerFired(at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest? {
        isTimerArmed = false
        while head < entries.count, entries[head].deadline <= now {
            runs.append(entries[head].run)
            head += 1
        }
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
            return nil
        }
        if head > 64 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        if entries[head].deadline == .distantFuture {
            return nil
        }
        isTimerArmed = true
        timerGeneration &+= 1
        return (entries[head].deadline, timerGeneration)
    }

    @inlinable
    mutating func flush(runs: inout RunQueue<Run>) -> Int {
        let count = entries.count - head
        for index in head..<entries.count {
            runs.append(entries[index].run)
        }
        entries.removeAll()
        head = 0
        isTimerArmed = false
        timerGeneration &+= 1
        return count
    }

    /// None: every action is queued at its own time.
    @inlinable
    var alikeUntil: UInt64 { 0 }

    @inlinable
    var dropsUntilThen: Bool { false }

    /// Never called: ``alikeUntil`` is 0.
    @inlinable
    mutating func receiveAlike(_ hold: (inout Run?) -> Void) -> TimerRequest? {
        preconditionFailure("receiveAlike on a machine without an alike instant")
    }

    /// An action only queues its run at its deadline, which may then be late by `lateness` if that is at most a
    /// tenth of the interval (a zero interval runs every action at once: never).
    @inlinable
    func toleratesLateTime(by lateness: UInt64) -> Bool {
        guard let interval, interval > 0 else { return false }
        return lateness <= interval / 10
    }

    @inlinable
    var owesRuns: Bool {
        head < entries.count
    }

    @inlinable
    mutating func reset() {
        entries.removeAll()
        head = 0
        isTimerArmed = false
        timerGeneration &+= 1
    }
}
