import Foundation
import PostgresNIO
import Sluice
import SluiceJournal
import SluicePostgresLedger
import Testing

@testable import SluicePostgres

/// A follower equals the writer at every checkpoint under load from several threads, and resumes after a dropped
/// connection from its last sequence, with no gap and no duplicate.
@Suite(.enabled(if: TestDatabase.available), .timeLimit(.minutes(2)))
struct FollowerTests {
    @Test func followerEqualsWriterAndResumesAfterDroppedConnection() async throws {
        let storeID = TestDatabase.uniqueStoreID("follower")
        let storage = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        let journal = try Journal(storage: storage)
        let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
        let measured = Locked<[UInt64]>([])
        let follower = try await PostgresFollower<Ledger, LedgerAction>(
            configuration: TestDatabase.configuration(storeID),
            pollInterval: .milliseconds(200),
            initialState: Ledger(),
            reducer: ledgerReducer,
            instrumentation: StoreInstrumentation { measurement in
                measured.withValue { $0.append(measurement.action.sequence) }
            }
        )
        let applied = Locked<[UInt64]>([])
        follower.onApply { sequence in applied.withValue { $0.append(sequence) } }
        // The replica is a store: its subscribers see the applied records.
        let counts = Locked<[Int]>([])
        let subscription = follower.store.subscribe(to: \.count) { count in counts.withValue { $0.append(count) } }
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
        #expect(measured.current == Array(1...total), "each record went through the replica store once, in order")
        #expect(counts.current.last == Int(total))
        #expect(zip(counts.current, counts.current.dropFirst()).allSatisfy { $0 < $1 })
        #expect(follower.store.state == store.state)
        subscription.cancel()
    }

    /// A follower resumes from its last sequence whatever it was doing when its connection dropped: reading, between
    /// two reads, listening, connecting. It reads every millisecond, so that most drops land between two of its
    /// statements; the follower's task is not awaited, so that a follower that never resumes fails this test rather
    /// than holding it.
    @Test func followerResumesWheneverItsConnectionDrops() async throws {
        let storeID = TestDatabase.uniqueStoreID("follower-drops")
        let journal = try Journal(storage: PostgresJournalStorage(configuration: TestDatabase.configuration(storeID)))
        let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
        let follower = try await PostgresFollower<Ledger, LedgerAction>(
            configuration: TestDatabase.configuration(storeID),
            pollInterval: .milliseconds(1),
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        let applied = Locked<[UInt64]>([])
        follower.onApply { sequence in applied.withValue { $0.append(sequence) } }
        let writing = Task { try await journal.run() }
        let following = Task { try await follower.run() }
        defer {
            following.cancel()
            writing.cancel()
            journal.close()
        }
        let drops = 30
        for drop in 1...drops {
            for value in 0..<20 { store.dispatch(.add(drop * 100 + value)) }
            // Drop the follower's sessions from the server's side until it notices: at first, the one that `init`
            // read on may still be there, and be the only one found.
            let reconnects = follower.reconnects
            try await waitUntil("the follower to reconnect (drop \(drop))", timeout: .seconds(20)) {
                try await TestDatabase.withConnection { connection in
                    let rows = try await connection.query(
                        """
                        SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
                        WHERE query LIKE \("%sluice-follower:" + storeID + "%") AND pid <> pg_backend_pid()
                        """,
                        logger: Logger(label: "sluice.tests")
                    )
                    for try await _ in rows {}
                }
                return follower.reconnects > reconnects
            }
            for value in 20..<40 { store.dispatch(.add(drop * 100 + value)) }
            let last = journal.lastSequence
            try await journal.durable(through: last)
            let resumed = await follower.waitUntilApplied(last, timeout: .seconds(20))
            #expect(resumed, "drop \(drop)")
            if !resumed { break }
        }
        // Once `run()` has ended, the last record's `onApply` has returned.
        following.cancel()
        let ended = await outcome(within: .seconds(20)) { try await following.value }
        #expect(ended != nil, "run() did not end when cancelled")
        #expect(applied.current == Array(1...journal.lastSequence), "gap or duplicate in the applied sequence")
        #expect(follower.state == store.state)
    }

    /// `catchUp()` beside a running `run()`, many at once: each reads from the last applied sequence, and each record
    /// is applied once, in order.
    @Test func catchUpBesideRunAppliesEachRecordOnce() async throws {
        let storeID = TestDatabase.uniqueStoreID("follower-catch-up")
        let journal = try Journal(storage: PostgresJournalStorage(configuration: TestDatabase.configuration(storeID)))
        let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
        let follower = try await PostgresFollower<Ledger, LedgerAction>(
            configuration: TestDatabase.configuration(storeID),
            pollInterval: .milliseconds(1),
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        let applied = Locked<[UInt64]>([])
        follower.onApply { sequence in applied.withValue { $0.append(sequence) } }
        let rounds = 10
        let perRound = 100
        let readers = 8
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await journal.run() }
            group.addTask { try await follower.run() }
            for round in 0..<rounds {
                for value in 0..<perRound { store.dispatch(.add(round * 1_000 + value)) }
                let last = journal.lastSequence
                try await journal.durable(through: last)
                try await withThrowingTaskGroup(of: Void.self) { catchUps in
                    for _ in 0..<readers {
                        catchUps.addTask { try await follower.catchUp() }
                    }
                    try await catchUps.waitForAll()
                }
                #expect(follower.appliedSequence == last, "round \(round)")
            }
            group.cancelAll()
        }
        journal.close()
        let total = UInt64(rounds * perRound)
        #expect(applied.current == Array(1...total), "a record applied twice, or out of order")
        #expect(follower.state == store.state)
        #expect(follower.state.count == Int(total))
    }

    /// Reading on a connection that has closed fails at once, so that the follower connects again: PostgresNIO
    /// never answers a statement written to a closed connection, not even when its task is cancelled.
    @Test func readingOnAClosedConnectionFails() async throws {
        let storeID = TestDatabase.uniqueStoreID("follower-closed")
        let follower = try await PostgresFollower<Ledger, LedgerAction>(
            configuration: TestDatabase.configuration(storeID),
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        let connection = try await TestDatabase.connect()
        try await connection.close()
        let read = try #require(
            await outcome(within: .seconds(20)) { try await follower.catchUp(on: connection) },
            "the read never ended"
        )
        #expect(throws: PostgresJournalError.self) { try read.get() }
    }

    /// A follower that polls only once an hour applies each record on the writer's notification, whatever the store
    /// id: with spaces, ending in a number, empty, or as long as allowed.
    @Test(
        arguments: [
            "with space \(UUID().uuidString.prefix(8))",
            "ends in a number 42 \(UUID().uuidString.prefix(8)) 7",
            "",
            String(repeating: "\u{e9}", count: PostgresJournalConfiguration.maxStoreIDBytes / 2),
        ]
    )
    func followerIsNotifiedForAnyStoreID(storeID: String) async throws {
        let storage = try PostgresJournalStorage(configuration: TestDatabase.configuration(storeID))
        let journal = try Journal(storage: storage)
        defer { journal.close() }
        let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
        let follower = try await PostgresFollower<Ledger, LedgerAction>(
            configuration: TestDatabase.configuration(storeID),
            pollInterval: .seconds(3_600),
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        let start = journal.lastSequence
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await follower.run() }
            // The first record may be read by the query `run()` makes once it listens; each later one is appended
            // after that, so only a notification can bring it.
            for sequence in start + 1...start + 4 {
                store.dispatch(.add(Int(sequence)))
                #expect(journal.durableThrough == sequence)
                let applied = await follower.waitUntilApplied(sequence, timeout: .seconds(10))
                #expect(applied, "record \(sequence) of store \(storeID.prefix(40).debugDescription)")
                if !applied { break }
            }
            group.cancelAll()
        }
        #expect(follower.state == store.state)
    }
}
