// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/LargeStates.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/LargeStates.md, in order (compiled; run only where a test calls `snippets()`).
enum LargeStatesSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/LargeStates.md:43
        struct Order: Sendable, Equatable, Identifiable {
            let id: Int
            var name = ""
        }

        struct Orders: Sendable, Equatable {
            var byID: [Order.ID: Order] = [:]
            var pending: [Order.ID] = []
            var version = 0

            // Equal when the versions are: cheap, and what a scope of the orders compares.
            static func == (lhs: Orders, rhs: Orders) -> Bool { lhs.version == rhs.version }
        }

        struct AppState: Sendable {
            var orders = Orders()
        }

        enum AppAction: Sendable {
            case place(Order)
            case cancel(Order.ID)
        }

        let appReducer = Reducer<AppState, AppAction>(mutating: { state, action in
            switch action {
            case .place(let order):
                state.orders.byID[order.id] = order
                state.orders.pending.append(order.id)
            case .cancel(let id):
                state.orders.byID[id] = nil
                state.orders.pending.removeAll { $0 == id }
            }
            state.orders.version += 1
        })

        let store = Store<AppState, AppAction>(initialState: AppState(), reducer: appReducer)
        let id = 1
        _ = appReducer
        _ = store
        _ = id

        // Sources/Sluice/Sluice.docc/LargeStates.md:86
        let order = store.read { $0.orders.byID[id] }          // costs what the lookup costs
        let pendingCount = store.read { $0.orders.pending.count }
        let byID = store.scope(\.orders.byID)
        let name = byID.read { $0[id]?.name }                  // a scope borrows its part in place, too
        _ = order
        _ = pendingCount
        _ = byID
        _ = name

        // Sources/Sluice/Sluice.docc/LargeStates.md:103
        let placed = store.dispatch(.place(Order(id: 2, name: "tea")), reading: { $0.orders.byID.count })
        _ = placed

        // Sources/Sluice/Sluice.docc/LargeStates.md:110
        let placedLater = await store.send(.place(Order(id: 3, name: "jam")), reading: { $0.orders.byID.count })
        _ = placedLater

        // Sources/Sluice/Sluice.docc/LargeStates.md:121
        // The count: cheap, but misses an update of an existing entry.
        let counted = store.subscribe(to: \.orders.byID, by: \.count) { byID in render(byID) }

        // The version that the reducer bumps with every change: misses nothing.
        let versioned = store.subscribe(to: \.orders, by: \.version) { orders in render(orders.byID) }

        // The same on a scope.
        let scoped = store.scope(\.orders).subscribe(by: \.version) { orders in render(orders.byID) }
        _ = counted
        _ = versioned
        _ = scoped

        // Sources/Sluice/Sluice.docc/LargeStates.md:140
        for await _ in store.values(of: \.orders.version) {
            let pending = store.read { $0.orders.pending.count }
            show(pending)
        }

        // Sources/Sluice/Sluice.docc/LargeStates.md:154
        let logged = Store<AppState, AppAction>(
            initialState: AppState(),
            reducer: appReducer,
            middleware: [
                Middlewares.logging(
                    diffing: { state, action in
                        switch action {
                        case .place(let order): (count: state.orders.byID.count, order: state.orders.byID[order.id])
                        case .cancel(let id): (count: state.orders.byID.count, order: state.orders.byID[id])
                        }
                    },
                    sampling: .every(100)
                )
            ]
        )
        logged.dispatch(.place(Order(id: 7, name: "tea")))
        // standard error: place(Order(id: 7, name: "tea")) in 2.2µs | count: 0 -> 1; order: nil -> Order(id: 7, name: "tea")
        _ = logged
    }
}
