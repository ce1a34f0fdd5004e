// The journal: a dispatch that a `.groupCommit` journal records (in the reducer, as `Store(recoveringFrom:)` makes
// it; and in a middleware, `Middlewares.journal`), against the same store without a journal; recovery (replaying
// the journal through the reducer) against a loop that decodes the same actions from memory, with the journal's
// decoder, and calls the reducer; and recovery from a snapshot of a 1,000,000-entry dictionary, against replaying
// the actions that made it and against `JSONDecoder` decoding the same value from memory. The cost of one action's
// payload, encoded and decoded with the journal's coder and with `JSONEncoder` / `JSONDecoder`, and of a dispatch
// that a `.none` or `.groupCommit` journal records: for an `.add(Int)` and for a realistic action, a bid (an enum
// case whose payload is a struct of several fields, two of them strings). Recovery with declared migrations: records
// of the current version with adapters declared that do not apply, and 1,000,000 records of an older version read
// through an adapter, against the same records read by their own version.

import Benchmark
import BenchmarkSupport
import Foundation
import Sluice
import SluiceJournal

/// A Codable counter for the recovery benchmarks (`Store.recover` decodes snapshots of it).
struct Tally: Codable, Sendable {
    var count = 0
}

let tallyReducer = Reducer<Tally, Int>(mutating: { state, action in state.count &+= action })

/// A new empty directory for one benchmark's journal.
func journalDirectory(_ name: String) -> String {
    let path = NSTemporaryDirectory() + "sluice-benchmark-\(name)-\(getpid())"
    try? FileManager.default.removeItem(atPath: path)
    return path
}

/// The number of actions in the journal that the recovery benchmarks replay.
let recordedActions = 100_000

/// A store made by `Store(recoveringFrom:)` that journals with `.groupCommit` (recording in the reducer); its
/// writer runs for the rest of the process, as it would in a service.
func makeGroupCommitStore() throws -> Store<Tally, Int> {
    let journal = try Journal(directory: journalDirectory("group-commit"))
    Task.detached { try await journal.run() }
    return try Store(
        recoveringFrom: journal,
        durability: .groupCommit(interval: .milliseconds(1)),
        initialState: Tally(),
        reducer: tallyReducer
    )
}

/// The same journal as the only middleware of a store, `Middlewares.journal(_:durability:)`.
func makeGroupCommitMiddlewareStore() throws -> Store<Tally, Int> {
    let journal = try Journal(directory: journalDirectory("group-commit-middleware"))
    Task.detached { try await journal.run() }
    return Store(
        initialState: Tally(),
        reducer: tallyReducer,
        middleware: [Middlewares.journal(journal, durability: .groupCommit(interval: .milliseconds(1)))]
    )
}

/// Writes `recordedActions` actions to a new journal and returns its directory.
func writeReplayJournal() throws -> String {
    let directory = journalDirectory("replay")
    let journal = try Journal(directory: directory)
    let store = try Store<Tally, Int>(
        recoveringFrom: journal,
        durability: .none,
        initialState: Tally(),
        reducer: tallyReducer
    )
    for _ in 0..<recordedActions {
        store.dispatch(1)
    }
    journal.close()
    return directory
}

/// Writes `count` actions to a new journal by a store of `reducerVersion` (which keeps its version with the
/// records) and returns its directory.
func writeVersionedJournal(_ name: String, count: Int, reducerVersion: Int) throws -> String {
    let directory = journalDirectory(name)
    let journal = try Journal(directory: directory)
    let store = try Store<Tally, Int>(
        recoveringFrom: journal,
        durability: .none,
        reducerVersion: reducerVersion,
        initialState: Tally(),
        reducer: tallyReducer
    )
    for _ in 0..<count {
        store.dispatch(1)
    }
    journal.close()
    return directory
}

/// Version 2's migrations: an action adapter from version 1 (which wrote `Int`s too), and a state migration.
let tallyMigrations = JournalMigrations<Tally, Int>()
    .state(from: 1, as: Tally.self) { $0 }
    .actions(from: 1, as: Int.self, to: Int.self) { [$0] }

/// The same actions as the journal holds, encoded as the journal encodes them, in memory.
func encodedActions() throws -> [[UInt8]] {
    let coder = JournalPayloadCoder()
    return try (0..<recordedActions).map { _ in try coder.encode(1) }
}

/// The entries of the large-dictionary states.
let largeEntries = 1_000_000

/// The value of the `[String: Cart]` state.
struct Cart: Codable, Sendable {
    var owner: String
    var items: [Int]
    var total: Double
    var isOpen: Bool
}

/// Entry `index` of the `[Int: Int]` state: keys spread over the range, as ids are.
@inline(__always)
func numberEntry(_ index: Int) -> (key: Int, value: Int) { (index &* 7919, index) }

/// Entry `index` of the `[String: Cart]` state.
func cartEntry(_ index: Int) -> (key: String, value: Cart) {
    (
        "cart-\(index)",
        Cart(owner: "customer \(index % 5_000)", items: [index, 7], total: Double(index) / 4, isOpen: true)
    )
}

let numberTable = Reducer<[Int: Int], Int>(mutating: { state, index in
    let (key, value) = numberEntry(index)
    state[key] = value
})

let cartTable = Reducer<[String: Cart], Int>(mutating: { state, index in
    let (key, value) = cartEntry(index)
    state[key] = value
})

/// Writes `largeEntries` actions to a new journal, each adding one entry through `reducer`, and, if `snapshot`, a
/// snapshot of the resulting state; returns the journal's directory.
func writeLargeJournal<State: Codable & Sendable>(
    _ name: String,
    _ reducer: Reducer<State, Int>,
    initialState: State,
    snapshot: Bool
) throws -> String {
    let directory = journalDirectory(name)
    let journal = try Journal(directory: directory)
    let store = try Store<State, Int>(
        recoveringFrom: journal,
        durability: .none,
        initialState: initialState,
        reducer: reducer
    )
    for index in 0..<largeEntries {
        store.dispatch(index)
    }
    if snapshot {
        try journal.snapshot(store)
    }
    journal.close()
    return directory
}

/// Removes the directory of `journalDirectory(name)`: the large journals take hundreds of megabytes.
func removeJournalDirectory(_ name: String) {
    _ = journalDirectory(name)
}

/// Recovers the state of the journal in `directory`.
func recoverLarge<State: Codable & Sendable>(
    _ directory: String,
    _ reducer: Reducer<State, Int>,
    initialState: State
) throws -> State {
    let journal = try Journal(directory: directory)
    defer { journal.close() }
    return try Store<State, Int>.recover(from: journal, initialState: initialState, reducer: reducer).state
}

/// A bid in an auction house: the shape of a service's action, beside `.add(Int)`.
struct Bid: Codable, Sendable {
    var auctionID: Int
    var bidder: String
    var amount: Int
    var currency: String
    var placedAt: Date
}

/// The actions of the per-action payload benchmarks: the smallest enum action, and a realistic one.
enum HouseAction: Codable, Sendable {
    case add(Int)
    case bid(Bid)
}

/// The bid of the benchmarks: field values of a typical size (a seven-digit amount in cents, a name of 13
/// characters).
let sampleBid = HouseAction.bid(
    Bid(
        auctionID: 35,
        bidder: "Ada Lovelace",
        amount: 101_500,
        currency: "EUR",
        placedAt: Date(timeIntervalSinceReferenceDate: 786_000_000.25)
    )
)

/// A house that counts its bids and their amounts.
struct House: Codable, Sendable {
    var count = 0
    var total = 0
}

let houseReducer = Reducer<House, HouseAction>(mutating: { state, action in
    state.count &+= 1
    switch action {
    case .add(let value): state.total &+= value
    case .bid(let bid): state.total &+= bid.amount
    }
})

/// A store of `House` made by `Store(recoveringFrom:)` with `durability`, its writer running.
func makeHouseStore(_ name: String, durability: JournalDurability) throws -> Store<House, HouseAction> {
    let journal = try Journal(directory: journalDirectory(name))
    Task.detached { try await journal.run() }
    return try Store(recoveringFrom: journal, durability: durability, initialState: House(), reducer: houseReducer)
}

/// The per-action payload benchmarks of `action`, named after `name`: its encoding and decoding with the journal's
/// coder and with `JSONEncoder` / `JSONDecoder`, and its dispatch through a `.none` and a `.groupCommit` journal.
func actionBenchmarks(_ name: String, _ action: HouseAction) {
    Benchmark("Encode-\(name)", configuration: .perDispatch) { benchmark in
        let coder = JournalPayloadCoder()
        for _ in benchmark.scaledIterations {
            blackHole(try coder.encode(action))
        }
    }

    Benchmark("Decode-\(name)", configuration: .perDispatch) { benchmark, payload in
        var coder = JournalPayloadCoder()
        for _ in benchmark.scaledIterations {
            blackHole(try payload.withUnsafeBytes { bytes in try coder.decode(HouseAction.self, from: bytes) })
        }
    } setup: {
        try JournalPayloadCoder().encode(action)
    }

    Benchmark("JSONEncoder-\(name)", configuration: .perDispatch) { benchmark in
        let encoder = JSONEncoder()
        for _ in benchmark.scaledIterations {
            blackHole(try encoder.encode(action))
        }
    }

    Benchmark("JSONDecoder-\(name)", configuration: .perDispatch) { benchmark, json in
        let decoder = JSONDecoder()
        for _ in benchmark.scaledIterations {
            blackHole(try decoder.decode(HouseAction.self, from: json))
        }
    } setup: {
        try JSONEncoder().encode(action)
    }

    // `.none`: the dispatch encodes the action and writes it (one `write` system call) before the reducer runs.
    Benchmark("Dispatch-none-\(name)", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(action)
        }
    } setup: {
        try makeHouseStore("none-\(name)", durability: .none)
    }

    Benchmark("Dispatch-groupCommit-\(name)", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(action)
        }
    } setup: {
        try makeHouseStore("group-commit-\(name)", durability: .groupCommit(interval: .milliseconds(1)))
    }
}

let benchmarks: @Sendable () -> Void = {
    actionBenchmarks("add-Int", .add(7))
    actionBenchmarks("bid", sampleBid)

    Benchmark("Dispatch-no-journal", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: {
        Store(initialState: Tally(), reducer: tallyReducer)
    }

    Benchmark("Dispatch-1-middleware", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: {
        Store(
            initialState: Tally(),
            reducer: tallyReducer,
            middleware: [Middleware { _ in { next in { action in next(action) } } }]
        )
    }

    Benchmark("Dispatch-groupCommit-middleware", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: {
        try makeGroupCommitMiddlewareStore()
    }

    Benchmark("Dispatch-groupCommit", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: {
        try makeGroupCommitStore()
    }

    let replay = Benchmark.Configuration(
        metrics: [.throughput, .wallClock],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(3),
        maxIterations: 20
    )

    Benchmark("Replay-100K", configuration: replay) { benchmark, directory in
        for _ in benchmark.scaledIterations {
            let journal = try Journal(directory: directory)
            let (state, _) = try Store<Tally, Int>.recover(from: journal, initialState: Tally(), reducer: tallyReducer)
            journal.close()
            blackHole(state)
        }
    } setup: {
        try writeReplayJournal()
    }

    // Version 2's records, recovered by version 2 with an adapter from version 1 declared: the records take the
    // same path as in `Replay-100K`.
    Benchmark("Replay-100K-adapters-declared", configuration: replay) { benchmark, directory in
        for _ in benchmark.scaledIterations {
            let journal = try Journal(directory: directory)
            let (state, recovery) = try Store<Tally, Int>.recover(
                from: journal,
                reducerVersion: 2,
                migrations: tallyMigrations,
                initialState: Tally(),
                reducer: tallyReducer
            )
            precondition(recovery.adaptedRecords == 0)
            journal.close()
            blackHole(state)
        }
    } setup: {
        try writeVersionedJournal("replay-v2", count: recordedActions, reducerVersion: 2)
    }

    Benchmark("Decode-and-reduce-100K", configuration: replay) { benchmark, payloads in
        var coder = JournalPayloadCoder()
        for _ in benchmark.scaledIterations {
            var state = Tally()
            for payload in payloads {
                let action = try payload.withUnsafeBytes { bytes in try coder.decode(Int.self, from: bytes) }
                tallyReducer.reduce(into: &state, action)
            }
            blackHole(state)
        }
    } setup: {
        try encodedActions()
    }

    // Each iteration takes seconds: a few of them, after one warm-up.
    let large = Benchmark.Configuration(
        metrics: [.throughput, .wallClock],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 5
    )

    // 1,000,000 records of version 1 recovered by version 1 (the reference), and by version 2 through an adapter
    // that applies to every record.
    Benchmark("Replay-1M-version-1", configuration: large) { benchmark, directory in
        for _ in benchmark.scaledIterations {
            let journal = try Journal(directory: directory)
            let (state, _) = try Store<Tally, Int>.recover(
                from: journal,
                reducerVersion: 1,
                initialState: Tally(),
                reducer: tallyReducer
            )
            journal.close()
            blackHole(state)
        }
    } setup: {
        try writeVersionedJournal("replay-1m-v1-reference", count: largeEntries, reducerVersion: 1)
    } teardown: {
        removeJournalDirectory("replay-1m-v1-reference")
    }

    Benchmark("Replay-1M-adapted", configuration: large) { benchmark, directory in
        for _ in benchmark.scaledIterations {
            let journal = try Journal(directory: directory)
            let (state, recovery) = try Store<Tally, Int>.recover(
                from: journal,
                reducerVersion: 2,
                migrations: tallyMigrations,
                initialState: Tally(),
                reducer: tallyReducer
            )
            precondition(recovery.adaptedRecords == largeEntries)
            journal.close()
            blackHole(state)
        }
    } setup: {
        try writeVersionedJournal("replay-1m-v1", count: largeEntries, reducerVersion: 1)
    } teardown: {
        removeJournalDirectory("replay-1m-v1")
    }

    Benchmark("Snapshot-1M-Int-Int", configuration: large) { benchmark, directory in
        for _ in benchmark.scaledIterations {
            blackHole(try recoverLarge(directory, numberTable, initialState: [:]))
        }
    } setup: {
        try writeLargeJournal("snapshot-int", numberTable, initialState: [:], snapshot: true)
    } teardown: {
        removeJournalDirectory("snapshot-int")
    }

    Benchmark("Replay-1M-Int-Int", configuration: large) { benchmark, directory in
        for _ in benchmark.scaledIterations {
            blackHole(try recoverLarge(directory, numberTable, initialState: [:]))
        }
    } setup: {
        try writeLargeJournal("replay-int", numberTable, initialState: [:], snapshot: false)
    } teardown: {
        removeJournalDirectory("replay-int")
    }

    Benchmark("JSONDecoder-1M-Int-Int", configuration: large) { benchmark, json in
        let decoder = JSONDecoder()
        for _ in benchmark.scaledIterations {
            blackHole(try decoder.decode([Int: Int].self, from: json))
        }
    } setup: {
        try JSONEncoder().encode(Dictionary(uniqueKeysWithValues: (0..<largeEntries).map(numberEntry)))
    }

    Benchmark("Snapshot-1M-String-Cart", configuration: large) { benchmark, directory in
        for _ in benchmark.scaledIterations {
            blackHole(try recoverLarge(directory, cartTable, initialState: [:]))
        }
    } setup: {
        try writeLargeJournal("snapshot-cart", cartTable, initialState: [:], snapshot: true)
    } teardown: {
        removeJournalDirectory("snapshot-cart")
    }

    Benchmark("Replay-1M-String-Cart", configuration: large) { benchmark, directory in
        for _ in benchmark.scaledIterations {
            blackHole(try recoverLarge(directory, cartTable, initialState: [:]))
        }
    } setup: {
        try writeLargeJournal("replay-cart", cartTable, initialState: [:], snapshot: false)
    } teardown: {
        removeJournalDirectory("replay-cart")
    }

    Benchmark("JSONDecoder-1M-String-Cart", configuration: large) { benchmark, json in
        let decoder = JSONDecoder()
        for _ in benchmark.scaledIterations {
            blackHole(try decoder.decode([String: Cart].self, from: json))
        }
    } setup: {
        try JSONEncoder().encode(Dictionary(uniqueKeysWithValues: (0..<largeEntries).map(cartEntry)))
    }
}
