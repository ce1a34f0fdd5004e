// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/GettingStarted.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/GettingStarted.md, in order (compiled; run only where a test calls `snippets()`).
enum GettingStartedSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/GettingStarted.md:43
        struct OrderState: Sendable, Equatable {
            var pending: [Int] = []
            var shipped = 0
        }

        enum OrderAction: Sendable {
            case place(id: Int)
            case ship(id: Int)
        }

        // Sources/Sluice/Sluice.docc/GettingStarted.md:63
        let orders = Reducer<OrderState, OrderAction>(mutating: { state, action in
            switch action {
            case .place(let id):
                state.pending.append(id)
            case .ship(let id):
                if let index = state.pending.firstIndex(of: id) {
                    state.pending.remove(at: index)
                    state.shipped += 1
                }
            }
        })
        _ = orders

        // Sources/Sluice/Sluice.docc/GettingStarted.md:80
        let ordersToo = Reducer<OrderState, OrderAction> { (state: consuming OrderState, action) in
            if case .place(let id) = action { state.pending.append(id) }
            return state
        }
        _ = ordersToo

        // Sources/Sluice/Sluice.docc/GettingStarted.md:95
        let next = orders(OrderState(), .place(id: 1))
        // next.pending == [1]
        _ = next

        // Sources/Sluice/Sluice.docc/GettingStarted.md:104
        let store = Store<OrderState, OrderAction>(initialState: OrderState(), reducer: orders)

        store.dispatch(.place(id: 1))
        store.dispatch(.place(id: 2))
        store.dispatch(.ship(id: 1))
        // store.state == OrderState(pending: [2], shipped: 1)
        _ = store

        // Sources/Sluice/Sluice.docc/GettingStarted.md:126
        let subscription = store.subscribe(to: \.shipped) { shipped in
            print("shipped so far:", shipped)
        }
        _ = subscription

        // Sources/Sluice/Sluice.docc/GettingStarted.md:143
        let loggedStore = Store<OrderState, OrderAction>(
            initialState: OrderState(),
            reducer: orders,
            middleware: [
                Middlewares.logging(
                    diffing: { state, _ in (pending: state.pending.count, shipped: state.shipped) },
                    sampling: .every(100)
                )
            ]
        )
        loggedStore.dispatch(.place(id: 7))
        // standard error: place(id: 7) in 2.4µs | pending: 0 -> 1
        _ = loggedStore
    }
}
