// The journal: a dispatch that `Middlewares.journal` records with `.groupCommit`, against the same store without a
// journal; and recovery (replaying the journal through the reducer) against a loop that decodes the same actions
// and calls the reducer.

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

/// A store whose only middleware records each action with `.groupCommit`; its writer runs for the rest of the
/// process, as it would in a service.
func makeGroupCommitStore() throws -> Store<Counter, Int> {
    let journal = try Journal(directory: journalDirectory("group-commit"))
    Task.detached { try await journal.run() }
    return Store(
        initialState: Counter(),
        reducer: counterReducer,
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

/// The same actions as the journal holds, JSON-encoded, in memory.
func encodedActions() throws -> [Data] {
    let encoder = JSONEncoder()
    return try (0..<recordedActions).map { _ in try encoder.encode(1) }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark("Dispatch-no-journal", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: {
        makeCounterStore()
    }

    Benchmark("Dispatch-1-middleware", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: {
        makeCounterStore(middlewareCount: 1)
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
        let decoder = JSONDecoder()
        for _ in benchmark.scaledIterations {
            var state = Tally()
            for payload in payloads {
                tallyReducer.reduce(into: &state, try decoder.decode(Int.self, from: payload))
            }
            blackHole(state)
        }
    } setup: {
        try encodedActions()
    }
}
