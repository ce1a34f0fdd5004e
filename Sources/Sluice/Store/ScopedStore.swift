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
        let core = self.core
        return ScopedStore(
            source: StateSource(core: core, keyPath: keyPath),
            dispatch: { action in core.dispatchFromAPI(action) },
            sender: core,
            dependencies: core.dependencies
        )
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
    let source: StateSource<State>
    let send: DispatchFunction<Action>
    private let sender: any ActionSending<Action>
    /// The services of the store; see ``StoreDependencies``.
    public let dependencies: StoreDependencies

    init(
        source: StateSource<State>,
        dispatch: @escaping DispatchFunction<Action>,
        sender: any ActionSending<Action>,
        dependencies: StoreDependencies
    ) {
        self.source = source
        self.send = dispatch
        self.sender = sender
        self.dependencies = dependencies
    }

    /// The current value of this part of the state.
    ///
    /// Safe from any thread; Observation tracks it as a read of the store's ``Store/state``. A copy of the part;
    /// ``read(_:)`` borrows it instead.
    public var state: State {
        source.read()
    }

    /// Sends an action to the store, through its middleware; see ``Store/dispatch(_:)``.
    public func dispatch(_ action: Action) {
        send(action)
    }

    /// Sends an action to the store, through its middleware, suspending instead of blocking while the store is
    /// busy; see ``Store/send(_:)``.
    @discardableResult
    public nonisolated(nonsending) func send(_ action: Action) async -> StoreTask {
        await sender.sendThroughChain(action)
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
        source.subscribe { initial in
            let last = LastSeen(initial)
            return { value in
                if value != last.value {
                    last.value = value
                    observer(value)
                }
            }
        }
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
        source.map(keyPath).subscribe { initial in
            let last = LastSeen(initial)
            return { value in
                if value != last.value {
                    last.value = value
                    observer(value)
                }
            }
        }
    }

    /// This part of the state as an asynchronous sequence: the current value, then each value that differs from
    /// the one before it; see ``Store/values(of:)``.
    public var states: StateStream<State> {
        StateStream(source: source, isRepeat: ==)
    }

    /// The value at `keyPath` (inside this part) as an asynchronous sequence: the current value, then each value
    /// that differs from the one before it; see ``Store/values(of:)``.
    ///
    /// - Parameter keyPath: The value to follow.
    public func values<Value: Equatable & Sendable>(
        of keyPath: any KeyPath<State, Value> & Sendable
    ) -> StateStream<Value> {
        StateStream(source: source.map(keyPath), isRepeat: ==)
    }

    /// A read-only view of a part of this part.
    ///
    /// - Parameter keyPath: The part of this part to show.
    public func scope<ChildState: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, ChildState> & Sendable
    ) -> ScopedStore<ChildState, Action> {
        ScopedStore<ChildState, Action>(
            source: source.map(keyPath),
            dispatch: send,
            sender: sender,
            dependencies: dependencies
        )
    }
}

/// The value a scoped subscriber saw last.
///
/// `@unchecked Sendable`: read and written only by notifications, which the store runs one at a time (each on the
/// thread that owns the dispatch pipeline, which is handed over under the store's lock).
private final class LastSeen<Value>: @unchecked Sendable {
    var value: Value

    init(_ value: Value) {
        self.value = value
    }
}
