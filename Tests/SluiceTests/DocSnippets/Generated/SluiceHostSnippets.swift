// swift-format-ignore-file
// Generated from Sources/SluiceHost/SluiceHost.docc/SluiceHost.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceHost
import SluiceJournal
import SluiceTesting
import Testing

/// The Swift blocks of Sources/SluiceHost/SluiceHost.docc/SluiceHost.md, in order (compiled; run only where a test calls `snippets()`).
enum SluiceHostSnippets {
    static func snippets() async throws {
        // Sources/SluiceHost/SluiceHost.docc/SluiceHost.md:20
        let host = StoreHost<String, Counter, CounterAction>(
            directory: dataDirectory,
            durability: .none,
            activeLimit: 10_000,
            idleTimeout: .seconds(120),
            initialState: { _ in Counter() },
            reducer: counterReducer
        )
        try await host.sendDurably(.add(1), to: "alice")  // returns once the action is on stable storage
        let count = try await host.read("alice") { $0.count }
        await host.shutdown()  // passivates every store
        _ = host
        _ = count
    }
}
