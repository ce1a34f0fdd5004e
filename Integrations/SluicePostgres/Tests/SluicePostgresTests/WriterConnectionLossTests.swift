import Foundation
import PostgresNIO
import Sluice
import SluiceJournal
import SluicePostgresLedger
import Testing

@testable import SluicePostgres

/// A writer whose connection closes between two statements (the server ended the session, crashed or failed over,
/// the network dropped it) connects again and goes on: PostgresNIO never answers a statement sent on a closed
/// connection, so a writer that waited for one would stall every acknowledgement for ever. Each call under test runs
/// under a watchdog and must end, with nothing acknowledged lost.
@Suite(.enabled(if: TestDatabase.available), .timeLimit(.minutes(2)))
struct WriterConnectionLossTests {
    /// The server ends the writer's session; the next snapshot, which the journal writes while it holds back the
    /// appends, is written on a new connection, and the appends go on.
    @Test func snapshotAfterTheServerEndedTheSessionIsWritten() async throws {
        let storeID = TestDatabase.uniqueStoreID("closed-snapshot")
        let storage = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        // Closed at the end, not on the way out: after a call that never returned, closing would wait for it too.
        let journal = try Journal(storage: storage)
        let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
        for sequence in 1...10 { store.dispatch(.add(sequence % 997)) }
        let connection = try #require(storage.appendConnection)
        var pid: Int32 = 0
        for try await value in try await connection.query("SELECT pg_backend_pid()", logger: Self.logger)
            .decode(Int32.self)
        {
            pid = value
        }
        try await TestDatabase.withConnection { other in
            let rows = try await other.query("SELECT pg_terminate_backend(\(pid), 5000)", logger: Self.logger)
            for try await _ in rows {}
        }
        try await waitUntil("the writer's connection to close") { connection.isClosed }

        let snapshot = try #require(
            await blockingOutcome(within: .seconds(60)) { try journal.snapshot(store) },
            "the snapshot never returned"
        )
        #expect(try snapshot.get() == 10)
        #expect(try storage.snapshotSequences() == [10])
        let appended = try #require(
            await blockingOutcome(within: .seconds(60)) {
                for sequence in 11...20 { store.dispatch(.add(sequence % 997)) }
                return journal.durableThrough
            },
            "the appends after the snapshot never returned"
        )
        #expect(try appended.get() == 20)
        #expect(storage.stopReason == nil)
        journal.close()
        #expect(try await checkStream(storeID).count == 20)
    }

    /// The writer's connection closes on the client's side; the next append fails over at once, although the writer
    /// waits an hour for an answer to a statement, and is acknowledged once, with its own sequence number.
    @Test func appendOnAClosedConnectionFailsOver() async throws {
        let storeID = TestDatabase.uniqueStoreID("closed-append")
        let storage = try PostgresJournalStorage(
            configuration: TestDatabase.configuration(storeID, statementTimeout: .seconds(3_600))
        )
        // Closed at the end, not on the way out: after a call that never returned, closing would wait for it too.
        let journal = try Journal(storage: storage)
        let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
        for sequence in 1...10 { store.dispatch(.add(sequence % 997)) }
        let connection = try #require(storage.appendConnection)
        try await connection.close()

        let appended = try #require(
            await blockingOutcome(within: .seconds(60)) {
                for sequence in 11...20 { store.dispatch(.add(sequence % 997)) }
                return journal.durableThrough
            },
            "the append on a closed connection never returned"
        )
        #expect(try appended.get() == 20)
        #expect(storage.stopReason == nil)
        #expect(storage.appendConnection !== connection, "the writer did not connect again")
        journal.close()
        let records = try await checkStream(storeID)
        #expect(records.count == 20)
        #expect(Set(records.map(\.epoch)) == [Int64(storage.epoch)])
    }

    /// The server ends the lease keeper's session, which held the advisory lock: the keeper connects again and
    /// takes the lock back, so that no other writer can take the stream over from a live one.
    @Test(
        .disabled(
            """
            Flaky: once in a fresh-clone CI run the rival acquired the stream after the keeper seemed to hold the lock \
            again, and fenced the writer; to be diagnosed before it is enabled again.
            """
        )
    )
    func leaseKeeperTakesTheLockAgainAfterItsConnectionDrops() async throws {
        let storeID = TestDatabase.uniqueStoreID("closed-keeper")
        let storage = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        let journal = try Journal(storage: storage)
        defer { journal.close() }
        let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
        store.dispatch(.add(1))
        let holders = try await Self.lockHolders(of: storeID)
        try #require(holders.count == 1, "the writer does not hold the advisory lock")
        try await TestDatabase.withConnection { other in
            for try await _ in try await other.query(
                "SELECT pg_terminate_backend(\(holders[0]), 5000)",
                logger: Self.logger
            ) {}
        }

        // Bounded: a keeper that waits for ever for a statement on its closed connection never takes the lock.
        try await waitUntil("the lease keeper to hold the advisory lock again", timeout: .seconds(60)) {
            let now = try await Self.lockHolders(of: storeID)
            return now.count == 1 && now != holders
        }
        let rival = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID, writer: "rival"))
        #expect(throws: JournalError.self) { try rival.acquire() }
        rival.close()
        store.dispatch(.add(2))
        #expect(journal.durableThrough == 2)
        #expect(storage.stopReason == nil)
        #expect(try await checkStream(storeID).count == 2)
    }

    static let logger = Logger(label: "sluice.tests")

    /// The processes that hold the writers' advisory lock on `storeID` (on `endpoint`, the primary unless told).
    static func lockHolders(
        of storeID: String,
        at endpoint: PostgresEndpoint = TestDatabase.primary
    ) async throws -> [Int32] {
        try await TestDatabase.withConnection(to: endpoint) { connection in
            var pids: [Int32] = []
            for try await pid in try await connection.query(
                """
                WITH key AS (SELECT hashtextextended(\(storeID), 0) AS k)
                SELECT pid FROM pg_locks, key
                WHERE locktype = 'advisory' AND granted AND objsubid = 1
                    AND classid = ((k >> 32) & 4294967295)::oid AND objid = (k & 4294967295)::oid
                """,
                logger: logger
            ).decode(Int32.self) {
                pids.append(pid)
            }
            return pids
        }
    }
}
