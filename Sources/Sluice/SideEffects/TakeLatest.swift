extension Middlewares {
    /// Runs a side effect so that each run supersedes the previous one.
    ///
    /// When an action that the effect accepts arrives, the previous run is cancelled: its `api.dispatch`
    /// becomes a no-op, its `api.isCancelled` turns `true`, its `async` task is cancelled, and the work that
    /// modifiers inside it scheduled for it (a `delay`ed or `debounce`d run) does not start. Then the effect runs
    /// for the new action. An action that the effect does not accept supersedes nothing.
    ///
    /// ```swift
    /// let quotes = Middlewares.takeLatest(SideEffect<AppState, AppAction> { action, api in
    ///     guard case .quoteRequested(let symbol) = action else { return }
    ///     let quote = await service.quote(symbol)
    ///     api.dispatch(.quoteReceived(quote))  // dropped if a newer request superseded this one
    /// })
    /// ```
    ///
    /// Inlinable, so that the per-action closure is specialized for the store's state and action types in the
    /// caller's module.
    @inlinable
    public static func takeLatest<State, Action>(_ effect: SideEffect<State, Action>) -> SideEffect<State, Action> {
        SideEffect(accepts: effect.accepts) { storeAPI in
            let handler = effect.install(storeAPI)
            let current = Locked<Cancellation?>(nil)
            return { action, api in
                let run = Cancellation(parent: api.runCancellation)
                // Makes `run` the current one; the previous one is cancelled outside the lock.
                let previous = current.withLock { current in
                    defer { current = run }
                    return current
                }
                previous?.cancel()
                handler(action, api.cancellable(by: run))
            }
        }
    }

    /// Runs `run` for each action so that each run supersedes the previous one; see ``takeLatest(_:)``.
    public static func takeLatest<State, Action>(
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) async -> Void
    ) -> SideEffect<State, Action> {
        takeLatest(SideEffect(run))
    }

    /// Runs `run` for each action so that each run supersedes the previous one; see ``takeLatest(_:)``.
    public static func takeLatest<State, Action>(
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        takeLatest(SideEffect(run))
    }
}
