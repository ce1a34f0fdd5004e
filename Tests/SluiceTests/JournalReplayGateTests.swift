import Sluice
import SluiceJournal
import SluiceReplay
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The replay gate: version 1's journal (compacted) checked by the builds of versions 2 and 3, with and without
/// the declarations they need.
@Suite struct JournalReplayGateTests {
    static let actions = counterActionsV1(3250)

    @Test func theGateFailsOnAJournalTheBuildCannotRead() async throws {
        try await withTemporaryDirectory { directory in
            try writeCounterV1(Self.actions, to: directory)
            // No migration: version 1's snapshots cannot be read, and the records before them are gone.
            let withoutMigrations = JournalReplayGate(
                reducerVersion: 2,
                initialState: CounterV2(),
                reducer: counterReducerV2
            ).check(directory: directory)
            guard case .snapshotNotReadable(let skipped) = withoutMigrations.failure else {
                Issue.record("expected an unreadable snapshot, got \(withoutMigrations)")
                return
            }
            #expect(skipped.sequence == 3000)
            #expect(skipped.remedy.contains("declare a state migration from version 1"))

            // The state migrated but the renamed case not adapted: the first record after the snapshot fails.
            let withoutAdapter = JournalReplayGate(
                reducerVersion: 2,
                migrations: JournalMigrations<CounterV2, CounterActionV2>()
                    .state(from: 1, as: CounterV1.self) { CounterV2(count: $0.count, total: $0.total) },
                initialState: CounterV2(),
                reducer: counterReducerV2
            ).check(directory: directory)
            guard case .recordNotReadable(let failure) = withoutAdapter.failure,
                case .recordUndecodable(let sequence, let writtenBy, _) = failure.cause
            else {
                Issue.record("expected an unreadable record, got \(withoutAdapter)")
                return
            }
            // The gate starts from the oldest snapshot (2,000): the records before it were compacted away.
            #expect(sequence == 2001)
            #expect(writtenBy == 1)
            #expect(withoutAdapter.description.hasPrefix("failed: "))
        }
    }

    @Test func theGatePassesOnAJournalTheBuildCanRead() async throws {
        try await withTemporaryDirectory { directory in
            try writeCounterV1(Self.actions, to: directory)
            let report = JournalReplayGate(
                reducerVersion: 3,
                migrations: migrationsToV3,
                initialState: CounterV3(),
                reducer: counterReducerV3,
                invariants: [.init("count is never negative") { $0.count >= 0 }]
            ).check(directory: directory)
            #expect(report.passed, "\(report)")
            #expect(report.snapshotsChecked == 2)
            #expect(report.snapshotsMigrated == 2)
            #expect(report.firstSequence == 2000)
            #expect(report.lastSequence == 3250)
            #expect(report.recordsRead == 1250)
            #expect(report.recordsAdapted == 1250)
            // Every ping is dropped, every reset is read as two actions.
            let slice = Self.actions[2000..<3250]
            let pings = slice.filter { $0 == .ping }.count
            let resets = slice.filter { $0 == .reset }.count
            #expect(report.actionsReduced == 1250 - pings + resets)
        }
    }

    @Test func theGateNamesTheFirstRecordAfterWhichAnInvariantBreaks() async throws {
        try await withTemporaryDirectory { directory in
            try writeCounterV1(Self.actions, to: directory)
            let report = JournalReplayGate(
                reducerVersion: 1,
                initialState: CounterV1(),
                reducer: counterReducerV1,
                invariants: [.init("fewer than 100 adds since a reset") { $0.count < 100 }]
            ).check(directory: directory)
            // From the snapshot at 2,000 (a reset at 2,000): the 100th add after it.
            var state = CounterV1()
            var breaks: UInt64 = 0
            for (index, action) in Self.actions.enumerated().dropFirst(2000) {
                counterReducerV1.reduce(&state, action)
                if state.count >= 100 {
                    breaks = UInt64(index + 1)
                    break
                }
            }
            #expect(report.failure == .invariantBroken(name: "fewer than 100 adds since a reset", sequence: breaks))
        }
    }

    @Test func theReplayCommandRunsTheGate() async throws {
        try await withTemporaryDirectory { directory in
            try writeCounterV1(Self.actions, to: directory)
            func gate(_ migrations: JournalMigrations<CounterV3, CounterActionV3>) -> (Int32, [String]) {
                var lines: [String] = []
                let status = SluiceReplay.run(
                    arguments: [directory, "--gate"],
                    reducerVersion: 3,
                    migrations: migrations,
                    initialState: CounterV3(),
                    reducer: counterReducerV3,
                    output: { lines.append($0) },
                    errorOutput: { lines.append($0) }
                )
                return (status, lines)
            }
            let passing = gate(migrationsToV3)
            #expect(passing.0 == 0)
            #expect(passing.1.first?.contains("gate passed") == true, "\(passing.1)")
            let failing = gate(JournalMigrations())
            #expect(failing.0 == 1)
            #expect(failing.1.first?.contains("declare a state migration from version 1") == true, "\(failing.1)")
        }
    }
}
