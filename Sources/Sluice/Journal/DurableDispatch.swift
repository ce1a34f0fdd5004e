extension Store {
    /// Dispatches an action, then waits until the journal holds it on stable storage.
    ///
    /// For a request handler that must not acknowledge an action before it would survive a crash, with
    /// `.groupCommit`:
    ///
    /// ```swift
    /// try await store.dispatch(.placeOrder(order), durableIn: journal)
    /// return .accepted
    /// ```
    ///
    /// It waits for ``Journal/durable(through:)`` of the journal's last sequence number when the dispatch
    /// returned, which is at least the action's own (another thread's later action can make it wait for one
    /// more batch).
    ///
    /// - Parameters:
    ///   - action: The action to dispatch.
    ///   - journal: The journal that this store records to.
    /// - Throws: The error that stopped the journal.
    public func dispatch(_ action: Action, durableIn journal: Journal) async throws(JournalError) {
        dispatch(action)
        try await journal.durable(through: journal.lastSequence)
    }
}
