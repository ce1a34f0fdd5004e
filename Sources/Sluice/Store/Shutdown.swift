extension Store {
    /// Stops the store gracefully: refuses new actions, runs the work that time-based modifiers owe, waits for the
    /// running tasks up to `timeout`, then cancels what is left.
    ///
    /// In order, from the call on:
    ///
    /// 1. **New actions are refused.** ``dispatch(_:)``, ``MiddlewareAPI/dispatch(_:)`` (which returns `false`),
    ///    scoped stores and effects: every dispatch made after the call is dropped and counted in
    ///    ``ShutdownReport/refusedDispatches``, including the dispatches of the work that shutdown waits for. Actions
    ///    accepted before the call (queued behind a dispatch in progress) are still processed. The pending timers
    ///    (``MiddlewareAPI/schedule(id:cancelInFlight:after:_:)``) are cancelled, since their dispatches would be
    ///    refused.
    /// 2. **Owed runs run now.** The pending trailing run of each `throttle` (with `trailing: true`), the pending
    ///    run of each `debounce`, and the queued runs of each `delay` run at once, on the calling thread (or right
    ///    after the run of that modifier in progress on another thread), instead of at their time. Shutdown waits
    ///    for runs in progress on other threads, and runs what they leave owed (a `debounce` behind a `delay`), until
    ///    no modifier is busy or owes a run: each owed run runs exactly once.
    /// 3. **Running tasks are awaited** up to `timeout`: the tasks of effects (``start(_:)``, `run`) and of
    ///    `async` side effects, including those that step 2 started. Steps 2 and 3 repeat until nothing is owed,
    ///    busy or running, or until `timeout`.
    /// 4. **What is left is cancelled**, as when the store is freed: the tasks still running (counted in
    ///    ``ShutdownReport/cancelledTasks``), the timers, and the state streams, which end. If the timeout passed
    ///    while another thread was still performing a modifier's runs, the runs queued behind the one in progress
    ///    are dropped with the modifier, and counted in ``ShutdownReport/droppedRuns``: no owed run is lost
    ///    without the report saying so.
    ///
    /// The state stays readable and subscriptions stay valid; the store just takes no more actions. Freeing a store
    /// without calling `shutdown` keeps the old behaviour: everything is cancelled at once, owed runs are dropped.
    ///
    /// ```swift
    /// let report = await store.shutdown(timeout: .seconds(5))
    /// print("ran \(report.flushedRuns) owed runs, cancelled \(report.cancelledTasks) tasks")
    /// ```
    ///
    /// Calling it again, or from several tasks at once, is safe: one call does the work, and every call returns only
    /// once that work is done, with the same report. Called from inside an effect or an `async` side effect of this store, it does not wait for its
    /// caller (which would wait for itself until `timeout`); the caller is not counted, and its task is cancelled
    /// with the rest when shutdown ends, after which `shutdown` returns to it normally.
    ///
    /// If the task that calls `shutdown` is cancelled, it stops waiting for the running tasks and cancels them.
    ///
    /// - Parameter timeout: How long to wait for running tasks. A negative timeout stops the program.
    /// - Returns: What ran, what was cancelled and what was refused.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(10)) async -> ShutdownReport {
        if timeout < .zero {
            usageError("Store.shutdown: the timeout must not be negative, got \(timeout).")
        }
        return await core.shutdown(timeout: timeout)
    }
}

/// What ``Store/shutdown(timeout:)`` did.
public struct ShutdownReport: Sendable, Hashable {
    /// The runs that time-based modifiers owed and shutdown released to run at once instead of at their time
    /// (trailing `throttle` runs, `debounce` runs, queued `delay` runs). A released run that had not run when the
    /// timeout passed is also in ``droppedRuns``.
    public var flushedRuns: Int
    /// The tasks of effects and `async` side effects that finished while shutdown waited for them.
    public var finishedTasks: Int
    /// The tasks still running at the timeout, which shutdown cancelled.
    public var cancelledTasks: Int
    /// The dispatches refused from the call of `shutdown` until it returned.
    public var refusedDispatches: Int
    /// The owed runs that never ran: when the timeout passed, another thread was still performing a modifier's runs
    /// (a run that blocks, a scheduler's thread kept from running), and the runs queued behind the one in progress,
    /// or made owed by it, were dropped with the modifier. 0 unless shutdown timed out.
    public var droppedRuns: Int

    /// Creates a report.
    public init(
        flushedRuns: Int,
        finishedTasks: Int,
        cancelledTasks: Int,
        refusedDispatches: Int,
        droppedRuns: Int = 0
    ) {
        self.flushedRuns = flushedRuns
        self.finishedTasks = finishedTasks
        self.cancelledTasks = cancelledTasks
        self.refusedDispatches = refusedDispatches
        self.droppedRuns = droppedRuns
    }
}

/// An error thrown by an effect or a side effect that nobody awaited, or the error that stopped the store's
/// journal, as the store's `onEffectError` handler receives it (see
/// ``Store/init(initialState:reducer:middleware:onEffectError:)``).
///
/// Not generic: one type for every store, whatever its state and action. The handler is a
/// `@Sendable (EffectFailure) -> Void`, and the action that a side effect ran for comes as `any Sendable`, to cast
/// back to the store's action type:
///
/// ```swift
/// let store = Store<AppState, AppAction>(
///     initialState: AppState(),
///     reducer: appReducer,
///     onEffectError: { (failure: EffectFailure) in
///         switch failure.source {
///         case .sideEffect:
///             let action = failure.action as? AppAction  // `any Sendable`, cast back to the action type
///             print("side effect for \(action.map { "\($0)" } ?? "?") failed:", failure.error)
///         case .effect:
///             print("effect \(failure.id.map { "\($0)" } ?? "without an id") failed:", failure.error)
///         case .journal:
///             print("the journal stopped:", failure.error)
///         }
///     }
/// )
/// ```
public struct EffectFailure: Error, Sendable {
    /// What failed.
    public enum Source: Sendable, Hashable {
        /// An `async` side effect, run for ``EffectFailure/action``.
        case sideEffect
        /// An effect started with `start`.
        case effect
        /// The store's `Journal` (SluiceJournal) failed to write (a full disk, an I/O error) and stopped:
        /// ``EffectFailure/error`` is the `JournalError`. The store drops every later action.
        case journal
    }

    /// The error that the effect threw.
    public let error: any Error
    /// What failed.
    public let source: Source
    /// The id of the effect, if it was started with one.
    public let id: (any Hashable & Sendable)?
    /// The action that the side effect ran for; `nil` for an effect and for the journal.
    public let action: (any Sendable)?

    /// Creates a failure.
    public init(error: any Error, source: Source, id: (any Hashable & Sendable)? = nil, action: (any Sendable)? = nil) {
        self.error = error
        self.source = source
        self.id = id
        self.action = action
    }
}

extension StoreCore {
    /// The work behind ``Store/shutdown(timeout:)``.
    func shutdown(timeout: Duration) async -> ShutdownReport {
        switch work.takeShutdownTurn() {
        case .perform: break
        case .wait: return await work.awaitReport()
        case .done(let report): return report
        }
        let deadline = ContinuousClock.now.advanced(by: min(timeout, .seconds(Int64.max)))
        lock.withLock { pipeline.beginRefusing() }
        // A timer's dispatches would be refused from now on: cancel them, so that shutdown never waits for one.
        work.timers.close()
        let caller = work.callerToken
        // A dispatch in progress (on another thread, perhaps the one that started this task) was accepted: let it
        // finish, with the actions queued behind it, so that the owed runs it leaves are flushed below.
        await waitForFreePipeline(until: deadline)
        // Owed runs and running tasks until both are done: a task cannot make a run owed (its dispatches are
        // refused), but the runs that shutdown releases may start tasks, and make runs behind them owed.
        var flushed = 0
        repeat {
            flushed += await work.settleTimedEffects(until: deadline)
            _ = await work.waitForTasks(excluding: caller, until: deadline)
        } while !work.isSettled(excluding: caller) && ContinuousClock.now < deadline && !Task.isCancelled
        let cancelled = work.runningCount(excluding: caller)
        let finished = work.tasksFinishedDuringShutdown
        let refused: Int = lock.withLock { pipeline.statistics.refusedDispatches }
        lifetime.cancel()
        let report = ShutdownReport(
            flushedRuns: flushed,
            finishedTasks: finished,
            cancelledTasks: cancelled,
            refusedDispatches: refused,
            droppedRuns: work.droppedTimedRuns
        )
        work.finishShutdown(report)
        return report
    }

    /// Waits until no thread is dispatching on the store or waiting in line to (the pipeline is idle while a thread
    /// woken to take it is on its way) and none is running what a dispatch left for after the pipeline (a logged
    /// line, counted in the ledger), until `deadline`, or until the calling task is cancelled.
    ///
    /// Not polled: while the store refuses dispatches, every owner that leaves the pipeline idle tells the ledger
    /// (``StoreWork/pipelineWentIdle()``), which wakes this wait to look again. The generation read before looking
    /// keeps a release made between the look and the wait from being missed.
    func waitForFreePipeline(until deadline: ContinuousClock.Instant) async {
        while !Task.isCancelled {
            let generation = work.pipelineIdleGeneration
            // The pipeline first: an owner counts its left work in the ledger before it gives the pipeline up.
            let isBusy =
                lock.withLock { pipeline.isOwned || pipeline.waiterCount > 0 || !pipeline.woken.isEmpty }
                || work.isLeftWorkRunning
            guard isBusy, await work.waitForPipelineIdle(after: generation, until: deadline) else { return }
        }
    }

    /// Whether the store refuses dispatches now: shutdown began, or the store is gone.
    package var isRefusingDispatches: Bool {
        lock.withLock { pipelineStorage.phase != .open }
    }
}

extension MiddlewareAPI {
    /// Lets the store's shutdown run what `timed` owes.
    @usableFromInline
    func registerForShutdown<Machine>(_ timed: TimedEffect<Machine>) {
        core.work.register(timed)
    }
}
