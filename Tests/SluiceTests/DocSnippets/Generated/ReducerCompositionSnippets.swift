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
        // Sources/Sluice/Sluice.docc/ReducerComposition.md:27
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

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:61
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

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:84
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

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:114
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

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:130
        struct Order: Sendable, Identifiable {
            let id: Int
            var quantity = 0
        }

        enum OrderAction: Sendable {
            case add(Int)
        }

        let orderReducer = Reducer<Order, OrderAction>(mutating: { order, action in
            switch action {
            case .add(let count): order.quantity += count
            }
        })

        struct ImportJob: Sendable {
            var rows = 0
        }

        enum ImportAction: Sendable {
            case imported(rows: Int)
        }

        let importReducer = Reducer<ImportJob, ImportAction>(mutating: { job, action in
            switch action {
            case .imported(let rows): job.rows += rows
            }
        })

        struct ShopState: Sendable {
            var ordersByID: [Int: Order] = [1: Order(id: 1), 2: Order(id: 2)]
            var recent: [Order] = [Order(id: 7)]
            var currentImport: ImportJob?
        }

        enum ShopAction: Sendable {
            case order(id: Int, OrderAction)
            case recent(id: Int, OrderAction)
            case importJob(ImportAction)
            case startImport
        }
        _ = orderReducer
        _ = importReducer

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:177
        let shopReducer: Reducer<ShopState, ShopAction> = combineReducers(
            .forEach(\.ordersByID, action: { action in
                if case .order(let id, let local) = action { (id, local) } else { nil }
            }, element: orderReducer),
            .forEach(\.recent, action: { action in
                if case .recent(let id, let local) = action { (id, local) } else { nil }
            }, element: orderReducer),
            .ifLet(\.currentImport, action: { action in
                if case .importJob(let local) = action { local } else { nil }
            }, then: importReducer, ifMissing: UnmatchedChildAction.ignore),
            Reducer(mutating: { state, action in
                if case .startImport = action { state.currentImport = ImportJob() }
            })
        )

        let shop = Store<ShopState, ShopAction>(initialState: ShopState(), reducer: shopReducer)
        shop.dispatch(.order(id: 1, .add(2)))  // ordersByID[1]?.quantity == 2, order 2 untouched
        shop.dispatch(.recent(id: 7, .add(1)))  // recent[0].quantity == 1
        shop.dispatch(.importJob(.imported(rows: 5)))  // currentImport is nil: ignored
        shop.dispatch(.startImport)
        shop.dispatch(.importJob(.imported(rows: 5)))  // currentImport?.rows == 5
        _ = shopReducer
        _ = shop

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:213
        let report: @Sendable (UnmatchedChildAction) -> Void = { unmatched in
            // unmatched.reason == .missingElement, unmatched.key as? Int == 9, plus the action and the call's file and line
            _ = unmatched.description
        }
        let strictOrders: Reducer<ShopState, ShopAction> = .forEach(\.ordersByID, action: { action in
            if case .order(let id, let local) = action { (id, local) } else { nil }
        }, element: orderReducer, ifMissing: report)
        _ = report
        _ = strictOrders

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:230
        struct OrdersByID: ActionExtractor {
            func extract(from action: ShopAction) -> (Int, OrderAction)? {
                if case .order(let id, let local) = action { (id, local) } else { nil }
            }
        }

        struct CurrentImport: ActionExtractor {
            func extract(from action: ShopAction) -> ImportAction? {
                if case .importJob(let local) = action { local } else { nil }
            }
        }

        let fastShopReducer: Reducer<ShopState, ShopAction> = combineReducers(
            .forEach(\.ordersByID, action: OrdersByID(), element: orderReducer),
            .ifLet(\.currentImport, action: CurrentImport(), then: importReducer, ifMissing: UnmatchedChildAction.ignore)
        )
        _ = fastShopReducer

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:297
        func placingAnOrderMakesItPending() {
            let next = ordersReducer(OrdersState(), .place(id: 1, sku: "apple"))
            #expect(next.pending == [1])
        }
        placingAnOrderMakesItPending()

        // Sources/Sluice/Sluice.docc/ReducerComposition.md:306
        var state = AppState()
        for action: AppAction in [.orders(.place(id: 1, sku: "apple")), .orders(.ship(id: 1))] {
            appReducer.reduce(into: &state, action)
        }
        // state.orders.shipped == 1
        _ = state
    }
}
