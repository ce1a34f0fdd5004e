/// A link in the dispatch chain: sees each action before the reducer and decides what reaches it.
///
/// A middleware is the classic curried function `api -> next -> action`. The store calls the outer function
/// once, when it installs the middleware; per-store state of the middleware belongs in that scope. The
/// function it returns receives `next`, the rest of the chain, and returns the function that handles each action.
/// It may pass the action on (`next(action)`), transform it, swallow it, or dispatch new actions through `api`.
///
/// ```swift
/// let audit = Middleware<AppState, AppAction> { api in
///     { next in
///         { action in
///             let before = api.state.orders.count
///             next(action)
///             print(action, before, "->", api.state.orders.count)
///         }
///     }
/// }
/// ```
///
/// `next` may also be called later or from another thread; such a call is serialized like a dispatch and does
/// nothing once the store is gone.
public struct Middleware<State: Sendable, Action: Sendable>: Sendable {
    /// The curried middleware function.
    public let body:
        @Sendable (MiddlewareAPI<State, Action>) -> (@escaping DispatchFunction<Action>) -> DispatchFunction<Action>

    /// Creates a middleware from the classic curried function `api -> next -> action`.
    @inlinable
    public init(
        _ body:
            @escaping @Sendable (MiddlewareAPI<State, Action>) -> (@escaping DispatchFunction<Action>) ->
            DispatchFunction<Action>
    ) {
        self.body = body
    }

    /// Creates a middleware in the ReSwift / Reflow spelling, `(dispatch, getState) -> next -> action`.
    ///
    /// `dispatch` re-enters the whole chain; `getState` returns the current state.
    public init(
        _ body:
            @escaping @Sendable (
                _ dispatch: @escaping DispatchFunction<Action>, _ getState: @escaping @Sendable () -> State
            ) -> (@escaping DispatchFunction<Action>) -> DispatchFunction<Action>
    ) {
        self.body = { api in
            body({ action in api.dispatch(action) }, { api.state })
        }
    }
}
