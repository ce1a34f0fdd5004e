// swift-format-ignore-file
// Generated from README.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of README.md, in order (compiled; run only where a test calls `snippets()`).
enum READMESnippets {
    static func snippets() async throws {
        // README.md:52
        struct AppState: Sendable {
            var count = 0
            var history: [Int] = []
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
            state.history.append(state.count)
        })

        let logger = Middleware<AppState, AppAction> { api in
            { next in
                { action in
                    next(action)
                    print("\(action) -> count \(api.state.count)")
                }
            }
        }

        let store = Store<AppState, AppAction>(initialState: AppState(), reducer: counter, middleware: [logger])
        let subscription = store.subscribe(to: \.count) { count in print("count is now", count) }

        store.dispatch(.increment)
        store.dispatch(.add(41))
        assert(store.state.count == 42)
        subscription.cancel()
        _ = counter
        _ = logger
        _ = store
        _ = subscription
    }
}
