import Foundation
import PostgresNIO
import Sluice
import SluiceJournal
import SluicePostgres
import SluicePostgresLedger
import Testing

/// Fails the database over while a writer appends: the primary stops (`pg_ctl -m immediate stop`, a crash) and
/// the standby is promoted; the writer reconnects to the new primary and continues, and nothing it acknowledged is
/// lost.
///
/// Each test leaves only the promoted standby: `scripts/ci.sh` runs each one alone, on new servers (set
/// `SLUICE_PG_FAILOVER=1` to run one by hand).
@Suite(
    .serialized,
    .enabled(if: TestDatabase.available && TestDatabase.environment["SLUICE_PG_FAILOVER"] == "1"),
    .timeLimit(.minutes(3))
)
struct DatabaseFailoverTests {
    @Test func writerContinuesOnPromotedStandby() async throws {
        let storeID = TestDatabase.uniqueStoreID("failover")
        let storage = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        let journal = try Journal(storage: storage)
        let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
        let acknowledged = Locked<[UInt64]>([])
        let failedOver = Locked(false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await journal.run() }
            group.addTask {
                // Wait for some acknowledgements, then fail the database over.
                while acknowledged.current.count < 200 { try await Task.sleep(for: .milliseconds(5)) }
                let environment = TestDatabase.environment
                let primaryDirectory = environment["SLUICE_PG_PRIMARY_DIR"] ?? ""
                let standbyDirectory = environment["SLUICE_PG_STANDBY_DIR"] ?? ""
                #expect(
                    try TestDatabase.runAsPostgres("pg_ctl", ["-D", primaryDirectory, "-m", "immediate", "stop"]) == 0
                )
                #expect(try TestDatabase.runAsPostgres("pg_ctl", ["-D", standbyDirectory, "-w", "promote"]) == 0)
                failedOver.withValue { $0 = true }
            }
            var afterFailover = 0
            while afterFailover < 200 {
                let sequence = journal.lastSequence + 1
                try await store.dispatch(.add(Int(sequence % 997)), durableIn: journal)
                acknowledged.withValue { $0.append(sequence) }
                if failedOver.current { afterFailover += 1 }
            }
            group.cancelAll()
        }
        journal.close()
        // Read back from the promoted standby, now the only server.
        let connectionStorage = try PostgresJournalStorage(
            configuration: TestDatabase.configuration(storeID, acquireWait: .seconds(5))
        )
        let check = try Journal(storage: connectionStorage)
        let (state, recovery) = try Store<Ledger, LedgerAction>.recover(
            from: check,
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        check.close()
        let sequences = acknowledged.current
        #expect(sequences == Array(1...UInt64(sequences.count)))
        #expect(recovery.lastSequence >= sequences.last ?? 0, "an acknowledged action was lost")
        #expect(state == sequentialLedger(count: Int(recovery.lastSequence)))
        #expect(connectionStorage.epoch > storage.epoch, "the checking journal did not take over")
    }

    /// The primary crashes while the writer is idle and the standby is promoted: the writer's next snapshot (which
    /// holds back the appends while it is written) is written on the promoted standby, the appends go on there, and
    /// the lease keeper takes the advisory lock on it. Each call runs under a watchdog: a writer that waits for an
    /// answer on its closed connection never returns.
    @Test func idleWriterSnapshotsAndKeepsItsLeaseOnPromotedStandby() async throws {
        let storeID = TestDatabase.uniqueStoreID("failover-idle")
        let storage = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        // Closed at the end, not on the way out: after a call that never returned, closing would wait for it too.
        let journal = try Journal(storage: storage)
        let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
        for sequence in 1...10 { store.dispatch(.add(sequence % 997)) }
        try #require(journal.durableThrough == 10)
        try TestDatabase.stop(.primary, mode: "immediate")
        try TestDatabase.promoteStandby()

        let snapshot = try #require(
            await blockingOutcome(within: .seconds(90)) { try journal.snapshot(store) },
            "the snapshot never returned"
        )
        #expect(try snapshot.get() == 10)
        let appended = try #require(
            await blockingOutcome(within: .seconds(90)) {
                for sequence in 11...20 { store.dispatch(.add(sequence % 997)) }
                return journal.durableThrough
            },
            "the appends after the failover never returned"
        )
        #expect(try appended.get() == 20)
        try await waitUntil("the lease keeper to hold the lock on the promoted standby", timeout: .seconds(60)) {
            try await WriterConnectionLossTests.lockHolders(of: storeID, at: TestDatabase.standby).count == 1
        }
        #expect(storage.stopReason == nil)
        journal.close()
        let records = try await TestDatabase.records(of: storeID, at: TestDatabase.standby)
        #expect(records.map(\.sequence) == Array(1...20))
    }

    /// The standby stops (`-m fast`), so the writer's `COMMIT` waits for it; the primary crashes and restarts: the
    /// batch is committed there (a primary writes its commit to its own disk before it waits for the standby) and
    /// the writer, reconnected, finds it. The primary crashes again and the standby, which never received the batch,
    /// is promoted. Every acknowledged action must be on it.
    @Test func commitThatOnlyThePrimaryHeldIsNotAcknowledged() async throws {
        let storeID = TestDatabase.uniqueStoreID("unreplicated")
        let storage = try PostgresJournalStorage(
            configuration: TestDatabase.configuration(storeID, reconnectTimeout: .seconds(90))
        )
        let journal = try Journal(storage: storage)
        let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
        let producers = 16
        let acknowledged = Locked<[Int]>([])
        let failures = Locked<[String]>([])
        let stopProducing = Locked(false)
        let finished = Locked(0)
        var acknowledgedBeforeFailover = 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try? await journal.run() }
            for producer in 0..<producers {
                group.addTask {
                    defer { finished.withValue { $0 += 1 } }
                    var index = 0
                    while !stopProducing.current {
                        let value = producer * 1_000_000 + index
                        index += 1
                        do {
                            try await store.dispatch(.add(value), durableIn: journal)
                        } catch {
                            failures.withValue { $0.append("\(error)") }
                            return
                        }
                        acknowledged.withValue { $0.append(value) }
                    }
                }
            }
            try await waitUntil("acknowledgements before the outage") { acknowledged.current.count >= 200 }
            try TestDatabase.stop(.standby, mode: "fast")
            try await waitUntil("a COMMIT waiting for the stopped standby") {
                try await !TestDatabase.commitsWaitingForStandby().isEmpty
            }
            try TestDatabase.stop(.primary, mode: "immediate")
            try TestDatabase.start(.primary)
            // The writer reconnected and waits for the standby again: to confirm the batch it found (or, if it
            // acknowledged that batch, with its next one).
            try await waitUntil("the writer waiting for the standby on the restarted primary", timeout: .seconds(60)) {
                try await !TestDatabase.commitsWaitingForStandby().isEmpty
            }
            acknowledgedBeforeFailover = acknowledged.current.count
            try TestDatabase.stop(.primary, mode: "immediate")
            try TestDatabase.start(.standby)
            try TestDatabase.promoteStandby()
            try await waitUntil("acknowledgements on the promoted standby", timeout: .seconds(90)) {
                acknowledged.current.count >= acknowledgedBeforeFailover + 200 || failures.current.count == producers
            }
            stopProducing.withValue { $0 = true }
            try await waitUntil("the producers' last acknowledgements") { finished.current == producers }
            group.cancelAll()
        }
        let stopReason = storage.stopReason
        journal.close()
        #expect(stopReason == nil, "the writer stopped: \(stopReason.map { "\($0)" } ?? "")")
        #expect(failures.current.isEmpty, "\(failures.current.prefix(3))")
        let records = try await TestDatabase.records(of: storeID, at: TestDatabase.standby)
        #expect(records.map(\.sequence) == Array(stride(from: Int64(1), through: Int64(records.count), by: 1)))
        let stored = Set(records.map(\.value))
        let lost = acknowledged.current.filter { !stored.contains($0) }
        #expect(lost.isEmpty, "\(lost.count) acknowledged actions are not on the promoted standby")
        #expect(acknowledged.current.count > acknowledgedBeforeFailover, "nothing acknowledged after the failover")
        print(
            "unreplicated commit: \(acknowledgedBeforeFailover) acknowledged before the failover, "
                + "\(acknowledged.current.count) in all, \(records.count) records, \(lost.count) lost"
        )
    }
}
