import Sluice
import SluiceJournal

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The types of a counter service in three versions, as the issue "Evolving a journaled service" tries them: a
// state of two `Int`s and an action with a payload (version 1); a field added to the state and a case renamed
// (version 2); a case split in two and a case dropped (version 3).

/// Version 1's state.
struct CounterV1: Codable, Equatable {
    var count = 0
    var total = 0
}

/// Version 1's actions.
enum CounterActionV1: Codable, Equatable {
    case add(Int)
    case reset
    case ping
}

let counterReducerV1 = Reducer<CounterV1, CounterActionV1> { state, action in
    switch action {
    case .add(let amount):
        state.count += 1
        state.total += amount
    case .reset:
        state.count = 0
        state.total = 0
    case .ping:
        break
    }
}

/// Version 2's state: a field added, with the synthesized `Codable`.
struct CounterV2: Codable, Equatable {
    var count = 0
    var total = 0
    var max = 0
}

/// Version 2's actions: `add` renamed `added`.
enum CounterActionV2: Codable, Equatable {
    case added(Int)
    case reset
    case ping
}

let counterReducerV2 = Reducer<CounterV2, CounterActionV2> { state, action in
    switch action {
    case .added(let amount):
        state.count += 1
        state.total += amount
        state.max = Swift.max(state.max, amount)
    case .reset:
        state = CounterV2(max: state.max)
    case .ping:
        break
    }
}

/// Version 3's state: the same fields as version 2's.
typealias CounterV3 = CounterV2

/// Version 3's actions: `reset` split into `resetCount` and `resetTotal`, `ping` dropped.
enum CounterActionV3: Codable, Equatable {
    case added(Int)
    case resetCount
    case resetTotal
}

let counterReducerV3 = Reducer<CounterV3, CounterActionV3> { state, action in
    switch action {
    case .added(let amount):
        state.count += 1
        state.total += amount
        state.max = Swift.max(state.max, amount)
    case .resetCount:
        state.count = 0
    case .resetTotal:
        state.total = 0
    }
}

/// The actions version 1 records: adds, a reset every 500 and a ping every 7.
func counterActionsV1(_ count: Int) -> [CounterActionV1] {
    (1...count).map { index in
        if index % 500 == 0 { return .reset }
        if index % 7 == 0 { return .ping }
        return .add(index % 13)
    }
}

/// Writes version 1's journal as the issue does: `segmentSize: 4096`, a snapshot every 1,000 actions; returns the
/// final state.
@discardableResult
func writeCounterV1(
    _ actions: [CounterActionV1],
    to directory: String,
    reducerVersion: Int = 1,
    snapshotEvery: Int = 1000
) throws -> CounterV1 {
    let journal = try Journal(storage: FileJournalStorage(directory: directory, segmentSize: 4096))
    let store = try Store<CounterV1, CounterActionV1>(
        recoveringFrom: journal,
        durability: .none,
        reducerVersion: reducerVersion,
        initialState: CounterV1(),
        reducer: counterReducerV1
    )
    for (index, action) in actions.enumerated() {
        store.dispatch(action)
        if (index + 1) % snapshotEvery == 0 {
            try journal.snapshot(store, reducerVersion: reducerVersion)
        }
    }
    let state = store.state
    journal.close()
    return state
}

/// Version 2's migrations from version 1: the state gains `max` (0: version 1 did not keep it), `add` is `added`.
let migrationsToV2 = JournalMigrations<CounterV2, CounterActionV2>()
    .state(from: 1, as: CounterV1.self) { old in CounterV2(count: old.count, total: old.total, max: 0) }
    .actions(from: 1, as: CounterActionV1.self, to: CounterActionV2.self) { old in [adaptToV2(old)] }

func adaptToV2(_ old: CounterActionV1) -> CounterActionV2 {
    switch old {
    case .add(let amount): .added(amount)
    case .reset: .reset
    case .ping: .ping
    }
}

func adaptToV3(_ old: CounterActionV2) -> [CounterActionV3] {
    switch old {
    case .added(let amount): [.added(amount)]
    case .reset: [.resetCount, .resetTotal]
    case .ping: []
    }
}

/// Version 3's migrations, chained: version 1 → 2 → 3.
let migrationsToV3 = JournalMigrations<CounterV3, CounterActionV3>()
    .state(from: 1, as: CounterV1.self) { old in CounterV2(count: old.count, total: old.total, max: 0) }
    .state(from: 2, as: CounterV2.self) { $0 }
    .actions(from: 1, as: CounterActionV1.self, to: CounterActionV2.self) { old in [adaptToV2(old)] }
    .actions(from: 2, as: CounterActionV2.self, to: CounterActionV3.self, adaptToV3)
