import Foundation
import PostgresNIO
import Sluice
import SluiceJournal
import SluicePostgres
import SluicePostgresLedger
import Testing

/// Taking a stream over: one writer at a time, and a writer that lost the stream is told so in the database's terms.
@Suite(.enabled(if: TestDatabase.available), .timeLimit(.minutes(1)))
struct StreamTakeoverTests {
    /// Six writers race for a stream that does not exist yet, each trying once: exactly one takes it (epoch 1), the
    /// others are refused with `JournalError.locked`.
    @Test func newStreamIsTakenByExactlyOneWriter() throws {
        let writers = 6
        for round in 1...20 {
            let storeID = TestDatabase.uniqueStoreID("race")
            let storages = try (0..<writers).map { index in
                try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID, writer: "w\(index)"))
            }
            let outcomes = Locked<[Int: Result<UInt64, JournalError>]>([:])
            DispatchQueue.concurrentPerform(iterations: writers) { index in
                let outcome: Result<UInt64, JournalError>
                do throws(JournalError) {
                    try storages[index].acquire()
                    outcome = .success(storages[index].epoch)
                } catch {
                    outcome = .failure(error)
                }
                outcomes.withValue { $0[index] = outcome }
            }
            let epochs = outcomes.current.values.compactMap { try? $0.get() }
            let refusals = outcomes.current.values.compactMap { outcome -> JournalError? in
                if case .failure(let error) = outcome { return error }
                return nil
            }
            #expect(epochs == [1], "round \(round): epochs \(epochs)")
            #expect(
                refusals == Array(repeating: .locked(directory: "postgres:\(storeID)"), count: writers - 1),
                "round \(round): \(refusals)"
            )
            for storage in storages { storage.close() }
        }
    }

    /// A newer writer raised the epoch: the older one's next append is refused, and both its errors name the
    /// database's stream, not a lock file.
    @Test func fencedWriterIsToldOfTheDatabase() async throws {
        let storeID = TestDatabase.uniqueStoreID("fenced")
        let storage = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        let journal = try Journal(storage: storage)
        defer { journal.close() }
        let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
        store.dispatch(.add(1))
        #expect(journal.durableThrough == 1)
        // What a newer writer's takeover does to the head row.
        try await TestDatabase.withConnection { connection in
            _ = try await connection.query(
                "UPDATE sluice_streams SET epoch = epoch + 1 WHERE store_id = \(storeID)",
                logger: Logger(label: "sluice.tests")
            )
        }
        store.dispatch(.add(2))
        #expect(storage.stopReason == .fenced(storeID: storeID, epoch: 1, currentEpoch: 2))
        let error = await #expect(throws: JournalError.self) { try await journal.durable(through: 2) }
        #expect(error == .locked(directory: "postgres:\(storeID)"))
        #expect(
            error?.description == "the journal at postgres:\(storeID) is held by another writer (another process or "
                + "journal holds its lock)"
        )
        #expect(
            storage.stopReason?.description
                == "store \(storeID): this writer (epoch 1) was fenced by a newer one (epoch 2)"
        )
    }
}
