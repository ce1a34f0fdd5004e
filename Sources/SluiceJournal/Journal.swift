public import Sluice

/// An append-only, checksummed log of the actions a store reduced, and snapshots of its state.
///
/// Open a journal on a directory, create the store from it, and run its writer:
///
/// ```swift
/// let journal = try Journal(directory: "/var/lib/orders", onError: { error in print("journal:", error) })
/// let store = try Store<Counter, CounterAction>(
///     recoveringFrom: journal,
///     durability: .groupCommit(interval: .milliseconds(2)),
///     initialState: Counter(),
///     reducer: counterReducer
/// )
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await journal.run() }
///     store.dispatch(.add(1))
///     try await journal.durable(through: journal.lastSequence)  // now acknowledge it
///     group.cancelAll()
/// }
/// ```
///
/// Records get sequence numbers from 1 without gaps, in the order the reducer sees them. The storage is a
/// ``JournalStorage``: ``FileJournalStorage`` for a local directory.
///
/// A journal that fails to write (a full disk, an I/O error) stops: `onError` is called once with the error,
/// the store drops every later action before the reducer, and waiters in ``durable(through:)`` get the error.
/// What was written before stays readable. A closed journal (``close()``) writes nothing more in any mode. See
/// <doc:Durability> for what the live state and the log hold at each of these edges.
///
/// `@unchecked Sendable`: the mutable properties are guarded by `stateLock`, whose condition also wakes the
/// writer and the producers held back by it; calls into the storage are serialized by `ioLock` (taken before
/// `stateLock` when both are needed); `gate` is held by the journal middleware while it records and reduces one
/// action, so that ``snapshot(_:reducerVersion:)-(Store<State,Action>,_)`` reads a state and the sequence it covers together.
public final class Journal: @unchecked Sendable {
    /// Where the records and snapshots are kept.
    public let storage: any JournalStorage

    /// With `.groupCommit`, a dispatch waits for the writer while this many actions are pending.
    @usableFromInline
    static let pendingLimit = 65_536

    /// ``pendingLimit``, or a smaller one that a test set (``limitPendingActions(to:)``), so that it reaches the
    /// limit with few actions. Read and written with `stateLock` held.
    @usableFromInline @exclusivity(unchecked)
    var pendingActionLimit = Journal.pendingLimit

    private let onError: @Sendable (JournalError) -> Void
    @usableFromInline
    let stateLock = Lock()
    private let ioLock = Lock()
    private let gate = Lock()

    // Guarded by `stateLock`. `@exclusivity(unchecked)` on what a `.groupCommit` dispatch touches: the lock already
    // makes every access exclusive.
    @usableFromInline @exclusivity(unchecked)
    var nextSequence: UInt64
    /// The sequence number given to the last action the journal was asked to record, 0 if it refused that action.
    /// Written by the store's pipeline owner as it records; read by ``Sluice/Store/dispatch(_:durableIn:)`` right after
    /// its action, still on the pipeline, to learn its own action's sequence number.
    @usableFromInline @exclusivity(unchecked)
    var lastOutcome: UInt64 = 0
    private var durableSequence: UInt64
    private var failure: JournalError? {
        didSet { hasStopped = failure != nil || isClosed || isDetached }
    }
    /// `failure != nil || isClosed || isDetached`, in one flag for the dispatch path: no action is recorded.
    @usableFromInline @exclusivity(unchecked)
    var hasStopped = false
    /// In the order they began to wait. An array, not a dictionary by id: the writer takes every waiter of a batch
    /// at once after each sync, while a waiter leaves by its id only when cancelled.
    private var waiters: [DurabilityWaiter] = []
    private var nextWaiterID: UInt64 = 0
    private var attachedDurability: JournalDurability?
    private var pending: (any PendingActions)?
    private var needsRecovery: Bool
    private var isRunning = false
    /// Set when the task running ``run()`` is cancelled: the writer writes what is pending and ends.
    private var writerShouldStop = false
    /// Whether the writer waits out its group-commit interval now.
    private var isGathering = false
    /// Whether the writer of ``run()`` sleeps until an action is pending: the one state in which recording an action
    /// must wake it. While it gathers, writes or syncs it looks for pending actions by itself, so a dispatch then only
    /// appends. Set by the writer, cleared by the dispatch that wakes it.
    @usableFromInline @exclusivity(unchecked)
    var writerIsIdle = false
    /// How many dispatches wait for the writer to take the pending actions (backpressure): the writer wakes them
    /// when it takes a batch.
    private var producersWaiting = 0
    /// The writer's yields to the senders its commit resumed: asked for, and the last one whose job ran.
    private var yieldsAsked: UInt64 = 0
    private var yieldsDone: UInt64 = 0
    private var isClosed = false {
        didSet { hasStopped = failure != nil || isClosed || isDetached }
    }
    /// Set when the store that records to this journal went away or shut down (``detach()``): the pending actions
    /// were written and the journal let go of their buffer; any later action is refused.
    private var isDetached = false {
        didSet { hasStopped = failure != nil || isClosed || isDetached }
    }
    /// Whether the journal records in the store's reducer (a `.groupCommit` store made by
    /// `Store(recoveringFrom:...)`) rather than in a middleware.
    private var recordsInReducer = false
    /// Reports an error that stops the journal to the store's error channel, once attached.
    private var storeReporter: (@Sendable (JournalError) -> Void)?
    private var recoveryReport: JournalRecovery?
    /// The thread that holds `gate`, if any.
    private var gateOwner = ThreadID.none

    /// A task waiting in ``durable(through:)``.
    private struct DurabilityWaiter {
        var id: UInt64
        var sequence: UInt64
        var continuation: CheckedContinuation<JournalError?, Never>
    }

    /// Opens the journal in a local directory (created if missing), with ``FileJournalStorage``.
    ///
    /// - Parameters:
    ///   - directory: The journal's directory.
    ///   - onError: Called once, on the thread that met it, with the error that stopped the journal.
    /// - Throws: ``JournalError/locked(directory:)`` when another journal holds the directory; an error naming
    ///   the file when the last segment is damaged (a torn last record is truncated instead).
    public convenience init(
        directory: String,
        onError: @escaping @Sendable (JournalError) -> Void = { _ in }
    ) throws(JournalError) {
        try self.init(storage: FileJournalStorage(directory: directory), onError: onError)
    }

    /// Opens a journal on a storage backend: takes the log as its only writer and finds its last sequence number.
    ///
    /// - Parameters:
    ///   - storage: Where the records and snapshots are kept.
    ///   - onError: Called once, on the thread that met it, with the error that stopped the journal.
    public init(
        storage: any JournalStorage,
        onError: @escaping @Sendable (JournalError) -> Void = { _ in }
    ) throws(JournalError) {
        self.storage = storage
        self.onError = onError
        try storage.acquire()
        let last = try storage.lastSequence()
        let newestSnapshot = try storage.snapshotSequences().first ?? 0
        let (next, overflow) = max(last, newestSnapshot).addingReportingOverflow(1)
        if overflow {
            storage.close()
            throw .unexpectedSequence(file: "the journal's storage", offset: 0, expected: .max - 1, found: .max)
        }
        nextSequence = next
        durableSequence = nextSequence - 1
        needsRecovery = nextSequence > 1
    }

    deinit {
        storage.close()
    }

    /// The sequence number of the last recorded action (0 before the first).
    ///
    /// After `store.dispatch(a)` returns, `a` has a sequence number at most this one.
    public var lastSequence: UInt64 {
        stateLock.withLock { nextSequence - 1 }
    }

    /// The sequence number through which every recorded action is on stable storage.
    public var durableThrough: UInt64 {
        stateLock.withLock { durableSequence }
    }

    /// How many tasks wait in ``durable(through:)``, for tests.
    package var waitingForDurability: Int {
        stateLock.withLock { waiters.count }
    }

    /// What the last recovery from this journal found, `nil` before one.
    public var recovery: JournalRecovery? {
        stateLock.withLock { recoveryReport }
    }

    /// Waits until every action up to `sequence` is on stable storage.
    ///
    /// With `.groupCommit`, this waits for the batch of ``run()`` that holds `sequence`; with `.everyAction` it
    /// returns at once; with `.none` it syncs the log itself.
    ///
    /// - Throws: The error that stopped the journal, if it stopped before `sequence` was durable;
    ///   ``JournalError/closed`` if the journal was closed before `sequence` was durable (at once when it is
    ///   closed already); ``JournalError/cancelled`` if the task is cancelled while it waits.
    public func durable(through sequence: UInt64) async throws(JournalError) {
        let (mode, id) = stateLock.withLock {
            nextWaiterID += 1
            return (attachedDurability, nextWaiterID)
        }
        if mode == JournalDurability.none {
            try flush(sync: true)
        }
        let error = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<JournalError?, Never>) in
                let resumeNow: JournalError?? = stateLock.withLock {
                    if durableSequence >= sequence { return .some(nil) }
                    if let reason = stopReason { return .some(reason) }
                    if Task.isCancelled { return .some(.cancelled) }
                    waiters.append(DurabilityWaiter(id: id, sequence: sequence, continuation: continuation))
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            let waiter = stateLock.withLock { waiters.firstIndex { $0.id == id }.map { waiters.remove(at: $0) } }
            waiter?.continuation.resume(returning: .cancelled)
        }
        if let error { throw error }
    }

    /// Runs the writer of `.groupCommit`: writes the pending actions in batches, one `fsync` per batch, until
    /// the task is cancelled or the journal is closed; then writes what is pending and returns.
    ///
    /// The writing happens on a thread of the journal's own, not on the task's executor: a producer that waits
    /// for the writer (below) may hold a thread of Swift's cooperative pool, and the writer must make progress
    /// even when every thread of the pool waits. The task only waits for that thread to end.
    ///
    /// The journal is usable while `run()` runs. Without it, `.groupCommit` actions are reduced but not written,
    /// and once 65,536 actions are pending a dispatch waits for the writer (backpressure, also while it runs).
    /// Call it inside a task group or as a service of a service group; it may be called again after it returned.
    ///
    /// - Throws: The error that stopped the journal.
    public func run() async throws(JournalError) {
        let interval: Duration = try stateLock.withLock { () throws(JournalError) in
            if isRunning { usageError("Journal.run(): the journal's writer is already running.") }
            if let failure { throw failure }
            isRunning = true
            writerShouldStop = false
            if case .groupCommit(let interval) = attachedDurability { return interval }
            return .zero
        }
        let error = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<JournalError?, Never>) in
                startThread { [self] in
                    continuation.resume(returning: writeUntilStopped(interval: interval))
                }
            }
        } onCancel: {
            stateLock.withLock { writerShouldStop = true }
            stateLock.broadcast()
        }
        stateLock.withLock { isRunning = false }
        if let error { throw error }
    }

    /// The writer's loop, on its own thread: waits for pending actions, gathers for `interval`, writes and syncs a
    /// batch; returns the error that stopped the journal, or `nil` once stopped or closed.
    private func writeUntilStopped(interval: Duration) -> JournalError? {
        while true {
            stateLock.lock()
            while !(pending?.hasActions ?? false) && !writerShouldStop && failure == nil && !isClosed {
                writerIsIdle = true
                stateLock.wait()
            }
            writerIsIdle = false
            let (shouldStop, failure, isClosed) = (writerShouldStop, self.failure, self.isClosed)
            stateLock.unlock()
            if let failure { return failure }
            if isClosed { return nil }  // `close()` wrote and synced what was pending
            if !shouldStop && interval > .zero {
                gather(for: interval)
            }
            let started = ContinuousClock.now
            let resumed: Int
            do throws(JournalError) {
                resumed = try flush(sync: true)
            } catch {
                return error
            }
            if shouldStop { return nil }
            if interval == .zero && resumed > 0 {
                yieldToResumedSenders(limit: min(started.duration(to: .now), .milliseconds(1)))
            }
        }
    }

    /// With `.groupCommit(interval: .zero)`, lets the senders that the last commit resumed dispatch into the next
    /// batch before the writer takes it, as `Task.yield()` would let them run before a task: queues a job on the
    /// global executor behind their continuations and waits until it ran. At most `limit`, since the cooperative
    /// pool may be busy or blocked, and not while dispatches wait at the pending limit (the batch is full then).
    private func yieldToResumedSenders(limit: Duration) {
        let ticket = stateLock.withLock {
            yieldsAsked &+= 1
            return yieldsAsked
        }
        Task.detached { [self] in
            stateLock.withLock { yieldsDone = max(yieldsDone, ticket) }
            stateLock.broadcast()
        }
        let deadline = ContinuousClock.now.advanced(by: limit)
        stateLock.withLock {
            while yieldsDone < ticket && producersWaiting == 0 && !writerShouldStop && failure == nil && !isClosed
                && ContinuousClock.now < deadline
            {
                stateLock.wait(until: deadline)
            }
        }
    }

    /// Lets actions gather for `interval` before the writer writes them; ends early when the writer is told to stop
    /// or the journal closes or fails, so that neither `close()` nor a cancelled ``run()`` waits for the interval.
    private func gather(for interval: Duration) {
        let deadline = ContinuousClock.now.advanced(by: min(interval, .seconds(Int64.max)))
        stateLock.withLock {
            isGathering = true
            while !writerShouldStop && failure == nil && !isClosed && ContinuousClock.now < deadline {
                stateLock.wait(until: deadline)
            }
            isGathering = false
        }
    }

    /// Whether the writer is letting actions gather for its interval (for tests).
    package var isGatheringForTests: Bool {
        stateLock.withLock { isGathering }
    }

    /// Whether the writer sleeps until an action is pending (for tests).
    package var isWriterIdleForTests: Bool {
        stateLock.withLock { writerIsIdle }
    }

    /// How many actions the pending buffer holds room for in the memory kept from a written batch (for tests).
    package var keptCapacityForTests: Int {
        stateLock.withLock { pending?.keptCapacity ?? 0 }
    }

    /// Saves the store's current state with the sequence number it covers, then removes what no recovery needs.
    ///
    /// The state and its sequence number are read together, between two actions. The snapshot is written
    /// atomically (temporary file, `fsync`, rename, `fsync` of the directory); two snapshots are kept, so that a
    /// damaged newest one falls back to the one before, and the segments that only hold actions older than the
    /// older kept snapshot are removed. It may be called from any thread, also from a subscriber of the store
    /// (to snapshot every so many actions, say).
    ///
    /// - Parameters:
    ///   - store: The store whose state to save; it must journal to this journal.
    ///   - reducerVersion: The version of the reducer, stored with the snapshot.
    /// - Returns: The sequence number the snapshot covers.
    /// - Throws: The error that stopped the journal, ``JournalError/closed`` after ``close()``, or the error of
    ///   encoding or writing the snapshot.
    @discardableResult
    public func snapshot<State: Encodable, Action>(
        _ store: Store<State, Action>,
        reducerVersion: Int = 0
    ) throws(JournalError) -> UInt64 {
        try snapshot(of: store.core, reducerVersion: reducerVersion)
    }

    /// Saves the state of the store that `api` belongs to, as ``snapshot(_:reducerVersion:)-(Store<State,Action>,_)``
    /// does: for a side effect, which gets the API rather than the store.
    ///
    /// ```swift
    /// let save = Middlewares.debounce(.seconds(5), runs: .onScheduler, SideEffect<Counter, CounterAction> { _, api in
    ///     try? journal.snapshot(api)
    /// })
    /// ```
    ///
    /// ``Sluice/Middlewares/snapshot(to:debounce:maxWait:reducerVersion:)-(_,Duration,_,_)`` is this side effect,
    /// ready-made.
    ///
    /// - Parameters:
    ///   - api: The API of a store that journals to this journal.
    ///   - reducerVersion: The version of the reducer, stored with the snapshot.
    /// - Returns: The sequence number the snapshot covers.
    /// - Throws: As ``snapshot(_:reducerVersion:)-(Store<State,Action>,_)``.
    @discardableResult
    public func snapshot<State: Encodable, Action>(
        _ api: MiddlewareAPI<State, Action>,
        reducerVersion: Int = 0
    ) throws(JournalError) -> UInt64 {
        try snapshot(of: api.core, reducerVersion: reducerVersion)
    }

    private func snapshot<State: Encodable, Action>(
        of core: StoreCore<State, Action>,
        reducerVersion: Int
    ) throws(JournalError) -> UInt64 {
        let (state, sequence) = stateAndSequence(of: core)
        let payload = try JournalCoder().encode(state)
        try flush(sync: true)
        try ioLock.withLock { () throws(JournalError) in
            if let reason = stateLock.withLock({ stopReason }) { throw reason }
            do throws(JournalError) {
                try storage.writeSnapshot(
                    JournalSnapshot(sequence: sequence, reducerVersion: reducerVersion, payload: payload)
                )
                try storage.compact(keepingSnapshots: 2)
            } catch {
                fail(error)
                throw error
            }
        }
        return sequence
    }

    /// Writes what is pending, syncs, and gives up the log (releases the directory's lock).
    ///
    /// From then on the journal writes nothing, in every mode: the store drops every later action that would be
    /// recorded (it is neither reduced nor written, so the state never holds an action the log lacks),
    /// ``Sluice/Store/dispatch(_:durableIn:)`` throws ``JournalError/closed`` for it, a running ``run()`` returns, and
    /// ``durable(through:)`` confirms only what was on stable storage when the journal closed (it throws
    /// ``JournalError/closed`` for anything later, and wakes the tasks waiting for it). Close a journal after
    /// the store stopped taking actions (`Store.shutdown(timeout:)`). Releasing the journal without closing it
    /// also gives up the log, once its store is gone too: a store that shuts down or goes away has its pending
    /// actions written and synced, and lets go of the journal.
    public func close() {
        let closedNow = ioLock.withLock { () -> Bool in
            if stateLock.withLock({ isClosed }) { return false }
            do throws(JournalError) {
                // The last batch is taken in the same critical section that closes the journal to new actions: an
                // action is either in a batch written here, or refused.
                while let batch = stateLock.withLock({ takeBatchOrClose() }) {
                    try storage.append(try batch.encode())
                }
                if stateLock.withLock({ failure == nil }) {
                    try storage.sync()
                    markDurable(through: stateLock.withLock { nextSequence - 1 })
                }
            } catch {
                fail(error)
                stateLock.withLock { isClosed = true }
            }
            storage.close()
            return true
        }
        guard closedNow else { return }
        let stranded = stateLock.withLock {
            defer {
                waiters = []
                stateLock.broadcast()
            }
            return waiters
        }
        for waiter in stranded {
            waiter.continuation.resume(returning: .closed)
        }
    }

    /// Takes the pending batch; with nothing pending, closes the journal to new actions instead and returns
    /// `nil`. Called with `stateLock` held.
    private func takeBatchOrClose() -> (any EncodableBatch)? {
        if let batch = pending?.takeActions() {
            return batch
        }
        isClosed = true
        stateLock.broadcast()
        return nil
    }

    /// Why the journal takes no more actions: the error that stopped it, or ``JournalError/closed``; `nil` while it
    /// records. Read with `stateLock` held.
    private var stopReason: JournalError? {
        failure ?? (isClosed ? .closed : nil)
    }

    // MARK: - For the middleware and recovery

    /// Attaches the journal to a store: called once, when a store installs the journal middleware
    /// (`inReducer: false`) or when `Store(recoveringFrom:...)` wraps its reducer (`inReducer: true`).
    @usableFromInline
    func attach<Action: Encodable & Sendable>(
        _ durability: JournalDurability,
        actionType: Action.Type,
        inReducer: Bool
    ) -> ActionBuffer<Action> {
        stateLock.withLock {
            if attachedDurability != nil {
                usageError("Middlewares.journal: this journal is already attached to a store.")
            }
            if needsRecovery && !inReducer {
                usageError(
                    """
                    Middlewares.journal: the journal holds \(nextSequence - 1) recorded actions; create the store \
                    with Store(recoveringFrom:durability:initialState:reducer:middleware:) to resume from them.
                    """
                )
            }
            attachedDurability = durability
            recordsInReducer = inReducer
            let buffer = ActionBuffer<Action>(journal: self)
            pending = buffer
            return buffer
        }
    }

    /// Sends the errors that stop the journal to `store`'s error channel (its `onEffectError`) as well, and lets go
    /// of the store's actions when it goes away or shuts down (see ``detach()``).
    @usableFromInline
    func report<State, Action>(to store: Store<State, Action>) {
        report(to: store.core.work)
        detach(when: store.core.lifetime)
    }

    /// Calls ``detach()`` when `lifetime` ends: when the store that records here shuts down or goes away.
    func detach(when lifetime: Cancellation) {
        _ = lifetime.onCancel { [weak self] in self?.detach() }
    }

    /// The store that recorded here shut down or went away: writes and syncs its pending actions, then lets go of
    /// their buffer, which holds the journal in turn (the store keeps its journal alive, not the other way round).
    /// Releasing the journal afterwards gives up the log; any later action is refused.
    func detach() {
        // A failure to write stops the journal, as it does for the writer; there is nobody else to tell.
        _ = try? flush(sync: true, detaching: true)
    }

    /// Sends the errors that stop the journal to `work`'s failure handler as well.
    func report(to work: StoreWork) {
        let reporter: @Sendable (JournalError) -> Void = { [weak work] error in
            work?.report(error, wasCancelled: false) { EffectFailure(error: error, source: .journal) }
        }
        stateLock.withLock { storeReporter = reporter }
    }

    /// Records one action, as the journal middleware's durability says; `false` when the journal has stopped
    /// or is closed and the action must not be reduced.
    func record<Action: Encodable & Sendable>(
        _ action: Action,
        durability: JournalDurability,
        buffer: ActionBuffer<Action>
    ) -> Bool {
        if case .groupCommit = durability {
            return buffer.append(action)
        }
        return ioLock.withLock {
            let sequence: UInt64? = stateLock.withLock {
                if hasStopped {
                    lastOutcome = 0
                    return nil
                }
                defer { nextSequence += 1 }
                lastOutcome = nextSequence
                return nextSequence
            }
            guard let sequence else { return false }
            do throws(JournalError) {
                let payload = try buffer.coder.encode(action)
                try storage.append([JournalRecord(sequence: sequence, payload: payload)])
                if durability == .everyAction {
                    try storage.sync()
                    markDurable(through: sequence)
                }
                return true
            } catch {
                stateLock.withLock {
                    nextSequence -= 1
                    lastOutcome = 0
                }
                fail(error)
                return false
            }
        }
    }

    /// Makes a `.groupCommit` dispatch wait for the writer from `limit` pending actions on, instead of
    /// ``pendingLimit``: for tests of the backpressure that must not take tens of thousands of actions to get there.
    package func limitPendingActions(to limit: Int) {
        stateLock.withLock { pendingActionLimit = limit }
    }

    /// The slow path of ``ActionBuffer/append(_:)``, entered with `stateLock` held when the journal has stopped or
    /// too many actions are pending; returns without it.
    @usableFromInline
    func appendSlowly<Action>(_ action: Action, to buffer: ActionBuffer<Action>) -> Bool {
        // Backpressure: a writer that falls behind slows the dispatches down instead of letting the pending
        // actions grow without bound. The writer runs on its own thread and takes the whole batch at once, so the
        // wait lasts at most one batch's write and sync.
        while buffer.actions.count >= pendingActionLimit && !hasStopped {
            producersWaiting += 1
            stateLock.wait()
            producersWaiting -= 1
        }
        if hasStopped {
            // Refused: nobody writes a stopped or closed journal, so the action must not be reduced.
            lastOutcome = 0
            stateLock.unlock()
            return false
        }
        if buffer.actions.isEmpty { buffer.first = nextSequence }
        buffer.actions.append(action)
        lastOutcome = nextSequence
        nextSequence += 1
        let wakesWriter = writerIsIdle
        writerIsIdle = false
        stateLock.unlock()
        if wakesWriter { wakeWriter() }
        return true
    }

    /// Tells the writer of ``run()``, which was idle, that actions are pending.
    @usableFromInline
    func wakeWriter() {
        stateLock.broadcast()
    }

    /// The outcome of the last record for the action a dispatch just ran: its sequence number, or the reason it has
    /// none. Read on the store's pipeline, right after the action.
    func outcomeOfLastRecord() -> Result<UInt64, JournalError> {
        stateLock.withLock {
            if lastOutcome != 0 { return .success(lastOutcome) }
            return .failure(stopReason ?? (isDetached ? .refused : .notRecorded))
        }
    }

    /// Why an action that did not reach the journal has no sequence number.
    func reasonNotRecorded(refusedByStore: Bool) -> JournalError {
        stateLock.withLock { stopReason ?? (refusedByStore || isDetached ? .refused : .notRecorded) }
    }

    /// Reads the store's state and the sequence number of the last action in it, together.
    private func stateAndSequence<State, Action>(of core: StoreCore<State, Action>) -> (State, UInt64) {
        if stateLock.withLock({ recordsInReducer }) {
            // The journal records in the reducer, under the store's lock: with that lock held, no action is
            // between recorded and reduced.
            return core.withStatePointer(tracked: false) { state in (state.pointee, lastSequence) }
        }
        // From a subscriber (or a middleware before the journal's) of this store, this thread holds the gate:
        // the state then is the one after the action with the last sequence number.
        let insideDispatch = stateLock.withLock { gateOwner == .current }
        return insideDispatch ? (core.state, lastSequence) : gate.withLock { (core.state, lastSequence) }
    }

    /// Holds the gate while the middleware records and reduces one action.
    func withGate<T>(_ body: () -> T) -> T {
        gate.lock()
        stateLock.withLock { gateOwner = .current }
        defer {
            stateLock.withLock { gateOwner = .none }
            gate.unlock()
        }
        return body()
    }

    /// Records that recovery replayed the log, so that the middleware may attach.
    func didRecover(_ report: JournalRecovery) {
        stateLock.withLock {
            needsRecovery = false
            recoveryReport = report
        }
    }

    // MARK: - Writing

    /// Writes the pending `.groupCommit` actions (and, with `sync`, makes everything written durable). Does
    /// nothing once the journal is closed: `close()` wrote and synced what was pending. `detaching`: also lets go of
    /// the pending actions' buffer, in the same critical section that takes its actions (see ``detach()``).
    /// Returns how many tasks waiting in ``durable(through:)`` it resumed.
    @discardableResult
    private func flush(sync: Bool, detaching: Bool = false) throws(JournalError) -> Int {
        try ioLock.withLock { () throws(JournalError) -> Int in
            let (batch, failure, written, isClosed, wakesProducers) = stateLock.withLock {
                defer {
                    if detaching {
                        pending = nil
                        isDetached = true
                    }
                }
                return (
                    pending?.takeActions(), self.failure, nextSequence - 1, self.isClosed,
                    producersWaiting > 0 || detaching
                )
            }
            if wakesProducers {
                stateLock.broadcast()
            }
            if let failure { throw failure }
            if isClosed { return 0 }
            do throws(JournalError) {
                if let batch {
                    let records = try batch.encode()
                    batch.recycle()
                    try storage.append(records)
                }
                if sync {
                    try storage.sync()
                    return markDurable(through: written)
                }
                return 0
            } catch {
                fail(error)
                throw error
            }
        }
    }

    /// Records that every action through `sequence` is durable and resumes the tasks waiting for them; returns how
    /// many it resumed.
    @discardableResult
    private func markDurable(through sequence: UInt64) -> Int {
        let ready = stateLock.withLock {
            durableSequence = max(durableSequence, sequence)
            // Usually every waiter is in the batch just synced: then they are all taken, with no search.
            if waiters.allSatisfy({ $0.sequence <= durableSequence }) {
                defer { waiters = [] }
                return waiters
            }
            let durable = durableSequence
            defer { waiters.removeAll { $0.sequence <= durable } }
            return waiters.filter { $0.sequence <= durable }
        }
        for waiter in ready {
            waiter.continuation.resume(returning: nil)
        }
        return ready.count
    }

    /// Stops the journal: remembers the first error, wakes every waiter with it, calls `onError` once.
    private func fail(_ error: JournalError) {
        let (isFirst, stranded, reporter) = stateLock.withLock {
            if failure != nil {
                return (false, [DurabilityWaiter](), storeReporter)
            }
            failure = error
            stateLock.broadcast()
            defer { waiters = [] }
            return (true, waiters, storeReporter)
        }
        for waiter in stranded {
            waiter.continuation.resume(returning: error)
        }
        if isFirst {
            onError(error)
            reporter?(error)
        }
    }
}

/// What a recovery found in the journal.
public struct JournalRecovery: Sendable, Equatable {
    /// The sequence number the loaded snapshot covers; 0 when recovery started from the initial state.
    public var snapshotSequence: UInt64
    /// The snapshots skipped because they failed their checksum, were made by another reducer version, or could
    /// not be decoded, newest first.
    public var skippedSnapshots: [UInt64]
    /// Why each of ``skippedSnapshots`` was skipped, newest first.
    public var skipped: [SkippedSnapshot]
    /// How many actions were replayed through the reducer after the snapshot.
    public var replayedActions: Int
    /// The sequence number of the last recovered action; the store continues after it.
    public var lastSequence: UInt64
    /// The reducer version of the loaded snapshot when a declared state migration turned it into this build's
    /// state; `nil` when the snapshot was of this version (or none was loaded).
    public var migratedFrom: Int?
    /// How many of the replayed records were read through declared action adapters.
    public var adaptedRecords: Int

    /// A snapshot that recovery did not use, and why.
    public struct SkippedSnapshot: Sendable, Equatable {
        /// The sequence number the snapshot covers.
        public var sequence: UInt64
        /// The reducer version stored with it; `nil` when the snapshot could not be read (a failed checksum, say).
        public var reducerVersion: Int?
        /// Why it was skipped: the storage's error, another reducer version, or the decoding error with its coding
        /// path.
        public var error: JournalError
        /// Where decoding failed and what the decoder expected there, when the snapshot (or a migration's old
        /// type) did not decode.
        public var decodingFailure: JournalDecodingFailure?
        /// Whether the records it covers were still there for recovery to replay instead; `false` when the
        /// snapshot was the only way to the state it holds (compaction removed its records).
        public var coveredRecordsExist: Bool
        /// What to do so that the snapshot can be used.
        public var remedy: String

        /// Creates a description of a skipped snapshot.
        public init(
            sequence: UInt64,
            reducerVersion: Int?,
            error: JournalError,
            decodingFailure: JournalDecodingFailure? = nil,
            coveredRecordsExist: Bool = true,
            remedy: String = ""
        ) {
            self.sequence = sequence
            self.reducerVersion = reducerVersion
            self.error = error
            self.decodingFailure = decodingFailure
            self.coveredRecordsExist = coveredRecordsExist
            self.remedy = remedy
        }
    }

    /// Creates a report.
    public init(
        snapshotSequence: UInt64,
        skippedSnapshots: [UInt64],
        skipped: [SkippedSnapshot] = [],
        replayedActions: Int,
        lastSequence: UInt64,
        migratedFrom: Int? = nil,
        adaptedRecords: Int = 0
    ) {
        self.snapshotSequence = snapshotSequence
        self.skippedSnapshots = skippedSnapshots
        self.skipped = skipped
        self.replayedActions = replayedActions
        self.lastSequence = lastSequence
        self.migratedFrom = migratedFrom
        self.adaptedRecords = adaptedRecords
    }
}

/// The `.groupCommit` actions of one type waiting for the writer: encoding them is the writer's work, not
/// `dispatch`'s.
protocol PendingActions: AnyObject, Sendable {
    /// Takes the waiting actions, `nil` when there are none (called with the journal's state lock held).
    func takeActions() -> (any EncodableBatch)?
    /// Whether actions are waiting (called with the journal's state lock held).
    var hasActions: Bool { get }
    /// How many actions the memory kept from a written batch holds room for (called with the journal's state lock
    /// held).
    var keptCapacity: Int { get }
}

/// A batch of actions taken from the pending buffer, encoded outside the journal's state lock.
protocol EncodableBatch {
    func encode() throws(JournalError) -> [JournalRecord]
    /// Empties the batch and gives its memory back to the buffer it came from, for a later batch. Called without
    /// the journal's state lock, once the batch is encoded.
    func recycle()
}

/// The `.groupCommit` actions waiting for the writer, and the dispatch side of recording one.
///
/// The buffer keeps the memory of an earlier batch (`spare`): the writer empties each batch it has encoded and gives
/// its array back, and the next batch fills that array. A dispatch then appends into memory that is already the
/// process's, where a new array per batch would be copied at each doubling and fault in each new page, on the
/// dispatching thread, for every batch.
///
/// `@unchecked Sendable`: `actions`, `first` and `spare` are read and written only with the journal's state lock
/// held; `coder` is used only by the thread that records (serialized by the store) or by the writer (serialized by
/// the journal's I/O lock), never by both in one mode.
@usableFromInline
final class ActionBuffer<Action: Encodable & Sendable>: PendingActions, @unchecked Sendable {
    @usableFromInline
    let journal: Journal
    @usableFromInline @exclusivity(unchecked)
    var actions: [Action] = []
    @usableFromInline @exclusivity(unchecked)
    var first: UInt64 = 0
    /// An empty array with the capacity of an earlier batch, the next batch's memory.
    var spare: [Action] = []
    let coder = JournalCoder()

    /// The most memory an emptied batch may keep for reuse: a burst of large actions does not stay allocated.
    static var spareBytes: Int { 4 << 20 }

    init(journal: Journal) {
        self.journal = journal
    }

    /// Records a `.groupCommit` action: appends it for the writer and gives it the next sequence number. `false`
    /// when the journal has stopped or is closed and the action must not be reduced.
    ///
    /// Inlinable, so that it is specialized for the store's `Action` where the store is made: one lock, one
    /// append, one unlock on the fast path.
    @inlinable
    func append(_ action: Action) -> Bool {
        let journal = self.journal
        journal.stateLock.lock()
        if _slowPath(journal.hasStopped || actions.count >= journal.pendingActionLimit) {
            return journal.appendSlowly(action, to: self)
        }
        let sequence = journal.nextSequence
        if _slowPath(actions.isEmpty) { first = sequence }
        actions.append(action)
        journal.lastOutcome = sequence
        journal.nextSequence = sequence &+ 1
        let wakesWriter = journal.writerIsIdle
        if _slowPath(wakesWriter) { journal.writerIsIdle = false }
        journal.stateLock.unlock()
        if _slowPath(wakesWriter) { journal.wakeWriter() }
        return true
    }

    /// A class, so that ``recycle()`` empties the one reference to the array and keeps its memory.
    final class Batch: EncodableBatch {
        let first: UInt64
        var actions: [Action]
        let buffer: ActionBuffer

        init(first: UInt64, actions: [Action], buffer: ActionBuffer) {
            self.first = first
            self.actions = actions
            self.buffer = buffer
        }

        func encode() throws(JournalError) -> [JournalRecord] {
            let coder = buffer.coder
            var records: [JournalRecord] = []
            records.reserveCapacity(actions.count)
            var sequence = first
            for action in actions {
                records.append(JournalRecord(sequence: sequence, payload: try coder.encode(action)))
                sequence += 1
            }
            return records
        }

        func recycle() {
            var emptied: [Action] = []
            swap(&emptied, &actions)
            // The actions are released here, on the writer's thread; the memory stays.
            emptied.removeAll(keepingCapacity: true)
            guard emptied.capacity * MemoryLayout<Action>.stride <= ActionBuffer.spareBytes else { return }
            buffer.journal.stateLock.withLock {
                if buffer.spare.capacity < emptied.capacity {
                    swap(&emptied, &buffer.spare)
                }
            }
        }
    }

    var hasActions: Bool { !actions.isEmpty }

    var keptCapacity: Int { spare.capacity }

    func takeActions() -> (any EncodableBatch)? {
        guard !actions.isEmpty else { return nil }
        let taken = actions
        actions = spare
        spare = []
        return Batch(first: first, actions: taken, buffer: self)
    }
}
