/// Extracts what a child reducer handles from a parent action, as a type rather than a closure.
///
/// ``Reducer/forEach(_:action:element:ifMissing:fileID:line:)-(_,ActionExtractor<Action,(Key,ElementAction)>,_,_,_,_)``,
/// its array form, ``Reducer/ifLet(_:action:then:ifMissing:fileID:line:)-(_,ActionExtractor<Action,ChildAction>,_,_,_,_)``
/// and ``withKey(_:action:use:)-(_,ActionExtractor<Action,LocalAction>,_)`` take either a closure or an extractor.
/// Both mean the same; the extractor is for reducers on a hot path. The compiler sees an extractor's type where the
/// reducer is made, so it inlines `extract(from:)` into the reducer and matches the action where it already is. A
/// closure is a value it cannot see into: the reducer stores the action to memory to call it and reads the
/// extracted action back from memory, on every action. With an extractor, `forEach` costs about what a reducer
/// written by hand does (the `ChildReducers` benchmarks; `Benchmarks/README.md`, "Child reducers", has the
/// figures).
///
/// ```swift
/// struct OrderActions: ActionExtractor {
///     func extract(from action: ShopAction) -> (Int, OrderAction)? {
///         if case .order(let id, let local) = action { (id, local) } else { nil }
///     }
/// }
/// let orders: Reducer<ShopState, ShopAction> = .forEach(\.ordersByID, action: OrderActions(), element: orderReducer)
/// ```
///
/// For `forEach`, `Extracted` is an unlabelled tuple of the key (or id) and the element's action,
/// `(Key, ElementAction)`: a labelled one does not match. Define the extractor in the module that makes the
/// reducer, or mark its `extract(from:)` `@inlinable`, for the compiler to inline it.
///
/// `extract(from:)` must be pure, like a reducer: it is called for every action the reducer sees, on the thread
/// that is reducing.
public protocol ActionExtractor<Action, Extracted>: Sendable {
    /// The parent action the extractor reads.
    associatedtype Action
    /// What the child reducer needs: its own action, with the key or id of its element for `forEach`.
    associatedtype Extracted

    /// Returns what the child reducer handles in `action`, or `nil` when the action is not for the child.
    func extract(from action: Action) -> Extracted?
}

/// The extractor behind the closure forms of `withKey`, `forEach` and `ifLet`: calls the closure.
@usableFromInline
struct ClosureExtractor<Action, Extracted>: ActionExtractor {
    @usableFromInline
    let body: @Sendable (Action) -> Extracted?

    @inlinable
    init(_ body: @escaping @Sendable (Action) -> Extracted?) {
        self.body = body
    }

    @inlinable
    func extract(from action: Action) -> Extracted? {
        body(action)
    }
}
