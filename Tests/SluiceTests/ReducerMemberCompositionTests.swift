import Sluice
import Testing

private struct Totals: Sendable, Equatable {
    var orders = 0
    var stock = 0
    var log: [String] = []
}

private enum TotalsAction: Sendable {
    case order(Int)
    case restock(Int)
}

private let countOrders = Reducer<Int, TotalsAction>(mutating: { count, action in
    if case .order(let quantity) = action { count += quantity }
})

private let countStock = Reducer<Int, Int>(mutating: { stock, quantity in stock += quantity })

private let logAll = Reducer<[String], TotalsAction>(mutating: { log, action in log.append("\(action)") })

/// The restocked quantity of an action, as an `ActionExtractor`.
private struct RestockQuantity: ActionExtractor {
    func extract(from action: TotalsAction) -> Int? {
        if case .restock(let quantity) = action { quantity } else { nil }
    }
}

@Suite("Reducer's member composition")
struct ReducerMemberCompositionTests {
    @Test("combine and withKey as members reduce as the free functions do, in order")
    func membersMatchFreeFunctions() {
        let toStock: @Sendable (TotalsAction) -> Int? = { action in
            if case .restock(let quantity) = action { quantity } else { nil }
        }
        let members: Reducer<Totals, TotalsAction> = .combine(
            .withKey(\.orders, use: countOrders),
            .withKey(\.stock, action: toStock, use: countStock),
            .withKey(\.log, use: logAll)
        )
        let free = combineReducers(
            withKey(\Totals.orders, use: countOrders),
            withKey(\Totals.stock, action: toStock, use: countStock),
            withKey(\Totals.log, use: logAll)
        )
        let actions: [TotalsAction] = [.order(2), .restock(5), .order(3)]
        let byMembers = actions.reduce(Totals()) { members($0, $1) }
        #expect(byMembers == actions.reduce(Totals()) { free($0, $1) })
        #expect(byMembers == Totals(orders: 5, stock: 5, log: ["order(2)", "restock(5)", "order(3)"]))
    }

    @Test("withKey with an ActionExtractor reduces as with the closure, as a member and as the free function")
    func withKeyTakesAnExtractor() {
        let toStock: @Sendable (TotalsAction) -> Int? = { action in
            if case .restock(let quantity) = action { quantity } else { nil }
        }
        let byClosure = withKey(\Totals.stock, action: toStock, use: countStock)
        let byExtractor = withKey(\Totals.stock, action: RestockQuantity(), use: countStock)
        let byMember: Reducer<Totals, TotalsAction> = .withKey(\.stock, action: RestockQuantity(), use: countStock)
        let actions: [TotalsAction] = [.order(2), .restock(5), .order(3), .restock(4)]
        let expected = actions.reduce(Totals()) { byClosure($0, $1) }
        #expect(expected == Totals(orders: 0, stock: 9, log: []))
        #expect(actions.reduce(Totals()) { byExtractor($0, $1) } == expected)
        #expect(actions.reduce(Totals()) { byMember($0, $1) } == expected)
    }

    @Test("combine over an array runs the reducers in array order; an empty one is the identity")
    func combineArray() {
        let append: (String) -> Reducer<[String], Int> = { tag in
            Reducer(mutating: { log, action in log.append("\(tag)\(action)") })
        }
        let combined = Reducer<[String], Int>.combine([append("a"), append("b"), append("c")])
        #expect(combined([], 1) == ["a1", "b1", "c1"])
        #expect(Reducer<[String], Int>.combine([])(["x"], 1) == ["x"])
    }
}
