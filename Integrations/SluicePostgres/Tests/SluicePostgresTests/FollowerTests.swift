import Foundation
import PostgresNIO
import Sluice
import SluicePostgres
import Testing

/// A follower equals the writer at every checkpoint under load from several threads, and resumes after a dropped
/// connection from its last sequence, with no gap and no duplicate.
@Suite(.enabled(if: TestDatabase.available), .timeLimit(.minutes(2)))
struct FollowerTests {
    @Test func followerEqualsWriterAndResumesAfterDroppedConnection() async throws {
        let storeID = TestDatabase.uniqueStoreID("follower")
        let storage = PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        let journal = try Journal(storage: storage)
        let store = try Store<Ledger, LedgerAction>(
            recoveringFrom: journal,
            durability: .groupCommit(interval: .zero),
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        let follower = try await PostgresFollower<Ledger, LedgerAction>(
            configuration: TestDatabase.configuration(storeID),
            pollInterval: .milliseconds(200),
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        let applied = Locked<[UInt64]>([])
        follower.onApply { sequence in applied.withValue { $0.append(sequence) } }
        let threads = 8
        let perThreadAndRound = 150
        let rounds = 6
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await journal.run() }
            group.addTask { try await follower.run() }
            for round in 1...rounds {
                // Several threads dispatch at once; the checkpoint is when all of them are done and durable.
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    for index in 0..<perThreadAndRound {
                        store.dispatch(.add(thread * 1_000 + index))
                    }
                }
                let last = journal.lastSequence
                try await journal.durable(through: last)
                #expect(await follower.waitUntilApplied(last, timeout: .seconds(20)), "round \(round)")
                #expect(follower.state == store.state, "round \(round)")
                #expect(follower.appliedSequence == last)
                if round == 3 {
                    // Drop the follower's connection from the server's side.
                    try await TestDatabase.withConnection { connection in
                        _ = try await connection.query(
                            """
                            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                            WHERE query LIKE \("%sluice-follower:" + storeID + "%") AND pid <> pg_backend_pid()
                            """,
                            logger: Logger(label: "sluice.tests")
                        )
                    }
                }
            }
            group.cancelAll()
        }
        journal.close()
        let total = UInt64(threads * perThreadAndRound * rounds)
        #expect(follower.reconnects >= 1, "the connection was not dropped")
        #expect(applied.current == Array(1...total), "gap or duplicate in the applied sequence")
        #expect(store.state.count == Int(total))
        #expect(throws: PostgresJournalError.readOnlyFollower(storeID: storeID)) { try follower.dispatch(.add(1)) }
    }
}

/// Group commit: many senders share statements, a statement never exceeds the cap, every acknowledged action is
/// in the table.
@Suite(.enabled(if: TestDatabase.available), .timeLimit(.minutes(1)))
struct GroupCommitTests {
    @Test func concurrentSendersShareCappedStatements() async throws {
        let storeID = TestDatabase.uniqueStoreID("group")
        let storage = PostgresJournalStorage(configuration: TestDatabase.configuration(storeID, maxBatchCount: 16))
        let journal = try Journal(storage: storage)
        let store = try Store<Ledger, LedgerAction>(
            recoveringFrom: journal,
            durability: .groupCommit(interval: .zero),
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        let senders = 64
        let perSender = 20
        let acknowledged = Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await journal.run() }
            try await withThrowingTaskGroup(of: Void.self) { senderGroup in
                for sender in 0..<senders {
                    senderGroup.addTask {
                        for index in 0..<perSender {
                            try await store.dispatch(.add(sender * 100 + index), durableIn: journal)
                            acknowledged.withValue { $0 += 1 }
                        }
                    }
                }
                try await senderGroup.waitForAll()
            }
            group.cancelAll()
        }
        journal.close()
        let statistics = storage.appendStatistics
        #expect(acknowledged.current == senders * perSender)
        #expect(statistics.records == senders * perSender)
        #expect(statistics.largestStatement <= 16)
        #expect(statistics.statements < statistics.records, "no two senders ever shared a statement")
        let records = try await TestDatabase.records(of: storeID)
        #expect(records.map(\.sequence) == Array(1...Int64(senders * perSender)))
        print("group commit: \(statistics.records) records in \(statistics.statements) statements")
    }
}

/// Stops the primary (`pg_ctl -m immediate stop`) and promotes the standby while a writer appends: the writer
/// reconnects to the new primary and continues, and nothing it acknowledged is lost. Runs last, alone (CI runs it
/// in its own `swift test`): it leaves only the promoted standby.
@Suite(.serialized, .enabled(if: TestDatabase.available), .timeLimit(.minutes(2)))
struct DatabaseFailoverTests {
    @Test func writerContinuesOnPromotedStandby() async throws {
        let storeID = TestDatabase.uniqueStoreID("failover")
        let storage = PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        let journal = try Journal(storage: storage)
        let store = try Store<Ledger, LedgerAction>(
            recoveringFrom: journal,
            durability: .groupCommit(interval: .zero),
            initialState: Ledger(),
            reducer: ledgerReducer
        )
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
        let connectionStorage = PostgresJournalStorage(
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
}
