/// What a subscriber of a handle is called with after each action: the state, by address, valid only during the call.
///
/// By address, not by value: a subscriber that compares one part of the state (every `subscribe(to:)`) reads that
/// part where it lies. Passed by value, the state would be spilled to the stack again in each subscriber and read
/// back from there, behind a stack protector, for every subscriber of every action.
@usableFromInline
typealias StateObserver<State> = @Sendable (UnsafePointer<State>) -> Void

/// The one internal handle to a store: what ``Store``, ``ScopedStore`` and ``MiddlewareAPI`` (and the streams) are
/// views of.
///
/// A handle shows a state (the store's, or a part of it: ``StateHandle``, all that a stream needs) and takes the
/// store's actions (``StoreHandle``). It has two kinds: the
/// store's core itself (``StoreCore``, the root) and ``ScopedHandle`` (a part of another handle's state, found by key
/// path). Everything the public types do with state, subscriptions, streams, scopes and sends through the whole
/// chain is written once, in the extension below, against these requirements; the public types forward to it.
///
/// Not in the handle: the store's own dispatch through the chain it holds (``Store/dispatch(_:)`` calls the core
/// directly, its fast path), and a run's cancellation (a ``MiddlewareAPI`` adds it on top of the core).
///
/// The requirements are the core's existing interface; a scoped handle maps them through its key path. A handle
/// never keeps the store alive.
@usableFromInline
protocol StateHandle<State>: Sendable {
    associatedtype State: Sendable

    /// Calls `body` with a pointer to the current state, with the store's lock held; `tracked`: Observation tracks
    /// the read as a read of ``Store/state``. `body` must not call the store.
    func withStatePointer<T, E: Error>(
        tracked: Bool,
        _ body: (UnsafePointer<State>) throws(E) -> T
    ) throws(E) -> T

    /// Adds a subscriber: `makeObserver` receives the state at that moment, under the store's lock, and returns the
    /// function that receives the state after each action. Removed when the subscription is cancelled or released.
    func addSubscriber(_ makeObserver: (borrowing State) -> StateObserver<State>) -> Subscription

    /// Cancelled when the store goes away.
    var storeLifetime: Cancellation { get }
}

/// A ``StateHandle`` that also takes the store's actions: the handle of a store or of a scoped store.
@usableFromInline
protocol StoreHandle<State, Action>: StateHandle {
    associatedtype Action: Sendable

    /// Dispatches through the store's whole middleware chain; `true` if the action was accepted.
    @discardableResult
    func dispatchFromAPI(_ action: Action) -> Bool

    /// Sends through the store's whole middleware chain, suspending instead of blocking while the store is busy.
    nonisolated(nonsending) func sendThroughChain(_ action: Action) async -> StoreTask

    /// The services of the store.
    var dependencies: StoreDependencies { get }
}

extension StoreCore: StoreHandle {
    @inlinable
    func addSubscriber(_ makeObserver: (borrowing State) -> StateObserver<State>) -> Subscription {
        Subscription(core: self, id: subscribe(makeObserver))
    }

    @usableFromInline
    nonisolated(nonsending) func sendThroughChain(_ action: Action) async -> StoreTask {
        await send(action, through: nil, fromAPI: true)
    }

    @usableFromInline
    var storeLifetime: Cancellation {
        lifetime
    }
}

// MARK: - Written once, for every view

extension StateHandle {
    /// The current state, for ``Store/state`` and ``ScopedStore/state``: a copy; Observation tracks the read, and
    /// the next reduced action reports a change.
    @inlinable
    var observedState: State {
        withStatePointer(tracked: true) { $0.pointee }
    }

    /// Runs `body` on the current state in place, under the store's lock: every `read(_:)`.
    @inlinable
    func read<T, E: Error>(tracked: Bool, _ body: (borrowing State) throws(E) -> T) throws(E) -> T {
        try withStatePointer(tracked: tracked) { (state) throws(E) -> T in try body(state.pointee) }
    }

    /// Calls `observer` with the state after every action.
    @inlinable
    func observeEveryAction(_ observer: @escaping @Sendable (State) -> Void) -> Subscription {
        addSubscriber { _ in { state in observer(state.pointee) } }
    }

    /// Calls `observer` with the value at `keyPath` after each action that changed it (every `subscribe(to:)`, and
    /// a scoped store's `subscribe(_:)`).
    @inlinable
    func observe<Value: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, Value> & Sendable,
        _ observer: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        let read = KeyPathReader(keyPath)
        return addSubscriber { state in
            let changes = ChangeObserver(read: read, initial: state, observer: observer)
            return { state in changes.notifyOfValueChanges(state) }
        }
    }

    /// Calls `observer` with the value at `keyPath` after each action that changed the value's key at `changeKey`
    /// (every `subscribe(to:by:)` and `subscribe(by:)`).
    ///
    /// Inlinable, and the values read by offset where the key paths allow it: the observer runs after every action,
    /// and generic code with a key path projection would cost many times the comparison it guards.
    @inlinable
    func observe<Value: Sendable, Key: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, Value> & Sendable,
        changesOf changeKey: any KeyPath<Value, Key> & Sendable,
        _ observer: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        let read = KeyPathReader(keyPath)
        let key = KeyPathReader(changeKey)
        return addSubscriber { state in
            let changes = ChangeObserver(read: read, key: key, initial: state, observer: observer)
            return { state in changes.notify(state) }
        }
    }

    /// The state after each action, as a stream; repeats skipped with `isRepeat` (every `states`).
    func states(skippingRepeats isRepeat: (@Sendable (State, State) -> Bool)?) -> StateStream<State> {
        StateStream(handle: self, isRepeat: isRepeat)
    }
}

extension StoreHandle {
    /// The handle of the part of this state at `keyPath`.
    func scoped<Part: Sendable>(_ keyPath: any KeyPath<State, Part> & Sendable) -> ScopedHandle<State, Part, Action> {
        ScopedHandle(parent: self, keyPath: keyPath)
    }

    /// A read-only view of the part of this state at `keyPath`: every `scope(_:)`.
    func scope<Part: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, Part> & Sendable
    ) -> ScopedStore<Part, Action> {
        ScopedStore(handle: scoped(keyPath))
    }

    /// The value at `keyPath`, as a stream without repeats (every `values(of:)`).
    func values<Value: Equatable & Sendable>(
        of keyPath: any KeyPath<State, Value> & Sendable
    ) -> StateStream<Value> {
        StateStream(handle: scoped(keyPath), isRepeat: ==)
    }
}
