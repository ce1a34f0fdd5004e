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
    /// `initialState`; a snapshot of an older `reducerVersion` through the state migrations of `migrations`), replays
    /// every later action (an older version's records through its action adapters) through `reducer` alone (no middleware, no side effects, no
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
    ///   - reducerVersion: This build's reducer version: raise it with each deploy that changes `State` or
    ///     `Action`, and declare in `migrations` how to read the previous version. Snapshots of another version
    ///     that no migration reads are skipped; the store keeps this version with the records it writes.
    ///   - migrations: How to read the snapshots and records of older versions (see ``JournalMigrations``); a
    ///     migrated state is written back as a snapshot of this version, once.
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
    /// - Throws: A ``JournalError`` naming the file and offset of a damaged record, or
    ///   ``JournalError/notRecoverable(_:)`` naming a record that does not decode or the snapshots skipped with
    ///   their records gone, why each was skipped and what to do. Nothing is skipped silently.
    @inlinable
    public convenience init(
        recoveringFrom journal: Journal,
        durability: JournalDurability,
        reducerVersion: Int = 0,
        migrations: JournalMigrations<State, Action> = JournalMigrations(),
        initialState: State,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = [],
        dependencies: StoreDependencies = StoreDependencies.current,
        onEffectError: (@Sendable (EffectFailure) -> Void)? = nil,
        instrumentation: StoreInstrumentation<Action>? = nil
    ) throws(JournalError) {
        let state = try Self.recoverForWriting(
            from: journal,
            reducerVersion: reducerVersion,
            migrations: migrations,
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
    /// The same recovery as ``init(recoveringFrom:durability:reducerVersion:migrations:initialState:reducer:middleware:dependencies:onEffectError:instrumentation:)``,
    /// which writes nothing: a migrated snapshot is not written back. Use it to inspect a journal, or to check it
    /// against another replay.
    ///
    /// - Parameters:
    ///   - journal: The journal to read.
    ///   - reducerVersion: This build's reducer version.
    ///   - migrations: How to read the snapshots and records of older versions.
    ///   - initialState: The state before the first recorded action.
    ///   - reducer: The reducer that replays the records.
    /// - Throws: ``JournalError/notRecoverable(_:)`` when snapshots had to be skipped and the records they cover
    ///   are gone, or when a record does not decode, naming each skipped snapshot and what to do; an error of the
    ///   storage naming the file and offset of a damaged record.
    public static func recover(
        from journal: Journal,
        reducerVersion: Int = 0,
        migrations: JournalMigrations<State, Action> = JournalMigrations(),
        initialState: State,
        reducer: Reducer<State, Action>
    ) throws(JournalError) -> (state: State, recovery: JournalRecovery) {
        let outcome = try recoverReading(
            from: journal,
            reducerVersion: reducerVersion,
            migrations: migrations,
            initialState: initialState,
            reducer: reducer
        )
        return (outcome.state, outcome.recovery)
    }

    /// Recovers for a store that will write to the journal: as ``recover(from:reducerVersion:migrations:initialState:reducer:)``,
    /// then keeps the version that writes from here on, and writes a migrated state back as a snapshot of this
    /// version, so that the next start neither migrates nor adapts again.
    @usableFromInline
    static func recoverForWriting(
        from journal: Journal,
        reducerVersion: Int,
        migrations: JournalMigrations<State, Action>,
        initialState: State,
        reducer: Reducer<State, Action>
    ) throws(JournalError) -> State {
        let outcome = try recoverReading(
            from: journal,
            reducerVersion: reducerVersion,
            migrations: migrations,
            initialState: initialState,
            reducer: reducer
        )
        let next = outcome.recovery.lastSequence + 1
        if outcome.nextWriterVersion != reducerVersion {
            try journal.storage.recordWriterVersion(
                JournalWriterVersion(firstSequence: next, reducerVersion: reducerVersion)
            )
        }
        if outcome.recovery.migratedFrom != nil {
            // At the last recovered record: it holds the migrated snapshot and the records replayed after it. The
            // snapshots before it stay (a rollback can still start from an old version's snapshot and records);
            // the next `Journal.snapshot` compacts as usual.
            try journal.storage.writeSnapshot(
                JournalSnapshot(
                    sequence: outcome.recovery.lastSequence,
                    reducerVersion: reducerVersion,
                    payload: try JournalCoder().encode(outcome.state)
                )
            )
        }
        return outcome.state
    }

    /// What ``recoverReading(from:reducerVersion:migrations:initialState:reducer:)`` found.
    struct RecoveryOutcome {
        var state: State
        var recovery: JournalRecovery
        /// The version that the next record would count as written by, without a new writer version.
        var nextWriterVersion: Int
    }

    static func recoverReading(
        from journal: Journal,
        reducerVersion: Int,
        migrations: JournalMigrations<State, Action>,
        initialState: State,
        reducer: Reducer<State, Action>
    ) throws(JournalError) -> RecoveryOutcome {
        let storage = journal.storage
        let expectedLast = journal.lastSequence
        try migrations.checkChain(current: reducerVersion)
        var reader = EvolutionReader(migrations: migrations, current: reducerVersion)
        var state = initialState
        var covered: UInt64 = 0
        var migratedFrom: Int?
        var skipped: [JournalRecovery.SkippedSnapshot] = []
        var versions: [JournalSnapshotVersion] = []
        for sequence in try storage.snapshotSequences() {
            // A store's state is `Sendable`: its large dictionaries of structs may be decoded on several threads.
            switch reader.loadSnapshot(covering: sequence, from: storage, concurrently: true) {
            case .loaded(let loaded, let version):
                state = loaded
                covered = sequence
                migratedFrom = version == reducerVersion ? nil : version
                versions.append(JournalSnapshotVersion(sequence: sequence, version: version))
            case .skipped(let snapshot):
                skipped.append(snapshot)
                if let version = snapshot.reducerVersion {
                    versions.append(JournalSnapshotVersion(sequence: sequence, version: version))
                }
                continue
            }
            break
        }
        try reader.planRecords(in: storage, snapshots: versions)
        var replayed = 0
        var last = covered
        let reduce = reducer.reduce
        /// The failure for records missing after `last`: names every skipped snapshot, whether its records exist,
        /// and what to do.
        func recordsMissing(_ missing: JournalError) -> JournalError {
            guard !skipped.isEmpty else { return missing }
            let expected = last + 1
            for index in skipped.indices {
                skipped[index].coveredRecordsExist = skipped[index].sequence < expected
            }
            let remedies = skipped.filter { !$0.coveredRecordsExist }.map(\.remedy).filter { !$0.isEmpty }
            return .notRecoverable(
                JournalRecoveryFailure(
                    cause: .recordsMissing(expected: expected, lastSequence: expectedLast),
                    reducerVersion: reducerVersion,
                    skipped: skipped,
                    remedy: (remedies.first ?? "restore the missing segments from a backup")
                        + "; recovery does not start from the initial state with records missing, and removes "
                        + "nothing"
                )
            )
        }
        // A snapshot of the last action leaves nothing to replay: the records it covers are not read again (opening
        // the journal checked the last segment, and recovery never reads the segments before the one that holds the
        // action after the snapshot).
        if covered < expectedLast {
            let coder = JournalCoder()
            var scratch = Data()
            let directFrom = reader.directFrom
            do throws(JournalError) {
                try storage.readRecords(after: covered) { sequence, payload throws(JournalError) in
                    if _fastPath(sequence >= directFrom) {
                        // This version's records: the same decoding as without migrations.
                        let action: Action
                        do throws(JournalError) {
                            action = try coder.decode(Action.self, from: payload, scratch: &scratch, sequence: sequence)
                        } catch {
                            // Decoded again, to report the cause (`decodeCurrent` throws it with the path and type).
                            action = try reader.decodeCurrent(
                                sequence,
                                payload,
                                writtenBy: reader.writers.version(of: sequence)
                            )
                        }
                        reduce(&state, action)
                    } else {
                        try reader.readAdapted(sequence, payload) { action in reduce(&state, action) }
                    }
                    replayed += 1
                    last = sequence
                }
            } catch .missingRecords(let expected, let file) {
                throw recordsMissing(.missingRecords(expected: expected, file: file))
            } catch .notRecoverable(var failure) {
                for index in skipped.indices {
                    skipped[index].coveredRecordsExist = skipped[index].sequence <= last
                }
                failure.skipped = skipped
                throw .notRecoverable(failure)
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
            lastSequence: last,
            migratedFrom: migratedFrom,
            adaptedRecords: reader.adaptedRecords
        )
        journal.didRecover(report)
        return RecoveryOutcome(
            state: state,
            recovery: report,
            nextWriterVersion: reader.writers.version(of: last + 1)
        )
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
