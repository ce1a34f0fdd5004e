extension Store {
    /// A read-only view of a part of the state, which dispatches to this store.
    ///
    /// ```swift
    /// let cart = store.scope(\.cart)
    /// let subscription = cart.subscribe { cart in render(cart) }   // only when the cart changed
    /// cart.dispatch(.cart(.clear))                                  // goes to `store`
    /// ```
    ///
    /// Hand a scope to the code that needs one part of the state: it reads and observes that part, and is notified
    /// only when that part changed. The scoped store does not keep this store alive.
    ///
    /// - Parameter keyPath: The part of the state to show.
    public func scope<ChildState: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, ChildState> & Sendable
    ) -> ScopedStore<ChildState, Action> {
        core.scope(keyPath)
    }
}

/// A read-only view of a part of a store's state; see ``Store/scope(_:)``.
///
/// It reads, subscribes to and streams its part of the state as a ``Store`` does to the whole, but its
/// `subscribe(_:)` and ``states`` skip the actions that left its part unchanged. ``dispatch(_:)`` sends actions to
/// the store, through its whole middleware chain.
///
/// It does not keep the store alive (as a ``Subscription`` and a ``MiddlewareAPI`` do not): once the store is gone,
/// `state` returns the last state, `dispatch` does nothing, subscriptions never fire and streams end at once.
/// Reading ``state`` is tracked by Observation as a read of the whole store's state.
public struct ScopedStore<State: Equatable & Sendable, Action: Sendable>: Sendable {
    /// The part of the store's state that this view shows, and the store's actions.
    let handle: any StoreHandle<State, Action>

    init(handle: some StoreHandle<State, Action>) {
        self.handle = handle
    }

    /// The services of the store; see ``StoreDependencies``.
    public var dependencies: StoreDependencies {
        handle.dependencies
    }

    /// The current value of this part of the state.
    ///
    /// Safe from any thread; Observation tracks it as a read of the store's ``Store/state``. A copy of the part;
    /// ``read(_:)`` borrows it instead.
    public var state: State {
        handle.observedState
    }

    /// Sends an action to the store, through its middleware; see ``Store/dispatch(_:)``.
    ///
    /// - Returns: `true` if the store accepted the action, `false` if it refused it or is gone.
    @discardableResult
    public func dispatch(_ action: Action) -> Bool {
        handle.dispatchFromAPI(action)
    }

    /// Sends an action to the store, through its middleware, suspending instead of blocking while the store is
    /// busy; see ``Store/send(_:)``.
    @discardableResult
    public nonisolated(nonsending) func send(_ action: Action) async -> StoreTask {
        await handle.sendThroughChain(action)
    }

    /// Calls `observer` with this part of the state after each action that changed it.
    ///
    /// Observers run as the store's do (in subscription order, on the dispatching thread, outside the store's lock)
    /// and are first called for the next action that changes this part. The subscription keeps the value it saw
    /// last, to compare: for a large collection, every in-place change then copies it; use ``subscribe(by:_:)``.
    ///
    /// - Parameter observer: Receives each changed value.
    /// - Returns: The subscription; notifications stop when it is cancelled or released.
    public func subscribe(_ observer: @escaping @Sendable (State) -> Void) -> Subscription {
        handle.observe(\State.self, observer)
    }

    /// Calls `observer` with the value at `keyPath` (inside this part) after each action that changed it.
    ///
    /// - Parameters:
    ///   - keyPath: The value to observe.
    ///   - observer: Receives each changed value.
    /// - Returns: The subscription; notifications stop when it is cancelled or released.
    public func subscribe<Value: Equatable & Sendable>(
        to keyPath: any KeyPath<State, Value> & Sendable,
        _ observer: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        handle.observe(keyPath, observer)
    }

    /// This part of the state as an asynchronous sequence: the current value, then each value that differs from
    /// the one before it; see ``Store/values(of:)``.
    public var states: StateStream<State> {
        handle.states(skippingRepeats: ==)
    }

    /// The value at `keyPath` (inside this part) as an asynchronous sequence: the current value, then each value
    /// that differs from the one before it; see ``Store/values(of:)``.
    ///
    /// - Parameter keyPath: The value to follow.
    public func values<Value: Equatable & Sendable>(
        of keyPath: any KeyPath<State, Value> & Sendable
    ) -> StateStream<Value> {
        handle.values(of: keyPath)
    }

    /// A read-only view of a part of this part.
    ///
    /// - Parameter keyPath: The part of this part to show.
    public func scope<ChildState: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, ChildState> & Sendable
    ) -> ScopedStore<ChildState, Action> {
        handle.scope(keyPath)
    }
}
