public import Sluice

extension Store {
    /// Dispatches an action, then waits until the journal holds that action on stable storage.
    ///
    /// For a request handler that must not acknowledge an action before it would survive a crash, with
    /// `.groupCommit`:
    ///
    /// ```swift
    /// try await store.dispatch(.placeOrder(order), durableIn: journal)
    /// return .accepted
    /// ```
    ///
    /// It learns the sequence number that the journal gave this action (or the action a middleware passed on in
    /// its place) right after the reducer handled it, and waits for ``Journal/durable(through:)`` of that number.
    /// An action that the journal did not record is never acknowledged: the call throws instead.
    ///
    /// It blocks the calling thread while another thread runs the store's work, like `dispatch(_:)`; from many
    /// tasks at once, prefer ``send(_:durableIn:)``, which suspends instead.
    ///
    /// - Parameters:
    ///   - action: The action to dispatch.
    ///   - journal: The journal that this store records to.
    /// - Throws: ``JournalError/refused`` when the store is shut down; ``JournalError/closed`` when the journal is
    ///   closed; ``JournalError/notRecorded`` when a middleware dropped the action (or passes it on later); the
    ///   error that stopped the journal; ``JournalError/cancelled`` when the task was cancelled while it waited.
    public func dispatch(_ action: Action, durableIn journal: Journal) async throws(JournalError) {
        let outcome = dispatch(action, reading: { _ in journal.outcomeOfLastRecord() })
        try await waitUntilDurable(outcome, in: journal)
    }

    /// Sends an action, then waits until the journal holds that action on stable storage: the `send` form of
    /// ``dispatch(_:durableIn:)``, which suspends instead of blocking a thread while another thread or task runs
    /// the store's work.
    ///
    /// ```swift
    /// try await store.send(.placeOrder(order), durableIn: journal)
    /// return .accepted
    /// ```
    ///
    /// - Parameters:
    ///   - action: The action to send.
    ///   - journal: The journal that this store records to.
    /// - Throws: As ``dispatch(_:durableIn:)``; also ``JournalError/cancelled`` when the task was cancelled while it
    ///   waited for the store.
    public nonisolated(nonsending) func send(_ action: Action, durableIn journal: Journal) async throws(JournalError) {
        let outcome = await send(action, reading: { _ in journal.outcomeOfLastRecord() })
        if outcome == nil && Task.isCancelled {
            throw .cancelled
        }
        try await waitUntilDurable(outcome, in: journal)
    }

    /// Dispatches an action, reads the state right after the reducer handled it, and returns that reading once the
    /// journal holds the action on stable storage: an acknowledgement that carries its outcome.
    ///
    /// ```swift
    /// let price = try await store.dispatch(.bid(auction, amount), durableIn: journal) { $0.auctions[auction]?.price }
    /// return .accepted(price)
    /// ```
    ///
    /// The reading is taken as `dispatch(_:reading:)` takes it (right after this action, before any later one);
    /// it is returned only if the action is durable, and the call throws in every case where
    /// ``dispatch(_:durableIn:)`` throws.
    ///
    /// - Parameters:
    ///   - action: The action to dispatch.
    ///   - journal: The journal that this store records to.
    ///   - body: Reads the state right after the action; called once, on the store's pipeline.
    /// - Returns: What `body` read.
    /// - Throws: As ``dispatch(_:durableIn:)``.
    public func dispatch<T: Sendable>(
        _ action: Action,
        durableIn journal: Journal,
        reading body: (borrowing State) -> T
    ) async throws(JournalError) -> T {
        let read = dispatch(action, reading: { state in (journal.outcomeOfLastRecord(), body(state)) })
        try await waitUntilDurable(read?.0, in: journal)
        guard let value = read?.1 else { throw journal.reasonNotRecorded(refusedByStore: core.isRefusingDispatches) }
        return value
    }

    /// Sends an action, reads the state right after the reducer handled it, and returns that reading once the
    /// journal holds the action on stable storage: the `send` form of ``dispatch(_:durableIn:reading:)``.
    ///
    /// ```swift
    /// let price = try await store.send(.bid(auction, amount), durableIn: journal) { $0.auctions[auction]?.price }
    /// return .accepted(price)
    /// ```
    ///
    /// - Parameters:
    ///   - action: The action to send.
    ///   - journal: The journal that this store records to.
    ///   - body: Reads the state right after the action; called once, on the store's pipeline.
    /// - Returns: What `body` read.
    /// - Throws: As ``send(_:durableIn:)``.
    public nonisolated(nonsending) func send<T: Sendable>(
        _ action: Action,
        durableIn journal: Journal,
        reading body: @escaping @Sendable (borrowing State) -> T
    ) async throws(JournalError) -> T {
        let read = await send(action, reading: { state in (journal.outcomeOfLastRecord(), body(state)) })
        if read == nil && Task.isCancelled {
            throw .cancelled
        }
        try await waitUntilDurable(read?.0, in: journal)
        guard let value = read?.1 else { throw journal.reasonNotRecorded(refusedByStore: core.isRefusingDispatches) }
        return value
    }

    /// Waits for the durability of the action whose record had `outcome`; `nil` when no action reached the
    /// reducer during the dispatch.
    private nonisolated(nonsending) func waitUntilDurable(
        _ outcome: Result<UInt64, JournalError>?,
        in journal: Journal
    ) async throws(JournalError) {
        switch outcome {
        case .success(let sequence):
            try await journal.durable(through: sequence)
        case .failure(let error):
            throw error
        case nil:
            throw journal.reasonNotRecorded(refusedByStore: core.isRefusingDispatches)
        }
    }
}
