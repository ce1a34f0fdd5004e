// swift-format-ignore-file
// Generated from Sources/SluiceJournal/SluiceJournal.docc/Durability.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceJournal
import SluiceTesting
import Testing

/// The Swift blocks of Sources/SluiceJournal/SluiceJournal.docc/Durability.md, in order (compiled; run only where a test calls `snippets()`).
enum DurabilitySnippets {
    static func snippets() async throws {
        // Sources/SluiceJournal/SluiceJournal.docc/Durability.md:15
        let journal = try Journal(directory: dataDirectory, onError: { error in print("journal stopped:", error) })
        let store = try Store<Counter, CounterAction>(
            recoveringFrom: journal,
            durability: .groupCommit(interval: .milliseconds(1)),
            initialState: Counter(),
            reducer: counterReducer
        )
        print("recovered", journal.recovery?.replayedActions ?? 0, "actions")

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await journal.run() }  // the group-commit writer
            // Acknowledge a request only once its own action is on stable storage:
            try await store.dispatch(.add(5), durableIn: journal)
            // or, from many tasks at once, without blocking a thread while another one runs the store's work:
            try await store.send(.add(1), durableIn: journal)
            // or with the state right after the action, returned once the action is durable (the answer to a request):
            let count = try await store.send(.add(2), durableIn: journal) { $0.count }
            print("accepted; the count is now", count)
            group.cancelAll()
        }
        _ = await store.shutdown()
        journal.close()
        _ = journal
        _ = store

        // Sources/SluiceJournal/SluiceJournal.docc/Durability.md:140
        func runJournaledService(in directory: String, requests: [Int]) async throws {
            let journal = try Journal(directory: directory, onError: { error in print("journal stopped:", error) })
            let store = try Store<Counter, CounterAction>(
                recoveringFrom: journal,
                durability: .groupCommit(interval: .milliseconds(2)),
                initialState: Counter(),
                reducer: counterReducer,
                // Saves the state once the actions pause (at least every minute), off the dispatch path:
                middleware: [Middleware(Middlewares.snapshot(to: journal, debounce: .seconds(5), maxWait: .seconds(60)))],
                dependencies: StoreDependencies { $0.makeID = .live }
            )
            print("recovered", journal.recovery?.replayedActions ?? 0, "actions")

            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await journal.run() }  // the writer, until cancelled

                // A request handler: answer "accepted" only for an action that survives a crash.
                @Sendable func handle(_ amount: Int) async -> String {
                    do {
                        try await store.send(.add(amount), durableIn: journal)
                        return "accepted"
                    } catch {
                        return "not accepted: \(error)"
                    }
                }
                for amount in requests {
                    print(await handle(amount))
                }

                // Graceful shutdown: refuse new requests, run what the modifiers owe, await the effects; then a last
                // snapshot, so that the next start replays nothing; then stop the writer, which writes what is pending.
                let report = await store.shutdown(timeout: .seconds(10))
                print("refused", report.refusedDispatches, "requests during shutdown")
                try journal.snapshot(store)
                group.cancelAll()
            }
            journal.close()
        }

        // Sources/SluiceJournal/SluiceJournal.docc/Durability.md:221
        try journal.snapshot(store, reducerVersion: 1)
    }
}
