extension Middlewares {
    /// Applies a middleware only to the actions that `isIncluded` accepts; other actions go straight to `next`.
    ///
    /// - Parameters:
    ///   - isIncluded: Returns `true` for the actions the middleware should see.
    ///   - middleware: The middleware to apply.
    @inlinable
    public static func filter<State, Action>(
        _ isIncluded: @escaping @Sendable (Action) -> Bool,
        _ middleware: Middleware<State, Action>
    ) -> Middleware<State, Action> {
        Middleware { api in
            let link = middleware.body(api)
            return { next in
                let filtered = link(next)
                return { action in
                    if isIncluded(action) {
                        filtered(action)
                    } else {
                        next(action)
                    }
                }
            }
        }
    }

    /// Runs a side effect only for the actions that `isIncluded` accepts.
    ///
    /// A rejected action is invisible to the modifiers around and inside: it opens no throttle window, restarts no
    /// debounce and supersedes no `takeLatest` run, so `throttle(i, filter(p, e))` and `filter(p, throttle(i, e))`
    /// behave the same.
    ///
    /// - Parameters:
    ///   - isIncluded: Returns `true` for the actions the effect should run for.
    ///   - effect: The effect.
    @inlinable
    public static func filter<State, Action>(
        _ isIncluded: @escaping @Sendable (Action) -> Bool,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        let accepts: @Sendable (Action) -> Bool
        if let inner = effect.accepts {
            accepts = { action in isIncluded(action) && inner(action) }
        } else {
            accepts = isIncluded
        }
        return SideEffect(accepts: accepts, install: effect.install)
    }
}
