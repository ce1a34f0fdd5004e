extension Middlewares {
    /// Composes middleware into one; the first is the outermost, as Redux's `compose`.
    ///
    /// `combine(a, b, c)` behaves like `middleware: [a, b, c]`: `a` sees each action first.
    public static func combine<State, Action>(
        _ middleware: Middleware<State, Action>...
    ) -> Middleware<State, Action> {
        combine(middleware)
    }

    /// Composes an array of middleware into one; the first is the outermost.
    public static func combine<State, Action>(
        _ middleware: [Middleware<State, Action>]
    ) -> Middleware<State, Action> {
        Middleware { api in
            let installed = middleware.map { $0.body(api) }
            return { next in
                installed.reversed().reduce(next) { next, link in link(next) }
            }
        }
    }

    /// Combines side effects into one that runs each of them, in order, for the actions that it accepts.
    ///
    /// The combined effect accepts an action if any of its parts does, so a modifier around it counts the
    /// actions that at least one part wants.
    public static func combine<State, Action>(_ effects: SideEffect<State, Action>...) -> SideEffect<State, Action> {
        combine(effects)
    }

    /// Combines an array of side effects into one that runs each of them, in order.
    public static func combine<State, Action>(_ effects: [SideEffect<State, Action>]) -> SideEffect<State, Action> {
        let accepts: (@Sendable (Action) -> Bool)?
        if effects.allSatisfy({ $0.accepts == nil }) {
            accepts = nil
        } else {
            accepts = { action in effects.contains { $0.isAccepted(action) } }
        }
        return SideEffect(accepts: accepts) { api in
            let handlers = effects.map { effect in (effect.accepts, effect.install(api)) }
            return { action, api in
                for (accepts, handler) in handlers where accepts?(action) ?? true {
                    handler(action, api)
                }
            }
        }
    }
}
