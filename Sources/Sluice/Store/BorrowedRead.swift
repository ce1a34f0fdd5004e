// Borrowed reads: `read(_:)` on `Store`, `ScopedStore` and `MiddlewareAPI`, which run a closure on the state in place,
// under the store's lock, instead of returning a copy of it. See <doc:LargeStates>.

extension StoreCore {
    /// Calls `body` with a pointer to the state, with the lock held; the one implementation behind every `read(_:)`.
    ///
    /// - Parameters:
    ///   - tracked: Whether Observation tracks the read, as it does a read of ``Store/state``: the read is registered
    ///     with the calling thread's tracking, and the next reduced action reports a change.
    ///   - body: Must not call this store (see ``Store/read(_:)``); the pointer is valid only during the call.
    @inlinable
    package func withStatePointer<T, E: Error>(
        tracked: Bool,
        _ body: (UnsafePointer<State>) throws(E) -> T
    ) throws(E) -> T {
        if tracked {
            observation.access()
        }
        lock.lock()
        defer { lock.unlock() }
        if tracked {
            observedSinceLastChange = true
            nobodyToNotify = false
        }
        return try body(statePointer)
    }
}

extension Store {
    /// Runs `body` on the current state in place, under the store's lock, and returns its result.
    ///
    /// ```swift
    /// let order = store.read { $0.orders.byID[id] }       // costs what the lookup costs
    /// let pending = store.read { $0.orders.pending.count }
    /// ```
    ///
    /// Unlike ``state``, which returns a copy of the whole state, `read` lends the state to `body` without copying it.
    /// That matters for a large collection in the state: a copy that a reader still holds when the next action
    /// changes the collection in place makes the reducer copy the whole collection (copy-on-write), while a borrowed
    /// read leaves nothing behind. Return only the part you need; returning a collection from `body` copies that
    /// collection's reference out, with the same effect as ``state`` on that collection. See <doc:LargeStates>.
    ///
    /// `body` runs with the store's lock held, so it sees the state between two reducer calls, and every dispatch
    /// (from any thread) waits until it returns: keep it short. It **must not call this store**: no `dispatch`,
    /// `state`, `read`, `subscribe` or `scope` reads of the same store inside `body`. In a debug build that stops the
    /// program with a message; in a release build the thread deadlocks (the lock is not recursive). Another store
    /// may be read.
    ///
    /// Observation tracks `read` as it tracks ``state``: a `read` inside `withObservationTracking` (or a SwiftUI
    /// view's `body`) is told about the next action that the store reduces, and after a `read` the next reduced
    /// action reports to Observation (see <doc:ConsumingState>). ``MiddlewareAPI/read(_:)`` is the untracked form.
    ///
    /// - Parameter body: Receives the state, borrowed; its result is returned.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    @inlinable
    public func read<T, E: Error>(_ body: (borrowing State) throws(E) -> T) throws(E) -> T {
        try core.read(tracked: true, body)
    }
}

extension ScopedStore {
    /// Runs `body` on the current value of this part of the state in place, under the store's lock, and returns its
    /// result.
    ///
    /// ```swift
    /// let orders = store.scope(\.orders)
    /// let order = orders.read { $0.byID[id] }
    /// ```
    ///
    /// The part is borrowed where it lives in the store's state when the scope's key paths are chains of stored
    /// properties (`\.orders`, `\.orders.byID`): neither the state nor the part is copied. A key path through a
    /// computed property produces the part, which is then a copy, released before `read` returns. The rules of
    /// ``Store/read(_:)`` apply: `body` holds the store's lock and must not call the store; Observation tracks the
    /// read as a read of the whole store's state.
    ///
    /// - Parameter body: Receives this part of the state, borrowed; its result is returned.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func read<T, E: Error>(_ body: (borrowing State) throws(E) -> T) throws(E) -> T {
        try handle.read(tracked: true, body)
    }
}

extension MiddlewareAPI {
    /// Runs `body` on the current state in place, under the store's lock, and returns its result.
    ///
    /// The borrowed form of ``state``: nothing is copied (see ``Store/read(_:)``). As with ``state``, Observation
    /// does not track it. After the store is gone, `body` receives the last state.
    ///
    /// `body` holds the store's lock and must not call the store (no `dispatch`, `state` or `read` inside it): in a
    /// debug build that stops the program with a message, in a release build it deadlocks.
    ///
    /// - Parameter body: Receives the state, borrowed; its result is returned.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    @inlinable
    public func read<T, E: Error>(_ body: (borrowing State) throws(E) -> T) throws(E) -> T {
        try core.read(tracked: false, body)
    }
}
