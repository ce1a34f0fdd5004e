// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Sluice.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Sluice.md, in order (compiled; run only where a test calls `snippets()`).
enum SluiceSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Sluice.md:14
        struct AppState: Sendable {
            var count = 0
        }

        enum AppAction: Sendable {
            case increment
            case add(Int)
        }

        let counter = Reducer<AppState, AppAction>(mutating: { state, action in
            switch action {
            case .increment: state.count += 1
            case .add(let amount): state.count += amount
            }
        })

        let store = Store<AppState, AppAction>(
            initialState: AppState(),
            reducer: counter,
            middleware: [Middlewares.logging()]
        )
        store.dispatch(.add(41))
        store.dispatch(.increment)
        // store.state.count == 42; standard error shows "add(41) in 2.1µs" and "increment in 0.9µs"
        _ = counter
        _ = store
    }
}
