public import Sluice

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Store where State: Codable, Action: Codable {
    /// Rebuilds a store from its journal, then records to that journal.
    ///
    /// Loads the newest snapshot that passes its checksum and decodes (falling back to the one before, or to
    /// `initialState`), replays every later action through `reducer` alone (no middleware, no side effects, no
    /// subscribers: replaying effects would repeat them), then creates the store with `middleware` followed by
    /// ``Sluice/Middlewares/journal(_:durability:)``, so that new actions continue the sequence. With `.groupCommit`
    /// the journal records in the reducer instead, under the store's lock (the same actions in the same order),
    /// which keeps a dispatch at one lock and one unlock more than without a journal (see <doc:Durability>).
    ///
    /// ```swift
    /// let journal = try Journal(directory: dataDirectory)
    /// let store = try Store<Counter, CounterAction>(
    ///     recoveringFrom: journal,
    ///     durability: .everyAction,
    ///     initialState: Counter(),
    ///     reducer: counterReducer
    /// )
    /// print("recovered", journal.recovery?.replayedActions ?? 0, "actions")
    /// ```
    ///
    /// - Parameters:
    ///   - journal: The journal to recover from and record to; an empty one starts from `initialState`.
    ///   - durability: The journal middleware's durability.
    ///   - reducerVersion: Snapshots made by another reducer version are skipped.
    ///   - initialState: The state before the first recorded action.
    ///   - reducer: The reducer that produced the recorded states.
    ///   - middleware: The middleware for new actions; the journal records what comes out of it (with
    ///     `.groupCommit` in the reducer itself, under the store's lock; otherwise in a journal middleware added
    ///     after these).
    ///   - dependencies: The store's services (see Sluice's Services and dependencies article); by default those of
    ///     the `withStoreDependencies(_:operation:)` region the store is created in, as for every store.
    ///   - onEffectError: The store's error channel (see `init(initialState:reducer:middleware:onEffectError:)`),
    ///     which also receives the error that stops the journal, as an `EffectFailure` from
    ///     `EffectFailure.Source.journal`.
    ///   - instrumentation: Called after the work of each new action with what it cost; see
    ///     `StoreInstrumentation`. Replayed actions are not measured.
    /// - Throws: A ``JournalError`` naming the file and offset of a damaged record, or the sequence of a record
    ///   that does not decode. Nothing is skipped silently.
    @inlinable
    public convenience init(
        recoveringFrom journal: Journal,
        durability: JournalDurability,
        reducerVersion: Int = 0,
        initialState: State,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = [],
        dependencies: StoreDependencies = StoreDependencies.current,
        onEffectError: (@Sendable (EffectFailure) -> Void)? = nil,
        instrumentation: StoreInstrumentation<Action>? = nil
    ) throws(JournalError) {
        let (state, _) = try Self.recover(
            from: journal,
            reducerVersion: reducerVersion,
            initialState: initialState,
            reducer: reducer
        )
        guard case .groupCommit(let interval) = durability else {
            self.init(
                initialState: state,
                reducer: reducer,
                middleware: middleware + [Middlewares.journal(journal, durability: durability)],
                dependencies: dependencies,
                onEffectError: onEffectError,
                instrumentation: instrumentation
            )
            return
        }
        if interval < .zero {
            usageError("Middlewares.journal: the group commit interval must not be negative, got \(interval).")
        }
        // `.groupCommit` records in the reducer, under the store's lock, instead of in a last middleware: the
        // same actions in the same order, without the cost of a middleware chain (a store without middleware
        // reduces with one lock and one unlock). Made here, in the caller's module, so that the append is
        // specialized for `Action`.
        let buffer = journal.attach(durability, actionType: Action.self, inReducer: true)
        let reduce = reducer.reduce
        self.init(
            initialState: state,
            reducer: Reducer(mutating: { state, action in
                if buffer.append(action) {
                    reduce(&state, action)
                }
            }),
            middleware: middleware,
            dependencies: dependencies,
            onEffectError: onEffectError,
            instrumentation: instrumentation
        )
        journal.report(to: self)
    }

    /// Rebuilds the state that a journal records, without creating a store.
    ///
    /// The same recovery as ``init(recoveringFrom:durability:reducerVersion:initialState:reducer:middleware:dependencies:onEffectError:instrumentation:)``;
    /// use it to inspect a journal, or to check it against another replay.
    public static func recover(
        from journal: Journal,
        reducerVersion: Int = 0,
        initialState: State,
        reducer: Reducer<State, Action>
    ) throws(JournalError) -> (state: State, recovery: JournalRecovery) {
        let storage = journal.storage
        let coder = JournalCoder()
        var scratch = Data()
        var state = initialState
        var covered: UInt64 = 0
        var skipped: [JournalRecovery.SkippedSnapshot] = []
        for sequence in try storage.snapshotSequences() {
            // A store's state is `Sendable`: its large dictionaries of structs may be decoded on several threads.
            let load = loadSnapshot(
                State.self,
                covering: sequence,
                from: storage,
                reducerVersion: reducerVersion,
                coder: coder,
                scratch: &scratch,
                concurrently: true
            )
            switch load {
            case .loaded(let loaded):
                state = loaded
                covered = sequence
            case .otherVersion(let version):
                skipped.append(
                    JournalRecovery.SkippedSnapshot(
                        sequence: sequence,
                        reducerVersion: version,
                        error: .undecodable(
                            sequence: sequence,
                            description: "the snapshot was made by reducer version \(version), this recovery reads "
                                + "version \(reducerVersion)"
                        )
                    )
                )
                continue
            case .unusable(let error, let version):
                skipped.append(
                    JournalRecovery.SkippedSnapshot(sequence: sequence, reducerVersion: version, error: error)
                )
                continue
            }
            break
        }
        var replayed = 0
        var last = covered
        let reduce = reducer.reduce
        // A snapshot of the last action leaves nothing to replay: the records it covers are not read again (opening
        // the journal checked the last segment, and recovery never reads the segments before the one that holds the
        // action after the snapshot).
        let expectedLast = journal.lastSequence
        /// The error for records missing after `last`: when a newer snapshot was skipped, the records it covered are
        /// gone, and the error says which snapshot, why it was skipped and what to do.
        func recordsMissing(_ missing: JournalError) -> JournalError {
            guard let newest = skipped.first else { return missing }
            return .undecodable(
                sequence: newest.sequence,
                description: "recovery skipped the snapshot at sequence \(newest.sequence) (\(newest.error)) and "
                    + "the records it covers are gone (sequence \(last + 1) is missing; the journal ends at "
                    + "\(expectedLast)); recover with the reducer version and types that wrote that snapshot, "
                    + "or restore the missing segments"
                    + (skipped.count > 1 ? "; \(skipped.count - 1) older snapshot(s) were skipped too" : "")
            )
        }
        if covered < expectedLast {
            do throws(JournalError) {
                try storage.readRecords(after: covered) { sequence, payload throws(JournalError) in
                    let action = try coder.decode(Action.self, from: payload, scratch: &scratch, sequence: sequence)
                    reduce(&state, action)
                    replayed += 1
                    last = sequence
                }
            } catch .missingRecords(let expected, let file) {
                throw recordsMissing(.missingRecords(expected: expected, file: file))
            }
        }
        if last != expectedLast {
            throw recordsMissing(.missingRecords(expected: last + 1, file: "the journal (it ends at \(expectedLast))"))
        }
        let report = JournalRecovery(
            snapshotSequence: covered,
            skippedSnapshots: skipped.map(\.sequence),
            skipped: skipped,
            replayedActions: replayed,
            lastSequence: last
        )
        journal.didRecover(report)
        return (state, report)
    }
}

/// What reading one snapshot found: its state, or why it cannot be used.
enum SnapshotLoad<State> {
    /// The snapshot passed its checksum, was made by the expected reducer version, and decoded.
    case loaded(State)
    /// The snapshot is intact but was made by another reducer version.
    case otherVersion(Int)
    /// The snapshot failed its checksum, could not be read, or did not decode; with its reducer version when it
    /// was read.
    case unusable(JournalError, reducerVersion: Int?)
}

/// Reads and checks the snapshot that covers `sequence`, without decoding it: its payload when it passes its
/// checksum and was made by `reducerVersion`.
func readSnapshotPayload(
    covering sequence: UInt64,
    from storage: any JournalStorage,
    reducerVersion: Int
) -> SnapshotLoad<[UInt8]> {
    do throws(JournalError) {
        let snapshot = try storage.readSnapshot(covering: sequence)
        guard snapshot.reducerVersion == reducerVersion else {
            return .otherVersion(snapshot.reducerVersion)
        }
        return .loaded(snapshot.payload)
    } catch {
        return .unusable(error, reducerVersion: nil)
    }
}

/// Decodes a snapshot's payload, or says why it does not decode (the decoding error, with its coding path).
func decodeSnapshot<State: Decodable>(
    _ type: State.Type,
    _ payload: [UInt8],
    sequence: UInt64,
    coder: JournalCoder,
    scratch: inout Data,
    concurrently: Bool = false
) -> Result<State, JournalError> {
    Result { () throws(JournalError) in
        try withBytes(payload) { bytes throws(JournalError) in
            try coder.decode(State.self, from: bytes, scratch: &scratch, sequence: sequence, concurrently: concurrently)
        }
    }
}

/// Reads, checks and decodes the snapshot that covers `sequence`: the step that recovery and replay share.
func loadSnapshot<State: Decodable>(
    _ type: State.Type,
    covering sequence: UInt64,
    from storage: any JournalStorage,
    reducerVersion: Int,
    coder: JournalCoder,
    scratch: inout Data,
    concurrently: Bool = false
) -> SnapshotLoad<State> {
    switch readSnapshotPayload(covering: sequence, from: storage, reducerVersion: reducerVersion) {
    case .loaded(let payload):
        switch decodeSnapshot(
            State.self,
            payload,
            sequence: sequence,
            coder: coder,
            scratch: &scratch,
            concurrently: concurrently
        ) {
        case .success(let state): return .loaded(state)
        case .failure(let error): return .unusable(error, reducerVersion: reducerVersion)
        }
    case .otherVersion(let version):
        return .otherVersion(version)
    case .unusable(let error, let version):
        return .unusable(error, reducerVersion: version)
    }
}
