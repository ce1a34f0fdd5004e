/// Work triggered by an action after the reducer handled it: a request, a write, a timer, a log line.
///
/// A side effect never delays, drops or duplicates the action: lifted into the chain with
/// ``Middleware/init(_:)-(SideEffect<State,Action>)``, it passes every action to the reducer first, then runs. The
/// modifiers in ``Middlewares`` (``Middlewares/filter(_:_:)-(_,SideEffect<State,Action>)``,
/// ``Middlewares/takeLatest(_:)-(SideEffect<State,Action>)``,
/// ``Middlewares/takeLeading(_:)-(SideEffect<State,Action>)``,
/// ``Middlewares/throttle(_:leading:trailing:runs:on:_:)-(Duration,_,_,_,_,SideEffect<State,Action>)``,
/// ``Middlewares/debounce(_:maxWait:runs:on:_:)-(Duration,_,_,_,SideEffect<State,Action>)``,
/// ``Middlewares/delay(_:runs:on:_:)-(Duration,_,_,SideEffect<State,Action>)``) decide when and whether the work runs.
///
/// ```swift
/// let save = SideEffect<AppState, AppAction> { action, api in
///     try? storage.write(api.state.orders)
/// }
/// let middleware = Middleware(Middlewares.debounce(.seconds(1), save))
/// ```
///
/// The `async` form runs in a `Task` that the store owns: the task is cancelled when `takeLatest` supersedes the
/// run and when the store goes away.
///
/// ```swift
/// let lookup = SideEffect<AppState, AppAction> { action, api in
///     guard case .quoteRequested(let symbol) = action else { return }
///     let quote = await quotes.fetch(symbol)
///     api.dispatch(.quoteReceived(quote))  // does nothing if this run was superseded
/// }
/// ```
///
/// A side effect value can serve several stores: the state of its modifiers (windows, timers, the current run)
/// is created for each store when the store installs it.
public struct SideEffect<State: Sendable, Action: Sendable>: Sendable {
    /// Whether the effect wants to run for an action; modifiers count only the actions it accepts.
    @usableFromInline
    let accepts: (@Sendable (Action) -> Bool)?
    /// Called once per store; returns the handler of that store, which runs the effect for accepted actions.
    @usableFromInline
    let install: @Sendable (MiddlewareAPI<State, Action>) -> Handler
    /// Whether the handler that `install` returns asks `accepts` itself (a combined effect runs only the parts that
    /// accept the action), so that the middleware lifting this effect need not ask first.
    @usableFromInline
    let handlerChecksAcceptance: Bool

    /// Runs the effect for one accepted action with the API of this run.
    @usableFromInline
    typealias Handler = @Sendable (Action, MiddlewareAPI<State, Action>) -> Void

    @usableFromInline
    init(
        accepts: (@Sendable (Action) -> Bool)?,
        handlerChecksAcceptance: Bool = false,
        install: @escaping @Sendable (MiddlewareAPI<State, Action>) -> Handler
    ) {
        self.accepts = accepts
        self.handlerChecksAcceptance = handlerChecksAcceptance
        self.install = install
    }

    /// Creates a side effect that runs synchronously, on the dispatching thread, after each action was reduced.
    ///
    /// - Parameter run: The work; `api.dispatch` from here is queued and processed after the current action.
    @inlinable
    public init(_ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void) {
        self.init(accepts: nil, install: { _ in run })
    }

    /// Creates a side effect that runs in a new `Task` owned by the store, after each action was reduced.
    ///
    /// The task is cancelled when the run is superseded (``Middlewares/takeLatest(_:)-(SideEffect<State,Action>)``)
    /// and when the store goes away; check `Task.isCancelled` or `api.isCancelled` at suspension points.
    /// `api.dispatch` does nothing once the run is cancelled. ``Store/shutdown(timeout:)`` waits for the task.
    ///
    /// An error that `run` throws goes to the store's `onEffectError` handler
    /// (``Store/init(initialState:reducer:middleware:onEffectError:)``), unless the run was cancelled; a closure
    /// that throws but never awaits is still an `async` side effect, run in a task.
    public init(_ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) async throws -> Void) {
        self.init(
            accepts: nil,
            install: { _ in
                { action, api in
                    let cancellation = api.runCancellation
                    let work = api.core.work
                    // One entry in the store's ledger, part of the run's `takeLeading` run and of the send group of
                    // the `send` being processed on this thread, if any; it holds the task once it exists.
                    let token = work.begin(
                        .sideEffect,
                        cancellation: cancellation,
                        group: api.core.sendGroupOfCurrentRun()
                    )
                    guard let key = cancellation.onCancel({ work.cancelTask(token) }) else {
                        work.end(token, ran: false)  // the run was cancelled already: no task
                        return
                    }
                    let task = Task {
                        do {
                            try await work.track(token) {
                                try await api.withDependenciesBound(for: action) { try await run(action, api) }
                            }
                        } catch {
                            work.report(error, wasCancelled: cancellation.isCancelled) {
                                EffectFailure(error: error, source: .sideEffect, action: action)
                            }
                        }
                        cancellation.removeHandler(key)
                        work.end(token)
                    }
                    work.attach(token, task)
                }
            }
        )
    }

    /// Whether this effect runs for `action` (`false` when a ``Middlewares/filter(_:_:)-(_,SideEffect<State,Action>)``
    /// inside it rejects the action).
    @inlinable
    func isAccepted(_ action: Action) -> Bool {
        accepts?(action) ?? true
    }
}

extension Middleware {
    /// Lifts a side effect into the chain: each action goes to `next` (so the reducer sees it at once), then the
    /// effect runs for it.
    @inlinable
    public init(_ sideEffect: SideEffect<State, Action>) {
        self.init { api in
            let handler = sideEffect.install(api)
            return { next in
                if let accepts = sideEffect.accepts, !sideEffect.handlerChecksAcceptance {
                    return { action in
                        next(action)
                        if accepts(action) {
                            handler(action, api)
                        }
                    }
                }
                return { action in
                    next(action)
                    handler(action, api)
                }
            }
        }
    }
}

extension Store {
    /// The number of tasks of asynchronous side effects (``SideEffect/init(_:)-(_)`` with an `async` closure)
    /// whose work has not returned yet (for tests), from the store's ledger of running work.
    package var runningSideEffectTaskCount: Int {
        core.work.runningSideEffectTaskCount
    }
}
