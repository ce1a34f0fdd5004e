// `public import`: `LeadingRun.tryStart()` is inlined into the caller's module (see TimedEffect.swift).
public import CSluiceSupport

extension Middlewares {
    /// Runs a side effect only when no run of it is in progress: an action that arrives while one is running is
    /// ignored (redux-saga's `takeLeading`, RxJS's `exhaustMap`).
    ///
    /// A run is in progress from the start of its synchronous call until that call returned, the task of an `async`
    /// side effect ended, and the effects that the run started through its `api` (`api.start`, `api.run`) ended.
    /// So a synchronous side effect that starts its work with `api.start` is in progress until that work is done.
    /// An ignored action was still reduced: only the effect does not run for it. An action that the effect does not
    /// accept is not counted at all.
    ///
    /// ```swift
    /// let refresh = Middlewares.takeLeading(SideEffect<AppState, AppAction> { action, api in
    ///     guard case .refreshRequested = action else { return }
    ///     let quote = await fetchQuote(for: action)
    ///     api.dispatch(.quoteReceived(quote))  // the refresh requests meanwhile were ignored
    /// })
    /// ```
    ///
    /// A time-based modifier inside `takeLeading` ends its run when it has taken the action in (the delayed run
    /// itself is not awaited); put `takeLeading` inside the time-based modifier to ignore actions while the delayed
    /// work runs.
    ///
    /// Inlinable, so that the per-action closure is specialized for the store's state and action types in the
    /// caller's module.
    @inlinable
    public static func takeLeading<State, Action>(_ effect: SideEffect<State, Action>) -> SideEffect<State, Action> {
        SideEffect(accepts: effect.accepts) { storeAPI in
            let handler = effect.install(storeAPI)
            let current = LeadingRun()
            // One closure for every run of this store, rather than one allocated per run.
            let finish: @Sendable () -> Void = { current.finish() }
            return { action, api in
                guard current.tryStart() else { return }
                // The run is an entry of the store's ledger, under way until its call returned and the tasks
                // started in it (their cancellations carry the run) ended.
                let work = api.core.work
                let token = work.beginRun(in: api.cancellation?.run, onIdle: finish)
                let run = Cancellation(parent: api.runCancellation, run: token)
                current.started(run)
                handler(action, api.cancellable(by: run))
                work.endRun(token)
            }
        }
    }

    /// Runs `run` for an action only when no run is in progress; see ``takeLeading(_:)-(SideEffect<State,Action>)``.
    public static func takeLeading<State, Action>(
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) async throws -> Void
    ) -> SideEffect<State, Action> {
        takeLeading(SideEffect(run))
    }

    /// Runs `run` for an action only when no run is in progress; see ``takeLeading(_:)-(SideEffect<State,Action>)``.
    public static func takeLeading<State, Action>(
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        takeLeading(SideEffect(run))
    }
}

/// Whether a run of a `takeLeading` is in progress, for one store.
///
/// Whether a run is in progress is an atomic word (0 or 1), so that an action that finds a run in progress is
/// dropped with one compare-and-swap and no lock; the run's cancellation is behind a lock, taken only by the run
/// that the word admitted.
///
/// `@unchecked Sendable`: `isRunning` is only accessed through the C11 atomics of CSluiceSupport, and `run` is a
/// ``Locked`` value.
@usableFromInline
final class LeadingRun: @unchecked Sendable {
    /// 1 while a run is in progress, else 0.
    @usableFromInline
    let isRunning: UnsafeMutablePointer<UInt>
    private let run = Locked<Cancellation?>(nil)

    @usableFromInline
    init() {
        isRunning = .allocate(capacity: 1)
        isRunning.initialize(to: 0)
    }

    deinit {
        isRunning.deallocate()
    }

    /// Starts a run unless one is in progress; returns whether it did.
    @inlinable
    func tryStart() -> Bool {
        // Acquire: the previous run's end (its `finish()`) happened before this run starts.
        csluice_pipeline_try_take(isRunning, 1)
    }

    /// The cancellation of the run that ``tryStart()`` admitted.
    @usableFromInline
    func started(_ run: Cancellation) {
        self.run.withLock { $0 = run }
    }

    /// The run is over: the next action may start one. Its cancellation stops following the store's, so that
    /// finished runs do not pile up there.
    @usableFromInline
    func finish() {
        let run: Cancellation? = self.run.withLock { run in
            defer { run = nil }
            return run
        }
        // Release: everything this run did happens before the next run is admitted.
        csluice_pipeline_store(isRunning, 0)
        run?.detachFromParent()
    }
}
