/// A pure function that produces the next state from the current state and an action.
///
/// A reducer has no store to dispatch to and no side effects; the store calls it once per action, with the
/// state as it is at that moment.
///
/// There are two ways to write one. The pure form takes the state as `consuming` and returns the next state:
///
/// ```swift
/// let counter = Reducer<Int, CounterAction> { count, action in
///     switch action {
///     case .increment: count + 1
///     case .decrement: count - 1
///     }
/// }
/// ```
///
/// The in-place form mutates the state:
///
/// ```swift
/// let todos = Reducer<TodoState, TodoAction>(mutating: { state, action in
///     if case .add(let title) = action { state.items.append(title) }
/// })
/// ```
///
/// ## Large states
///
/// The store moves its state into the reducer and back, so a reducer that appends to an array inside a large
/// state does not copy the array, also through ``withKey(_:use:)`` and ``combineReducers(_:)-(Reducer<State,Action>...)``.
/// Whether *your* closure copies depends on how it is written (with Swift 6.3.1):
///
/// | reducer written as | release build | debug build |
/// |---|---|---|
/// | `Reducer(mutating: { state, action in state.items.append(x) })` | move | move |
/// | `Reducer { (state: consuming AppState, action) in state.items.append(x); return state }` | move | move |
/// | `Reducer { state, action in var state = state; state.items.append(x); return state }` | move | **copy** |
/// | a plain function `func reduce(_ state: AppState, _ action: AppAction) -> AppState` | **copy** | **copy** |
///
/// Prefer `Reducer(mutating:)` or the annotated `consuming` closure for states that hold large collections.
/// A closure parameter that is inferred as `consuming` is immutable (`{ state, action in state.count += 1 }`
/// does not compile); spell it `(state: consuming AppState, action)` to mutate it directly.
public struct Reducer<State, Action>: Sendable {
    /// The reducer in its in-place form, which is how the store and the combinators call it.
    @usableFromInline
    package let reduce: @Sendable (inout State, Action) -> Void

    /// Creates a reducer from a pure function of the state and the action.
    ///
    /// - Parameter reduce: Returns the next state. It receives the state as `consuming`, so returning the
    ///   (mutated) parameter moves it instead of copying it. A plain function `(State, Action) -> State` is
    ///   accepted too; it borrows the state and so pays for a copy-on-write copy on every action.
    @inlinable
    public init(_ reduce: @escaping @Sendable (consuming State, Action) -> State) {
        self.reduce = { state, action in
            state = reduce(consume state, action)
        }
    }

    /// Creates a reducer that mutates the state in place.
    ///
    /// - Parameter reduce: Changes `state` to the next state for `action`.
    @inlinable
    public init(mutating reduce: @escaping @Sendable (inout State, Action) -> Void) {
        self.reduce = reduce
    }

    /// Returns the next state for `action`.
    @inlinable
    public func callAsFunction(_ state: consuming State, _ action: Action) -> State {
        var state = state
        reduce(&state, action)
        return state
    }

    /// Changes `state` in place to the next state for `action`.
    @inlinable
    public func reduce(into state: inout State, _ action: Action) {
        reduce(&state, action)
    }
}

extension Reducer {
    /// A reducer that leaves every state as it is.
    public static var identity: Reducer {
        Reducer(mutating: { _, _ in })
    }

    /// Combines two reducers: `rhs` runs on the state that `lhs` produced.
    ///
    /// `a + b` is `combineReducers(a, b)`.
    public static func + (lhs: Reducer, rhs: Reducer) -> Reducer {
        combineReducers(lhs, rhs)
    }
}

/// Combines reducers of the same state and action into one that runs them left to right.
///
/// Each reducer receives the state that the previous one produced.
///
/// ```swift
/// let app = combineReducers(
///     withKey(\AppState.orders, use: ordersReducer),
///     withKey(\AppState.inventory, use: inventoryReducer)
/// )
/// ```
@inlinable
public func combineReducers<State, Action>(_ reducers: Reducer<State, Action>...) -> Reducer<State, Action> {
    combineReducers(reducers)
}

/// Combines an array of reducers into one that runs them in array order.
@inlinable
public func combineReducers<State, Action>(_ reducers: [Reducer<State, Action>]) -> Reducer<State, Action> {
    guard var combined = reducers.first else {
        return .identity
    }
    // Nested pairs rather than a loop over an array of closures: the loop retained and released every closure
    // on every action.
    for next in reducers.dropFirst() {
        let first = combined.reduce
        let second = next.reduce
        combined = Reducer(mutating: { state, action in
            first(&state, action)
            second(&state, action)
        })
    }
    return combined
}

/// Runs a reducer of a part of the state, found by key path, for every action.
///
/// The part is changed in place: an array inside it is not copied.
///
/// ```swift
/// struct AppState { var orders = OrdersState(); var inventory = InventoryState() }
/// let app = withKey(\AppState.orders, use: ordersReducer) + withKey(\AppState.inventory, use: inventoryReducer)
/// ```
///
/// - Parameters:
///   - keyPath: Where the part lives in the parent state.
///   - reducer: The reducer of the part; it sees every action of the parent.
@inlinable
public func withKey<State, Substate, Action>(
    _ keyPath: any WritableKeyPath<State, Substate> & Sendable,
    use reducer: Reducer<Substate, Action>
) -> Reducer<State, Action> {
    let reduce = reducer.reduce
    let part = KeyPathWriter(keyPath)
    return Reducer(mutating: { state, action in
        part.modify(&state) { reduce(&$0, action) }
    })
}

/// Runs a reducer of a part of the state with its own action type, for the actions that it accepts.
///
/// `toLocal` extracts the child's action from a parent action; for an action where it returns `nil` the child
/// reducer does not run at all.
///
/// ```swift
/// enum AppAction { case orders(OrdersAction), inventory(InventoryAction) }
/// let orders = withKey(\AppState.orders, action: { action in
///     if case .orders(let local) = action { local } else { nil }
/// }, use: ordersReducer)
/// ```
///
/// - Parameters:
///   - keyPath: Where the part lives in the parent state.
///   - toLocal: Returns the child's action for a parent action, or `nil` to skip the child.
///   - reducer: The reducer of the part.
@inlinable
public func withKey<State, Substate, Action, LocalAction>(
    _ keyPath: any WritableKeyPath<State, Substate> & Sendable,
    action toLocal: @escaping @Sendable (Action) -> LocalAction?,
    use reducer: Reducer<Substate, LocalAction>
) -> Reducer<State, Action> {
    withKey(keyPath, action: ClosureExtractor(toLocal), use: reducer)
}

/// Runs a reducer of a part of the state with its own action type, for the actions that it accepts, with an
/// extractor type instead of a closure.
///
/// The same as the closure form (``withKey(_:action:use:)-(_,(Action)->LocalAction?,_)``), for reducers on a hot
/// path: the compiler inlines the extractor's `extract(from:)` into the reducer, which a closure prevents (see
/// ``ActionExtractor``).
///
/// ```swift
/// struct OrdersActions: ActionExtractor {
///     func extract(from action: AppAction) -> OrdersAction? {
///         if case .orders(let local) = action { local } else { nil }
///     }
/// }
/// let orders = withKey(\AppState.orders, action: OrdersActions(), use: ordersReducer)
/// ```
///
/// - Parameters:
///   - keyPath: Where the part lives in the parent state.
///   - extractor: Extracts the child's action from a parent action, or `nil` to skip the child.
///   - reducer: The reducer of the part.
@inlinable
public func withKey<State, Substate, Action, LocalAction>(
    _ keyPath: any WritableKeyPath<State, Substate> & Sendable,
    action extractor: some ActionExtractor<Action, LocalAction>,
    use reducer: Reducer<Substate, LocalAction>
) -> Reducer<State, Action> {
    let reduce = reducer.reduce
    let part = KeyPathWriter(keyPath)
    return Reducer(mutating: { state, action in
        if let local = extractor.extract(from: action) {
            part.modify(&state) { reduce(&$0, local) }
        }
    })
}
