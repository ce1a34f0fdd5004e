// `public import`: the per-action path below is inlined into the caller's module (see TimedEffect.swift).
public import CSluiceSupport
public import Dispatch

/// The per-store part of a time-based modifier applied per key (`throttle(…, by:)`, `debounce(…, by:)`,
/// `delay(…, by:)`): one state machine per key, each deciding exactly as the machine of the store-wide modifier
/// (``TimedEffect``) decides for the whole store, behind one lock for all keys.
///
/// Each key has an ``Entry``: its machine, its ordered path of runs (``RunQueue``), its armed timer, and whether a
/// drain was handed to the scheduler. An entry is made when the first action of its key arrives and forgotten once
/// its machine is as a new one would be (``KeyedStateMachine/release``): it owes no run, its timer is not needed,
/// no run of it is in progress or waiting, and, for a `throttle` window or a `debounce` burst with `maxWait`, the
/// time that makes it so has come. When that time is later than the event that leaves the entry idle, the entry
/// arms an expiry timer for it. Every such decision (make, decide, forget) is made under the one lock, so a key is
/// never forgotten while a run of it is owed, queued or in progress, and an action never reaches a forgotten entry:
/// it finds the key absent and makes a new one, which decides as the forgotten one would have.
///
/// Runs of one key never overlap and happen in the order of their actions, as the runs of a store-wide modifier do
/// (see ``TimedEffect``: the thread that finds no run of the key in progress performs them, or hands them to the
/// scheduler with ``RunPlacement/onScheduler``). Runs of different keys are independent: they may overlap on
/// different threads.
///
/// Shutdown: the store's ledger flushes this modifier once per pass (``flush(settlingWith:)``), which flushes every
/// key. From the first flush on it arms no timer, performs the runs that an action decides on the calling thread,
/// and tells the ledger, per key, when that key starts or stops being busy or owing runs, so the counts that
/// ``StoreWork/settleTimedEffects(until:)`` waits on count keys (a forgotten key was neither).
///
/// `@unchecked Sendable`: `entries`, `lastEntry`, `isClosing`, `settling` and every field of every ``Entry`` are
/// guarded by `lock`; the per-action path takes and gives up the lock with `lock()` and `unlock()` so that it
/// inlines without a closure, as ``TimedEffect`` does.
@usableFromInline
final class KeyedTimedEffect<Key: Hashable & Sendable, Machine: KeyedStateMachine>: @unchecked Sendable {
    @usableFromInline
    typealias Run = Machine.Run

    /// The state of one key. A class, so that the thread performing its runs and its timers hold it without looking
    /// the key up again; its fields are guarded by the owner's `lock`.
    @usableFromInline
    final class Entry: @unchecked Sendable {
        @usableFromInline
        let key: Key
        @usableFromInline @exclusivity(unchecked)
        var machine: Machine
        @usableFromInline @exclusivity(unchecked)
        var runs = RunQueue<Run>()
        /// The timer the machine asked for last (perhaps stale: its generation is checked when it fires).
        @usableFromInline @exclusivity(unchecked)
        var timer: ScheduledWork?
        /// The expiry timer and the instant it is (being) armed for: when the machine becomes as a new one.
        @usableFromInline @exclusivity(unchecked)
        var expiry: ScheduledWork?
        @usableFromInline @exclusivity(unchecked)
        var expiryAt: DispatchTime?
        /// A drain was handed to the scheduler and has not started.
        @usableFromInline @exclusivity(unchecked)
        var handoffPending = false
        /// Removed from `entries`: its timers do nothing, and no action reaches it any more.
        @usableFromInline @exclusivity(unchecked)
        var isForgotten = false
        /// The busy and owing states last told to the store's ledger, once closing.
        @usableFromInline @exclusivity(unchecked)
        var reportedBusy = false
        @usableFromInline @exclusivity(unchecked)
        var reportedOwing = false

        @usableFromInline
        init(key: Key, machine: Machine) {
            self.key = key
            self.machine = machine
        }

        /// A thread performs this key's runs, runs wait to be performed, or a drain was handed to the scheduler.
        @inlinable
        var isBusy: Bool {
            runs.isDraining || !runs.isEmpty || handoffPending
        }

        /// What the machine says, read in place: a getter called on `machine` itself copies the machine first (its
        /// pending run included), which an `inout` access does not.
        @inlinable
        func inspect<T>(_ read: (inout Machine) -> T) -> T {
            read(&machine)
        }
    }

    @usableFromInline
    let lock = Lock()
    @usableFromInline @exclusivity(unchecked)
    var entries: [Key: Entry] = [:]
    /// The entry of the last action, found again without hashing when the next action has the same key (a burst of
    /// one auction's bids); `nil` once that entry is forgotten.
    @usableFromInline @exclusivity(unchecked)
    var lastEntry: Entry?
    /// Set by the first ``flush(settlingWith:)``: the store is shutting down.
    @usableFromInline @exclusivity(unchecked)
    var isClosing = false
    /// Once closing, the store's work, told when a key's busy and owing states change.
    @usableFromInline @exclusivity(unchecked)
    var settling: StoreWork?
    /// The machine every new key starts from.
    @usableFromInline
    let prototype: Machine
    @usableFromInline
    let scheduler: any EffectScheduler
    @usableFromInline
    let placement: RunPlacement
    @usableFromInline
    let handler: @Sendable (Run) -> Void
    /// Whether the scheduler's time is the monotonic clock, read directly (a ``DispatchQueueScheduler`` on Linux).
    @usableFromInline
    let readsMonotonicClock: Bool
    /// The clock readings of ``TimedEffect``: how far the coarse clock may lag, the scheduler's own coarse clock if
    /// it has one, and whether the machine takes the coarse time plus that lag as the time of an action.
    @usableFromInline
    let coarseClockLag: UInt64
    @usableFromInline
    let coarseScheduler: (any CoarseClockScheduler)?
    @usableFromInline
    let takesLateTime: Bool
    /// The machine's ``TimedStateMachine/dropsUntilThen``.
    @usableFromInline
    let dropsUntilThen: Bool

    @usableFromInline
    init(
        machine: Machine,
        scheduler: any EffectScheduler,
        placement: RunPlacement,
        lifetime: Cancellation,
        handler: @escaping @Sendable (Run) -> Void
    ) {
        prototype = machine
        self.scheduler = scheduler
        self.placement = placement
        self.handler = handler
        dropsUntilThen = machine.dropsUntilThen
        // As ``TimedEffect`` reads its clocks, so that a key decides at the times its store-wide form would.
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

    /// An upper bound of the time from the coarse clock (its reading plus ``coarseClockLag``), or `nil` for a
    /// scheduler without one.
    @inlinable
    var coarseUpperBound: UInt64? {
        #if os(Linux)
        if readsMonotonicClock {
            return csluice_monotonic_coarse_nanoseconds() &+ coarseClockLag
        }
        #endif
        if let coarseScheduler {
            return coarseScheduler.coarseNow.uptimeNanoseconds &+ coarseClockLag
        }
        return nil
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

    /// The number of keys the modifier holds now (for tests).
    var keyCount: Int {
        lock.withLock { entries.count }
    }

    /// An accepted action of `key` arrived (on the dispatching thread), with the API of its run.
    ///
    /// The time is read as ``TimedEffect/receive(_:_:)`` reads it, but the key's machine is known only under the
    /// lock: with a coarse clock, its upper bound is read first, and compared under the lock with the instant
    /// before which the key's machine decides alike (``TimedStateMachine/alikeUntil``); before it, the action is
    /// dropped or held without a precise read and without a run made for it, else the precise time is read there
    /// (or the upper bound taken, for a machine that ``takesLateTime``). Without a coarse clock, the time is read
    /// before the lock.
    @inlinable
    func receive<State, Action>(_ key: Key, _ action: Action, _ api: MiddlewareAPI<State, Action>)
    where Run == EffectRun<State, Action> {
        let upperBound = coarseUpperBound
        let read = upperBound == nil ? self.now : nil
        lock.lock()
        let entry: Entry
        if let last = lastEntry, last.key == key {
            entry = last
        } else if let found = entries[key] {
            entry = found
            lastEntry = found
        } else {
            entry = Entry(key: key, machine: prototype)
            entries[key] = entry
            lastEntry = entry
        }
        let until = entry.inspect { $0.alikeUntil }
        let now: DispatchTime
        if let read {
            if dropsUntilThen && read.uptimeNanoseconds < until {
                lock.unlock()
                return
            }
            now = read
        } else {
            let upperBound = upperBound!
            if upperBound < until {
                if !dropsUntilThen {
                    holdAlikeLocked(entry, action, api)
                } else {
                    lock.unlock()
                }
                return
            }
            now = DispatchTime(uptimeNanoseconds: takesLateTime ? upperBound : self.now.uptimeNanoseconds)
        }
        let request = entry.machine.receive(EffectRun(action: action, api: api), at: now, runs: &entry.runs)
        if _slowPath(isClosing) {
            // No timer while the store shuts down: shutdown runs what the machine now owes.
            let first = entry.runs.claim()
            noteClosingStateLocked(entry)
            lock.unlock()
            perform(entry, first, nil)
            return
        }
        var first: Run? = nil
        var handOff = false
        if placement == .onScheduler {
            handOff = !entry.runs.isDraining && !entry.runs.isEmpty
            if handOff {
                entry.runs.isDraining = true
                entry.handoffPending = true
            }
        } else {
            first = entry.runs.claim()
        }
        // `now` may be an upper bound of the time (``takesLateTime``): only for a machine that is released `.now` or
        // `.notYet`, never `.at` an instant, which a late time could pass early.
        let settled = first == nil && !handOff ? settleLocked(entry, at: now) : .keep
        lock.unlock()
        if handOff {
            _ = scheduler.schedule(after: now) { [weak self] in self?.drainHandedOff(entry) }
        }
        if first != nil || request != nil {
            perform(entry, first, request)
        }
        finish(entry, settled)
    }

    /// An action of `entry` before its machine's ``TimedStateMachine/alikeUntil``, for a machine that does not drop
    /// it there: the machine takes it without a time (``TimedStateMachine/receiveAlike(_:)``), replacing its pending
    /// run's action in place when the run has the same API. Called with `lock` held; gives it up.
    @inlinable
    func holdAlikeLocked<State, Action>(_ entry: Entry, _ action: Action, _ api: MiddlewareAPI<State, Action>)
    where Run == EffectRun<State, Action> {
        let request = entry.machine.receiveAlike { pending in
            if pending?.hasAPI(api) == true {
                pending!.action = action
            } else {
                pending = EffectRun(action: action, api: api)
            }
        }
        if _slowPath(isClosing) {
            noteClosingStateLocked(entry)
            lock.unlock()
            return
        }
        lock.unlock()
        if let request {
            arm(entry, request)
        }
    }

    /// Performs the runs of `entry` handed to the scheduler, unless ``flush(settlingWith:)`` took them over.
    @usableFromInline
    func drainHandedOff(_ entry: Entry) {
        lock.lock()
        guard entry.handoffPending else {
            lock.unlock()
            return
        }
        entry.handoffPending = false
        let first = entry.runs.next()
        let settled = first == nil ? settleLocked(entry) : .keep
        if isClosing {
            noteClosingStateLocked(entry)
        }
        lock.unlock()
        perform(entry, first, nil)
        finish(entry, settled)
    }

    @usableFromInline
    func fire(_ entry: Entry, _ generation: UInt64) {
        let now = self.now
        lock.lock()
        guard !entry.isForgotten, entry.inspect({ $0.timerGeneration }) == generation else {
            lock.unlock()
            return
        }
        entry.timer = nil
        var request = entry.machine.timerFired(at: now, runs: &entry.runs)
        let first = entry.runs.claim()
        if isClosing {
            noteClosingStateLocked(entry)
            request = nil
        }
        let settled = first == nil && request == nil ? settleLocked(entry, at: now) : .keep
        lock.unlock()
        perform(entry, first, request)
        finish(entry, settled)
    }

    /// Arms the timer that the machine of `entry` asked for, then performs `first` and every run of that key
    /// queued behind it, in order, until none is left; then settles the key.
    @inlinable
    func perform(_ entry: Entry, _ first: Run?, _ request: TimerRequest?) {
        if let request {
            arm(entry, request)
        }
        guard var run = first else { return }
        while true {
            handler(run)
            lock.lock()
            let next = entry.runs.next()
            let settled = next == nil ? settleLocked(entry) : .keep
            if _slowPath(isClosing) {
                noteClosingStateLocked(entry)
            }
            lock.unlock()
            guard let next else {
                finish(entry, settled)
                return
            }
            run = next
        }
    }

    @usableFromInline
    func arm(_ entry: Entry, _ request: TimerRequest) {
        let generation = request.generation
        let work = scheduler.schedule(after: request.deadline) { [weak self] in self?.fire(entry, generation) }
        let stale: ScheduledWork? = lock.withLock {
            guard !entry.isForgotten, entry.inspect({ $0.timerGeneration }) == generation else { return work }
            defer { entry.timer = work }
            return entry.timer
        }
        stale?.cancel()
    }

    // MARK: Forgetting keys

    /// What settling a key decided, performed after the lock is released.
    @usableFromInline
    enum Settled {
        /// Nothing to do.
        case keep
        /// The key was forgotten: cancel its leftover timers.
        case forgot(timer: ScheduledWork?, expiry: ScheduledWork?)
        /// Arm the expiry timer for this instant.
        case expire(at: DispatchTime)
    }

    /// Forgets `entry` if it is idle and its machine is as a new one now, or asks for an expiry timer at the instant
    /// it will be; called with `lock` held after an event of the key, with the time of that event if it was read
    /// (else the clock is read here, only if the machine's instant needs it: cheaper than a needless expiry timer).
    @inlinable
    func settleLocked(_ entry: Entry, at time: DispatchTime? = nil) -> Settled {
        if entry.isForgotten || entry.isBusy { return .keep }
        switch entry.inspect({ $0.release }) {
        case .now:
            return forgetLocked(entry)
        case .at(let instant):
            if instant <= (time ?? now) {
                return forgetLocked(entry)
            }
            if isClosing || entry.expiryAt == instant { return .keep }
            entry.expiryAt = instant
            return .expire(at: instant)
        case .notYet:
            return .keep
        }
    }

    @inlinable
    func forgetLocked(_ entry: Entry) -> Settled {
        entries.removeValue(forKey: entry.key)
        if lastEntry === entry {
            lastEntry = nil
        }
        entry.isForgotten = true
        if _slowPath(entry.reportedBusy || entry.reportedOwing) {
            reportForgottenLocked(entry)
        }
        defer {
            entry.timer = nil
            entry.expiry = nil
            entry.expiryAt = nil
        }
        return .forgot(timer: entry.timer, expiry: entry.expiry)
    }

    /// Tells the store's ledger that the key of `entry`, forgotten while closing, is no longer busy or owing.
    @usableFromInline
    func reportForgottenLocked(_ entry: Entry) {
        settling?.timedEffectChanged(busy: entry.reportedBusy ? -1 : 0, owing: entry.reportedOwing ? -1 : 0)
        entry.reportedBusy = false
        entry.reportedOwing = false
    }

    /// Performs what ``settleLocked(_:at:)`` decided, outside the lock.
    @inlinable
    func finish(_ entry: Entry, _ settled: Settled) {
        switch settled {
        case .keep:
            return
        case .forgot(let timer, let expiry):
            timer?.cancel()
            expiry?.cancel()
        case .expire(let instant):
            armExpiry(entry, at: instant)
        }
    }

    @usableFromInline
    func armExpiry(_ entry: Entry, at instant: DispatchTime) {
        let work = scheduler.schedule(after: instant) { [weak self] in self?.expire(entry) }
        let stale: ScheduledWork? = lock.withLock {
            guard !entry.isForgotten, !isClosing, entry.expiryAt == instant else { return work }
            defer { entry.expiry = work }
            return entry.expiry
        }
        stale?.cancel()
    }

    /// The expiry timer of `entry` fired: forgets the key if its machine is as a new one by now, or arms the
    /// expiry again for the instant it will be (a timer that fired early, a window that a later run moved). A key
    /// that is busy or owes runs now is settled again by the event that ends that.
    @usableFromInline
    func expire(_ entry: Entry) {
        let now = self.now
        let settled: Settled = lock.withLock {
            guard !entry.isForgotten, entry.expiryAt != nil else { return .keep }
            entry.expiry = nil
            entry.expiryAt = nil
            return settleLocked(entry, at: now)
        }
        finish(entry, settled)
    }

    // MARK: Shutdown

    /// Shutdown: every key's owed runs run now, on the calling thread unless another thread is performing runs of
    /// that key (it then performs them next), and every timer is disarmed. The first call closes the modifier (see
    /// the type's notes).
    ///
    /// - Returns: The number of owed runs that the machines released.
    func flush(settlingWith work: StoreWork) -> Int {
        var count = 0
        var claimed: [(Entry, Run)] = []
        var timers: [ScheduledWork] = []
        lock.withLock {
            if !isClosing {
                isClosing = true
                settling = work
            }
            for entry in entries.values {
                count += entry.machine.flush(runs: &entry.runs)
                if let timer = entry.timer { timers.append(timer) }
                if let expiry = entry.expiry { timers.append(expiry) }
                entry.timer = nil
                entry.expiry = nil
                entry.expiryAt = nil
                let first: Run?
                if entry.handoffPending {
                    // Take over the batch handed to the scheduler: `isDraining` stays set, now for this thread.
                    entry.handoffPending = false
                    first = entry.runs.next()
                } else {
                    first = entry.runs.claim()
                }
                if let first {
                    claimed.append((entry, first))
                }
                noteClosingStateLocked(entry)
            }
        }
        for timer in timers {
            timer.cancel()
        }
        for (entry, first) in claimed {
            perform(entry, first, nil)
        }
        return count
    }

    /// Tells the store's work when the key of `entry` starts or stops being busy (a thread performs its runs, or
    /// runs wait to be performed) or owing runs; called with `lock` held, once `isClosing` is set.
    @usableFromInline
    func noteClosingStateLocked(_ entry: Entry) {
        guard !entry.isForgotten, let settling else { return }
        let busy = entry.isBusy
        let owing = entry.inspect { $0.owesRuns }
        guard busy != entry.reportedBusy || owing != entry.reportedOwing else { return }
        settling.timedEffectChanged(
            busy: (busy ? 1 : 0) - (entry.reportedBusy ? 1 : 0),
            owing: (owing ? 1 : 0) - (entry.reportedOwing ? 1 : 0)
        )
        entry.reportedBusy = busy
        entry.reportedOwing = owing
    }

    /// The store's lifetime ended: every key is forgotten with what it owed, and every timer is cancelled. During
    /// shutdown (the modifier is closing), the dropped runs are told to the store's work, for the report.
    private func tearDown() {
        var timers: [ScheduledWork] = []
        var dropped: [[Run]] = []
        let settling: StoreWork? = lock.withLock {
            for entry in entries.values {
                if isClosing {
                    _ = entry.machine.flush(runs: &entry.runs)
                }
                entry.machine.reset()
                dropped.append(entry.runs.removeAll())
                entry.handoffPending = false
                if let timer = entry.timer { timers.append(timer) }
                if let expiry = entry.expiry { timers.append(expiry) }
                _ = forgetLocked(entry)
            }
            entries = [:]
            lastEntry = nil
            return isClosing ? self.settling : nil
        }
        for timer in timers {
            timer.cancel()
        }
        let count = dropped.reduce(0) { $0 + $1.count }
        if let settling, count > 0 {
            settling.timedRunsDropped(count)
        }
        _ = dropped  // released here, outside the lock
    }
}

/// When the machine of a key is as a new one would be, so that its key may be forgotten.
@usableFromInline
enum KeyRelease: Sendable {
    /// Now: it owes nothing and needs no timer.
    case now
    /// From this instant on, if no action comes first (a `throttle` window's end, the end of a `debounce` burst).
    case at(DispatchTime)
    /// Not before a later event of the machine (its timer, a run), or never (a window that never ends).
    case notYet
}

/// A time-based modifier's machine that can say when it is as a new one, for ``KeyedTimedEffect``.
@usableFromInline
protocol KeyedStateMachine: TimedStateMachine {
    /// When this machine decides every later event as a new machine would: it owes no run, and what it remembers
    /// (an open window, a burst) no longer changes a decision. Read when no run of it is queued or in progress.
    var release: KeyRelease { get }
}

extension ThrottleStateMachine: KeyedStateMachine {
    /// When its window ends, unless a trailing run is pending (its timer fires first) or the window never ends: an
    /// action at or after the end of a window with nothing pending opens a new window, as the first action does.
    @inlinable
    var release: KeyRelease {
        if pending != nil { return .notYet }
        guard isOpen else { return .now }
        guard let end = windowEnd else { return .notYet }
        return .at(end)
    }
}

extension DebounceStateMachine: KeyedStateMachine {
    /// Once nothing is pending and no timer is armed; with `maxWait`, also not before the burst is over (the quiet
    /// time after the last action passed), since the longest wait of the next run counts from the previous run
    /// while the actions go on.
    @inlinable
    var release: KeyRelease {
        if pending != nil || isTimerArmed { return .notYet }
        guard maxWait != nil, let last = lastActionAt else { return .now }
        guard let quiet = last.adding(interval) else { return .notYet }
        return .at(quiet)
    }
}

extension DelayStateMachine: KeyedStateMachine {
    /// Once no run is queued and no timer is armed.
    @inlinable
    var release: KeyRelease {
        head < entries.count || isTimerArmed ? .notYet : .now
    }
}

extension SideEffect {
    /// ``timed(_:_:runs:on:_:)`` per key: each key that `key` extracts gets its own machine from `makeMachine`; an
    /// action whose key is `nil` is not accepted.
    @inlinable
    func timed<Key: Hashable & Sendable, Machine: KeyedStateMachine & Sendable>(
        by key: @escaping @Sendable (Action) -> Key?,
        _ interval: Duration,
        _ operatorName: String,
        runs placement: RunPlacement,
        on scheduler: any EffectScheduler,
        _ makeMachine: (_ nanoseconds: UInt64?) -> Machine
    ) -> SideEffect where Machine.Run == EffectRun<State, Action> {
        let nanoseconds = interval.nanoseconds(checking: operatorName)
        if nanoseconds == 0 {
            if placement == .inDispatch {
                // No rate limit and no scheduler: the effect runs for every action that has a key, as if unwrapped.
                return keyed(by: key)
            }
            return installKeyedTimed(by: key, DelayStateMachine(interval: 0), placement, scheduler)
        }
        return installKeyedTimed(by: key, makeMachine(nanoseconds), placement, scheduler)
    }

    /// This effect, accepting only the actions that it accepts and that have a key.
    @inlinable
    func keyed<Key>(by key: @escaping @Sendable (Action) -> Key?) -> SideEffect {
        SideEffect(accepts: acceptsKeyed(by: key), install: install)
    }

    /// Whether this effect accepts an action and `key` gives it a key.
    @inlinable
    func acceptsKeyed<Key>(by key: @escaping @Sendable (Action) -> Key?) -> @Sendable (Action) -> Bool {
        if let accepts {
            return { action in accepts(action) && key(action) != nil }
        }
        return { action in key(action) != nil }
    }

    /// Gives each store that installs this effect its own ``KeyedTimedEffect`` with `machine` as every key's
    /// first state, registered with the store for shutdown. The handler asks for acceptance and the key itself,
    /// so that a lifted effect extracts the key once.
    @inlinable
    func installKeyedTimed<Key: Hashable & Sendable, Machine: KeyedStateMachine & Sendable>(
        by key: @escaping @Sendable (Action) -> Key?,
        _ machine: Machine,
        _ placement: RunPlacement,
        _ scheduler: any EffectScheduler
    ) -> SideEffect where Machine.Run == EffectRun<State, Action> {
        let accepts = self.accepts
        return SideEffect(accepts: acceptsKeyed(by: key), handlerChecksAcceptance: true) { storeAPI in
            let handler = install(storeAPI)
            let keyed = KeyedTimedEffect<Key, Machine>(
                machine: machine,
                scheduler: scheduler.resolved(with: storeAPI),
                placement: placement,
                lifetime: storeAPI.storeLifetime
            ) { run in
                run.api.runWithDependenciesUnlessCancelled(handler, run.action)
            }
            storeAPI.registerForShutdown(keyed)
            if let accepts {
                return { action, api in
                    guard accepts(action), let key = key(action) else { return }
                    keyed.receive(key, action, api)
                }
            }
            return { action, api in
                guard let key = key(action) else { return }
                keyed.receive(key, action, api)
            }
        }
    }
}

extension MiddlewareAPI {
    /// Lets the store's shutdown run what every key of `keyed` owes, and lets tests count its keys.
    @usableFromInline
    func registerForShutdown<Key, Machine>(_ keyed: KeyedTimedEffect<Key, Machine>) {
        core.work.register(
            flush: { [weak keyed] work in keyed?.flush(settlingWith: work) ?? 0 },
            keyCount: { [weak keyed] in keyed?.keyCount ?? 0 }
        )
    }
}
