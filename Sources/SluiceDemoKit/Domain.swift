public import Sluice

// The order-processing service of `sluice-demo`: four module reducers (orders, inventory, metrics, quotes),
// combined by key path into one service state; the orders module keeps each order by id and applies the order
// actions to the addressed order with `Reducer.forEach`. State and actions are `Codable` for the journal.

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

/// Every action of the service. `Codable`, so that `--data-dir` can journal it.
public enum ServiceAction: Sendable, Codable, Equatable {
    case placeOrder(Order)
    case fulfill(Order)
    case reject(Order, RejectionReason)
    case restock(SKU, quantity: Int)
    case requestQuote(SKU, requestID: Int)
    case quoteReceived(SKU, requestID: Int, priceCents: Int)
    /// An order that was still pending when an earlier run stopped (its fulfilment had not been journaled): the
    /// fulfilment effect decides it again. Recovery replays actions through the reducer only, never the effects.
    case resumeOrder(Order)
}

/// Where one order stands: the per-order state of the order book.
///
/// Encoded as one string (`"pending"`, `"fulfilled"`, or the rejection reason), so that a snapshot of 100,000
/// orders stays about 2 MB and quick to write.
public enum OrderStatus: Sendable, Equatable, Codable {
    case pending
    case fulfilled
    case rejected(RejectionReason)

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        switch text {
        case "pending": self = .pending
        case "fulfilled": self = .fulfilled
        default:
            guard let reason = RejectionReason(rawValue: text) else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "unknown status '\(text)'")
                )
            }
            self = .rejected(reason)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .pending: try container.encode("pending")
        case .fulfilled: try container.encode("fulfilled")
        case .rejected(let reason): try container.encode(reason.rawValue)
        }
    }
}

/// What happens to one order: the element action of the order book's `forEach`.
public enum OrderAction: Sendable, Equatable {
    case fulfill
    case reject(RejectionReason)

    /// The order that a service action addresses, by id, and what happens to it; `nil` for other actions.
    public static func addressed(by action: ServiceAction) -> (Int, OrderAction)? {
        switch action {
        case .fulfill(let order): (order.id, .fulfill)
        case .reject(let order, let reason): (order.id, .reject(reason))
        default: nil
        }
    }

    /// ``addressed(by:)`` as the order book's `ActionExtractor`: a type, so the compiler inlines the match into
    /// `forEach`, which runs for every action the store reduces.
    public struct Addressed: ActionExtractor {
        public init() {}

        public func extract(from action: ServiceAction) -> (Int, OrderAction)? {
            OrderAction.addressed(by: action)
        }
    }
}

/// The orders module: how many orders are in each stage, and each order by id (the order book).
public struct OrdersState: Sendable, Codable, Equatable {
    public var placed = 0
    public var pending = 0
    public var fulfilled = 0
    public var rejected = 0
    public var revenueCents = 0
    /// The status of every placed order, by order id, changed one element at a time by `Reducer.forEach`.
    public var byID: [Int: OrderStatus] = [:]

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

/// One order's lifecycle: a pending order is fulfilled or rejected once; later actions for it change nothing.
public let orderReducer = Reducer<OrderStatus, OrderAction>(mutating: { status, action in
    guard status == .pending else { return }
    switch action {
    case .fulfill:
        status = .fulfilled
    case .reject(let reason):
        status = .rejected(reason)
    }
})

/// The order counters, and the order book's new entries: placed orders are pending until fulfilled or rejected.
public let orderCountsReducer = Reducer<OrdersState, ServiceAction>(mutating: { state, action in
    switch action {
    case .placeOrder(let order):
        state.placed += 1
        state.pending += 1
        state.byID[order.id] = .pending
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

/// The orders module: the counters, then the addressed order of the book, changed in place by `forEach` (an
/// action for an order that the book lacks changes nothing; the demo's check "order book matches the counters"
/// would then fail).
public let ordersReducer: Reducer<OrdersState, ServiceAction> = combineReducers(
    orderCountsReducer,
    .forEach(\OrdersState.byID, action: OrderAction.Addressed(), element: orderReducer)
)

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

/// The service reducer: the modules combined by key path; the orders module addresses its orders by id with
/// `forEach`.
public let serviceReducer = combineReducers(
    withKey(\ServiceState.orders, use: ordersReducer),
    withKey(\ServiceState.inventory, action: InventoryAction.init, use: inventoryReducer),
    withKey(\ServiceState.metrics, use: metricsReducer),
    withKey(\ServiceState.quotes, use: quotesReducer)
)
