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
    ///
    /// Inlinable, like the other combinators: the closures it builds are then compiled for the store's `State` and
    /// `Action` where the chain is made, instead of running generic code that looks up type metadata per action.
    @inlinable
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
    @inlinable
    public static func combine<State, Action>(_ effects: [SideEffect<State, Action>]) -> SideEffect<State, Action> {
        let parts = ContiguousArray(effects.map(\.accepts))
        let accepts: (@Sendable (Action) -> Bool)?
        if parts.allSatisfy({ $0 == nil }) {
            accepts = nil
        } else {
            accepts = { action in
                for part in parts where part?(action) ?? true {
                    return true
                }
                return false
            }
        }
        // The handler asks each part, so a lifted combined effect does not ask `accepts` (all the parts) first.
        return SideEffect(accepts: accepts, handlerChecksAcceptance: true) { api in
            let handlers = ContiguousArray(effects.map { CombinedEffect(accepts: $0.accepts, run: $0.install(api)) })
            return { action, api in
                for index in handlers.indices where handlers[index].accepts?(action) ?? true {
                    handlers[index].run(action, api)
                }
            }
        }
    }
}

/// One part of ``Middlewares/combine(_:)-([SideEffect<State,Action>])`` installed in a store.
@usableFromInline
struct CombinedEffect<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline
    let accepts: (@Sendable (Action) -> Bool)?
    @usableFromInline
    let run: SideEffect<State, Action>.Handler

    @inlinable
    init(accepts: (@Sendable (Action) -> Bool)?, run: @escaping SideEffect<State, Action>.Handler) {
        self.accepts = accepts
        self.run = run
    }
}
