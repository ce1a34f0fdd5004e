import Foundation
import Sluice
import SluiceJournal
import SluiceTesting
import Testing

/// What a journaled service needs beyond recovery: snapshots taken by a side effect, and the store's services given
/// to the recovering initializer.
@Suite struct JournalServiceTests {
    @Test func aSideEffectSnapshotsThroughItsAPI() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let taken = Locked<[UInt64]>([])
            let snapshotEveryThird = SideEffect<LedgerState, LedgerAction> { _, api in
                if api.state.count % 3 == 0, let sequence = try? journal.snapshot(api) {
                    taken.append(sequence)
                }
            }
            let store = try Store<LedgerState, LedgerAction>(
                recoveringFrom: journal,
                durability: .everyAction,
                initialState: LedgerState(),
                reducer: ledgerReducer,
                middleware: [Middleware(snapshotEveryThird)]
            )
            for value in 1...7 { store.dispatch(.add(value)) }
            // The side effect runs after its action was reduced and recorded: each snapshot covers exactly it.
            #expect(taken.current == [3, 6])
            journal.close()
            let (state, recovery) = try recoverLedger(from: directory)
            #expect(state == ledger(after: 1...7))
            #expect(recovery.snapshotSequence == 6)
            #expect(recovery.replayedActions == 1)
        }
    }

    @Test(arguments: [JournalDurability.everyAction, .groupCommit(interval: .zero)])
    func theSnapshotEffectSavesOnceTheActionsPause(durability: JournalDurability) async throws {
        try await withTemporaryDirectory { directory in
            let scheduler = TestScheduler()
            let journal = try Journal(directory: directory)
            let store = try Store<LedgerState, LedgerAction>(
                recoveringFrom: journal,
                durability: durability,
                initialState: LedgerState(),
                reducer: ledgerReducer,
                middleware: [Middleware(Middlewares.snapshot(to: journal, debounce: .seconds(5), reducerVersion: 2))],
                dependencies: .test { $0.scheduler = scheduler }
            )
            for value in 1...4 { store.dispatch(.add(value)) }
            scheduler.advance(by: .seconds(4))
            #expect(try journal.storage.snapshotSequences().isEmpty)
            // Never inside the dispatch: the run is handed to the scheduler even when it falls due.
            scheduler.advance(by: .seconds(1))
            #expect(try journal.storage.snapshotSequences() == [4])
            store.dispatch(.add(5))
            scheduler.advance(by: .seconds(5))
            #expect(try journal.storage.snapshotSequences() == [5, 4])
            journal.close()
            let journalAgain = try Journal(directory: directory)
            defer { journalAgain.close() }
            let (state, recovery) = try Store<LedgerState, LedgerAction>.recover(
                from: journalAgain,
                reducerVersion: 2,
                initialState: LedgerState(),
                reducer: ledgerReducer
            )
            #expect(state == ledger(after: 1...5))
            #expect(recovery.snapshotSequence == 5)
        }
    }

    @Test func theSnapshotEffectSavesAtTheLongestWaitUnderSteadyLoad() async throws {
        try await withTemporaryDirectory { directory in
            let scheduler = TestScheduler()
            let journal = try Journal(directory: directory)
            defer { journal.close() }
            let snapshot: SideEffect<LedgerState, LedgerAction> = Middlewares.snapshot(
                to: journal,
                debounce: .seconds(5),
                maxWait: .seconds(8),
                reducerVersion: 2
            )
            let store = try Store<LedgerState, LedgerAction>(
                recoveringFrom: journal,
                durability: .everyAction,
                initialState: LedgerState(),
                reducer: ledgerReducer,
                middleware: [Middleware(snapshot)],
                dependencies: .test { $0.scheduler = scheduler }
            )
            for value in 1...4 {
                store.dispatch(.add(value))
                scheduler.advance(by: .seconds(3))  // never 5 s of quiet: only the longest wait saves
            }
            #expect(try journal.storage.snapshotSequences() == [3])  // at 8 s, after the third action (at 6 s)
        }
    }

    @Test func theRecoveringInitializerTakesTheStoresDependencies() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let seen = Locked<[UUID]>([])
            let fixed = UUID(uuidString: "00000000-0000-0000-0000-000000000007")!
            let store = try Store<LedgerState, LedgerAction>(
                recoveringFrom: journal,
                durability: .everyAction,
                initialState: LedgerState(),
                reducer: ledgerReducer,
                middleware: [Middleware(SideEffect { _, api in seen.append(api.dependencies.makeID()) })],
                dependencies: .test { $0.makeID = IDGenerator { fixed } }
            )
            store.dispatch(.add(1))
            #expect(seen.current == [fixed])
            journal.close()
        }
    }
}
