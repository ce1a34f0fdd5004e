// Subscriptions that skip repeats by a change key (`subscribe(to: \.byID, by: \.count)`): they keep the key that the
// previous notification saw, never the value, so they leave a large collection in the state uniquely referenced and
// the reducer's in-place changes do not copy it. See <doc:LargeStates>.

extension Store {
    /// Calls `observer` with the value at `keyPath` after each action that changed its *change key*.
    ///
    /// ```swift
    /// // Holds only the count and the version between notifications, never the dictionary.
    /// let subscription = store.subscribe(to: \.orders.byID, by: \.count) { byID in print(byID.count, "orders") }
    /// let versioned = store.subscribe(to: \.orders, by: \.version) { orders in render(orders) }
    /// ```
    ///
    /// ``subscribe(to:_:)`` compares each value with the one that the previous notification saw, so it keeps that
    /// value. For a large collection that is a second reference to the collection's storage, and the reducer's next
    /// in-place change then copies the whole collection (copy-on-write), on every action. This form keeps only the
    /// key: the value at `changeKey` inside the value (a count, or a version that the reducer bumps with every change
    /// of the collection), compared with the key that the previous notification saw. Choose a key that changes
    /// whenever the value changes in a way you care about: `\.count` misses an update of an existing entry; a
    /// version the reducer bumps misses nothing.
    ///
    /// The observer receives the value itself (a reference to the collection's storage, not a copy of its elements);
    /// if it keeps the value beyond the call, the next change copies again.
    ///
    /// - Parameters:
    ///   - keyPath: The value to observe.
    ///   - changeKey: The key, inside the value, whose changes are notified.
    ///   - observer: Receives the value after each action that changed its key.
    /// - Returns: The subscription; notifications stop when it is cancelled or released.
    @inlinable
    public func subscribe<Value: Sendable, Key: Equatable & Sendable>(
        to keyPath: any KeyPath<State, Value> & Sendable,
        by changeKey: any KeyPath<Value, Key> & Sendable,
        _ observer: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        core.observe(keyPath, changesOf: changeKey, observer)
    }
}

extension ScopedStore {
    /// Calls `observer` with this part of the state after each action that changed its *change key*.
    ///
    /// ```swift
    /// let orders = store.scope(\.orders.byID)
    /// let subscription = orders.subscribe(by: \.count) { byID in print(byID.count, "orders") }
    /// ```
    ///
    /// ``subscribe(_:)`` keeps the value that the previous notification saw, to skip repeats; for a large collection
    /// that makes each in-place change of the reducer copy it. This form keeps only the key; see
    /// ``Store/subscribe(to:by:_:)``.
    ///
    /// - Parameters:
    ///   - changeKey: The key, inside this part, whose changes are notified.
    ///   - observer: Receives this part after each action that changed its key.
    /// - Returns: The subscription; notifications stop when it is cancelled or released.
    public func subscribe<Key: Equatable & Sendable>(
        by changeKey: any KeyPath<State, Key> & Sendable,
        _ observer: @escaping @Sendable (State) -> Void
    ) -> Subscription {
        handle.observe(\State.self, changesOf: changeKey, observer)
    }

    /// Calls `observer` with the value at `keyPath` (inside this part) after each action that changed its *change
    /// key*; see ``Store/subscribe(to:by:_:)``.
    ///
    /// - Parameters:
    ///   - keyPath: The value to observe.
    ///   - changeKey: The key, inside the value, whose changes are notified.
    ///   - observer: Receives the value after each action that changed its key.
    /// - Returns: The subscription; notifications stop when it is cancelled or released.
    public func subscribe<Value: Sendable, Key: Equatable & Sendable>(
        to keyPath: any KeyPath<State, Value> & Sendable,
        by changeKey: any KeyPath<Value, Key> & Sendable,
        _ observer: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        handle.observe(keyPath, changesOf: changeKey, observer)
    }
}
