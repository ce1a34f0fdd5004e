import Foundation
import Sluice
import SluiceJournal
import Testing

/// `dispatch(_:durableIn:reading:)` and `send(_:durableIn:reading:)`: the reading of the state right after the
/// action, returned only once that action is durable, and the same errors as the forms without a reading.
@Suite struct DurableReadingTests {
    static let modes: [JournalDurability] = [.everyAction, .none, .groupCommit(interval: .zero)]

    /// Each call returns the count right after its own action, and that action is durable when it returns.
    @Test(arguments: modes)
    func theReadingIsTheStateAfterTheActionOnceItIsDurable(durability: JournalDurability) async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: durability)
            try await withWriter(journal) {
                let first = try await store.dispatch(.add(5), durableIn: journal) { $0.count }
                #expect(first == 1)
                #expect(journal.durableThrough >= 1)
                let second = try await store.send(.add(7), durableIn: journal) { ($0.count, $0.sum) }
                #expect(second == (2, 12))
                #expect(journal.durableThrough >= 2)
            }
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: [5, 7]))
        }
    }

    /// From many tasks at once, every reading is the state right after that task's own action: the counts read are
    /// exactly 1...n, each once, and every action is durable.
    @Test func concurrentSendsEachReadTheirOwnAction() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            let tasks = 8
            let perTask = 200
            let counts = try await withWriter(journal) {
                try await withThrowingTaskGroup(of: [Int].self) { group in
                    for task in 0..<tasks {
                        group.addTask {
                            var seen: [Int] = []
                            for index in 0..<perTask {
                                seen.append(
                                    try await store.send(.add(task * perTask + index), durableIn: journal) { $0.count }
                                )
                            }
                            return seen
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
            }
            #expect(counts.sorted() == Array(1...tasks * perTask))
            #expect(journal.durableThrough == UInt64(tasks * perTask))
            journal.close()
        }
    }

    /// A refused, dropped or unrecorded action gives no reading: the call throws as the form without one does.
    @Test(arguments: modes)
    func anActionTheJournalDidNotRecordGivesNoReading(durability: JournalDurability) async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStoreDroppingNegatives(recoveringFrom: journal, durability: durability)
            try await withWriter(journal) {
                await #expect(throws: JournalError.notRecorded) {
                    _ = try await store.dispatch(.add(-1), durableIn: journal) { $0.count }
                }
                await #expect(throws: JournalError.notRecorded) {
                    _ = try await store.send(.add(-2), durableIn: journal) { $0.count }
                }
                let sum = try await store.send(.add(3), durableIn: journal) { $0.sum }
                #expect(sum == 3)
                _ = await store.shutdown(timeout: hangGuard)
                await #expect(throws: JournalError.refused) {
                    _ = try await store.dispatch(.add(4), durableIn: journal) { $0.count }
                }
                await #expect(throws: JournalError.refused) {
                    _ = try await store.send(.add(5), durableIn: journal) { $0.count }
                }
            }
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: [3]))
        }
    }

    /// After `close()`, the call throws `.closed` and reads nothing.
    @Test func aClosedJournalGivesNoReading() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            journal.close()
            await #expect(throws: JournalError.closed) {
                _ = try await store.send(.add(1), durableIn: journal) { $0.count }
            }
            #expect(store.state == LedgerState())
        }
    }
}
