// Updating one element of a dictionary of 1,000 or 1,000,000 orders by key: through `Reducer.forEach` with a
// closure and with an `ActionExtractor` type, and with a hand-written in-place reducer that does the same lookup
// and update itself. If `forEach` copied the dictionary or the element, its cost would grow with the dictionary;
// the hand-written reducer is its floor.
//
// Run these with `SWIFT_DETERMINISTIC_HASHING=1` (Benchmarks/README.md). Otherwise a dictionary's hash seed comes
// from the address of its storage, which differs in each benchmark's process, so the updated key sits at a
// different distance from its ideal bucket in the `forEach` and hand-written stores, and one lookup can probe more
// buckets than the other (about 10 instructions per extra probe in callgrind). With it, the seed depends only on
// the capacity: both stores of one size get the same layout.

import Benchmark
import Sluice

struct Order: Sendable {
    var quantity = 0
    var total = 0
}

enum OrderAction: Sendable {
    case add(Int)
}

struct ShopState: Sendable {
    var orders: [Int: Order]
}

enum ShopAction: Sendable {
    case order(id: Int, OrderAction)
}

let orderReducer = Reducer<Order, OrderAction>(mutating: { order, action in
    switch action {
    case .add(let count):
        order.quantity += count
        order.total += count * 3
    }
})

let forEachReducer: Reducer<ShopState, ShopAction> = .forEach(
    \.orders,
    action: { action in
        switch action {
        case .order(let id, let local): (id, local)
        }
    },
    element: orderReducer
)

/// The same match as `forEachReducer`'s closure, as an `ActionExtractor` type, which the compiler inlines.
struct OrderActions: ActionExtractor {
    func extract(from action: ShopAction) -> (Int, OrderAction)? {
        switch action {
        case .order(let id, let local): (id, local)
        }
    }
}

let forEachExtractorReducer: Reducer<ShopState, ShopAction> = .forEach(
    \.orders,
    action: OrderActions(),
    element: orderReducer
)

/// The same update written by hand: look the order up and change it where it lives.
let handWrittenReducer = Reducer<ShopState, ShopAction>(mutating: { state, action in
    switch action {
    case .order(let id, .add(let count)):
        if let index = state.orders.index(forKey: id) {
            state.orders.values[index].quantity += count
            state.orders.values[index].total += count * 3
        }
    }
})

func makeOrders(_ count: Int) -> [Int: Order] {
    var orders = [Int: Order](minimumCapacity: count)
    for id in 0..<count {
        orders[id] = Order()
    }
    return orders
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 1_000_000
    )

    for count in [1_000, 1_000_000] {
        let name = count == 1_000 ? "1K" : "1M"
        // One order in the middle of the dictionary, updated on every action.
        let id = count / 2
        let reducers: [(label: String, reducer: Reducer<ShopState, ShopAction>)] = [
            ("ForEach", forEachReducer),
            ("ForEach-extractor", forEachExtractorReducer),
            ("Hand-written", handWrittenReducer),
        ]
        for (label, reducer) in reducers {
            Benchmark("\(label)-update-in-\(name)", configuration: configuration) { benchmark, store in
                for _ in benchmark.scaledIterations {
                    store.dispatch(.order(id: id, .add(1)))
                }
            } setup: {
                Store<ShopState, ShopAction>(initialState: ShopState(orders: makeOrders(count)), reducer: reducer)
            }
        }
    }
}
