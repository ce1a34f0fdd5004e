// The order service's state and actions. Everything here is `Codable`: the journal records the actions and
// snapshots the state.

/// The whole state of the service: two modules, each reduced by its own reducer through a key path (see
/// `shopReducer`).
public struct ShopState: Codable, Sendable, Equatable {
    /// Every order by id, and the counters of their outcomes.
    public var orders = OrdersState()
    /// The stock of each product, and the restocks under way.
    public var inventory: InventoryState

    /// A shop whose products start with `stock` units each.
    public init(stock: [String: Int] = ShopState.defaultStock) {
        inventory = InventoryState(stock: stock)
    }

    /// The products of a new shop: 1,000 units of each.
    public static let defaultStock = ["apple": 1_000, "pear": 1_000, "plum": 1_000]
}

/// The orders module.
public struct OrdersState: Codable, Sendable, Equatable {
    /// Every order, accepted or rejected, by id.
    public var byID: [Int: Order] = [:]
    /// The id of the last order placed (0 before the first); ids are given by the reducer, so a replay of the
    /// journal gives every order the same id again.
    public var lastID = 0
    /// The orders accepted so far.
    public var accepted = 0
    /// The orders rejected so far.
    public var rejected = 0
    /// The orders fulfilled so far.
    public var fulfilled = 0
}

/// One order.
public struct Order: Codable, Sendable, Equatable, Identifiable {
    /// Given by the reducer: 1, 2, 3, ...
    public var id: Int
    /// Who ordered.
    public var customer: String
    /// The product.
    public var sku: String
    /// How many units.
    public var quantity: Int
    /// Where the order is.
    public var status: OrderStatus
    /// Why the order was rejected, when it was.
    public var reason: RejectionReason?
}

/// Where an order is.
public enum OrderStatus: String, Codable, Sendable {
    /// The stock was reserved; fulfilment follows.
    case accepted
    /// Not taken: see the order's `reason`.
    case rejected
    /// Shipped.
    case fulfilled
}

/// Why an order was rejected.
public enum RejectionReason: String, Codable, Sendable {
    /// The shop does not sell this product.
    case unknownProduct
    /// Not enough units in stock.
    case outOfStock
}

/// The inventory module.
public struct InventoryState: Codable, Sendable, Equatable {
    /// Units in stock by product.
    public var stock: [String: Int]
    /// The restock under way for each product that fell below `lowWater`, by ticket number.
    public var restockDue: [String: Int] = [:]
    /// The number of restocks requested so far; each request gets the next number as its ticket.
    public var restockTickets = 0
    /// The units received by restocks so far.
    public var restockedUnits = 0

    /// A product whose stock falls below this is restocked.
    public static let lowWater = 100
    /// The units that one restock brings.
    public static let restockQuantity = 1_000
}

/// What a client asks for when it places an order; validated before it becomes an action.
public struct PlaceOrder: Codable, Sendable, Equatable {
    /// Who orders.
    public var customer: String
    /// The product.
    public var sku: String
    /// How many units: 1 to `PlaceOrder.maxQuantity`.
    public var quantity: Int

    /// Creates an order request.
    public init(customer: String, sku: String, quantity: Int) {
        self.customer = customer
        self.sku = sku
        self.quantity = quantity
    }

    /// The most units in one order.
    public static let maxQuantity = 1_000
}

/// Everything that changes the state.
public enum ShopAction: Codable, Sendable, Equatable {
    /// A client placed an order (checkout: reserves stock and records the order).
    case place(PlaceOrder)
    /// Something happened to one order (the orders module, by id).
    case order(id: Int, OrderAction)
    /// The supplier delivered the restock with this ticket (the inventory module).
    case restocked(sku: String, ticket: Int, quantity: Int)

    /// The case's name, for logs and metric labels.
    public var caseName: String {
        switch self {
        case .place: "place"
        case .order: "order"
        case .restocked: "restocked"
        }
    }

    /// Every case name, to make one metric per case up front.
    public static let caseNames = ["place", "order", "restocked"]
}

/// What happens to one order after it was placed.
public enum OrderAction: Codable, Sendable, Equatable {
    /// The warehouse shipped it.
    case fulfil
}
