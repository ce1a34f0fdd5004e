public import Sluice

// The order-processing service of `sluice-demo`: three module reducers (orders, inventory, metrics) and a quote
// module, combined by key path into one service state.

/// A stock-keeping unit.
public typealias SKU = String

/// One customer order.
public struct Order: Sendable, Codable, Equatable {
    public var id: Int
    public var sku: SKU
    public var quantity: Int
    public var priceCents: Int

    public init(id: Int, sku: SKU, quantity: Int, priceCents: Int) {
        self.id = id
        self.sku = sku
        self.quantity = quantity
        self.priceCents = priceCents
    }
}

/// Why an order was turned down.
public enum RejectionReason: String, Sendable, Codable, Equatable {
    case outOfStock
    case invalidQuantity
}

/// Every action of the service.
public enum ServiceAction: Sendable, Equatable {
    case placeOrder(Order)
    case fulfill(Order)
    case reject(Order, RejectionReason)
    case restock(SKU, quantity: Int)
    case requestQuote(SKU, requestID: Int)
    case quoteReceived(SKU, requestID: Int, priceCents: Int)
}

/// The orders module: how many orders are in each stage.
public struct OrdersState: Sendable, Codable, Equatable {
    public var placed = 0
    public var pending = 0
    public var fulfilled = 0
    public var rejected = 0
    public var revenueCents = 0

    public init() {}
}

/// The inventory module: stock per SKU.
public struct InventoryState: Sendable, Codable, Equatable {
    public var stock: [SKU: Int]
    public var restocks = 0

    public init(stock: [SKU: Int]) {
        self.stock = stock
    }
}

/// The metrics module: what the service processed.
public struct MetricsState: Sendable, Codable, Equatable {
    public var actions = 0
    public var lastOrderID = 0

    public init() {}
}

/// The quote module: the latest quote requested and received.
public struct QuotesState: Sendable, Codable, Equatable {
    public var lastRequestID = 0
    public var lastReceivedID = 0
    public var lastPriceCents: [SKU: Int] = [:]

    public init() {}
}

/// The whole service state.
public struct ServiceState: Sendable, Codable, Equatable {
    public var orders = OrdersState()
    public var inventory: InventoryState
    public var metrics = MetricsState()
    public var quotes = QuotesState()

    public init(stock: [SKU: Int]) {
        inventory = InventoryState(stock: stock)
    }
}

/// The order lifecycle: placed orders are pending until fulfilled or rejected.
public let ordersReducer = Reducer<OrdersState, ServiceAction>(mutating: { state, action in
    switch action {
    case .placeOrder:
        state.placed += 1
        state.pending += 1
    case .fulfill(let order):
        state.pending -= 1
        state.fulfilled += 1
        state.revenueCents += order.priceCents * order.quantity
    case .reject:
        state.pending -= 1
        state.rejected += 1
    default:
        break
    }
})

/// Inventory changes only for its own actions: fulfilment takes stock, restocking adds it.
public enum InventoryAction: Sendable, Equatable {
    case take(SKU, Int)
    case add(SKU, Int)

    /// The inventory's part of a service action, if it has one.
    public init?(_ action: ServiceAction) {
        switch action {
        case .fulfill(let order): self = .take(order.sku, order.quantity)
        case .restock(let sku, let quantity): self = .add(sku, quantity)
        default: return nil
        }
    }
}

public let inventoryReducer = Reducer<InventoryState, InventoryAction>(mutating: { state, action in
    switch action {
    case .take(let sku, let quantity):
        state.stock[sku, default: 0] -= quantity
    case .add(let sku, let quantity):
        state.stock[sku, default: 0] += quantity
        state.restocks += 1
    }
})

public let metricsReducer = Reducer<MetricsState, ServiceAction>(mutating: { state, action in
    state.actions += 1
    if case .placeOrder(let order) = action {
        state.lastOrderID = max(state.lastOrderID, order.id)
    }
})

public let quotesReducer = Reducer<QuotesState, ServiceAction>(mutating: { state, action in
    switch action {
    case .requestQuote(_, let requestID):
        state.lastRequestID = requestID
    case .quoteReceived(let sku, let requestID, let priceCents):
        state.lastReceivedID = requestID
        state.lastPriceCents[sku] = priceCents
    default:
        break
    }
})

/// The service reducer: the modules combined by key path.
public let serviceReducer = combineReducers(
    withKey(\ServiceState.orders, use: ordersReducer),
    withKey(\ServiceState.inventory, action: InventoryAction.init, use: inventoryReducer),
    withKey(\ServiceState.metrics, use: metricsReducer),
    withKey(\ServiceState.quotes, use: quotesReducer)
)
