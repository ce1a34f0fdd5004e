// `public import`: the per-action path below is inlined into the caller's module, and inlinable code may only call
// functions of a module imported publicly. CSluiceSupport declares nothing public of Sluice's.
public import CSluiceSupport
public import Dispatch

/// One accepted action and the API of its run, as the time-based modifiers hold them until they run.
@usableFromInline
struct EffectRun<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline
    var action: Action
    @usableFromInline
    let api: MiddlewareAPI<State, Action>

    @inlinable
    init(action: Action, api: MiddlewareAPI<State, Action>) {
        self.action = action
        self.api = api
    }

    /// Whether this run's API is `other`: the same store and the same run cancellation.
    @inlinable
    func hasAPI(_ other: borrowing MiddlewareAPI<State, Action>) -> Bool {
        api.core === other.core && api.cancellation === other.cancellation
    }
}

/// The per-store part of a time-based modifier: a state machine behind a lock, a scheduler, and the handler of
/// the wrapped effect.
///
/// The state machine decides; this class performs what it decided, always outside the lock: runs of the effect,
/// and timers on the scheduler. When the store goes away the timer is cancelled and the machine is reset, so no
/// work runs afterwards and nothing that the work captured stays alive.
///
/// Runs go through one ordered path, `runs`: the machine appends them under the lock, in the order of their
/// actions, whether an action or a timer decided them, and one thread at a time performs them, in that order.
/// A thread that finds no run in progress performs its runs itself (so that, with ``RunPlacement/inDispatch``, a
/// leading run is synchronous inside `dispatch`); one that finds a run in progress leaves its runs to that thread,
/// which performs them next. So
/// runs of one modifier never overlap, and a run never overtakes an older one, however late the scheduler is.
///
/// With ``RunPlacement/onScheduler``, a thread that finds no run in progress does not perform the runs itself: it
/// marks the path busy (`handoffPending`) and asks the scheduler to perform them, so `dispatch` never runs the
/// effect. ``flush(settlingWith:)`` (at shutdown) may take such a handed-off batch over before the scheduler gets to
/// it; the scheduled drain then finds `handoffPending` cleared and does nothing.
///
/// The first ``flush(settlingWith:)`` closes the modifier for good (`isClosing`): from then on it arms no timer,
/// performs the runs that an action decides on the calling thread (never handing them to the scheduler), and tells
/// the store's ``StoreWork`` whenever it starts or stops being busy (performing runs, or holding runs to perform)
/// and whenever it starts or stops owing runs (a pending debounced or trailing run, queued delayed runs). Shutdown
/// waits on those two counts and flushes again while runs are owed, so that a run that becomes owed after a flush
/// (left by delayed runs that another thread performs, say) runs before shutdown returns.
///
/// `@unchecked Sendable`: `machine`, `runs`, `timer`, `handoffPending`, `isClosing` and the closing state are
/// guarded by `lock`. They are not one ``Locked`` value because the per-action path (``receive(_:_:)``,
/// ``perform(_:_:)``) takes and gives up the lock with `lock()` and `unlock()` around the machine's call, with a rare
/// closing branch in between, so that the common path inlines without a closure and its context; the fields are
/// `@exclusivity(unchecked)` for the same reason: the lock already keeps their accesses exclusive, and the dynamic
/// checks would run on every action.
///
/// The per-action path is `@inlinable`, so that it is specialized for the store's state and action types in the
/// caller's module: unspecialized, it would instantiate generic type metadata on every action, including one that
/// `throttle` drops.
///
/// Most actions that reach a `throttle` find its window open, and its machine then decides alike for any time
/// before the window's end (``TimedStateMachine/alikeUntil``): it drops the action (leading only) or makes it the
/// pending trailing run. The machine publishes that instant in `alikeUntil`, an atomic word, after each action, and
/// ``receive(_:_:)`` compares the time with it first: before it, a machine that only drops there
/// (``TimedStateMachine/dropsUntilThen``) drops the action without the lock, and any other machine is given the time
/// without a precise clock read. The instant never moves backward, so a stale read is an earlier instant, which only
/// sends the action down the exact path. On Linux, with the default scheduler, that comparison reads the coarse
/// monotonic clock (the time of the last timer tick, cheaper to read than the precise clock): the time is before
/// the instant if the coarse time plus six ticks is, and otherwise ``receive(_:_:)`` reads the precise clock. Six,
/// because the coarse clock is updated by one CPU's tick, and when that CPU stalls (a virtual machine's CPU
/// descheduled by its host) another CPU forces the update only after five ticks without one.
/// On a platform whose word is narrower than 64 bits the word stays 0.
///
/// A machine whose deadlines may be a little late (``TimedStateMachine/toleratesLateTime(by:)``: `delay`, and
/// `debounce` without `maxWait`, each with an interval of at least ten times that lateness) is given, for an action
/// outside that instant, the coarse time plus that lag instead of a precise read: an upper bound of the time, so
/// that a deadline computed from it is never early, and at most six ticks late, within the leeway that libdispatch
/// gives a timer of that interval (a tenth of it). The precise clock costs more to read than the coarse one, and a
/// held `delay` or `debounce` action would otherwise read it every time. A scheduler that conforms to
/// ``CoarseClockScheduler`` gets the same treatment with its own two readings (tests use one on virtual time).
@usableFromInline
final class TimedEffect<Machine: TimedStateMachine>: @unchecked Sendable {
    @usableFromInline
    typealias Run = Machine.Run
    @usableFromInline
    let lock = Lock()
    @usableFromInline @exclusivity(unchecked)
    var machine: Machine
    @usableFromInline @exclusivity(unchecked)
    var runs = RunQueue<Run>()
    @usableFromInline @exclusivity(unchecked)
    var timer: ScheduledWork?
    /// A drain was handed to the scheduler and has not started: the runs in `runs` wait for it.
    @usableFromInline @exclusivity(unchecked)
    var handoffPending = false
    /// Set by the first ``flush(settlingWith:)``: the store is shutting down (see the type's notes).
    @usableFromInline @exclusivity(unchecked)
    var isClosing = false
    /// Once closing, the store's work, told when this modifier's busy and owing states change.
    private var settling: StoreWork?
    /// The busy and owing states last told to `settling`.
    private var reportedBusy = false
    private var reportedOwing = false
    @usableFromInline
    let scheduler: any EffectScheduler
    @usableFromInline
    let placement: RunPlacement
    @usableFromInline
    let handler: @Sendable (Run) -> Void
    /// The machine's ``TimedStateMachine/alikeUntil`` in uptime nanoseconds, published after each action it
    /// received; read without the lock (C11 atomics of CSluiceSupport), written with it held.
    @usableFromInline
    let alikeUntil: UnsafeMutablePointer<UInt>
    /// The machine's ``TimedStateMachine/dropsUntilThen``.
    @usableFromInline
    let dropsUntilThen: Bool
    /// Whether the scheduler's time is the monotonic clock that ``now`` may read directly, without a call through
    /// the existential (a ``DispatchQueueScheduler`` on Linux, whose `now` is that clock).
    @usableFromInline
    let readsMonotonicClock: Bool
    /// How far the coarse clock may lag the precise one: six ticks of the kernel's (see above), or a
    /// ``CoarseClockScheduler``'s own ``CoarseClockScheduler/coarseLag``.
    @usableFromInline
    let coarseClockLag: UInt64
    /// The scheduler, if it has a coarse reading of its own (and is not read as the monotonic clock directly).
    @usableFromInline
    let coarseScheduler: (any CoarseClockScheduler)?
    /// Whether an action outside ``alikeUntil`` is given the coarse time plus ``coarseClockLag`` (an upper bound of
    /// the time) rather than a precise read: the machine tolerates deadlines that late.
    @usableFromInline
    let takesLateTime: Bool

    @usableFromInline
    init(
        machine: Machine,
        scheduler: any EffectScheduler,
        placement: RunPlacement,
        lifetime: Cancellation,
        handler: @escaping @Sendable (Run) -> Void
    ) {
        self.machine = machine
        self.scheduler = scheduler
        self.placement = placement
        self.handler = handler
        alikeUntil = .allocate(capacity: 1)
        alikeUntil.initialize(to: 0)
        dropsUntilThen = machine.dropsUntilThen
        #if os(Linux)
        readsMonotonicClock = scheduler is DispatchQueueScheduler
        #else
        readsMonotonicClock = false
        #endif
        if !readsMonotonicClock, let coarse = scheduler as? any CoarseClockScheduler {
            coarseScheduler = coarse
            coarseClockLag = coarse.coarseLag
        } else {
            coarseScheduler = nil
            coarseClockLag = 6 * csluice_monotonic_coarse_resolution()
        }
        #if os(Linux)
        let hasCoarseClock = readsMonotonicClock || coarseScheduler != nil
        #else
        let hasCoarseClock = coarseScheduler != nil
        #endif
        takesLateTime = hasCoarseClock && coarseClockLag > 0 && machine.toleratesLateTime(by: coarseClockLag)
        lifetime.onCancel { [weak self] in self?.tearDown() }
    }

    deinit {
        alikeUntil.deallocate()
    }

    /// The scheduler's current time.
    @inlinable
    var now: DispatchTime {
        #if os(Linux)
        if readsMonotonicClock {
            return DispatchTime(uptimeNanoseconds: csluice_monotonic_nanoseconds())
        }
        #endif
        return scheduler.now
    }

    /// Publishes the machine's ``TimedStateMachine/alikeUntil``; called with `lock` held, after the machine
    /// received an action.
    @inlinable
    func publishAlikeUntilLocked() {
        #if _pointerBitWidth(_64)
        csluice_pipeline_store(alikeUntil, UInt(truncatingIfNeeded: machine.alikeUntil))
        #endif
    }

    /// The time in uptime nanoseconds to give the machine for an action, from a coarse reading of the clock:
    /// `nil` if it is before `until` (the coarse time plus ``coarseClockLag`` is), where the machine decides alike
    /// for any time; else, for a machine that ``takesLateTime``, the coarse time plus ``coarseClockLag`` (never
    /// before the time); else the precise time.
    @inlinable
    func time(coarse: UInt64, until: UInt64, precise: () -> UInt64) -> UInt64? {
        let upperBound = coarse &+ coarseClockLag
        if upperBound < until {
            return nil
        }
        return takesLateTime ? upperBound : precise()
    }

    /// An action before the published ``alikeUntil``, for a machine that does not drop it there: the machine takes
    /// it without a time (``TimedStateMachine/receiveAlike(_:)``). It decides no run there, so there is nothing to
    /// hand off or perform, only perhaps a timer to arm.
    ///
    /// The machine's pending run is replaced in place: when it has the same API (the same store and run
    /// cancellation, as every action dispatched from outside has), only its action is replaced, so that holding an
    /// action retains and releases no API.
    @inlinable
    func holdAlike<State, Action>(_ action: Action, _ api: MiddlewareAPI<State, Action>)
    where Run == EffectRun<State, Action> {
        lock.lock()
        let request = machine.receiveAlike { pending in
            if pending?.hasAPI(api) == true {
                pending!.action = action
            } else {
                pending = EffectRun(action: action, api: api)
            }
        }
        if _slowPath(isClosing) {
            noteClosingStateLocked()
            lock.unlock()
            return
        }
        lock.unlock()
        if let request {
            arm(request)
        }
    }

    /// An accepted action arrived (on the dispatching thread), with the API of its run.
    ///
    /// The run is made only where it is taken, and handed on as it is: the machine keeps it (a pending trailing or
    /// debounced run, a queued delayed one) without another copy of the action, and an action that is dropped
    /// costs no copy at all.
    @inlinable
    func receive<State, Action>(_ action: Action, _ api: MiddlewareAPI<State, Action>)
    where Run == EffectRun<State, Action> {
        // Relaxed is enough: the word only moves forward, and a drop touches nothing that another thread wrote.
        let until = UInt64(csluice_pipeline_load(alikeUntil))
        let now: DispatchTime
        #if os(Linux)
        if readsMonotonicClock {
            guard
                let time = time(
                    coarse: csluice_monotonic_coarse_nanoseconds(),
                    until: until,
                    precise: { csluice_monotonic_nanoseconds() }
                )
            else {
                if !dropsUntilThen {
                    holdAlike(action, api)
                }
                return
            }
            now = DispatchTime(uptimeNanoseconds: time)
        } else if let coarseScheduler {
            guard
                let time = time(
                    coarse: coarseScheduler.coarseNow.uptimeNanoseconds,
                    until: until,
                    precise: { coarseScheduler.now.uptimeNanoseconds }
                )
            else {
                if !dropsUntilThen {
                    holdAlike(action, api)
                }
                return
            }
            now = DispatchTime(uptimeNanoseconds: time)
        } else {
            now = scheduler.now
            if dropsUntilThen && now.uptimeNanoseconds < until {
                return
            }
        }
        #else
        if let coarseScheduler {
            guard
                let time = time(
                    coarse: coarseScheduler.coarseNow.uptimeNanoseconds,
                    until: until,
                    precise: { coarseScheduler.now.uptimeNanoseconds }
                )
            else {
                if !dropsUntilThen {
                    holdAlike(action, api)
                }
                return
            }
            now = DispatchTime(uptimeNanoseconds: time)
        } else {
            now = scheduler.now
            if dropsUntilThen && now.uptimeNanoseconds < until {
                return
            }
        }
        #endif
        if placement == .onScheduler {
            receiveHandingOff(EffectRun(action: action, api: api), at: now)
            return
        }
        // `lock()` and `unlock()` rather than `withLock`: with the closing branch inside, the closure is not inlined,
        // which costs a call and its context on every action.
        let run = EffectRun(action: action, api: api)
        lock.lock()
        let request = machine.receive(run, at: now, runs: &runs)
        publishAlikeUntilLocked()
        let first = runs.claim()
        if _slowPath(isClosing) {
            // No timer while the store shuts down: shutdown runs what the machine now owes.
            noteClosingStateLocked()
            lock.unlock()
            perform(first, nil)
            return
        }
        lock.unlock()
        if first != nil || request != nil {
            perform(first, request)
        }
    }

    /// ``receive(_:_:)`` with ``RunPlacement/onScheduler``: the runs that the action decided are performed by the
    /// scheduler, never by the dispatching thread.
    ///
    /// While the store shuts down, the runs are performed on the calling thread instead, like the runs that
    /// shutdown releases.
    ///
    /// Inlinable like ``receive(_:_:)``, and with `lock()` and `unlock()` for the same reason: this is the path of
    /// every action under the default placement.
    @inlinable
    func receiveHandingOff(_ run: consuming Run, at now: DispatchTime) {
        lock.lock()
        let request = machine.receive(run, at: now, runs: &runs)
        publishAlikeUntilLocked()
        if _slowPath(isClosing) {
            let first = runs.claim()
            noteClosingStateLocked()
            lock.unlock()
            perform(first, nil)
            return
        }
        let handOff = !runs.isDraining && !runs.isEmpty
        if handOff {
            runs.isDraining = true
            handoffPending = true
        }
        lock.unlock()
        if let request {
            arm(request)
        }
        if handOff {
            // `now` is never an upper bound of the time here: a machine that ``takesLateTime`` decides no run when
            // an action arrives (see ``TimedStateMachine/toleratesLateTime(by:)``).
            _ = scheduler.schedule(after: now) { [weak self] in self?.drainHandedOff() }
        }
    }

    /// Performs the runs handed to the scheduler, unless ``flush(settlingWith:)`` took them over already.
    @usableFromInline
    func drainHandedOff() {
        let first: Run? = lock.withLock {
            guard handoffPending else { return nil }
            handoffPending = false
            let first = runs.next()
            if isClosing {
                noteClosingStateLocked()
            }
            return first
        }
        perform(first, nil)
    }

    @usableFromInline
    func fire(_ generation: UInt64) {
        let now = self.now
        let decision: (Run?, TimerRequest?)? = lock.withLock {
            guard machine.timerGeneration == generation else { return nil }
            timer = nil
            let request = machine.timerFired(at: now, runs: &runs)
            let first = runs.claim()
            if isClosing {
                noteClosingStateLocked()
                return (first, nil)
            }
            return (first, request)
        }
        if let (first, request) = decision {
            perform(first, request)
        }
    }

    /// Arms the timer that the machine asked for, then performs `first` and every run queued behind it, in order,
    /// until none is left.
    @inlinable
    func perform(_ first: Run?, _ request: TimerRequest?) {
        if let request {
            arm(request)
        }
        guard var run = first else { return }
        while true {
            handler(run)
            lock.lock()
            let next = runs.next()
            if _slowPath(isClosing) {
                noteClosingStateLocked()
            }
            lock.unlock()
            guard let next else { return }
            run = next
        }
    }

    @usableFromInline
    func arm(_ request: TimerRequest) {
        let generation = request.generation
        let work = scheduler.schedule(after: request.deadline) { [weak self] in self?.fire(generation) }
        let stale: ScheduledWork? = lock.withLock {
            guard machine.timerGeneration == generation else { return work }
            defer { timer = work }
            return timer
        }
        stale?.cancel()
    }

    /// Shutdown: the owed runs (a pending trailing or debounced run, the queued delayed runs) run now, on the
    /// calling thread unless another thread is performing runs of this modifier (it then performs them next), and
    /// the timer is disarmed. The first call closes the modifier, which reports its busy and owing states to `work`
    /// from then on (see the type's notes).
    ///
    /// - Returns: The number of owed runs that the machine released.
    func flush(settlingWith work: StoreWork) -> Int {
        let (count, first, timer): (Int, Run?, ScheduledWork?) = lock.withLock {
            if !isClosing {
                isClosing = true
                settling = work
            }
            let count = machine.flush(runs: &runs)
            defer { self.timer = nil }
            let first: Run?
            if handoffPending {
                // Take over the batch handed to the scheduler: `isDraining` stays set, now for this thread.
                handoffPending = false
                first = runs.next()
            } else {
                first = runs.claim()
            }
            noteClosingStateLocked()
            return (count, first, self.timer)
        }
        timer?.cancel()
        perform(first, nil)
        return count
    }

    /// Tells the store's work when this closing modifier starts or stops being busy (a thread performs its runs,
    /// or runs wait to be performed) or owing runs; called with `lock` held, once `isClosing` is set.
    @usableFromInline
    func noteClosingStateLocked() {
        let busy = runs.isDraining || !runs.isEmpty
        let owing = machine.owesRuns
        guard busy != reportedBusy || owing != reportedOwing, let settling else { return }
        settling.timedEffectChanged(
            busy: (busy ? 1 : 0) - (reportedBusy ? 1 : 0),
            owing: (owing ? 1 : 0) - (reportedOwing ? 1 : 0)
        )
        reportedBusy = busy
        reportedOwing = owing
    }

    /// The store's lifetime ended: the owed and queued runs are dropped and the timer cancelled. During shutdown
    /// (the modifier is closing), the dropped runs are told to the store's work, for the report; a run in progress
    /// on another thread finishes, and that thread then finds nothing more to perform.
    private func tearDown() {
        let (timer, dropped, settling): (ScheduledWork?, [Run], StoreWork?) = lock.withLock {
            if isClosing {
                // A run made owed after the last flush is dropped too, and counted with the rest.
                _ = machine.flush(runs: &runs)
            }
            machine.reset()
            defer { self.timer = nil }
            let dropped = runs.removeAll()
            if isClosing {
                noteClosingStateLocked()
            }
            return (self.timer, dropped, isClosing ? self.settling : nil)
        }
        timer?.cancel()
        if let settling, !dropped.isEmpty {
            settling.timedRunsDropped(dropped.count)
        }
        _ = dropped  // released here, outside the lock
    }
}

/// A timer that a time-based modifier asks for: armed at `deadline`, replacing any armed one; it fires with
/// `generation`.
@usableFromInline
typealias TimerRequest = (deadline: DispatchTime, generation: UInt64)

/// The runs of a time-based modifier that were decided and not yet performed, first in first out, and whether a
/// thread is performing them.
@usableFromInline
struct RunQueue<Run> {
    @usableFromInline
    var fifo = FIFO<Run>()
    /// A thread is performing runs: it takes the ones that are appended meanwhile.
    @usableFromInline
    var isDraining = false

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { fifo.isEmpty }

    /// Queues a run behind every run decided before it.
    @inlinable
    mutating func append(_ run: consuming Run) {
        fifo.append(run)
    }

    /// The first run to perform, if there is one and no thread is performing runs; the caller then performs it
    /// and calls ``next()`` until that returns `nil`.
    @inlinable
    mutating func claim() -> Run? {
        if isDraining || isEmpty { return nil }
        isDraining = true
        return fifo.removeFirst()
    }

    /// The next run for the thread that is performing runs, or `nil`, after which that thread is done.
    @inlinable
    mutating func next() -> Run? {
        if isEmpty {
            isDraining = false
            return nil
        }
        return fifo.removeFirst()
    }

    /// Forgets the runs not yet performed and returns them, so that the caller releases them outside the lock.
    @usableFromInline
    mutating func removeAll() -> [Run] {
        fifo.removeAll()
    }
}

/// The state machine of a time-based modifier; pure and synchronous, so that it is easy to reason about.
///
/// Its events append the runs they decide to `runs`, in the order of their actions, and return the timer to arm,
/// if any.
@usableFromInline
protocol TimedStateMachine: SendableMetatype {
    associatedtype Run: Sendable
    /// Changes whenever the armed timer is replaced or disarmed; a timer that fires with an old generation is stale.
    var timerGeneration: UInt64 { get }
    /// An action arrived at `now`.
    mutating func receive(_ run: consuming Run, at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest?
    /// The armed timer fired at `now`.
    mutating func timerFired(at now: DispatchTime, runs: inout RunQueue<Run>) -> TimerRequest?
    /// The store shuts down: append every owed run to `runs` now, forget the timer, and return how many.
    mutating func flush(runs: inout RunQueue<Run>) -> Int
    /// Whether ``flush(runs:)`` would release a run now.
    var owesRuns: Bool { get }
    /// An instant in uptime nanoseconds before which ``receive(_:at:runs:)`` decides alike whatever the time, or 0.
    /// It never moves backward: once published, it holds for every later event, so that the dispatching thread may
    /// read it without the lock.
    var alikeUntil: UInt64 { get }
    /// Whether, before ``alikeUntil``, ``receive(_:at:runs:)`` drops every action without changing anything (it
    /// returns `nil` and appends no run). A constant of the machine.
    var dropsUntilThen: Bool { get }
    /// The store went away: forget everything.
    mutating func reset()
    /// An action arrived before ``alikeUntil`` (so the machine decides as for any time then); only called on a
    /// machine whose ``alikeUntil`` is not 0 and that does not drop there (``dropsUntilThen``). It appends no run;
    /// if it keeps the action, it calls `hold` with its pending run, which `hold` replaces with the action's.
    mutating func receiveAlike(_ hold: (inout Run?) -> Void) -> TimerRequest?
    /// Whether ``receive(_:at:runs:)`` may be given, as `now`, a time up to `lateness` nanoseconds after the real
    /// one: every deadline it derives from `now` is then up to that late, never early, and that is acceptable for
    /// this machine (it decides no run in `receive` from it, and the lateness is at most a tenth of its interval).
    func toleratesLateTime(by lateness: UInt64) -> Bool
}

/// A scheduler whose time is a monotonic clock with a cheaper coarse reading, which the time-based modifiers read
/// where the time only has to be bounded (see ``TimedEffect``), as they read the kernel's coarse clock on Linux for
/// a ``DispatchQueueScheduler``. Tests give the modifiers one on virtual time.
@usableFromInline
package protocol CoarseClockScheduler: EffectScheduler {
    /// The time as of the clock's last update: never after ``EffectScheduler/now``, and before it by at most
    /// ``coarseLag``.
    var coarseNow: DispatchTime { get }
    /// The coarse clock's tick in nanoseconds.
    var coarseTick: UInt64 { get }
    /// The most, in nanoseconds, that ``coarseNow`` can be behind ``EffectScheduler/now``: the margin added to a
    /// coarse reading to make it an upper bound of the time. Two ticks unless the scheduler says otherwise.
    var coarseLag: UInt64 { get }
}

extension CoarseClockScheduler {
    package var coarseLag: UInt64 { 2 * coarseTick }
}

/// Where the runs of a time-based modifier happen when an action (rather than its timer) decides them.
///
/// The runs that an action decides are the leading run of
/// ``Middlewares/throttle(_:leading:trailing:runs:on:_:)-(Duration,_,_,_,_,SideEffect<State,Action>)``, every run
/// under a zero interval, and a `debounce` run that its `maxWait` made due on a late scheduler. By default
/// (``onScheduler``) they are handed to the modifier's scheduler, in order with the modifier's other runs, and
/// `dispatch` returns without running the effect: a slow effect (encoding a snapshot, a write) never holds the
/// store's pipeline, so no other dispatch waits for it. The run happens as soon as the scheduler gets to it: at once
/// on the queue of a ``DispatchQueueScheduler``, at the next `advance` of a `TestScheduler` (`advance(by: .zero)`
/// runs it without moving the clock), at the same virtual instant either way. The actions that such a run
/// dispatches are outer dispatches, processed after the `dispatch` that decided the run.
///
/// With ``inDispatch`` the run happens synchronously inside that `dispatch`, before it returns, and the actions the
/// run dispatches are queued and processed before that `dispatch` returns too; the dispatching thread, and every
/// thread waiting to dispatch on the store, waits for the run. With ``inDispatch`` a zero interval is no modifier at
/// all: the effect runs for every action, as if it were not wrapped.
public enum RunPlacement: Sendable, Hashable {
    /// A run that an action decides happens inside that action's `dispatch`, before it returns.
    case inDispatch
    /// Every run happens on the modifier's scheduler; `dispatch` never runs the effect (the default).
    case onScheduler
}

extension SideEffect {
    /// This effect under a time-based modifier: `interval` checked (negative stops the program, naming
    /// `operatorName`; zero means no rate limit, so the effect is returned as it is) and counted in whole
    /// nanoseconds (see `Duration.nanoseconds(checking:)`), then each store that installs the effect gets its own
    /// state machine from `makeMachine` on `scheduler`.
    ///
    /// With `placement` ``RunPlacement/onScheduler`` a zero interval still hands every run to `scheduler`, in
    /// order.
    @inlinable
    func timed<Machine: TimedStateMachine & Sendable>(
        _ interval: Duration,
        _ operatorName: String,
        runs placement: RunPlacement,
        on scheduler: any EffectScheduler,
        _ makeMachine: (_ nanoseconds: UInt64?) -> Machine
    ) -> SideEffect where Machine.Run == EffectRun<State, Action> {
        let nanoseconds = interval.nanoseconds(checking: operatorName)
        if nanoseconds == 0 {
            if placement == .inDispatch {
                return self
            }
            return installTimed(DelayStateMachine(interval: 0), placement, scheduler)
        }
        return installTimed(makeMachine(nanoseconds), placement, scheduler)
    }

    /// Gives each store that installs this effect its own ``TimedEffect`` with a copy of `machine`, registered with
    /// the store for shutdown.
    @inlinable
    func installTimed<Machine: TimedStateMachine & Sendable>(
        _ machine: Machine,
        _ placement: RunPlacement,
        _ scheduler: any EffectScheduler
    ) -> SideEffect where Machine.Run == EffectRun<State, Action> {
        SideEffect(accepts: accepts) { storeAPI in
            let handler = install(storeAPI)
            let scheduler = scheduler.resolved(with: storeAPI)
            let timed = TimedEffect(
                machine: machine,
                scheduler: scheduler,
                placement: placement,
                lifetime: storeAPI.storeLifetime
            ) { run in
                run.api.runWithDependenciesUnlessCancelled(handler, run.action)
            }
            storeAPI.registerForShutdown(timed)
            return { action, api in timed.receive(action, api) }
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
