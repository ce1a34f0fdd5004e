// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Effects.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Effects.md, in order (compiled; run only where a test calls `snippets()`).
enum EffectsSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Effects.md:27
        store.run { api in
            if api.state.cart.items.isEmpty {
                api.dispatch(.cart(.restoreSaved))
            }
        }

        // Sources/Sluice/Sluice.docc/Effects.md:42
        let user = try await store.run { api in
            let user = try await client.fetchUser(api.state.session.userID)
            api.dispatch(.userLoaded(user))
            return user
        }
        _ = user

        // Sources/Sluice/Sluice.docc/Effects.md:60
        let polling = store.start(id: "poll") { api in
            while !Task.isCancelled {
                api.dispatch(.status(try await client.status()))
                try await Task.sleep(for: .seconds(30))
            }
        }
        _ = polling

        // Sources/Sluice/Sluice.docc/Effects.md:73
        func search(_ query: String) {
            store.start(id: "search", cancelInFlight: true) { api in
                let results = try await searchClient.search(query)
                api.dispatch(.searchResults(results))
            }
        }

        store.cancel(id: "search")

        // Sources/Sluice/Sluice.docc/Effects.md:119
        let total = try await store.run { api in
            async let profile = api.run { api in try await client.profile() }
            async let orders = api.run { api in try await client.orders() }
            let (p, o) = try await (profile, orders)
            api.dispatch(.loaded(p, o))
            return o.count
        }
        _ = total

        // Sources/Sluice/Sluice.docc/Effects.md:141
        let reportingStore = Store<AppState, AppAction>(
            initialState: AppState(),
            reducer: appReducer,
            middleware: [],
            onEffectError: { (failure: EffectFailure) in
                switch failure.source {
                case .sideEffect:
                    let action = failure.action as? AppAction  // `any Sendable`, cast back to the action type
                    print("side effect for \(action.map { "\($0)" } ?? "?") failed:", failure.error)
                case .effect:
                    print("effect \(failure.id.map { "\($0)" } ?? "without an id") failed:", failure.error)
                case .journal:
                    print("the journal stopped:", failure.error)
                }
            }
        )
        reportingStore.start(id: "sync") { api in
            try await client.status()
        }
        _ = reportingStore
    }
}
