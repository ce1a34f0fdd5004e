import Sluice
import SluiceJournal
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The rows of the issue "Evolving a journaled service": version 1 writes 3,000 actions with a snapshot every 1,000
/// into segments of 4 KiB (so compaction removes the early records), then 250 more; version 2 starts on the same
/// directory with one change. Each change recovers once declared, and fails with its cause and fix when not.
@Suite struct JournalEvolutionTests {
    static let actions = counterActionsV1(3250)

    /// Version 1's state after its first `count` actions.
    static func stateV1(after count: Int) -> CounterV1 {
        var state = CounterV1()
        for action in actions.prefix(count) { counterReducerV1.reduce(&state, action) }
        return state
    }

    /// Version 2's state: version 1's snapshot at 3,000 migrated, then the rest adapted and replayed.
    static var expectedV2: CounterV2 {
        let old = stateV1(after: 3000)
        var state = CounterV2(count: old.count, total: old.total, max: 0)
        for action in actions.dropFirst(3000) { counterReducerV2.reduce(&state, adaptToV2(action)) }
        return state
    }

    static func writeV1(_ directory: String) throws {
        try writeCounterV1(actions, to: directory)
        // Compaction removed the records before the snapshot at 2,000: only a migration reaches the state.
        let segments = try journalFiles(in: directory, prefix: "segment-")
        #expect(!segments.isEmpty)
        #expect(!segments.contains { $0.hasSuffix("segment-00000000000000000001.log") })
    }

    static func recover<State: Codable & Sendable, Action: Codable & Sendable>(
        _ directory: String,
        version: Int,
        migrations: JournalMigrations<State, Action> = JournalMigrations(),
        initialState: State,
        reducer: Reducer<State, Action>
    ) throws(JournalError) -> (state: State, recovery: JournalRecovery) {
        let journal = try Journal(directory: directory)
        defer { journal.close() }
        return try Store<State, Action>.recover(
            from: journal,
            reducerVersion: version,
            migrations: migrations,
            initialState: initialState,
            reducer: reducer
        )
    }

    /// The failure a recovery throws, or an issue when it does not throw one.
    static func failure(_ body: () throws(JournalError) -> Void) -> JournalRecoveryFailure? {
        do throws(JournalError) {
            try body()
            Issue.record("recovery did not fail")
        } catch .notRecoverable(let failure) {
            return failure
        } catch {
            Issue.record("expected notRecoverable, got \(error)")
        }
        return nil
    }

    // MARK: Row 1: nothing but `reducerVersion: 2`

    @Test func aNewReducerVersionAloneFailsNamingTheSnapshotAndTheFix() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            let failure = Self.failure { () throws(JournalError) in
                _ = try Self.recover(directory, version: 2, initialState: CounterV1(), reducer: counterReducerV1)
            }
            let found = try #require(failure)
            #expect(found.cause == .recordsMissing(expected: 1, lastSequence: 3250))
            #expect(found.skipped.map(\.sequence) == [3000, 2000])
            #expect(found.skipped.allSatisfy { $0.reducerVersion == 1 && !$0.coveredRecordsExist })
            #expect(found.description.contains("the snapshot at 3000 (reducer version 1)"))
            #expect(found.description.contains("declares no state migration from version 1"))
            #expect(found.remedy.contains("declare a state migration from version 1"))
            // Nothing was removed: version 1 still recovers.
            let again = try Self.recover(directory, version: 1, initialState: CounterV1(), reducer: counterReducerV1)
            #expect(again.state == Self.stateV1(after: 3250))
        }
    }

    @Test func aNewReducerVersionRecoversWithAnIdentityMigration() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            let migrations = JournalMigrations<CounterV1, CounterActionV1>().state(from: 1, as: CounterV1.self) { $0 }
            let (state, recovery) = try Self.recover(
                directory,
                version: 2,
                migrations: migrations,
                initialState: CounterV1(),
                reducer: counterReducerV1
            )
            #expect(state == Self.stateV1(after: 3250))
            #expect(recovery.snapshotSequence == 3000)
            #expect(recovery.migratedFrom == 1)
            #expect(recovery.replayedActions == 250)
            #expect(recovery.adaptedRecords == 0)
        }
    }

    // MARK: Row 2: a field added to the state

    @Test func aFieldAddedWithoutANewVersionNamesTheKey() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            let failure = Self.failure { () throws(JournalError) in
                _ = try Self.recover(
                    directory,
                    version: 1,
                    initialState: CounterV2(),
                    reducer: Reducer<CounterV2, CounterActionV1> { _, _ in }
                )
            }
            let found = try #require(failure)
            let newest = try #require(found.skipped.first)
            #expect(newest.sequence == 3000)
            #expect(newest.decodingFailure?.codingPath == "max")
            #expect(newest.decodingFailure?.expected == "a value for key \"max\"")
            #expect(!newest.coveredRecordsExist)
            #expect(newest.remedy.contains("raise reducerVersion to 2"))
            #expect(found.description.contains("does not decode at max"))
        }
    }

    @Test func aFieldAddedRecoversWithAStateMigration() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            let migrations = JournalMigrations<CounterV2, CounterActionV1>()
                .state(from: 1, as: CounterV1.self) { old in CounterV2(count: old.count, total: old.total, max: 0) }
            let (state, recovery) = try Self.recover(
                directory,
                version: 2,
                migrations: migrations,
                initialState: CounterV2(),
                reducer: Reducer { state, action in
                    counterReducerV2.reduce(&state, adaptToV2(action))
                }
            )
            #expect(state == Self.expectedV2)
            #expect(recovery.migratedFrom == 1)
        }
    }

    // MARK: Row 3: a case renamed

    @Test func aRenamedCaseWithoutAnAdapterNamesTheRecordAndTheFix() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            let failure = Self.failure { () throws(JournalError) in
                _ = try Self.recover(
                    directory,
                    version: 2,
                    migrations: JournalMigrations<CounterV2, CounterActionV2>()
                        .state(from: 1, as: CounterV1.self) { CounterV2(count: $0.count, total: $0.total) },
                    initialState: CounterV2(),
                    reducer: counterReducerV2
                )
            }
            let found = try #require(failure)
            guard case .recordUndecodable(let sequence, let writtenBy, let decoding) = found.cause else {
                Issue.record("expected an undecodable record, got \(found.cause)")
                return
            }
            #expect(sequence == 3001)
            #expect(writtenBy == 1)
            #expect(decoding.type.hasSuffix("CounterActionV2"))
            #expect(found.remedy.contains("declare an action adapter from version 1"))
        }
    }

    @Test func aRenamedCaseRecoversWithAnAdapter() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            let (state, recovery) = try Self.recover(
                directory,
                version: 2,
                migrations: migrationsToV2,
                initialState: CounterV2(),
                reducer: counterReducerV2
            )
            #expect(state == Self.expectedV2)
            #expect(recovery.adaptedRecords == 250)
        }
    }

    // MARK: Version 1 → 2 → 3, compaction between

    @Test func version3RecoversVersion1sDirectoryThroughTheChain() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            let (state, recovery) = try Self.recover(
                directory,
                version: 3,
                migrations: migrationsToV3,
                initialState: CounterV3(),
                reducer: counterReducerV3
            )
            let expected = Self.stateV1(after: 3000)
            var v3 = CounterV3(count: expected.count, total: expected.total, max: 0)
            for action in Self.actions.dropFirst(3000) {
                for adapted in adaptToV3(adaptToV2(action)) { counterReducerV3.reduce(&v3, adapted) }
            }
            #expect(state == v3)
            #expect(recovery.migratedFrom == 1)
            #expect(recovery.adaptedRecords == 250)
        }
    }

    @Test func eachVersionRecoversThePreviousOnesDirectory() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            // Version 2 starts: the migrated state is written back, and it keeps its version for its records.
            let journal2 = try Journal(storage: FileJournalStorage(directory: directory, segmentSize: 4096))
            let store2 = try Store<CounterV2, CounterActionV2>(
                recoveringFrom: journal2,
                durability: .none,
                reducerVersion: 2,
                migrations: migrationsToV2,
                initialState: CounterV2(),
                reducer: counterReducerV2
            )
            #expect(store2.state == Self.expectedV2)
            #expect(journal2.recovery?.migratedFrom == 1)
            #expect(
                try journal2.storage.writerVersions() == [
                    JournalWriterVersion(firstSequence: 1, reducerVersion: 1),
                    JournalWriterVersion(firstSequence: 3251, reducerVersion: 2),
                ]
            )
            var expected = store2.state
            let actions2 = (1...1500).map { (index: Int) -> CounterActionV2 in
                if index % 400 == 0 { return .reset }
                if index % 9 == 0 { return .ping }
                return .added(index % 17)
            }
            for (index, action) in actions2.enumerated() {
                store2.dispatch(action)
                if index == 999 { try journal2.snapshot(store2, reducerVersion: 2) }
            }
            for action in actions2 { counterReducerV2.reduce(&expected, action) }
            #expect(store2.state == expected)
            journal2.close()

            // The next start of version 2 reads its own snapshot: nothing migrated, nothing adapted.
            let again = try Self.recover(
                directory,
                version: 2,
                migrations: migrationsToV2,
                initialState: CounterV2(),
                reducer: counterReducerV2
            )
            #expect(again.state == expected)
            #expect(again.recovery.migratedFrom == nil)
            #expect(again.recovery.adaptedRecords == 0)

            // Version 3 starts on version 2's directory: a snapshot of version 2, then version 2's records adapted.
            let (state3, recovery3) = try Self.recover(
                directory,
                version: 3,
                migrations: migrationsToV3,
                initialState: CounterV3(),
                reducer: counterReducerV3
            )
            let expected3 = try Self.recover(
                directory,
                version: 2,
                migrations: migrationsToV2,
                initialState: CounterV2(),
                reducer: counterReducerV2
            ).state
            #expect(recovery3.migratedFrom == 2)
            #expect(recovery3.adaptedRecords == 500)
            // Version 3's split reset and dropped ping leave the state version 2 reaches.
            #expect(state3 == expected3)
        }
    }

    // MARK: Rolling back

    /// Version 1 started again on a directory that version 2 wrote to: it starts from its own snapshot and fails on
    /// the first record of version 2, naming the version; it never starts from a wrong state.
    @Test func aRollbackFailsOnTheNewerVersionsRecordsNamingThem() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            let journal2 = try Journal(storage: FileJournalStorage(directory: directory, segmentSize: 4096))
            let store2 = try Store<CounterV2, CounterActionV2>(
                recoveringFrom: journal2,
                durability: .none,
                reducerVersion: 2,
                migrations: migrationsToV2,
                initialState: CounterV2(),
                reducer: counterReducerV2
            )
            store2.dispatch(.added(5))
            journal2.close()
            let failure = Self.failure { () throws(JournalError) in
                _ = try Self.recover(directory, version: 1, initialState: CounterV1(), reducer: counterReducerV1)
            }
            let found = try #require(failure)
            guard case .recordUndecodable(let sequence, let writtenBy, _) = found.cause else {
                Issue.record("expected an undecodable record, got \(found.cause)")
                return
            }
            #expect(sequence == 3251)
            #expect(writtenBy == 2)
            #expect(found.remedy.contains("newer than this build's 1"))
            // The migrated snapshot of version 2 was skipped as newer; version 1's own snapshot was used.
            #expect(found.skipped.map(\.sequence) == [3250])
            #expect(found.skipped.first?.reducerVersion == 2)
            #expect(found.skipped.first?.coveredRecordsExist == true)
        }
    }

    // MARK: Declarations

    @Test func migrationsThatDoNotChainAreRefusedBeforeReading() async throws {
        try await withTemporaryDirectory { directory in
            try Self.writeV1(directory)
            let broken = JournalMigrations<CounterV3, CounterActionV3>()
                .state(from: 1, as: CounterV1.self) { $0 }
            let failure = Self.failure { () throws(JournalError) in
                _ = try Self.recover(
                    directory,
                    version: 3,
                    migrations: broken,
                    initialState: CounterV3(),
                    reducer: counterReducerV3
                )
            }
            let found = try #require(failure)
            guard case .migrationsDoNotChain(let mismatch) = found.cause else {
                Issue.record("expected a chain mismatch, got \(found.cause)")
                return
            }
            #expect(mismatch.contains("CounterV1"))
        }
    }
}
