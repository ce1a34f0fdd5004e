// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/ReducerComposition.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/ReducerComposition.md, in order (compiled; run only where a test calls `snippets()`).
enum ReducerCompositionSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/ReducerComposition.md:20
        struct OrdersState: Sendable {
            var pending: [Int] = []
            var shipped = 0
        }

        enum OrdersAction: Sendable {
            case place(id: Int, sku: String)
            case ship(id: Int)
        }

        struct InventoryState: Sendable {
            var stock: [String: Int] = ["apple": 10]
        }

        enum InventoryAction: Sendable {
            case restock(sku: String, count: Int)
            case take(sku: String)
        }

        struct AppState: Sendable {
            var orders = OrdersState()
            var inventory = InventoryState()
            var actionCount = 0
        }

        enum AppAction: Sendable {
            case orders(OrdersAction)
            case inventory(InventoryAction)
        }

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:54
        let ordersReducer = Reducer<OrdersState, OrdersAction>(mutating: { state, action in
            switch action {
            case .place(let id, _): state.pending.append(id)
            case .ship(let id):
                state.pending.removeAll { $0 == id }
                state.shipped += 1
            }
        })

        let inventoryReducer = Reducer<InventoryState, InventoryAction>(mutating: { state, action in
            switch action {
            case .restock(let sku, let count): state.stock[sku, default: 0] += count
            case .take(let sku): state.stock[sku, default: 0] -= 1
            }
        })
        _ = ordersReducer
        _ = inventoryReducer

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:77
        let appReducer: Reducer<AppState, AppAction> = combineReducers(
            withKey(\AppState.orders, action: { action in
                if case .orders(let local) = action { local } else { nil }
            }, use: ordersReducer),
            withKey(\AppState.inventory, action: { action in
                if case .inventory(let local) = action { local } else { nil }
            }, use: inventoryReducer),
            Reducer(mutating: { state, _ in state.actionCount += 1 })
        )

        let store = Store<AppState, AppAction>(initialState: AppState(), reducer: appReducer)
        store.dispatch(.orders(.place(id: 1, sku: "apple")))
        store.dispatch(.inventory(.take(sku: "apple")))
        // store.state.orders.pending == [1], store.state.inventory.stock["apple"] == 9, actionCount == 2
        _ = appReducer
        _ = store

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:107
        struct Ping: Sendable {}

        let pings = Reducer<Int, any Sendable>(mutating: { count, action in
            if action is Ping { count += 1 }
        })
        let app = withKey(\AppState.actionCount, use: pings)
        let reduxStore = Store<AppState, any Sendable>(initialState: AppState(), reducer: app)
        reduxStore.dispatch(Ping())
        _ = pings
        _ = app
        _ = reduxStore

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:154
        func placingAnOrderMakesItPending() {
            let next = ordersReducer(OrdersState(), .place(id: 1, sku: "apple"))
            #expect(next.pending == [1])
        }
        placingAnOrderMakesItPending()

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:163
        var state = AppState()
        for action: AppAction in [.orders(.place(id: 1, sku: "apple")), .orders(.ship(id: 1))] {
            appReducer.reduce(into: &state, action)
        }
        // state.orders.shipped == 1
        _ = state
    }
}
