// The work an order service does per request, written twice: on a Sluice store the way the README teaches (module
// reducers combined with `withKey` closures, `Middlewares.combine` of filtered side effects that dispatch follow-up
// actions, an occasional `api.start`, sampled logging with a sink that keeps the line, a throttled snapshot that
// encodes the state), and on a `Mutex`-guarded struct with the same reducer and the same rules (the floor). The
// `ServiceChain` benchmark area and `DispatchProfile service` / `service-mutex` run both.

import Dispatch
import Foundation
import Sluice
import Synchronization

/// How many orders the service keeps by id: each request adds one and removes the one this many requests older,
/// so the dictionary is as large in every iteration of a benchmark.
public let keptOrders = 10_000
/// How many different items the service sells.
public let itemCount = 16
/// Below this stock, the restock rule asks for a delivery of `restockQuantity`.
public let restockThreshold = 20
public let restockQuantity = 200

public struct Order: Codable, Sendable, Equatable {
    public enum Status: Codable, Sendable, Equatable {
        case pending, fulfilled, rejected
    }

    public var id: Int
    public var item: Int
    public var quantity: Int
    public var status: Status
}

public struct OrdersState: Codable, Sendable, Equatable {
    public var byID: [Int: Order] = [:]
    public var lastID = 0
    public var fulfilled = 0
    public var rejected = 0
}

public struct InventoryState: Codable, Sendable, Equatable {
    public var stock = Array(repeating: 100, count: itemCount)
    public var restocking = Array(repeating: false, count: itemCount)
    public var restocksRequested = 0
    public var delivered = 0
}

public struct StatsState: Codable, Sendable, Equatable {
    public var requests = 0
    public var revenue = 0
}

public struct ServiceState: Codable, Sendable, Equatable {
    public var orders = OrdersState()
    public var inventory = InventoryState()
    public var stats = StatsState()

    public init() {}

    /// Whether the stock of `item` covers `quantity`: the fulfilment rule.
    public func canFulfil(item: Int, quantity: Int) -> Bool {
        inventory.stock[item] >= quantity
    }

    /// Whether `item` needs a restock that nobody asked for yet: the restock rule.
    public func needsRestock(item: Int) -> Bool {
        inventory.stock[item] < restockThreshold && !inventory.restocking[item]
    }
}

public enum OrderAction: Sendable {
    case place(item: Int, quantity: Int)
    case decide(id: Int, item: Int, quantity: Int, fulfilled: Bool)
}

public enum InventoryAction: Sendable {
    case take(item: Int, quantity: Int)
    case restockRequested(item: Int)
    case delivered(item: Int, quantity: Int)
}

public enum StatsAction: Sendable {
    case request
    case sold(quantity: Int)
}

public enum ServiceAction: Sendable {
    case orders(OrderAction)
    case inventory(InventoryAction)
    case stats(StatsAction)
}

// MARK: - The reducers of the three modules

public let ordersReducer = Reducer<OrdersState, OrderAction>(mutating: { state, action in
    switch action {
    case .place(let item, let quantity):
        state.lastID += 1
        state.byID[state.lastID] = Order(id: state.lastID, item: item, quantity: quantity, status: .pending)
        state.byID[state.lastID - keptOrders] = nil
    case .decide(let id, _, _, let fulfilled):
        state.byID[id]?.status = fulfilled ? .fulfilled : .rejected
        if fulfilled { state.fulfilled += 1 } else { state.rejected += 1 }
    }
})

public let inventoryReducer = Reducer<InventoryState, InventoryAction>(mutating: { state, action in
    switch action {
    case .take(let item, let quantity):
        state.stock[item] -= quantity
    case .restockRequested(let item):
        state.restocking[item] = true
        state.restocksRequested += 1
    case .delivered(let item, let quantity):
        state.stock[item] += quantity
        state.restocking[item] = false
        state.delivered += 1
    }
})

public let statsReducer = Reducer<StatsState, StatsAction>(mutating: { state, action in
    switch action {
    case .request: state.requests += 1
    case .sold(let quantity): state.revenue += quantity * 5
    }
})

/// The three modules combined by key path, each with the closure that picks its actions (a fulfilled decision is
/// also an inventory and a stats action).
public let serviceReducer: Reducer<ServiceState, ServiceAction> = combineReducers(
    withKey(
        \ServiceState.orders,
        action: { (action: ServiceAction) -> OrderAction? in
            if case .orders(let local) = action { local } else { nil }
        },
        use: ordersReducer
    ),
    withKey(
        \ServiceState.inventory,
        action: { (action: ServiceAction) -> InventoryAction? in
            switch action {
            case .inventory(let local): local
            case .orders(.decide(_, let item, let quantity, true)): .take(item: item, quantity: quantity)
            default: nil
            }
        },
        use: inventoryReducer
    ),
    withKey(
        \ServiceState.stats,
        action: { (action: ServiceAction) -> StatsAction? in
            switch action {
            case .orders(.place): .request
            case .orders(.decide(_, _, let quantity, true)): .sold(quantity: quantity)
            default: nil
            }
        },
        use: statsReducer
    )
)

// MARK: - What the service keeps of its log lines and snapshots

/// Keeps the last log line and snapshot size, as a sink that writes them somewhere would hold them.
public final class ServiceOutput: Sendable {
    private let lines = Mutex<(count: Int, last: String)>((0, ""))
    private let snapshots = Mutex<(count: Int, bytes: Int)>((0, 0))

    public init() {}

    public func keep(line: String) {
        lines.withLock { $0 = ($0.count + 1, line) }
    }

    public func keep(snapshot: Data) {
        snapshots.withLock { $0 = ($0.count + 1, snapshot.count) }
    }

    public var lineCount: Int { lines.withLock { $0.count } }
    public var snapshotCount: Int { snapshots.withLock { $0.count } }
}

private func encodeSnapshot(_ state: ServiceState) -> Data {
    (try? JSONEncoder().encode(state)) ?? Data()
}

// MARK: - The service on a Sluice store

/// What both services answer: place an order from a thread, and return it as placed.
public protocol OrderService: Sendable {
    func place(item: Int, quantity: Int) -> Order?
}

/// The order service on a store, with the chain a service writes.
public final class SluiceService: OrderService {
    public let store: Store<ServiceState, ServiceAction>
    public let output: ServiceOutput

    /// - Parameters:
    ///   - snapshotInterval: How often the throttled snapshot runs.
    ///   - deliversInTask: Whether the restock rule dispatches the delivery from a task it starts (the service's
    ///     shape), or at once from the side effect: no other thread then takes the pipeline, so that callgrind
    ///     counts the same instructions in every run (`DispatchProfile service-sync`).
    public init(snapshotInterval: Duration = .seconds(1), logEvery: Int = 100, deliversInTask: Bool = true) {
        let output = ServiceOutput()
        self.output = output
        let fulfilment = Middlewares.filter(
            { (action: ServiceAction) in if case .orders(.place) = action { true } else { false } },
            SideEffect<ServiceState, ServiceAction> { action, api in
                guard case .orders(.place(let item, let quantity)) = action else { return }
                let state = api.state
                api.dispatch(
                    .orders(
                        .decide(
                            id: state.orders.lastID,
                            item: item,
                            quantity: quantity,
                            fulfilled: state.canFulfil(item: item, quantity: quantity)
                        )
                    )
                )
            }
        )
        let restock = Middlewares.filter(
            { (action: ServiceAction) in if case .orders(.decide(_, _, _, true)) = action { true } else { false } },
            SideEffect<ServiceState, ServiceAction> { action, api in
                guard case .orders(.decide(_, let item, _, _)) = action, api.state.needsRestock(item: item) else {
                    return
                }
                api.dispatch(.inventory(.restockRequested(item: item)))
                if deliversInTask {
                    api.start { api in
                        api.dispatch(.inventory(.delivered(item: item, quantity: restockQuantity)))
                    }
                } else {
                    api.dispatch(.inventory(.delivered(item: item, quantity: restockQuantity)))
                }
            }
        )
        let snapshot = Middlewares.throttle(
            snapshotInterval,
            latest: true,
            SideEffect<ServiceState, ServiceAction> { _, api in
                output.keep(snapshot: encodeSnapshot(api.state))
            }
        )
        store = Store(
            initialState: ServiceState(),
            reducer: serviceReducer,
            middleware: [
                Middlewares.logging(sampling: .every(logEvery), sink: { line in output.keep(line: line) }),
                Middleware(Middlewares.combine([fulfilment, restock, snapshot])),
            ]
        )
    }

    /// Places an order from a thread, and returns it as placed.
    public func place(item: Int, quantity: Int) -> Order? {
        store.dispatch(.orders(.place(item: item, quantity: quantity)), reading: { $0.orders.byID[$0.orders.lastID] })
            ?? nil
    }

    /// Places an order from a task, and returns it as placed.
    public func send(item: Int, quantity: Int) async -> Order? {
        await store.send(.orders(.place(item: item, quantity: quantity)), reading: { $0.orders.byID[$0.orders.lastID] })
            ?? nil
    }
}

// MARK: - The floor: the same service on a Mutex-guarded struct

/// The order service as a hand-written alternative would be: the state in a `Mutex`, the same reducer and rules
/// applied under the lock, the delivery in a task, sampled log lines, the snapshot encoded on a background queue.
public final class MutexService: OrderService {
    private struct Guarded: Sendable {
        var state = ServiceState()
        var logged = 0
        var lastSnapshot = DispatchTime(uptimeNanoseconds: 0)
        var snapshotRunning = false
    }

    private let guarded = Mutex(Guarded())
    private let snapshotInterval: UInt64
    private let logEvery: Int
    public let output = ServiceOutput()
    private let snapshotQueue = DispatchQueue(label: "mutex-service.snapshot")

    public init(snapshotInterval: Duration = .seconds(1), logEvery: Int = 100) {
        let (seconds, attoseconds) = snapshotInterval.components
        self.snapshotInterval = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        self.logEvery = logEvery
    }

    public var state: ServiceState {
        guarded.withLock { $0.state }
    }

    /// Places an order, and returns it as placed.
    public func place(item: Int, quantity: Int) -> Order? {
        let reduce = serviceReducer.reduce
        let start = DispatchTime.now()
        let (order, restock, log, snapshot) = guarded.withLock {
            guarded -> (Order?, Bool, Bool, ServiceState?) in
            reduce(&guarded.state, .orders(.place(item: item, quantity: quantity)))
            let id = guarded.state.orders.lastID
            let order = guarded.state.orders.byID[id]
            let fulfilled = guarded.state.canFulfil(item: item, quantity: quantity)
            reduce(&guarded.state, .orders(.decide(id: id, item: item, quantity: quantity, fulfilled: fulfilled)))
            let restock = fulfilled && guarded.state.needsRestock(item: item)
            if restock {
                reduce(&guarded.state, .inventory(.restockRequested(item: item)))
            }
            guarded.logged += 1
            var snapshot: ServiceState?
            if !guarded.snapshotRunning
                && start.uptimeNanoseconds >= guarded.lastSnapshot.uptimeNanoseconds
                    + snapshotInterval
            {
                guarded.lastSnapshot = start
                guarded.snapshotRunning = true
                snapshot = guarded.state
            }
            return (order, restock, guarded.logged % logEvery == 0, snapshot)
        }
        if restock {
            Task { [self] in
                let reduce = serviceReducer.reduce
                guarded.withLock { reduce(&$0.state, .inventory(.delivered(item: item, quantity: restockQuantity))) }
            }
        }
        if log {
            let nanoseconds = DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds
            output.keep(line: "orders(.place(item: \(item), quantity: \(quantity))) in \(nanoseconds)ns")
        }
        if let snapshot {
            snapshotQueue.async { [self] in
                output.keep(snapshot: encodeSnapshot(snapshot))
                guarded.withLock { $0.snapshotRunning = false }
            }
        }
        return order
    }
}

/// The item and quantity of the `index`th request: a fixed spread over the items, so both services see the same
/// requests.
@inlinable
public func request(_ index: Int) -> (item: Int, quantity: Int) {
    (index % itemCount, 1 + index % 3)
}
