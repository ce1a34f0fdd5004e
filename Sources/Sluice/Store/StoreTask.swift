public import CSluiceSupport

/// The asynchronous work that processing a sent action started; returned by ``Store/send(_:)``.
///
/// ``Store/send(_:)`` returns once the action was processed, like ``Store/dispatch(_:)``; the tasks that its
/// processing started (the `Task` of an asynchronous ``SideEffect``, an effect started with ``Store/start(_:)`` or
/// through a ``MiddlewareAPI``), for it and for the actions that its work dispatched, go on. `StoreTask` follows them:
/// ``finish()`` waits for them, ``cancel()`` cancels them.
///
/// ```swift
/// let task = await store.send(.refresh)
/// await task.finish()   // the side effects of `.refresh` are done
/// ```
///
/// A send that was queued (made while this thread was already processing an action of the store, or handed over
/// from another store's work) or dropped tracks nothing: its `finish()` returns at once.
public struct StoreTask: Sendable {
    /// Whether the store accepted the action: `true` when it was processed (or queued), `false` when it was dropped
    /// because the store is gone, the API's run was cancelled, or the sending task was cancelled while it waited.
    public let isAccepted: Bool
    @usableFromInline
    let work: TrackedWork?

    @usableFromInline
    init(isAccepted: Bool, work: TrackedWork? = nil) {
        self.isAccepted = isAccepted
        self.work = work
    }

    /// Waits until every task that processing the action started has finished.
    ///
    /// Cancelling the task that awaits `finish()` cancels that work, as ``cancel()`` does.
    public func finish() async {
        guard let work else { return }
        await withTaskCancellationHandler {
            await work.finish()
        } onCancel: {
            work.cancel()
        }
    }

    /// Cancels every task that processing the action started.
    public func cancel() {
        work?.cancel()
    }

    /// Whether ``cancel()`` was called (or the task awaiting ``finish()`` was cancelled).
    public var isCancelled: Bool {
        work?.isCancelled ?? false
    }
}

/// The send group of one sent action: the tasks started while the owner processed it (and the actions it caused),
/// as entries of the store's ``StoreWork`` ledger, which counts them and resumes ``finish()`` when the last ends.
/// Created at the first task, so a send that starts no task allocates nothing.
@usableFromInline
final class TrackedWork: Sendable {
    let work: StoreWork
    /// The group's token in the ledger.
    let token: UInt64

    init(work: StoreWork) {
        self.work = work
        token = work.makeGroup()
    }

    deinit {
        work.forgetGroup(token)
    }

    /// Returns when every task of the group has ended.
    func finish() async {
        await work.waitUntilDone(self)
    }

    /// Cancels the tasks of the group.
    func cancel() {
        work.cancel(group: self)
    }

    var isCancelled: Bool {
        work.isCancelled(self)
    }
}

/// How a waiting `send` ends.
@usableFromInline
enum SendOutcome: Sendable {
    /// The owner processed the action; the work it started, if any, and what it left for after the release (its
    /// logged line), which the resumed task runs before its `send` returns.
    case processed(TrackedWork?, leftWork: [@Sendable () -> Void])
    /// The store went away before the action's turn.
    case dropped
    /// The sending task was cancelled while it waited; the action was not processed.
    case cancelled
    /// The pipeline was free by the time the task was about to wait: try again.
    case retry
}

/// How the owner resumes a task that waits in `send`, and, for `send(_:reading:)`, what it reads for it right after
/// its action.
@usableFromInline
struct TaskResumption<State>: Sendable {
    @usableFromInline
    let continuation: UnsafeContinuation<SendOutcome, Never>
    @usableFromInline
    let reader: StateReader<State>?
    /// The side-effect run that sends, if any: the owner drops the action if the run was cancelled while the task
    /// waited (see ``StoreCore/dispatchFromAPI(_:unlessCancelled:)``).
    @usableFromInline
    let run: Cancellation?

    @usableFromInline
    init(continuation: UnsafeContinuation<SendOutcome, Never>, reader: StateReader<State>?, run: Cancellation?) {
        self.continuation = continuation
        self.reader = reader
        self.run = run
    }

    @usableFromInline
    func resume(returning outcome: SendOutcome) {
        continuation.resume(returning: outcome)
    }
}

/// The reading of a waiting `send(_:reading:)`, which the pipeline's owner calls, with the store's lock held, while
/// the task that made it is suspended in that call.
///
/// `@unchecked Sendable`: `read` writes the reading into the waiting task's box; it is called at most once, by the
/// owner with the store's lock held, before the task is resumed, and the resumption orders its effects before the
/// task reads them.
@usableFromInline
struct StateReader<State>: @unchecked Sendable {
    @usableFromInline
    let read: (borrowing State) -> Void

    @usableFromInline
    init(read: @escaping (borrowing State) -> Void) {
        self.read = read
    }
}

/// Nanoseconds on the monotonic clock (only differences mean anything).
@inlinable
func monotonicNanoseconds() -> UInt64 {
    csluice_monotonic_nanoseconds()
}

extension StoreCore {
    /// Sends `action` from a task: as ``dispatch(_:through:)``, but suspends instead of blocking while another
    /// thread owns the pipeline. `fromAPI`: go through `entry` (read once the pipeline is ours), not `chain`.
    ///
    /// Inlinable for its fast path, the one of a dispatch: with no middleware and nobody to notify, one lock, one
    /// reducer call and one unlock (nothing can start work to track). Any other send takes the pipeline for the
    /// whole of its work, which 64 tasks sending at once would otherwise make them wait for (and suspend) far more
    /// often.
    @inlinable
    nonisolated(nonsending) func send(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool
    ) async -> StoreTask {
        lock.lock()
        if entryWord.value == 0 && nobodyToNotify && (fromAPI ? entry : chain) == nil {
            // Idle, alive and accepting (else the word would not be 0), as in `dispatch(_:through:)`: with no chain,
            // a thread takes the pipeline only under the lock, which this thread holds. Not through `pipeline`,
            // which would put the state machine in charge and send the next dispatch down its slow path.
            applyLocked(action)
            lock.unlock()
            return StoreTask(isAccepted: true)
        }
        let step = sendLocked(action, through: chain, fromAPI: fromAPI, run: nil)
        if case .done(let task) = step {
            return task  // not through `complete`: an async call costs a send that did not wait
        }
        return await complete(step, of: action, through: chain, fromAPI: fromAPI, run: nil)
    }

    /// A send on behalf of the side-effect run `run` (dropped if the run is cancelled before the action's work
    /// begins; see `StoreCore.dispatchFromAPI(_:unlessCancelled:)`). Inlinable, so specialized in the caller's module.
    @inlinable
    nonisolated(nonsending) func send(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool,
        run: Cancellation?
    ) async -> StoreTask {
        lock.lock()
        let step = sendLocked(action, through: chain, fromAPI: fromAPI, run: run)
        if case .done(let task) = step {
            return task  // not through `complete`: an async call costs a send that did not wait
        }
        return await complete(step, of: action, through: chain, fromAPI: fromAPI, run: run)
    }

    /// What a send does after its admission: it is done, or it waits in line with `ticket`.
    @usableFromInline
    enum SendStep {
        case done(StoreTask)
        case wait(ticket: UInt64)
    }

    /// The admission of a send, performed; called with `lock` held, returns without it. The machine's answer is the
    /// one a dispatch gets (``dispatchSlowLocked(_:through:fromAPI:run:)``), but a send waits in line suspended,
    /// never blocking: a task is never handed the pipeline, the owner processes its action for it. A send from the
    /// owner's own thread or from inside another store's work (possible when that work awaits nothing but runs on a
    /// thread of the cooperative pool) queues like a dispatch.
    ///
    /// Inlinable, so specialized in the caller's module: unspecialized, a send would look up generic metadata on
    /// every call, a cost larger than the rest of an uncontended send.
    @inlinable
    func sendLocked(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool,
        run: Cancellation?
    ) -> SendStep {
        let admission = admitLocked(action, run: run)
        guard _fastPath(admission.isRun) else {
            return performLocked(admission)
        }
        let chain = fromAPI ? entry : chain
        if chain == nil && nobodyToNotify {
            // No middleware to start work, nobody to notify: reduced in this critical section, as `dispatch` does.
            applyLocked(action)
            lock.unlock()
            return .done(StoreTask(isAccepted: true))
        }
        takeLocked(ThreadID.current)
        let work = runTrackingLocked(action, through: chain, waited: 0)
        drainLocked(through: chain)
        return .done(StoreTask(isAccepted: true, work: work))
    }

    /// ``sendLocked(_:through:fromAPI:run:)`` for every admission but ``PipelineStateMachine/Admission/run`` (out of
    /// line, so that the uncontended send stays small enough to inline).
    @usableFromInline
    func performLocked(_ admission: Pipeline.Admission) -> SendStep {
        switch admission {
        case .wait:
            let ticket = pipeline.makeTicket()
            lock.unlock()
            return .wait(ticket: ticket)
        case .queued:
            lock.unlock()
            return .done(StoreTask(isAccepted: true))
        case .run, .refused, .dropped:
            lock.unlock()
            return .done(StoreTask(isAccepted: false))
        }
    }

    /// The rest of a send after its admission (`step`): done, or it waits in line until the owner processed its
    /// action, and is admitted again if the pipeline was free when it came to wait. Not called with the lock held:
    /// a lock is never carried into an async call.
    ///
    /// Inlinable, so specialized in the caller's module: a send admitted again after waiting runs the store's work
    /// for every task in line behind it, which unspecialized code would pay for in generic metadata lookups. Never
    /// inlined: only a send that waits gets here.
    @inlinable @inline(never)
    nonisolated(nonsending) func complete(
        _ step: SendStep,
        of action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool,
        run: Cancellation?
    ) async -> StoreTask {
        var step = step
        while true {
            switch step {
            case .done(let task):
                return task
            case .wait(let ticket):
                switch await waitInLine(ticket: ticket, action: action, reader: nil, run: run) {
                case .processed(let work, let leftWork):
                    runLeftWork(leftWork)
                    return StoreTask(isAccepted: true, work: work)
                case .dropped, .cancelled:
                    return StoreTask(isAccepted: false)
                case .retry:
                    // The pipeline was free when it came to wait: admitted again (a loop, not a recursion).
                    lock.lock()
                    step = sendLocked(action, through: chain, fromAPI: fromAPI, run: run)
                }
            }
        }
    }

    /// Waits in line as a task until the owner processed `action` for it (and read the state, with `reader`), the
    /// store went away, the task was cancelled, or the pipeline turned out to be free (`.retry`).
    ///
    /// Inlinable, so that putting the task in line and taking it out runs code specialized for the store's types;
    /// never inlined, as its callers are not.
    @inlinable @inline(never)
    nonisolated(nonsending) func waitInLine(
        ticket: UInt64,
        action: Action,
        reader: StateReader<State>?,
        run: Cancellation? = nil
    ) async -> SendOutcome {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<SendOutcome, Never>) in
                lock.lock()
                // Both checks under the lock: a cancellation handler that ran before the task was in line found
                // nothing to remove, but the task is already marked cancelled.
                if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(returning: .cancelled)
                } else if !pipeline.isOwned {
                    lock.unlock()
                    continuation.resume(returning: .retry)
                } else {
                    pipeline.waitAsTask(
                        ticket: ticket,
                        action: action,
                        continuation: TaskResumption(continuation: continuation, reader: reader, run: run),
                        now: monotonicNanoseconds()
                    )
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let continuation = pipeline.cancelTask(ticket: ticket)
            lock.unlock()
            continuation?.resume(returning: .cancelled)
        }
    }

    /// Runs the work of a sent action, and of the actions queued meanwhile, as the owner, and returns the tasks that
    /// this work started; called with `lock` held, returns with it.
    @inlinable
    func runTrackingLocked(_ action: Action, through chain: DispatchFunction<Action>?, waited: UInt64) -> TrackedWork? {
        isTrackingWork = true
        runLocked(action, through: chain, waited: waited)
        processQueueLocked(through: chain)
        isTrackingWork = false
        defer { trackedWork = nil }
        return trackedWork
    }

    /// The send group of the send being processed on the calling thread, if it is processing one: the tasks
    /// started now join it, and the send's ``StoreTask`` waits for them and cancels them.
    func sendGroupOfCurrentRun() -> TrackedWork? {
        lock.lock()
        guard isTrackingWork, pipeline.owner == ThreadID.current else {
            lock.unlock()
            return nil
        }
        if trackedWork == nil {
            trackedWork = TrackedWork(work: work)
        }
        let group = trackedWork
        lock.unlock()
        return group
    }
}

extension Store {
    /// Sends an action through the middleware to the reducer, like ``dispatch(_:)``, but suspends instead of
    /// blocking its thread while the store is busy; returns the work that the action started.
    ///
    /// Use `send` from async code (a request handler, a `Task`): while another thread or task runs the work of an
    /// action on this store, ``dispatch(_:)`` blocks the calling thread (a thread of the cooperative pool, in async
    /// code), while `send` suspends the task and frees the thread. Waiting dispatches and sends are served in the
    /// order in which they arrived. Otherwise it follows the dispatch contract: it returns once the action and every
    /// action that its work dispatched have been reduced and the subscribers notified; see
    /// <doc:DispatchContract#Send-and-dispatch>.
    ///
    /// ```swift
    /// let task = await store.send(.orders(.place(id: 7)))
    /// await task.finish()   // its side effects and effects are done too
    /// ```
    ///
    /// A task cancelled while it waits leaves the line, and its action is not processed (``StoreTask/isAccepted`` is
    /// `false`); once its action's turn came, cancellation no longer stops it.
    ///
    /// - Parameter action: The action.
    /// - Returns: The asynchronous work that processing the action started; see ``StoreTask``.
    @inlinable @discardableResult
    public nonisolated(nonsending) func send(_ action: Action) async -> StoreTask {
        await core.send(action, through: chain, fromAPI: false)
    }
}

extension MiddlewareAPI {
    /// Sends an action through the whole middleware chain of the store, suspending instead of blocking while the
    /// store is busy; see ``Store/send(_:)``.
    ///
    /// For asynchronous work (an async ``SideEffect``, an effect): `send` frees the cooperative thread that
    /// ``dispatch(_:)`` would block. Dropped (``StoreTask/isAccepted`` is `false`) if this run was cancelled or the
    /// store is gone.
    @inlinable @discardableResult
    public nonisolated(nonsending) func send(_ action: Action) async -> StoreTask {
        guard let cancellation else {
            return await core.send(action, through: nil, fromAPI: true)
        }
        if cancellation.isCancelled {
            return StoreTask(isAccepted: false)
        }
        // Checked again once the pipeline is free for it: see `StoreCore.dispatchFromAPI(_:unlessCancelled:)`.
        return await core.send(action, through: nil, fromAPI: true, run: cancellation)
    }

    /// How long the action whose work runs now waited for the store's pipeline (zero unless another thread or task
    /// was running the store's work when it was dispatched or sent).
    ///
    /// Meaningful only when read by the middleware chain while it processes that action, on the dispatching thread.
    package var pipelineWaitOfCurrentAction: Duration {
        .nanoseconds(Int64(clamping: core.waitOfCurrentAction))
    }
}
