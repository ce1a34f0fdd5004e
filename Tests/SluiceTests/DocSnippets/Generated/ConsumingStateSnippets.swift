// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/ConsumingState.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Observation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/ConsumingState.md, in order (compiled; run only where a test calls `snippets()`).
enum ConsumingStateSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/ConsumingState.md:27
        for await count in store.values(of: \.orders.count) {
            print("orders:", count)
        }

        // Sources/Sluice/Sluice.docc/ConsumingState.md:59
        do {
            func render() {
                let count = withObservationTracking {
                    store.state.count
                } onChange: {
                    scheduleRender()   // runs on the dispatching thread; read the state again to track the next change
                }
                draw(count)
            }
        }

        // Sources/Sluice/Sluice.docc/ConsumingState.md:98
        let cart = store.scope(\.cart)
        let subscription = cart.subscribe { cart in render(cart) }    // only when the cart changed
        for await total in cart.values(of: \.total) { show(total) }
        cart.dispatch(.cart(.clear))                                   // to the store, through its middleware
        _ = cart
        _ = subscription
    }
}
