/// Reads snapshots and records through declared migrations: the part that recovery and the replay gate share.
struct EvolutionReader<State: Decodable, Action: Decodable> {
    let migrations: JournalMigrations<State, Action>
    /// The reducer version reading (this build's).
    let current: Int
    var decoder = EvolutionDecoder()
    /// Which version wrote each record, once ``planRecords(in:snapshots:)`` ran.
    private(set) var writers = WriterVersionMap(kept: [], snapshots: [])
    /// Records from this sequence on are read as `Action` directly, without looking up their version.
    private(set) var directFrom: UInt64 = 0
    /// How many records were read through adapters.
    private(set) var adaptedRecords = 0

    init(migrations: JournalMigrations<State, Action>, current: Int) {
        self.migrations = migrations
        self.current = current
    }

    /// What reading one snapshot gave.
    enum SnapshotOutcome {
        /// The state, and the version that made the snapshot (another than `current` when it was migrated).
        case loaded(State, version: Int)
        /// Why the snapshot cannot be used (``JournalRecovery/SkippedSnapshot/coveredRecordsExist`` still unset).
        case skipped(JournalRecovery.SkippedSnapshot)
    }

    /// Reads, checks and decodes the snapshot covering `sequence`, migrating it when an older version made it.
    mutating func loadSnapshot(
        covering sequence: UInt64,
        from storage: any JournalStorage,
        concurrently: Bool
    ) -> SnapshotOutcome {
        let snapshot: JournalSnapshot
        do throws(JournalError) {
            snapshot = try storage.readSnapshot(covering: sequence)
        } catch {
            return .skipped(
                skip(
                    sequence,
                    nil,
                    error,
                    remedy: "the snapshot is damaged or unreadable; restore it from a backup if its records are gone"
                )
            )
        }
        let version = snapshot.reducerVersion
        decoder.sequence = sequence
        decoder.lastFailure = nil
        if version == current {
            decoder.concurrently = concurrently
            defer { decoder.concurrently = false }
            do throws(JournalError) {
                let state = try withBytes(snapshot.payload) { bytes throws(JournalError) in
                    try decoder.decode(State.self, from: bytes)
                }
                return .loaded(state, version: version)
            } catch {
                return .skipped(
                    skip(
                        sequence,
                        version,
                        error,
                        remedy: "the state type changed without a new reducer version: raise reducerVersion to "
                            + "\(current + 1) and declare a state migration from version \(current), or make the "
                            + "state's init(from:) tolerant (decodeIfPresent with a default for a new field)"
                    )
                )
            }
        }
        if version > current {
            return .skipped(
                skip(
                    sequence,
                    version,
                    .undecodable(
                        sequence: sequence,
                        description: "the snapshot was made by reducer version \(version), newer than this build's "
                            + "version \(current)"
                    ),
                    remedy: "run a build of reducer version \(version) or later: a build cannot read what a newer "
                        + "version wrote"
                )
            )
        }
        let steps = JournalMigrations<State, Action>.chain(
            migrations.stateSteps,
            readingVersion: version,
            current: current
        )
        guard let first = steps.first else {
            return .skipped(
                skip(
                    sequence,
                    version,
                    .undecodable(
                        sequence: sequence,
                        description: "the snapshot was made by reducer version \(version), this recovery reads "
                            + "version \(current) and declares no state migration from version \(version)"
                    ),
                    remedy: "declare a state migration from version \(version) (JournalMigrations().state(from: "
                        + "\(version), as: <version \(version)'s State>.self) { ... }), or recover with the build of "
                        + "version \(version)"
                )
            )
        }
        var value: Any
        do throws(JournalError) {
            value = try withBytes(snapshot.payload) { bytes throws(JournalError) in
                try first.decode(bytes, &decoder)
            }
        } catch {
            return .skipped(
                skip(
                    sequence,
                    version,
                    error,
                    remedy: "the state migration from version \(first.version) reads \(first.inputName), which "
                        + "does not decode what version \(version) wrote: declare it with that version's state type"
                )
            )
        }
        for step in steps {
            do {
                value = try step.apply(value)[0]
            } catch {
                return .skipped(
                    skip(
                        sequence,
                        version,
                        .undecodable(
                            sequence: sequence,
                            description: "the state migration from version \(step.version) threw: \(error)"
                        ),
                        remedy: "fix the state migration from version \(step.version)"
                    )
                )
            }
        }
        // `chainMismatch(current:)` was checked before reading: the last step produces `State`.
        return .loaded(value as! State, version: version)
    }

    private mutating func skip(
        _ sequence: UInt64,
        _ version: Int?,
        _ error: JournalError,
        remedy: String
    ) -> JournalRecovery.SkippedSnapshot {
        var skipped = JournalRecovery.SkippedSnapshot(sequence: sequence, reducerVersion: version, error: error)
        skipped.decodingFailure = decoder.lastFailure
        skipped.remedy = remedy
        decoder.lastFailure = nil
        return skipped
    }

    /// Finds which version wrote each record and from where every record is read directly.
    mutating func planRecords(
        in storage: any JournalStorage,
        snapshots: [JournalSnapshotVersion]
    ) throws(JournalError) {
        writers = WriterVersionMap(kept: try storage.writerVersions(), snapshots: snapshots)
        let (actionSteps, current) = (migrations.actionSteps, current)
        directFrom = writers.directFrom { version in
            JournalMigrations<State, Action>.chain(actionSteps, readingVersion: version, current: current).isEmpty
        }
    }

    /// The adapters for the records of one version: looked up once per version, not per record.
    private var cached: (version: Int, steps: ArraySlice<JournalMigrations<State, Action>.Step>, direct: Direct?)?

    typealias Direct = JournalMigrations<State, Action>.DirectAdapter<Action>

    /// Decodes a record before ``directFrom``: through the adapters of the version that wrote it, if any apply.
    mutating func readAdapted(
        _ sequence: UInt64,
        _ payload: UnsafeRawBufferPointer,
        _ body: (Action) -> Void
    ) throws(JournalError) {
        let version = writers.version(of: sequence)
        if cached?.version != version {
            let steps = JournalMigrations<State, Action>.chain(
                migrations.actionSteps,
                readingVersion: version,
                current: current
            )
            // One adapter producing `Action`: its typed form, found once.
            let direct = steps.count == 1 ? steps.first?.direct as? Direct : nil
            cached = (version, steps, direct)
        }
        let (steps, direct) = (cached!.steps, cached!.direct)
        decoder.sequence = sequence
        if let direct {
            let actions: [Action]
            do throws(JournalError) {
                actions = try direct(payload, &decoder)
            } catch {
                throw notDecodable(sequence, writtenBy: version, steps: steps)
            }
            adaptedRecords += 1
            for action in actions { body(action) }
            return
        }
        guard let first = steps.first else {
            body(try decodeCurrent(sequence, payload, writtenBy: version))
            return
        }
        var values: [Any]
        do throws(JournalError) {
            values = [try first.decode(payload, &decoder)]
        } catch {
            throw notDecodable(sequence, writtenBy: version, steps: steps)
        }
        for step in steps {
            var next: [Any] = []
            for value in values {
                do {
                    next += try step.apply(value)
                } catch {
                    // Adapters do not throw; `apply` is shared with state steps, which may.
                    throw .undecodable(sequence: sequence, description: "\(error)")
                }
            }
            values = next
        }
        adaptedRecords += 1
        for value in values {
            body(value as! Action)
        }
    }

    /// Decodes a record as `Action`, or throws the failure naming its version, the decoding error and the fix.
    mutating func decodeCurrent(
        _ sequence: UInt64,
        _ payload: UnsafeRawBufferPointer,
        writtenBy version: Int
    ) throws(JournalError) -> Action {
        decoder.sequence = sequence
        do throws(JournalError) {
            return try decoder.decode(Action.self, from: payload)
        } catch {
            throw notDecodable(sequence, writtenBy: version, steps: [])
        }
    }

    /// The failure for a record that does not decode, with what to do.
    private mutating func notDecodable(
        _ sequence: UInt64,
        writtenBy version: Int,
        steps: ArraySlice<JournalMigrations<State, Action>.Step>
    ) -> JournalError {
        let decoding =
            decoder.lastFailure
            ?? JournalDecodingFailure(type: String(reflecting: Action.self), codingPath: "", expected: nil, message: "")
        decoder.lastFailure = nil
        let remedy: String
        if let first = steps.first {
            remedy =
                "the action adapter from version \(first.version) reads \(first.inputName), which does not "
                + "decode what version \(version) wrote: declare it with that version's action type"
        } else if version < current {
            remedy =
                "declare an action adapter from version \(version) (JournalMigrations().actions(from: "
                + "\(version), as: <version \(version)'s Action>.self, to: <the next version's Action>.self) { old in "
                + "[...] }), or recover with the build of version \(version)"
        } else if version == current {
            remedy =
                "the action type changed without a new reducer version: raise reducerVersion to \(current + 1) "
                + "and declare an action adapter from version \(current) with the previous action type"
        } else {
            remedy =
                "the record was written by reducer version \(version), newer than this build's \(current): run "
                + "a build of version \(version) or later (a rollback cannot read a newer version's records)"
        }
        return .notRecoverable(
            JournalRecoveryFailure(
                cause: .recordUndecodable(sequence: sequence, writtenBy: version, decoding: decoding),
                reducerVersion: current,
                skipped: [],
                remedy: remedy
            )
        )
    }
}
