// swift-format-ignore-file
// Generated from Sources/SluiceJournal/SluiceJournal.docc/SluiceJournal.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceJournal
import SluiceTesting
import Testing

/// The Swift blocks of Sources/SluiceJournal/SluiceJournal.docc/SluiceJournal.md, in order (compiled; run only where a test calls `snippets()`).
enum SluiceJournalSnippets {
    static func snippets() async throws {
        // Sources/SluiceJournal/SluiceJournal.docc/SluiceJournal.md:20
        let journal = try Journal(directory: dataDirectory, onError: { error in print("journal stopped:", error) })
        let store = try Store<Counter, CounterAction>(
            recoveringFrom: journal,
            durability: .groupCommit(interval: .milliseconds(2)),
            initialState: Counter(),
            reducer: counterReducer
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await journal.run() }  // the group-commit writer
            try await store.send(.add(1), durableIn: journal)  // returns once the action is durable
            group.cancelAll()
        }
        _ = await store.shutdown()
        journal.close()
        _ = journal
        _ = store
    }
}
