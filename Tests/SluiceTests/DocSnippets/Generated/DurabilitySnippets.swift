// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Durability.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Durability.md, in order (compiled; run only where a test calls `snippets()`).
enum DurabilitySnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Durability.md:15
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
            // Acknowledge a request only once its action is on stable storage:
            try await store.dispatch(.add(5), durableIn: journal)
            // which is the same as
            store.dispatch(.add(1))
            try await journal.durable(through: journal.lastSequence)
            group.cancelAll()
        }
        journal.close()
        _ = journal
        _ = store

        // Sources/Sluice/Sluice.docc/Durability.md:94
        try journal.snapshot(store, reducerVersion: 1)
    }
}
