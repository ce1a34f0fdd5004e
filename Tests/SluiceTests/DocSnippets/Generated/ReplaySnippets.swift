// swift-format-ignore-file
// Generated from Sources/SluiceJournal/SluiceJournal.docc/Replay.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceJournal
import SluiceTesting
import Testing

/// The Swift blocks of Sources/SluiceJournal/SluiceJournal.docc/Replay.md, in order (compiled; run only where a test calls `snippets()`).
enum ReplaySnippets {
    static func snippets() async throws {
        // Sources/SluiceJournal/SluiceJournal.docc/Replay.md:15
        let replay = try JournalReplay<Counter, CounterAction>(
            directory: dataDirectory,
            initialState: Counter(),
            reducer: counterReducer
        )
        print("states", replay.firstSequence, "...", replay.lastSequence, "damage:", replay.damage.map { "\($0)" } ?? "none")

        let step = try replay.step(at: replay.lastSequence)
        print(step.sequence, step.actionDescription(), step.changes.map(\.description))
        let earlier = try replay.state(at: replay.lastSequence / 2)  // from the nearest snapshot before it
        _ = replay
        _ = step
        _ = earlier

        // Sources/SluiceJournal/SluiceJournal.docc/Replay.md:46
        let found = replay.bisect { $0.count >= 0 }
        switch found.outcome {
        case .holds:
            print("the invariant holds")
        case .failsAtStart(let sequence):
            print("already broken at", sequence, "the first state the journal holds")
        case .fails(let step):
            print("broken by action", step.sequence, step.actionDescription(), step.changes.map(\.description))
        }
        print(found.evaluations, "checks,", found.reductions, "reductions")
        _ = found

        // Sources/SluiceJournal/SluiceJournal.docc/Replay.md:67
        let fixture = try replay.fixture(after: replay.lastSequence - 2, through: replay.lastSequence, includingStates: true)
        let path = dataDirectory + "-incident.json"
        try fixture.write(toFile: path)

        func theIncidentReplays() async throws {
            let fixture = try JournalFixture<Counter, CounterAction>(contentsOfFile: path)
            let store = TestStore(replaying: fixture, reducer: counterReducer)
            store.replay(fixture, eachStep: true)
            await store.finish()
        }
        _ = fixture
        _ = path
        try await theIncidentReplays()
    }
}
