// The journal: a dispatch that a `.groupCommit` journal records (in the reducer, as `Store(recoveringFrom:)` makes
// it; and in a middleware, `Middlewares.journal`), against the same store without a journal; and recovery
// (replaying the journal through the reducer) against a loop that decodes the same actions from memory, with the
// journal's decoder, and calls the reducer.

import Benchmark
import BenchmarkSupport
import Foundation
import Sluice

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

/// The same actions as the journal holds, encoded as the journal encodes them, in memory.
func encodedActions() throws -> [[UInt8]] {
    let coder = JournalPayloadCoder()
    return try (0..<recordedActions).map { _ in try coder.encode(1) }
}

let benchmarks: @Sendable () -> Void = {
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
}
