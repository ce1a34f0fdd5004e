public import Sluice

/// The check a service runs in CI before a deploy: can the new build read a recorded journal, and does its reducer
/// keep the invariants on it?
///
/// The gate decodes every snapshot (through the declared state migrations) and every record (through the
/// declared action adapters) of a journal with this build's types, replays the records through this build's
/// reducer from the first state it can start from, checks the invariants after each record, and stops at the
/// first snapshot or record that does not decode, or the first invariant that breaks:
///
/// ```swift
/// let gate = JournalReplayGate(
///     reducerVersion: 3,
///     migrations: counterMigrations,
///     initialState: Counter(),
///     reducer: counterReducer,
///     invariants: [.init("total is never negative") { $0.total >= 0 }]
/// )
/// let report = gate.check(directory: "Tests/Fixtures/counter-journal")
/// #expect(report.failure == nil, "\(report)")
/// ```
///
/// Keep a small journal written by the version in production beside the tests (or copy one from production):
/// the gate then fails the build that cannot read it, before it is deployed, not the first start after the
/// deploy. It reads like ``JournalReplay``: without the writer's lock and without writing; it is stricter than
/// recovery, which may fall back from a snapshot it cannot read to an older one: the gate fails on it.
public struct JournalReplayGate<State: Codable, Action: Codable> {
    /// This build's reducer version.
    public let reducerVersion: Int
    /// How this build reads older versions.
    public let migrations: JournalMigrations<State, Action>
    /// The state before the first recorded action.
    public let initialState: State
    /// This build's reducer.
    public let reducer: Reducer<State, Action>
    /// What must hold after every record.
    public let invariants: [Invariant]

    /// A named check on the state.
    public struct Invariant {
        /// The name the gate reports when the invariant breaks.
        public let name: String
        /// Whether the invariant holds for a state.
        public let holds: (State) -> Bool

        /// Creates an invariant.
        public init(_ name: String, holds: @escaping (State) -> Bool) {
            self.name = name
            self.holds = holds
        }
    }

    /// Creates a gate for this build.
    ///
    /// - Parameters:
    ///   - reducerVersion: This build's reducer version, as the store recovers with.
    ///   - migrations: How this build reads older versions, as the store recovers with.
    ///   - initialState: The state before the first recorded action.
    ///   - reducer: This build's reducer.
    ///   - invariants: What must hold after the starting state and after every record.
    public init(
        reducerVersion: Int = 0,
        migrations: JournalMigrations<State, Action> = JournalMigrations(),
        initialState: State,
        reducer: Reducer<State, Action>,
        invariants: [Invariant] = []
    ) {
        self.reducerVersion = reducerVersion
        self.migrations = migrations
        self.initialState = initialState
        self.reducer = reducer
        self.invariants = invariants
    }

    /// Checks the journal in a local directory (read only; not created if missing).
    public func check(directory: String) -> JournalGateReport {
        check(storage: FileJournalStorage(directory: directory))
    }

    /// Checks a journal on any storage; only its reading requirements are called.
    public func check(storage: any JournalStorage) -> JournalGateReport {
        var report = JournalGateReport()
        do throws(JournalError) {
            try run(storage, &report)
        } catch {
            report.failure = .notReadable(error)
        }
        return report
    }

    private func run(_ storage: any JournalStorage, _ report: inout JournalGateReport) throws(JournalError) {
        try migrations.checkChain(current: reducerVersion)
        var reader = EvolutionReader(migrations: migrations, current: reducerVersion)
        var loaded: [(sequence: UInt64, state: State)] = []
        var versions: [JournalSnapshotVersion] = []
        for sequence in try storage.snapshotSequences() {
            switch reader.loadSnapshot(covering: sequence, from: storage, concurrently: false) {
            case .loaded(let state, let version):
                loaded.append((sequence, state))
                versions.append(JournalSnapshotVersion(sequence: sequence, version: version))
                report.snapshotsChecked += 1
                if version != reducerVersion { report.snapshotsMigrated += 1 }
            case .skipped(let skipped):
                report.failure = .snapshotNotReadable(skipped)
                return
            }
        }
        try reader.planRecords(in: storage, snapshots: versions)
        var start: (sequence: UInt64, state: State) = (0, initialState)
        let hasFirstRecord: Bool
        do throws(JournalError) {
            var first: UInt64?
            try storage.readRecords(after: 0) { sequence, _ throws(JournalError) in
                first = sequence
                throw .closed  // only the first record's sequence is wanted
            }
            hasFirstRecord = first == nil || first == 1
        } catch .closed {
            hasFirstRecord = true
        } catch .missingRecords {
            hasFirstRecord = false
        }
        if !hasFirstRecord {
            // Compacted: start from the oldest snapshot (each one decoded above).
            guard let oldest = loaded.last else { throw .missingRecords(expected: 1, file: "the journal") }
            start = oldest
        }
        report.firstSequence = start.sequence
        report.lastSequence = start.sequence
        var state = start.state
        if let broken = invariants.first(where: { !$0.holds(state) }) {
            report.failure = .invariantBroken(name: broken.name, sequence: start.sequence)
            return
        }
        let reduce = reducer.reduce
        var failure: JournalGateFailure?
        do throws(JournalError) {
            try storage.readRecords(after: start.sequence) { sequence, payload throws(JournalError) in
                var reduced = 0
                try reader.readAdapted(sequence, payload) { action in
                    reduce(&state, action)
                    reduced += 1
                }
                report.recordsRead += 1
                report.actionsReduced += reduced
                report.lastSequence = sequence
                if let broken = invariants.first(where: { !$0.holds(state) }) {
                    failure = .invariantBroken(name: broken.name, sequence: sequence)
                    throw .closed  // stop reading
                }
            }
        } catch .closed where failure != nil {
        } catch .notRecoverable(let recordFailure) {
            failure = .recordNotReadable(recordFailure)
        }
        report.recordsAdapted = reader.adaptedRecords
        report.failure = failure
    }
}

/// What ``JournalReplayGate`` checked, and the first thing that failed.
public struct JournalGateReport: Sendable, Equatable, CustomStringConvertible {
    /// The snapshots decoded (each one in the journal, unless one failed).
    public var snapshotsChecked = 0
    /// How many of them were of an older version, read through a state migration.
    public var snapshotsMigrated = 0
    /// The sequence number of the state the replay started from: 0, or the oldest snapshot when the records
    /// before it were compacted away.
    public var firstSequence: UInt64 = 0
    /// The last record replayed.
    public var lastSequence: UInt64 = 0
    /// The records decoded and replayed.
    public var recordsRead = 0
    /// How many of them were read through action adapters.
    public var recordsAdapted = 0
    /// The actions reduced (an adapted record may stand for several, or none).
    public var actionsReduced = 0
    /// The first failure, `nil` when the gate passes.
    public var failure: JournalGateFailure?

    /// Whether the build can read the journal and keeps the invariants on it.
    public var passed: Bool { failure == nil }

    /// Creates an empty report.
    public init() {}

    public var description: String {
        let summary =
            "\(snapshotsChecked) snapshot(s) decoded (\(snapshotsMigrated) migrated), records \(firstSequence + 1)"
            + "...\(lastSequence) replayed (\(recordsRead) read, \(recordsAdapted) adapted, \(actionsReduced) "
            + "actions reduced)"
        guard let failure else { return "passed: " + summary }
        return "failed: \(failure); before that: " + summary
    }
}

/// Why ``JournalReplayGate`` failed.
public enum JournalGateFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// A snapshot does not decode, or no declared migration reads its version.
    case snapshotNotReadable(JournalRecovery.SkippedSnapshot)
    /// A record does not decode through the declared adapters (the failure names it, its version and the fix).
    case recordNotReadable(JournalRecoveryFailure)
    /// An invariant does not hold after the record with this sequence number (0: the initial state).
    case invariantBroken(name: String, sequence: UInt64)
    /// The journal could not be read (a damaged record, missing records, an I/O error).
    case notReadable(JournalError)

    public var description: String {
        switch self {
        case .snapshotNotReadable(let skipped):
            "the snapshot at \(skipped.sequence) (\(skipped.reducerVersion.map { "reducer version \($0)" } ?? "unreadable")) "
                + "cannot be read: \(skipped.reason); fix: \(skipped.remedy)"
        case .recordNotReadable(let failure):
            failure.description
        case .invariantBroken(let name, let sequence):
            "the invariant \"\(name)\" does not hold after sequence \(sequence)"
        case .notReadable(let error):
            "the journal cannot be read: \(error)"
        }
    }
}
