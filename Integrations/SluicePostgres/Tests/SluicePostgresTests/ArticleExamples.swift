// The Swift blocks of Sources/SluiceJournal/SluiceJournal.docc/RunningOnMoreThanOneMachine.md, which the library's
// tests cannot compile (they use this package): the same code, compiled here. Keep the two in step.
import Foundation
import Sluice
import SluiceJournal
import SluicePostgres

struct Counter: Codable, Equatable, Sendable {
    var value = 0
}

enum CounterAction: Codable, Sendable {
    case add(Int)
}

let counterReducer = Reducer<Counter, CounterAction>(mutating: { state, action in
    switch action {
    case .add(let amount): state.value += amount
    }
})

enum ArticleExamples {
    static func writer() async throws {
        let configuration = PostgresJournalConfiguration(
            endpoints: [PostgresEndpoint(host: "db-a", port: 5432), PostgresEndpoint(host: "db-b", port: 5432)],
            storeID: "orders-eu",
            writerName: ProcessInfo.processInfo.hostName,
            lease: .seconds(2),
            acquireWait: .seconds(3_600)  // a standby waits here until the writer is gone
        )
        let storage = try PostgresJournalStorage(
            configuration: configuration,
            onError: { error in
                print("journal stopped:", error)  // .fenced when a newer writer took over
            }
        )
        let journal = try Journal(storage: storage)
        let store = try Store<Counter, CounterAction>(
            recoveringFrom: journal,
            durability: .groupCommit(interval: .zero),
            initialState: Counter(),
            reducer: counterReducer
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await journal.run() }
            try await store.dispatch(.add(1), durableIn: journal)  // acknowledged: committed on the primary and held
            group.cancelAll()  // by its synchronous standby
        }
        journal.close()
    }

    static func follower(configuration: PostgresJournalConfiguration) async throws {
        let follower = try await PostgresFollower<Counter, CounterAction>(
            configuration: configuration,
            initialState: Counter(),
            reducer: counterReducer
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await follower.run() }
            print(follower.state, follower.appliedSequence, follower.lag.records)
            try follower.dispatch(.add(1))  // throws PostgresJournalError.readOnlyFollower
            group.cancelAll()
        }
    }

    static func owner(of storeID: String, among writers: [String]) -> String {
        var hash: UInt64 = 14_695_981_039_346_037_037  // FNV-1a: the same on every machine, unlike `hashValue`
        for byte in storeID.utf8 {
            hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211
        }
        return writers[Int(hash % UInt64(writers.count))]
    }
}
