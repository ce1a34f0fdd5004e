import Foundation
import PostgresNIO
import Sluice
import SluiceJournal
import SluicePostgres
import SluicePostgresLedger
import Testing

/// Group commit: many senders share statements, a statement never exceeds the cap, every acknowledged action is
/// in the table.
@Suite(.enabled(if: TestDatabase.available), .timeLimit(.minutes(1)))
struct GroupCommitTests {
    @Test func concurrentSendersShareCappedStatements() async throws {
        let storeID = TestDatabase.uniqueStoreID("group")
        let storage = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID, maxBatchCount: 16))
        let journal = try Journal(storage: storage)
        let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
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
