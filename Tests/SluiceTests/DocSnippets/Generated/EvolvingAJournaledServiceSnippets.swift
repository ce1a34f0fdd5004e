// swift-format-ignore-file
// Generated from Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceJournal
import SluiceTesting
import Testing

/// The Swift blocks of Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md, in order (compiled; run only where a test calls `snippets()`).
enum EvolvingAJournaledServiceSnippets {
    static func snippets() async throws {
        // Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md:36
        struct CounterV1: Codable, Sendable, Equatable {
            var count = 0
            var total = 0
        }

        enum CounterActionV1: Codable, Sendable {
            case add(Int)
            case reset
            case ping
        }

        let reducerV1 = Reducer<CounterV1, CounterActionV1>(mutating: { state, action in
            switch action {
            case .add(let amount):
                state.count += 1
                state.total += amount
            case .reset:
                state = CounterV1()
            case .ping:
                break
            }
        })
        _ = reducerV1

        // Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md:67
        let journal1 = try Journal(storage: FileJournalStorage(directory: dataDirectory, segmentSize: 4096))
        let store1 = try Store<CounterV1, CounterActionV1>(
            recoveringFrom: journal1,
            durability: .everyAction,
            reducerVersion: 1,
            initialState: CounterV1(),
            reducer: reducerV1
        )
        for index in 1...350 {
            let action: CounterActionV1 = index % 7 == 0 ? .ping : .add(index % 10)
            store1.dispatch(action)
            if index % 100 == 0 {
                try journal1.snapshot(store1, reducerVersion: 1)
            }
        }
        journal1.close()
        _ = journal1
        _ = store1

        // Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md:90
        struct CounterV2: Codable, Sendable, Equatable {
            var count = 0
            var total = 0
            var max = 0
        }

        enum CounterActionV2: Codable, Sendable {
            case added(Int)
            case reset
            case ping
        }

        let reducerV2 = Reducer<CounterV2, CounterActionV2>(mutating: { state, action in
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
        })
        _ = reducerV2

        // Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md:122
        let migrationsV2 = JournalMigrations<CounterV2, CounterActionV2>()
            // Version 1 did not keep `max`: the records that would give it are gone, so it starts at 0.
            .state(from: 1, as: CounterV1.self) { old in CounterV2(count: old.count, total: old.total, max: 0) }
            .actions(from: 1, as: CounterActionV1.self, to: CounterActionV2.self) { old in
                switch old {
                case .add(let amount): [.added(amount)]
                case .reset: [.reset]
                case .ping: [.ping]
                }
            }

        let journal2 = try Journal(storage: FileJournalStorage(directory: dataDirectory, segmentSize: 4096))
        let store2 = try Store<CounterV2, CounterActionV2>(
            recoveringFrom: journal2,
            durability: .everyAction,
            reducerVersion: 2,
            migrations: migrationsV2,
            initialState: CounterV2(),
            reducer: reducerV2
        )
        print("migrated from version", journal2.recovery?.migratedFrom ?? 2, "adapted", journal2.recovery?.adaptedRecords ?? 0)
        _ = migrationsV2
        _ = journal2
        _ = store2

        // Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md:155
        struct TolerantCounter: Codable, Sendable, Equatable {
            var count = 0
            var total = 0
            var max = 0

            init() {}

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                count = try container.decode(Int.self, forKey: .count)
                total = try container.decode(Int.self, forKey: .total)
                // Absent from what version 1 wrote.
                max = try container.decodeIfPresent(Int.self, forKey: .max) ?? 0
            }
        }

        // Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md:175
        for index in 1...250 {
            let action: CounterActionV2 = index % 9 == 0 ? .reset : .added(index % 12)
            store2.dispatch(action)
            if index % 100 == 0 {
                try journal2.snapshot(store2, reducerVersion: 2)
            }
        }
        journal2.close()

        // Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md:193
        enum CounterActionV3: Codable, Sendable {
            case added(Int)
            case resetCount
            case resetTotal
        }

        let reducerV3 = Reducer<CounterV2, CounterActionV3>(mutating: { state, action in
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
        })

        let migrationsV3 = JournalMigrations<CounterV2, CounterActionV3>()
            .state(from: 1, as: CounterV1.self) { old in CounterV2(count: old.count, total: old.total, max: 0) }
            .state(from: 2, as: CounterV2.self) { $0 }
            .actions(from: 1, as: CounterActionV1.self, to: CounterActionV2.self) { old in
                switch old {
                case .add(let amount): [.added(amount)]
                case .reset: [.reset]
                case .ping: [.ping]
                }
            }
            .actions(from: 2, as: CounterActionV2.self, to: CounterActionV3.self) { old in
                switch old {
                case .added(let amount): [.added(amount)]
                case .reset: [.resetCount, .resetTotal]
                case .ping: []
                }
            }

        let journal3 = try Journal(storage: FileJournalStorage(directory: dataDirectory, segmentSize: 4096))
        let store3 = try Store<CounterV2, CounterActionV3>(
            recoveringFrom: journal3,
            durability: .everyAction,
            reducerVersion: 3,
            migrations: migrationsV3,
            initialState: CounterV2(),
            reducer: reducerV3
        )
        print("version 3 starts at", store3.state)
        journal3.close()
        _ = reducerV3
        _ = migrationsV3
        _ = journal3
        _ = store3

        // Sources/SluiceJournal/SluiceJournal.docc/EvolvingAJournaledService.md:283
        func theNewBuildReadsTheJournalInProduction() {
            let report = JournalReplayGate(
                reducerVersion: 3,
                migrations: migrationsV3,
                initialState: CounterV2(),
                reducer: reducerV3,
                invariants: [.init("count is never negative") { $0.count >= 0 }]
            ).check(directory: dataDirectory)
            #expect(report.passed, "\(report)")
        }
        theNewBuildReadsTheJournalInProduction()
    }
}
