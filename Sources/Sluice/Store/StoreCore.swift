/// The dispatch engine behind a ``Store``: its state, its subscribers and the serialization of dispatches.
///
/// ## How one lock serializes dispatches
///
/// One lock (`Lock`: a futex lock on Linux) guards everything here. A dispatch *owns the pipeline* while the middleware, the
/// reducer and the subscribers run for its action and for every action that this work dispatched in turn
/// (`pipeline`, a `PipelineStateMachine`: its owner, its queue, its line of waiters). The mutex itself is held only for short critical sections: around the reducer
/// call and the bookkeeping, never while middleware or subscribers run, so `state` never waits for longer than
/// one reducer call.
///
/// - A dispatch on the thread that owns the pipeline (from a middleware, a side effect, a subscriber) appends
///   its action to `queue` and returns; the owner processes the queue, in order, before its outermost dispatch
///   returns. Re-entrancy is detected by thread identity, not with a `TaskLocal`, which a `Task` started in a
///   middleware would inherit.
/// - A dispatch from another thread waits in line, on its own wake-up (``ThreadWakeUp``), until the owner hands it the
///   pipeline, unless that thread owns the pipeline of some other store (``OwnedPipelines``): then it hands its
///   action to this pipeline's owner through `queue` instead, since waiting could close a cycle of stores and
///   deadlock. A `send` from a task waits in the same line, suspended; the owner processes its action for it
///   (`StoreTask.swift`).
/// - With no middleware and no subscribers, a dispatch is one lock, one reducer call and one unlock (plus, after
///   a read of ``Store/state``, one report to Observation: see `StoreObservation.swift`).
/// - Uncontended, a dispatch takes and gives up the pipeline without the lock: one compare-and-swap on the owner
///   word (`entryWord`, a ``PipelineEntry``) each way. The state machine takes over, under the lock, only when
///   someone else needs the pipeline meanwhile (`PipelineEntry.swift`): so the fast path counts nothing, and
///   every figure of ``Store/statistics`` is counted by the state machine.
///
/// ## Lifetime
///
/// The core is owned by its ``Store`` and referenced by every ``MiddlewareAPI`` and by the innermost `next`
/// of the middleware chain, which the core references in turn (`entry`). That cycle is broken on purpose by
/// ``storeDidGoAway()``, which the store calls from `deinit`: from then on the core is *dead*, every dispatch
/// through it does nothing, and `state` keeps returning the last state.
///
/// `@unchecked Sendable`: every mutable property is read and written with `lock` held, except `statePointer`'s
/// pointee, which is written only with `lock` held and read either with `lock` held or by the pipeline owner,
/// the only thread that writes it, and `entryWord`'s word, which is atomic (`PipelineEntry.swift`).
@usableFromInline
package final class StoreCore<State: Sendable, Action: Sendable>: @unchecked Sendable {
    @usableFromInline
    let lock = Lock()
    /// The state lives in its own allocation so that the reducer can change it in place.
    @usableFromInline
    let statePointer: UnsafeMutablePointer<State>
    @usableFromInline
    let reduce: @Sendable (inout State, Action) -> Void

    // Guarded by `lock`. `@exclusivity(unchecked)`: the lock already makes every access exclusive, and the dynamic
    // check that Swift otherwise performs on each access to a class's `var` would be the largest cost of a
    // dispatch.
    @usableFromInline @exclusivity(unchecked)
    var subscribers: ContiguousArray<Subscriber> = []
    /// Who owns the pipeline, what is queued for it and who waits for it (`PipelineStateMachine.swift`), once the
    /// state machine is in charge; read it through ``pipeline``.
    @usableFromInline @exclusivity(unchecked)
    var pipelineStorage = Pipeline()
    /// The owner word: takes and gives up an uncontended pipeline without the lock (`PipelineEntry.swift`).
    @usableFromInline
    let entryWord = PipelineEntry()
    /// The actions that the thread owning the pipeline on the fast path dispatched to it meanwhile (rule 2), in
    /// order: appended and taken by that thread without the lock, so that a follow-up action costs about what an
    /// outer dispatch does. Only an owner whose word is bare (the state machine idle: nothing else queued, nobody
    /// in line, the store open) appends here; once the machine is in charge, its queue takes the owner's later
    /// actions, which come after these, so these are processed first (``drainLocked(through:)``). Read and written
    /// only by the pipeline's owner, which empties it before it gives the pipeline up.
    @usableFromInline @exclusivity(unchecked)
    var ownerQueue = OwnerQueue<Action>()
    /// What ``ownerQueue`` adds to ``Store/statistics``: written by the owner, read by anyone.
    @usableFromInline
    let ownerQueueCounts = OwnerQueueCounts()
    /// Work that the pipeline's owner leaves for after it gives the pipeline up (``runAfterRelease(_:)``), in the
    /// order it was left. Read and written only by the owner, which takes all of it under the lock at the moment it
    /// gives the pipeline up (``drainThenRunLeftWorkLocked(through:)``) and runs it then, outside the lock.
    @usableFromInline @exclusivity(unchecked)
    var afterRelease: [@Sendable () -> Void] = []
    /// The nanoseconds that the action whose work runs now waited for the pipeline; 0 unless it waited. Read only by
    /// the pipeline's owner (see ``MiddlewareAPI/pipelineWaitOfCurrentAction``).
    @usableFromInline
    var waitOfCurrentAction: UInt64 {
        pipelineStorage.run.waited
    }
    /// Whether the owner is processing the action of a `send` (with the actions it caused), whose ``StoreTask``
    /// follows the tasks started meanwhile: `trackedWork` is their send group in the store's ``StoreWork``, made
    /// at the first (see ``sendGroupOfCurrentRun()``). Written and read only by the pipeline's owner, with
    /// `lock` held.
    @usableFromInline @exclusivity(unchecked)
    var isTrackingWork = false
    @usableFromInline @exclusivity(unchecked)
    var trackedWork: TrackedWork?
    /// The head of the middleware chain, for dispatches through a ``MiddlewareAPI``; `nil` without middleware.
    @usableFromInline @exclusivity(unchecked)
    var entry: DispatchFunction<Action>?
    var nextSubscriberID: UInt64 = 0
    /// Set by a read of ``Store/state`` (which Observation may be tracking), cleared by the next reduced action,
    /// which then tells `observation` about the change. See `StoreObservation.swift`.
    @usableFromInline @exclusivity(unchecked)
    var observedSinceLastChange = false
    /// Nobody to notify after an action (see ``updateNobodyToNotifyLocked()``). The fast path of a dispatch tests
    /// this one flag (one load; `subscribers.isEmpty` alone takes two).
    @usableFromInline @exclusivity(unchecked)
    var nobodyToNotify = true
    /// Cancelled when the store goes away or its shutdown ends: the root of every cancellation of work that the store
    /// owns (timers of modifiers, tasks of side effects, effects, streams), and the one record of "the store is over"
    /// (whether it still accepts dispatches is the pipeline's ``PipelineStateMachine/Phase``).
    package let lifetime = Cancellation()
    /// The Observation registrar of the store.
    @usableFromInline
    let observation = StoreObservation()
    /// The ledger of running work (effects, side-effect tasks, `takeLeading` runs, send groups), the owed runs
    /// and the failure handler that shutdown and the error channel need.
    @usableFromInline
    package let work = StoreWork()
    /// The services of the store; never read on the dispatch path.
    @usableFromInline
    let dependencies: StoreDependencies

    @usableFromInline
    struct Subscriber: Sendable {
        @usableFromInline
        let id: UInt64
        @usableFromInline
        let notify: StateObserver<State>
    }

    /// What an action's subscribers and Observation are told, taken under the lock (``reduceLocked(_:)``) and
    /// delivered outside it (``deliver(_:)``).
    @usableFromInline
    struct Notice: ~Copyable {
        @usableFromInline
        let subscribers: ContiguousArray<Subscriber>
        /// The state right after the action; `nil` without subscribers.
        @usableFromInline
        var state: State?
        /// Whether ``Store/state`` was read since the last change, so that Observation is told.
        @usableFromInline
        let observed: Bool

        @inlinable
        init(subscribers: ContiguousArray<Subscriber>, state: State?, observed: Bool) {
            self.subscribers = subscribers
            self.state = state
            self.observed = observed
        }
    }

    init(
        initialState: consuming State,
        reduce: @escaping @Sendable (inout State, Action) -> Void,
        dependencies: StoreDependencies = StoreDependencies()
    ) {
        statePointer = .allocate(capacity: 1)
        statePointer.initialize(to: initialState)
        self.reduce = reduce
        self.dependencies = dependencies
    }

    deinit {
        statePointer.deinitialize(count: 1)
        statePointer.deallocate()
        entryWord.deallocate()
        ownerQueueCounts.deallocate()
    }

    // MARK: The owner word

    /// The state machine of the pipeline, in charge from this access on: any code under the lock that reads or
    /// changes it sees the thread that owns the pipeline on the fast path, and makes that thread release it
    /// through the machine. Called with `lock` held.
    @usableFromInline
    var pipeline: Pipeline {
        _read {
            inflateLocked()
            yield pipelineStorage
        }
        _modify {
            inflateLocked()
            yield &pipelineStorage
        }
    }

    /// Puts the state machine in charge of the pipeline (``PipelineEntry/slow``), with the fast owner, if any, as
    /// its owner; called with `lock` held. One relaxed load when it already is.
    @inlinable
    func inflateLocked() {
        if _fastPath(entryWord.value & PipelineEntry.slow != 0) {
            return
        }
        // Only a thread that holds the lock sets the bit: the word was 0 or a bare fast owner, whose release now
        // fails and comes to the lock (which this thread holds until the machine knows the owner).
        let word = entryWord.inflate()
        if word != 0 {
            pipelineStorage.take(by: PipelineEntry.owner(in: word))
        }
    }

    /// Gives the pipeline back to the fast path, the state machine being idle (no owner, nothing queued, nobody in
    /// line); called with `lock` held. While the store is gone or refuses dispatches, the machine stays in charge,
    /// so that the fast path, which tests neither, never runs.
    @inlinable
    func deflateLocked() {
        let open = pipelineStorage.phase == .open
        entryWord.store(_fastPath(open && pipelineStorage.waiterCount == 0) ? 0 : PipelineEntry.slow)
    }

    /// The pipeline went idle: back to the fast path while the store is open; once it is not, the ledger hears of
    /// it, for shutdown, which waits for a free pipeline. Called with `lock` held.
    @inlinable
    func wentIdleLocked() {
        if _slowPath(pipelineStorage.phase != .open) {
            work.pipelineWentIdle()
        }
        deflateLocked()
    }

    /// Whether nobody is to be notified after an action: no subscriber, no read of ``Store/state`` since the last
    /// change, no reading dispatch waiting for its first reduce. The one formula of `nobodyToNotify`; called with
    /// `lock` held whenever one of the three changes.
    @inlinable
    func updateNobodyToNotifyLocked() {
        nobodyToNotify = subscribers.isEmpty && !observedSinceLastChange && !pipelineStorage.run.isReading
    }

    // MARK: Dispatch

    @usableFromInline
    typealias Pipeline = PipelineStateMachine<Action, ThreadWakeUp, TaskResumption<State>>

    /// Dispatches `action` from outside: through `chain`, or straight to the reducer when `chain` is `nil`.
    ///
    /// Returns `true` if the action was accepted (processed, or queued for the thread that owns the pipeline),
    /// `false` if the store is gone. ``Store/dispatch(_:)`` ignores the answer, which costs it nothing once inlined.
    @inlinable @inline(__always) @discardableResult
    func dispatch(_ action: Action, through chain: DispatchFunction<Action>?) -> Bool {
        if chain != nil {
            let thread = ThreadID.current
            if _fastPath(entryWord.tryTake(thread)) {
                // The pipeline is ours, and the store alive and accepting (else the word would not have been 0).
                runOnFastPipeline(action, through: chain, thread: thread)
                return true
            }
            lock.lock()
            return dispatchSlowLocked(action, through: chain)
        }
        lock.lock()
        if _fastPath(entryWord.value == 0) {
            if _fastPath(nobodyToNotify) {
                // Idle, alive and accepting. A fast owner may take the pipeline right after this load, but it reaches
                // the reducer only through the lock, which this thread holds: this action comes first.
                applyLocked(action)
                lock.unlock()
                return true
            }
            let thread = ThreadID.current
            if _fastPath(entryWord.tryTake(thread)) {
                reduceAndNotifyOnFastPipelineLocked(action, thread: thread)
                return true
            }
        }
        return dispatchSlowLocked(action, through: nil)
    }

    /// Appends `action` to ``ownerQueue``; called by the thread that owns the pipeline with a bare owner word,
    /// without the lock. The first action sets ``PipelineEntry/queued``, so that the owner's fast exit fails and it
    /// processes the queue first.
    @inlinable
    func queueForOwner(_ action: Action) {
        if ownerQueue.isEmpty {
            entryWord.markQueued()
        }
        ownerQueue.append(action)
        ownerQueueCounts.noteQueued(depth: ownerQueue.count)
    }

    /// Runs `action` through `chain` on the pipeline that this thread took on the fast path, with the actions it
    /// queued meanwhile, then gives it up: without the lock if nobody needed it meanwhile.
    @inlinable @inline(__always)
    func runOnFastPipeline(_ action: Action, through chain: DispatchFunction<Action>?, thread: ThreadID) {
        OwnedPipelines.add(1)
        // `chain` is not nil here, and the caller keeps it alive (see ``processLocked(_:through:)``).
        chain!(action)
        if _fastPath(entryWord.tryRelease(thread)) {
            OwnedPipelines.add(-1)
            return
        }
        releaseAfterQueueing(through: chain, thread: thread)
    }

    /// The end of a fast-path run whose exit failed: this thread queued actions for itself (``ownerQueue``), which it
    /// processes through the chain without the lock while the state machine stays idle, then gives the pipeline up;
    /// or the machine took over (someone waits, the store closed or went away), which then drains and releases
    /// (``drainLocked(through:)`` knows whether the store is gone).
    @inlinable @inline(never)
    func releaseAfterQueueing(through chain: DispatchFunction<Action>?, thread: ThreadID) {
        while entryWord.value == thread.raw | PipelineEntry.queued {
            if ownerQueue.isEmpty {
                if entryWord.tryReleaseQueued(thread) {
                    OwnedPipelines.add(-1)
                    return
                }
                break
            }
            chain!(ownerQueue.removeFirst())
        }
        releaseThroughMachine()
    }

    /// Leaves `work` for after this thread gives up the pipeline it owns: run on this thread, outside the lock, at
    /// the end of the current dispatch, send or hand-over (after the actions it queued meanwhile), so that no other
    /// dispatch waits for it. Called from inside the chain; the logging middleware leaves each line's description
    /// and sink here. A caller that does not own the pipeline runs `work` at once: a middleware before it called
    /// `next` later or from another thread (rule 5), so the store's work for that action is already done.
    ///
    /// The state machine takes charge of the run if it is not already (a logged action already put it in charge,
    /// to read how long it waited), so that the owner gives the pipeline up through ``drainLocked(through:)``, the
    /// one place that runs this work; the fast exits then test nothing more.
    @usableFromInline
    func runAfterRelease(_ work: @escaping @Sendable () -> Void) {
        let word = entryWord.value
        // Exact without the lock: only this thread puts its identity in the word, and only its release takes it out.
        guard PipelineEntry.owner(in: word).raw == ThreadID.current.raw else {
            work()
            return
        }
        if afterRelease.isEmpty, word & PipelineEntry.slow == 0 {
            // Only the lock sets the bit, and once set during this run only this owner's release clears it.
            lock.lock()
            inflateLocked()
            lock.unlock()
        }
        afterRelease.append(work)
    }

    /// Runs work left for after a release, taken by ``drainThenRunLeftWorkLocked(through:)`` or handed to a served
    /// task (``takeLeftWorkLocked()``), then tells the ledger, which shutdown waits on
    /// (``StoreWork/leftWorkEnded(_:)``). Called without `lock`.
    @inlinable
    func runLeftWork(_ left: [@Sendable () -> Void]) {
        if left.isEmpty {
            return
        }
        for item in left {
            item()
        }
        work.leftWorkEnded(left.count)
    }

    /// The end of a fast-path run whose owner word the state machine took over meanwhile (something was queued,
    /// someone waits, the store closed): drains and releases through the machine. Through `entry`, the same chain
    /// while the store is alive (with it gone, the queue is dropped): the caller's `chain` is not used after its
    /// run, which spares a retain and a release of its context per dispatch. Out of line, so that the fast path
    /// around it keeps its registers (inlined, it costs every dispatch through middleware register moves).
    @inlinable @inline(never)
    func releaseThroughMachine() {
        lock.lock()
        drainAfterFastRunLocked(through: entry)
    }

    /// ``drainLocked(through:)`` for a run that began on the fast path: ``ownerQueue`` first, since what the owner
    /// queued there came before what it queued in the machine's queue once the machine was in charge. (A run that
    /// the machine began never queues in ``ownerQueue``.) Called with `lock` held, returns without it.
    @inlinable
    func drainAfterFastRunLocked(through chain: DispatchFunction<Action>?) {
        if _slowPath(!ownerQueue.isEmpty) {
            processOwnerQueueLocked(through: chain)
        }
        drainLocked(through: chain)
    }

    /// Reduces `action` and notifies the subscribers (and Observation) on the pipeline that this thread took on the
    /// fast path, with `lock` held, then gives it up; returns without `lock`.
    @inlinable @inline(never)
    func reduceAndNotifyOnFastPipelineLocked(_ action: Action, thread: ThreadID) {
        OwnedPipelines.add(1)
        let notice = reduceLocked(action)
        lock.unlock()
        deliver(notice)
        // Fails too if a subscriber queued an action in `ownerQueue` (through a scoped store): the drain takes it.
        if _fastPath(entryWord.tryRelease(thread)) {
            OwnedPipelines.add(-1)
            return
        }
        lock.lock()
        drainAfterFastRunLocked(through: nil)
    }

    /// A dispatch that found the state machine in charge, or the pipeline owned; called with `lock` held, returns
    /// without it. The machine decides (``PipelineStateMachine/admit(_:from:ownsAnotherPipeline:superseded:)``), this
    /// performs the answer:
    ///
    /// - run: the pipeline was free and is this thread's now;
    /// - queued (rule 2): a dispatch from inside this thread's dispatch, or from inside another store's dispatch, which
    ///   is handed to the thread that owns this pipeline instead of waiting for it (waiting could deadlock if that
    ///   thread dispatches back into the other store);
    /// - wait: in line until this thread gets the pipeline (woken to take it, or handed it after waiting long), then
    ///   admitted again (``processAsOwnerLocked(_:through:waited:run:)``);
    /// - refused, dropped: not processed.
    ///
    /// `fromAPI`: go through the chain as it is once the pipeline is ours (`entry`), not through `chain`. `run`: the
    /// cancellation of the side-effect run that dispatches (see ``dispatchFromAPI(_:unlessCancelled:)``).
    @inlinable @inline(never)
    func dispatchSlowLocked(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool = false,
        run: Cancellation? = nil
    ) -> Bool {
        let admission = admitLocked(action, run: run)
        switch admission {
        case .run:
            // A strong reference for the duration of the call: `storeDidGoAway()` may clear `entry` meanwhile.
            runAdmittedLocked(action, through: fromAPI ? entry : chain)
            return true
        case .queued:
            lock.unlock()
            return true
        case .wait:
            return waitAndProcessLocked(action, through: chain, fromAPI: fromAPI, run: run)
        case .refused, .dropped:
            lock.unlock()
            return false
        }
    }

    /// Waits in line, then processes `action` as the owner if the machine still admits it; called with `lock` held,
    /// returns without it. Out of line: the waiting is the slow part of the slow path. Inlinable, so that the work
    /// this thread then runs as the owner (its action, and those of every thread and task in line) is specialized.
    @inlinable @inline(never)
    func waitAndProcessLocked(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool,
        run: Cancellation?
    ) -> Bool {
        let waited = waitForPipeline(ThreadID.current)
        return processAsOwnerLocked(action, through: fromAPI ? entry : chain, waited: waited, run: run)
    }

    /// The machine's admission of `action` from this thread, on behalf of the side-effect run `run`, if any; called
    /// with `lock` held. The thread's identity, its count of owned pipelines and the run's cancellation are read only
    /// if the answer depends on them.
    @inlinable @inline(__always)
    func admitLocked(_ action: Action, run: Cancellation?) -> Pipeline.Admission {
        pipeline.admit(
            action,
            from: ThreadID.current,
            ownsAnotherPipeline: OwnedPipelines.count > 0,
            superseded: isSuperseded(run)
        )
    }

    /// Runs `action`, admitted on the free pipeline; called with `lock` held, returns without it, the queue drained
    /// and the pipeline given up.
    @inlinable
    func runAdmittedLocked(_ action: Action, through chain: DispatchFunction<Action>?) {
        if chain == nil {
            applyLocked(action)
            if _fastPath(nobodyToNotify) {
                // Reduced in this critical section: the pipeline was never taken. Back to the fast path.
                deflateLocked()
                lock.unlock()
                return
            }
            takeLocked(ThreadID.current)
            let notice = noticeLocked()
            lock.unlock()
            deliver(notice)
            drainQueue(through: nil)
            return
        }
        takeLocked(ThreadID.current)
        lock.unlock()
        // `chain!`, not `guard let chain` nor `chain.unsafelyUnwrapped`: either makes the optimizer copy the closure,
        // a retain and a release of its context (two atomic operations) per action. `chain` is a borrowed
        // parameter: the caller keeps it alive.
        chain!(action)
        drainQueue(through: chain)
    }

    /// Processes `action` on the pipeline that this thread was handed after waiting `waited` nanoseconds, if the
    /// machine still admits it (the store may have closed, or `run` been superseded, while it waited); called with
    /// `lock` held, returns without it.
    @inlinable
    func processAsOwnerLocked(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        waited: UInt64,
        run: Cancellation? = nil
    ) -> Bool {
        guard pipeline.admitOwner(superseded: isSuperseded(run)).isRun else {
            drainLocked(through: chain)
            return false
        }
        runLocked(action, through: chain, waited: waited)
        drainLocked(through: chain)
        return true
    }

    /// Runs the work of `action` as the pipeline's owner; called with `lock` held, returns with it.
    @inlinable
    func runLocked(_ action: Action, through chain: DispatchFunction<Action>?, waited: UInt64) {
        pipelineStorage.run.waited = waited
        if chain != nil {
            lock.unlock()
            chain!(action)  // not `if let chain`, which copies the closure (see `processLocked(_:through:)`)
        } else {
            let notice = reduceLocked(action)
            lock.unlock()
            deliver(notice)
        }
        lock.lock()
        pipelineStorage.run.waited = 0
    }

    /// Makes the calling thread the pipeline's owner, through the state machine; called with `lock` held, the
    /// pipeline idle.
    @inlinable
    func takePipeline() {
        inflateLocked()
        takeLocked(ThreadID.current)
    }

    /// Makes `thread` the owner of the free pipeline that the machine admitted it to: in the machine, in the owner
    /// word and in this thread's count of owned pipelines. Called with `lock` held, the machine in charge.
    @inlinable
    func takeLocked(_ thread: ThreadID) {
        pipelineStorage.take(by: thread)
        entryWord.store(thread.raw | PipelineEntry.slow)
        OwnedPipelines.add(1)
    }

    /// Waits in line, with `lock` held, until the pipeline is handed to this thread; returns the nanoseconds it
    /// waited.
    @usableFromInline
    func waitForPipeline(_ thread: ThreadID) -> UInt64 {
        let start = monotonicNanoseconds()
        let wakeUp = ThreadWakeUp.current
        pipeline.waitAsThread(thread, wakeUp: wakeUp, since: start)
        while true {
            lock.wait(for: wakeUp)
            if pipeline.owner == thread {
                break  // handed over: this thread had waited longer than `PipelineStateMachine.starvation`
            }
            guard pipeline.wokenThreadIsBack(thread) else {
                continue  // not this thread's wake-up: still in line
            }
            if !pipeline.isOwned {
                pipeline.take(by: thread)
                entryWord.store(thread.raw | PipelineEntry.slow)
                break
            }
            // A running thread took the free pipeline first.
            pipeline.waitAgainAtHead(thread, wakeUp: wakeUp, since: start)
        }
        let waited = monotonicNanoseconds() &- start
        pipeline.threadDidWait(waited)
        OwnedPipelines.add(1)
        return waited
    }

    /// The number of threads and tasks waiting for the pipeline, woken threads on their way included (for tests).
    var waiters: Int {
        pipeline.waitingCount
    }

    /// Processes the actions queued by re-entrant dispatches, then gives up the pipeline.
    ///
    /// Called by the pipeline owner without `lock` held.
    @inlinable
    func drainQueue(through chain: DispatchFunction<Action>?) {
        lock.lock()
        drainLocked(through: chain)
    }

    /// ``drainQueue(through:)`` with `lock` held; returns without it.
    @inlinable
    func drainLocked(through chain: DispatchFunction<Action>?) {
        while true {
            if _slowPath(!pipeline.queue.isEmpty) {
                processQueueLocked(through: chain)
            }
            if _slowPath(!afterRelease.isEmpty) {
                drainThenRunLeftWorkLocked(through: chain)
                return
            }
            if giveUpLocked(through: chain) {
                return
            }
        }
    }

    /// ``drainLocked(through:)`` for an owner that left work for after the release (``afterRelease``): takes that
    /// work, and what the queued actions leave, at the moment it gives the pipeline up, then runs it without the
    /// lock. Called with `lock` held, returns without it.
    @inlinable @inline(never)
    func drainThenRunLeftWorkLocked(through chain: DispatchFunction<Action>?) {
        var left: [@Sendable () -> Void] = []
        while true {
            if !pipeline.queue.isEmpty {
                processQueueLocked(through: chain)
            }
            let taken = takeLeftWorkLocked()
            if left.isEmpty {
                left = taken  // the list's own buffer, not a copy
            } else {
                left += taken
            }
            if giveUpLocked(through: chain) {
                break
            }
        }
        runLeftWork(left)
    }

    /// The work left for after the release (``afterRelease``), taken out of it and counted in the ledger
    /// (``StoreWork/leftWorkBegan(_:)``) until ``runLeftWork(_:)`` ran it; empty, without allocating, when there is
    /// none. Called by the owner with `lock` held, before it gives the pipeline up, so that shutdown, which waits
    /// for a free pipeline, finds the work counted once the pipeline is free.
    @inlinable
    func takeLeftWorkLocked() -> [@Sendable () -> Void] {
        if _fastPath(afterRelease.isEmpty) {
            return []
        }
        work.leftWorkBegan(afterRelease.count)
        defer { afterRelease = [] }
        return afterRelease
    }

    /// Gives the drained pipeline up: to a waiter, or idle (returns `true`, without `lock`); or serves a waiting
    /// task's action (returns `false`, with `lock`: the caller drains what that queued, then gives up again).
    /// Called with `lock` held and the state machine in charge (the caller read ``pipeline``, and only this
    /// owner's release gives the fast path back), so it reads the machine without making it take over again.
    @inlinable
    func giveUpLocked(through chain: DispatchFunction<Action>?) -> Bool {
        if _slowPath(pipelineStorage.waiterCount > 0) {
            return releaseToWaiterLocked(through: chain)
        }
        pipelineStorage.releaseIdle()
        wentIdleLocked()
        OwnedPipelines.add(-1)
        lock.unlock()
        return true
    }

    /// Processes ``ownerQueue`` until it is empty, or drops it once the store is gone, as the machine drops its queue;
    /// called by the owner with `lock` held, returns with it.
    @inlinable @inline(never)
    func processOwnerQueueLocked(through chain: DispatchFunction<Action>?) {
        while !ownerQueue.isEmpty {
            if pipelineStorage.phase == .gone {
                ownerQueue.removeAll()
                return
            }
            let next = ownerQueue.removeFirst()
            if chain != nil {
                lock.unlock()
                chain!(next)
            } else {
                let notice = reduceLocked(next)
                lock.unlock()
                deliver(notice)
            }
            lock.lock()
        }
    }

    /// Processes the queue until it is empty; called by the owner with `lock` held, returns with it.
    @inlinable
    func processQueueLocked(through chain: DispatchFunction<Action>?) {
        while _slowPath(!pipeline.queue.isEmpty) {
            // `nil` once the store is gone: the queue is dropped.
            guard let next = pipeline.nextQueuedAction() else {
                return
            }
            if chain != nil {
                lock.unlock()
                chain!(next)
                lock.lock()
            } else {
                let notice = reduceLocked(next)
                lock.unlock()
                deliver(notice)
                lock.lock()
            }
        }
    }

    /// The queue is empty and someone waits: hands the pipeline over to a waiting thread (returns `true`, without
    /// `lock`), or processes a waiting task's action and resumes the task (returns `false`, with `lock`: the caller
    /// processes what that queued, then releases again).
    @inlinable
    func releaseToWaiterLocked(through chain: DispatchFunction<Action>?) -> Bool {
        switch pipeline.release(now: monotonicNanoseconds()) {
        case .idle:
            wentIdleLocked()
            OwnedPipelines.add(-1)
            lock.unlock()
            return true
        case .handOver(let wakeUp):
            entryWord.store(pipelineStorage.owner.raw | PipelineEntry.slow)
            OwnedPipelines.add(-1)
            wakeUp.signal()
            lock.unlock()
            return true
        case .wake(let wakeUp):
            // Idle, with the woken thread on its way; the word stays `slow` while others wait in line.
            deflateLocked()
            OwnedPipelines.add(-1)
            wakeUp.signal()
            lock.unlock()
            return true
        case .serve(let action, let continuation, let waited):
            guard pipeline.admitOwner(superseded: isSuperseded(continuation.run)).isRun else {
                // Gone, shut down while the task waited in line, or its run superseded meanwhile: the action is
                // dropped (a refusal by shutdown is counted).
                lock.unlock()
                continuation.resume(returning: .dropped)
                lock.lock()
                return false
            }
            // What the task's action leaves for after the release (its logged line) goes back with the task, which
            // runs it before its `send` returns, on its own thread. The owner's own was taken before it gave up
            // (``drainThenRunLeftWorkLocked(through:)``), so all of ``afterRelease`` is the task's.
            if let reader = continuation.reader {
                // A `send(_:reading:)`: read the state right after its action, before the queued ones.
                runReadingLocked(action, through: chain, waited: waited, reader: reader.read)
                processQueueLocked(through: chain)
                let left = takeLeftWorkLocked()
                lock.unlock()
                continuation.resume(returning: .processed(nil, leftWork: left))
                lock.lock()
                return false
            }
            let work = runTrackingLocked(action, through: chain, waited: waited)
            let left = takeLeftWorkLocked()
            lock.unlock()
            continuation.resume(returning: .processed(work, leftWork: left))
            lock.lock()
            return false
        }
    }

    /// The one call of the reducer: applies `action` to the state in place. Called with `lock` held, by the
    /// pipeline's owner or by a thread that found the pipeline free and reduces within this critical section (so no
    /// other thread can reduce until the lock is released). Every path into the pipeline reaches the reducer here.
    @inlinable @inline(__always)
    func applyLocked(_ action: Action) {
        reduce(&statePointer.pointee, action)
    }

    /// Reduces `action` and takes what the subscribers and Observation are to be told of it: `nil` when nobody is.
    /// Called with `lock` held, by the pipeline's owner or by a thread reducing within its admission's critical
    /// section; the caller unlocks, then hands the notice to ``deliver(_:)``.
    @inlinable @inline(__always)
    func reduceLocked(_ action: Action) -> Notice? {
        applyLocked(action)
        if _fastPath(nobodyToNotify) {
            return nil
        }
        return noticeLocked()
    }

    /// What the subscribers and Observation are to be told of the action just reduced, `nobodyToNotify` being
    /// `false`; `nil` when a reading run, which takes note of the reduce, was all there was to tell. Called with
    /// `lock` held, by the pipeline's owner.
    @inlinable @inline(__always)
    func noticeLocked() -> Notice? {
        if _slowPath(pipelineStorage.run.isReading) {
            noteReduceWhileReadingLocked()
            if nobodyToNotify {
                return nil
            }
        }
        let observed = observedSinceLastChange
        if _slowPath(observed) {
            observedSinceLastChange = false
            updateNobodyToNotifyLocked()
        }
        let subscribers = self.subscribers
        // One copy of the state for every subscriber, taken before the lock is released (rule 6).
        return Notice(
            subscribers: subscribers,
            state: subscribers.isEmpty ? nil : statePointer.pointee,
            observed: observed
        )
    }

    /// Tells the subscribers, in subscription order, then Observation if ``Store/state`` was read since the last
    /// change; called by the pipeline's owner without `lock`.
    @inlinable @inline(__always)
    func deliver(_ notice: consuming Notice?) {
        switch consume notice {
        case .none:
            return
        case .some(var notice):
            if var state = notice.state.take() {
                notify(notice.subscribers, of: &state)
            }
            if _slowPath(notice.observed) {
                observation.stateDidChange()
            }
        }
    }

    @inlinable
    func notify(_ subscribers: ContiguousArray<Subscriber>, of state: UnsafePointer<State>) {
        for subscriber in subscribers {
            subscriber.notify(state)
        }
    }

    /// The innermost `next` of the middleware chain: reduces `action` and notifies the subscribers.
    ///
    /// A middleware may call `next` later or from another thread; such a call is serialized like a dispatch
    /// (rule 5), and does nothing once the store is gone.
    @inlinable
    func reduceFromChain(_ action: Action) {
        lock.lock()
        let word = entryWord.value
        let thread = ThreadID.current
        if _fastPath(word == thread.raw) {
            // Owned by this thread on the fast path, so the store is alive (else the word would have `slow` set).
            let notice = reduceLocked(action)
            lock.unlock()
            deliver(notice)
            return
        }
        guard pipelineStorage.phase != .gone else {
            lock.unlock()
            return
        }
        if word == thread.raw | PipelineEntry.slow
            || word | PipelineEntry.slow == thread.raw | PipelineEntry.slow | PipelineEntry.queued
        {
            // Owned by this thread through the state machine, which writes the owner into the word, or on the fast
            // path with actions queued for itself (with or without the machine in charge since).
            let notice = reduceLocked(action)
            lock.unlock()
            deliver(notice)
            return
        }
        reduceFromOutside(action)
    }

    /// `next` called outside of a dispatch of this thread: take the pipeline like a dispatch does.
    @usableFromInline
    func reduceFromOutside(_ action: Action) {
        if pipeline.isOwned {
            _ = waitForPipeline(ThreadID.current)
        } else {
            takePipeline()
        }
        let chain = entry
        guard pipeline.phase != .gone else {
            drainLocked(through: chain)
            return
        }
        let notice = reduceLocked(action)
        lock.unlock()
        deliver(notice)
        drainQueue(through: chain)
    }

    /// Dispatches through the whole chain on behalf of a ``MiddlewareAPI``, a ``ScopedStore`` or an effect.
    ///
    /// The chain is read only once the pipeline is free: while the store installs its middleware, the installing
    /// thread owns the pipeline, so an action dispatched from another thread meanwhile (by a middleware that starts
    /// a poller when it is installed, say) waits, and then goes through the whole chain, never around it.
    ///
    /// `run` is the cancellation of the side-effect run that dispatches (a `takeLatest` run, an effect with an id),
    /// if any: the action is dropped if `run` is cancelled before the action's work begins, checked under the lock
    /// once this thread has the pipeline. A newer `takeLatest` run supersedes the older one in the middleware of
    /// its action, that is on the pipeline; so the order is exact: a result is processed either before the newer
    /// request (it was the latest result then) or not at all. Checking only at the call, as before, let a result
    /// that waited in line for the pipeline, or whose thread was preempted between the check and the lock, overwrite
    /// a newer run's result. A queued action (this thread owns the pipeline, rule 2) is processed whatever happens
    /// to its run afterwards, as documented on ``MiddlewareAPI/dispatch(_:)``: it was accepted.
    ///
    /// - Returns: `true` if the action was accepted (processed, or queued), `false` if the store is gone or `run`
    ///   was cancelled.
    ///
    /// Specialized for the store's types but not inlined: a side effect that only sometimes dispatches would carry
    /// this code, and the registers it needs, on every call.
    @inlinable @inline(never) @discardableResult
    func dispatchFromAPI(_ action: Action, unlessCancelled run: Cancellation?) -> Bool {
        if _fastPath(entryWord.isBareOwner(ThreadID.current)) {
            // From this thread's own work on the fast path: queued without the lock (rule 2).
            queueForOwner(action)
            return true
        }
        lock.lock()
        return dispatchSlowLocked(action, through: nil, fromAPI: true, run: run)
    }

    /// ``dispatchFromAPI(_:unlessCancelled:)`` outside of any side-effect run.
    @inlinable @discardableResult
    func dispatchFromAPI(_ action: Action) -> Bool {
        dispatchFromAPI(action, unlessCancelled: nil)
    }

    /// Whether the side-effect run `run` was cancelled; `false` without one. Called with `lock` held (a run's
    /// cancellation takes its own lock, never the store's).
    @usableFromInline
    func isSuperseded(_ run: Cancellation?) -> Bool {
        run?.isCancelled ?? false
    }

    // MARK: State and subscribers

    /// The current state, read with the lock held (rule 3: never longer than one reducer call).
    @inlinable
    package var state: State {
        lock.lock()
        defer { lock.unlock() }
        return statePointer.pointee
    }

    /// Adds a subscriber; `makeObserver` runs with the lock held and receives the current state, so that a
    /// subscriber that compares values starts from exactly the state that the next notification follows.
    @usableFromInline
    func subscribe(_ makeObserver: (borrowing State) -> StateObserver<State>) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        nextSubscriberID &+= 1
        let id = nextSubscriberID
        guard pipelineStorage.phase != .gone else { return id }
        subscribers.append(Subscriber(id: id, notify: makeObserver(statePointer.pointee)))
        updateNobodyToNotifyLocked()
        return id
    }

    func unsubscribe(_ id: UInt64) {
        // Release the observer outside the lock: its captures may run code in their deinit.
        let removed: Subscriber? = lock.withLock {
            guard let index = subscribers.firstIndex(where: { $0.id == id }) else { return nil }
            defer { updateNobodyToNotifyLocked() }
            return subscribers.remove(at: index)
        }
        _ = removed
    }

    // MARK: Lifetime

    /// Installs the middleware chain: `build` runs as if it were a dispatch of this thread, so that actions
    /// that a middleware dispatches while it is being installed are queued and processed afterwards.
    func installChain(_ build: () -> DispatchFunction<Action>) -> DispatchFunction<Action> {
        lock.withLock { takePipeline() }
        let chain = build()
        lock.withLock { entry = chain }
        drainQueue(through: chain)
        return chain
    }

    /// Called by the store's `deinit`: marks the core dead, releases the middleware and the subscribers, and
    /// cancels the work that the store owns.
    func storeDidGoAway() {
        let (chain, subscribers) = lock.withLock {
            // The fast path does not test the phase: from now on, every dispatch goes through the state machine.
            pipeline.storeWentAway()
            defer {
                entry = nil
                self.subscribers = []
            }
            return (entry, self.subscribers)
        }
        lifetime.cancel()
        // Released here, outside the lock.
        _ = (chain, subscribers)
    }
}

/// The FIFO of ``StoreCore/ownerQueue``: a buffer that only the pipeline's owner touches, so no copy-on-write check
/// and no optional per slot. Allocated at the first action queued, kept between dispatches.
@usableFromInline
struct OwnerQueue<Action>: ~Copyable {
    @usableFromInline
    var storage: UnsafeMutablePointer<Action>?
    @usableFromInline
    var capacity = 0
    @usableFromInline
    var indices = QueueIndices()

    @inlinable
    init() {}

    @inlinable
    deinit {
        if let storage {
            (storage + indices.head).deinitialize(count: indices.count)
            storage.deallocate()
        }
    }

    @inlinable
    var isEmpty: Bool { indices.isEmpty }

    @inlinable
    var count: Int { indices.count }

    @inlinable
    mutating func append(_ action: Action) {
        if _slowPath(indices.tail == capacity) {
            makeRoom()
        }
        (storage.unsafelyUnwrapped + indices.appendSlot()).initialize(to: action)
    }

    /// Removes and returns the oldest action; the queue must not be empty.
    @inlinable
    mutating func removeFirst() -> Action {
        (storage.unsafelyUnwrapped + indices.takeHeadSlot()).move()
    }

    /// Removes every queued action, keeping the buffer.
    @inlinable
    mutating func removeAll() {
        if let storage {
            (storage + indices.head).deinitialize(count: indices.count)
        }
        indices.reset()
    }

    /// The buffer is full up to its end: moves the actions to its start if they do not begin there, else doubles it.
    @usableFromInline
    mutating func makeRoom() {
        let count = indices.count
        if indices.head > 0, let storage {
            storage.moveInitialize(from: storage + indices.head, count: count)
        } else {
            let larger = UnsafeMutablePointer<Action>.allocate(capacity: max(4, capacity * 2))
            if let storage {
                larger.moveInitialize(from: storage, count: count)
                storage.deallocate()
            }
            storage = larger
            capacity = max(4, capacity * 2)
        }
        indices.head = 0
        indices.tail = count
    }
}
