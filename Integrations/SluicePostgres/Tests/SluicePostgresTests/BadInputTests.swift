import Foundation
import PostgresNIO
import Sluice
import SluiceJournal
import SluicePostgres
import SluicePostgresLedger
import Testing

/// Damage in the stream, a foreign snapshot and a held store id: each a named error, never a silent skip.
@Suite(.enabled(if: TestDatabase.available), .timeLimit(.minutes(1)))
struct BadInputTests {
    /// Writes `count` records through a journal (one writer, then closed), returns the store id.
    func writeRecords(_ count: Int, prefix: String) throws -> String {
        let storeID = TestDatabase.uniqueStoreID(prefix)
        let journal = try Journal(
            storage: try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        )
        let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
        for sequence in 1...count { store.dispatch(.add(sequence % 997)) }
        #expect(journal.durableThrough == UInt64(count))
        journal.close()
        return storeID
    }

    func execute(_ query: PostgresQuery) async throws {
        try await TestDatabase.withConnection { connection in
            _ = try await connection.query(query, logger: Logger(label: "sluice.tests"))
        }
    }

    func follow(
        _ storeID: String,
        reducerVersion: Int = 0
    ) async throws(PostgresJournalError) -> PostgresFollower<
        Ledger, LedgerAction
    > {
        try await PostgresFollower(
            configuration: TestDatabase.configuration(storeID),
            reducerVersion: reducerVersion,
            initialState: Ledger(),
            reducer: ledgerReducer
        )
    }

    func recoverError(_ storeID: String) throws -> JournalError? {
        let storage = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        do {
            let journal = try Journal(storage: storage)
            defer { journal.close() }
            _ = try Store<Ledger, LedgerAction>.recover(from: journal, initialState: Ledger(), reducer: ledgerReducer)
            return nil
        } catch {
            return error
        }
    }

    @Test func checksumMismatchIsNamed() async throws {
        let storeID = try writeRecords(5, prefix: "checksum")
        try await execute("UPDATE sluice_records SET checksum = checksum + 1 WHERE store_id = \(storeID) AND seq = 3")
        await #expect(throws: PostgresJournalError.checksumMismatch(storeID: storeID, sequence: 3)) {
            _ = try await follow(storeID)
        }
        #expect(try recoverError(storeID) == .corruptRecord(file: "postgres:\(storeID)", offset: 3))
    }

    @Test func sequenceGapIsNamed() async throws {
        let storeID = try writeRecords(5, prefix: "gap")
        try await execute("DELETE FROM sluice_records WHERE store_id = \(storeID) AND seq = 3")
        await #expect(throws: PostgresJournalError.sequenceGap(storeID: storeID, expected: 3, found: 4)) {
            _ = try await follow(storeID)
        }
        #expect(
            try recoverError(storeID)
                == .unexpectedSequence(file: "postgres:\(storeID)", offset: 4, expected: 3, found: 4)
        )
        // A gap at the end (the head says 5, the table ends at 4) is named too.
        let tail = try writeRecords(5, prefix: "gap-end")
        try await execute("DELETE FROM sluice_records WHERE store_id = \(tail) AND seq = 5")
        #expect(try recoverError(tail) == .missingRecords(expected: 5, file: "postgres:\(tail)"))
    }

    @Test func snapshotOfAnotherReducerVersionIsNamed() async throws {
        let storeID = TestDatabase.uniqueStoreID("version")
        let journal = try Journal(
            storage: try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        )
        let store = try Store<Ledger, LedgerAction>(
            recoveringFrom: journal,
            durability: .everyAction,
            reducerVersion: 7,
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        for sequence in 1...6 {
            store.dispatch(.add(sequence))
            if sequence == 3 || sequence == 5 { try journal.snapshot(store, reducerVersion: 7) }
        }
        journal.close()
        // Compaction kept the snapshots at 3 and 5 and removed the records 1...3.
        await #expect(
            throws: PostgresJournalError.foreignReducerVersion(
                storeID: storeID,
                snapshotSequence: 5,
                found: 7,
                expected: 8
            )
        ) {
            _ = try await follow(storeID, reducerVersion: 8)
        }
        // The version that made it reads it and follows: its store receives the snapshot at 5, then record 6.
        let received = Locked<[String]>([])
        let follower = try await PostgresFollower<Ledger, LedgerAction>(
            configuration: TestDatabase.configuration(storeID),
            reducerVersion: 7,
            initialState: Ledger(),
            reducer: ledgerReducer,
            instrumentation: StoreInstrumentation { measurement in
                let record = measurement.action
                let kind = record.isSnapshot ? "snapshot" : "record"
                received.withValue { $0.append("\(kind) \(record.sequence)") }
            }
        )
        #expect(follower.appliedSequence == 6)
        #expect(follower.state == Ledger(count: 6, sum: 21))
        #expect(received.current == ["snapshot 5", "record 6"])
    }

    @Test func storeHeldByAnotherWriterIsNamed() throws {
        let storeID = TestDatabase.uniqueStoreID("held")
        let first = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID, writer: "first"))
        let journal = try Journal(storage: first)
        defer { journal.close() }
        let second = try PostgresJournalStorage(
            configuration: TestDatabase.configuration(storeID, writer: "second", acquireWait: .milliseconds(300))
        )
        let error = PostgresJournalError.heldByAnotherWriter(storeID: storeID, epoch: first.epoch, writer: "first")
        #expect(throws: error.journalError) { _ = try Journal(storage: second) }
    }

    @Test func followerRefusesDispatch() async throws {
        let storeID = try writeRecords(2, prefix: "refuse")
        let follower = try await follow(storeID)
        #expect(throws: PostgresJournalError.readOnlyFollower(storeID: storeID)) {
            try follower.dispatch(.add(1))
        }
        #expect(follower.state == Ledger(count: 2, sum: 3))
    }

    /// A store id longer than a notification can carry is refused when the storage or the follower is made.
    @Test func storeIDTooLongIsRefused() async throws {
        let limit = PostgresJournalConfiguration.maxStoreIDBytes
        let storeID = String(repeating: "x", count: limit - 1) + "\u{e9}"
        let error = PostgresJournalError.storeIDTooLong(bytes: limit + 1, limit: limit)
        #expect(throws: error) { _ = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID)) }
        await #expect(throws: error) { _ = try await follow(storeID) }
        #expect(
            error.description
                == "a store id may have at most \(limit) bytes in UTF-8; this one has \(limit + 1)"
        )
    }

    /// While the primary waits for a synchronous standby, a writer must read the standbys' positions to confirm its
    /// appends: a role that cannot is refused at takeover, and one granted `pg_read_all_stats` writes.
    @Test func roleThatCannotReadStandbyPositionsIsRefused() async throws {
        let role = "sluice_unprivileged"
        try await execute(
            """
            DO $$ BEGIN CREATE ROLE sluice_unprivileged LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$
            """
        )
        try await execute("REVOKE pg_read_all_stats FROM sluice_unprivileged")
        try await execute("GRANT CREATE, USAGE ON SCHEMA public TO sluice_unprivileged")
        _ = try writeRecords(1, prefix: "tables")  // the tables exist, owned by the superuser
        try await execute("GRANT ALL ON sluice_streams, sluice_records, sluice_snapshots TO sluice_unprivileged")
        var configuration = TestDatabase.configuration(TestDatabase.uniqueStoreID("unprivileged"))
        configuration.username = role
        let refused = try PostgresJournalStorage(configuration: configuration)
        let error = PostgresJournalError.database(
            operation: "checking replication",
            description: "the primary waits for a synchronous standby, and this role cannot read the standbys' "
                + "positions in pg_stat_replication, which confirm each append: grant it pg_read_all_stats "
                + "(or pg_monitor)"
        )
        #expect(throws: error.journalError) { try refused.acquire() }

        try await execute("GRANT pg_read_all_stats TO sluice_unprivileged")
        let storage = try PostgresJournalStorage(configuration: configuration)
        let journal = try Journal(storage: storage)
        defer { journal.close() }
        let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
        store.dispatch(.add(1))
        #expect(journal.durableThrough == 1)
        #expect(storage.stopReason == nil)
    }
}
