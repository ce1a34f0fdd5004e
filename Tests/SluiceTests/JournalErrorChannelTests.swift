import Foundation
import Sluice
import SluiceJournal
import Testing

/// The error that stops a journal reaches the store's error channel (`onEffectError`) as well as `onError`.
@Suite struct JournalErrorChannelTests {
    private func diskFull(_ directory: String) -> JournalError {
        .io(operation: "write", path: directory, errno: ENOSPC)
    }

    /// The journal errors among `failures`, each checked to come from the journal with no action.
    private func journalErrors(_ failures: [EffectFailure]) -> [JournalError] {
        failures.compactMap { failure in
            #expect(failure.source == .journal)
            #expect(failure.action == nil)
            return failure.error as? JournalError
        }
    }

    @Test func aFailedGroupCommitReachesTheStoresErrorChannel() async throws {
        try await withTemporaryDirectory { directory in
            let errors = Locked<[JournalError]>([])
            let failures = Locked<[EffectFailure]>([])
            let storage = FailingStorage(FileJournalStorage(directory: directory), failAppendNumber: 2)
            let journal = try Journal(storage: storage, onError: { errors.append($0) })
            let store = try Store<LedgerState, LedgerAction>(
                recoveringFrom: journal,
                durability: .groupCommit(interval: .zero),
                initialState: LedgerState(),
                reducer: ledgerReducer,
                onEffectError: { failures.append($0) }
            )
            await #expect(throws: diskFull(directory)) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await journal.run() }
                    try await store.dispatch(.add(1), durableIn: journal)
                    try await store.dispatch(.add(2), durableIn: journal)
                    group.cancelAll()
                }
            }
            #expect(errors.current == [diskFull(directory)])
            #expect(journalErrors(failures.current) == [diskFull(directory)])
            // Stopped: later actions are dropped, what was written stays readable.
            store.dispatch(.add(3))
            #expect(store.state == ledger(after: [1, 2]))
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: [1]))
        }
    }

    @Test func aFailedWriteOfTheJournalMiddlewareReachesTheStoresErrorChannel() async throws {
        try await withTemporaryDirectory { directory in
            let failures = Locked<[EffectFailure]>([])
            let storage = FailingStorage(FileJournalStorage(directory: directory), failAppendNumber: 4)
            let journal = try Journal(storage: storage)
            let store = Store<LedgerState, LedgerAction>(
                initialState: LedgerState(),
                reducer: ledgerReducer,
                middleware: [Middlewares.journal(journal, durability: .everyAction)],
                onEffectError: { failures.append($0) }
            )
            for value in 1...6 { store.dispatch(.add(value)) }
            #expect(journalErrors(failures.current) == [diskFull(directory)])
            #expect(store.state == ledger(after: 1...3))
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: 1...3))
        }
    }

    @Test func aJournalThatNeverFailsReportsNothing() async throws {
        try await withTemporaryDirectory { directory in
            let failures = Locked<[EffectFailure]>([])
            let journal = try Journal(directory: directory)
            let store = try Store<LedgerState, LedgerAction>(
                recoveringFrom: journal,
                durability: .none,
                initialState: LedgerState(),
                reducer: ledgerReducer,
                onEffectError: { failures.append($0) }
            )
            for value in 1...6 { store.dispatch(.add(value)) }
            journal.close()
            #expect(failures.current.isEmpty)
            #expect(try recoverLedger(from: directory).state == ledger(after: 1...6))
        }
    }
}
