import Foundation
import PostgresNIO
import Sluice
import SluiceJournal
import SluicePostgres
import SluicePostgresLedger
import Testing

/// The synchronous standby is stopped, so that the writer's `COMMIT` waits for it, and the wait is cancelled
/// (`pg_cancel_backend`: PostgreSQL completes the `COMMIT` with a warning) or the session terminated
/// (`pg_terminate_backend`: the connection closes, and the writer finds the batch after it reconnects). Either way
/// the transaction committed on the primary only: the action must not be acknowledged until the standby holds it.
///
/// It stops and starts the standby, so every commit of every other test would wait meanwhile: `scripts/ci.sh` runs
/// it alone (set `SLUICE_PG_OUTAGE=1` to run it by hand). It leaves both servers running.
@Suite(
    .serialized,
    .enabled(if: TestDatabase.available && TestDatabase.environment["SLUICE_PG_OUTAGE"] == "1"),
    .timeLimit(.minutes(2))
)
struct StandbyOutageTests {
    @Test(arguments: ["pg_cancel_backend", "pg_terminate_backend"])
    func commitWhoseWaitForStandbyEndedIsNotAcknowledged(ending: String) async throws {
        let storeID = TestDatabase.uniqueStoreID(ending == "pg_cancel_backend" ? "cancelled" : "terminated")
        // A short lease, renewed every 50 ms: a renewal is made while the writer's commit waits for the standby, and
        // it must not hold the head row's lock while it waits for the standby too (the writer's next transaction
        // would wait for that lock, never reaching its `COMMIT`).
        let configuration = TestDatabase.configuration(
            storeID,
            lease: .milliseconds(150),
            reconnectTimeout: .seconds(60)
        )
        let storage = try PostgresJournalStorage(configuration: configuration)
        let journal = try Journal(storage: storage)
        let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
        let acknowledged = Locked(false)
        var standbyStopped = false
        defer {
            if standbyStopped { try? TestDatabase.start(.standby) }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await journal.run() }
            try await store.dispatch(.add(1), durableIn: journal)

            try TestDatabase.stop(.standby, mode: "fast")
            standbyStopped = true
            group.addTask {
                try await store.dispatch(.add(2), durableIn: journal)
                acknowledged.withValue { $0 = true }
            }
            var waiting: [(pid: Int32, xid: String)] = []
            try await waitUntil("the writer's COMMIT waiting for the standby") {
                waiting = try await TestDatabase.commitsWaitingForStandby()
                return waiting.count == 1
            }
            let cancelled = waiting[0]
            let end: PostgresQuery =
                ending == "pg_cancel_backend"
                ? "SELECT pg_cancel_backend(\(cancelled.pid))" : "SELECT pg_terminate_backend(\(cancelled.pid))"
            try await TestDatabase.withConnection { connection in
                _ = try await connection.query(end, logger: Logger(label: "sluice.tests"))
            }
            // The COMMIT returns with its warning, or the writer reconnects and finds the batch: it either
            // acknowledges (wrong) or waits for the standby in a new transaction.
            try await waitUntil("an acknowledgement, or the writer waiting for the standby again") {
                if acknowledged.current { return true }
                return try await TestDatabase.commitsWaitingForStandby().contains { $0.xid != cancelled.xid }
            }
            let acknowledgedWithoutStandby = acknowledged.current
            #expect(!acknowledgedWithoutStandby, "acknowledged while only the primary held the record")

            try TestDatabase.start(.standby)
            standbyStopped = false
            try await waitUntil("the acknowledgement once the standby is back") { acknowledged.current }
            group.cancelAll()
        }
        journal.close()
        // Acknowledged means on the standby: it shows the record once it replayed it.
        try await waitUntil("record 2 on the standby") {
            try await TestDatabase.records(of: storeID, at: TestDatabase.standby).map(\.sequence) == [1, 2]
        }
        try await waitUntil("the standby streaming synchronously again") { await TestDatabase.standbyIsSynchronous() }
    }
}
