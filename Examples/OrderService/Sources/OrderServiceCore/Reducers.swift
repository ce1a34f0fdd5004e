public import Sluice

// Three reducers, combined by key path: checkout sees the whole state (an order needs the stock), the orders module
// sees one order at a time (`Reducer.forEach` by id), the inventory module sees only the inventory.

/// The service's reducer: checkout, then the orders module, then the inventory module.
public let shopReducer: Reducer<ShopState, ShopAction> = combineReducers(
    checkoutReducer,
    withKey(\ShopState.orders, use: ordersCountReducer),
    Reducer.forEach(
        \ShopState.orders.byID,
        action: { action in
            if case .order(let id, let local) = action { (id, local) } else { nil }
        },
        element: orderReducer,
        // Fulfilment only names orders that exist; an unknown id changes nothing and is not worth a report.
        ifMissing: { _ in }
    ),
    withKey(
        \ShopState.inventory,
        action: { action in
            if case .restocked(let sku, let ticket, let quantity) = action { (sku, ticket, quantity) } else { nil }
        },
        use: restockReducer
    )
)

/// `.place`: gives the order the next id, reserves the stock or rejects the order, and asks for a restock when the
/// product falls below `InventoryState.lowWater`.
let checkoutReducer = Reducer<ShopState, ShopAction>(mutating: { state, action in
    guard case .place(let request) = action else { return }
    state.orders.lastID += 1
    var order = Order(
        id: state.orders.lastID,
        customer: request.customer,
        sku: request.sku,
        quantity: request.quantity,
        status: .accepted
    )
    if let available = state.inventory.stock[request.sku] {
        if available >= request.quantity {
            let left = available - request.quantity
            state.inventory.stock[request.sku] = left
            if left < InventoryState.lowWater && state.inventory.restockDue[request.sku] == nil {
                state.inventory.restockTickets += 1
                state.inventory.restockDue[request.sku] = state.inventory.restockTickets
            }
            state.orders.accepted += 1
        } else {
            order.status = .rejected
            order.reason = .outOfStock
            state.orders.rejected += 1
        }
    } else {
        order.status = .rejected
        order.reason = .unknownProduct
        state.orders.rejected += 1
    }
    state.orders.byID[order.id] = order
})

/// The orders module's counters: one more fulfilled order per `.fulfil` of an accepted order.
///
/// Runs before the element reducer (`combineReducers` order), so it still sees the order as accepted.
let ordersCountReducer = Reducer<OrdersState, ShopAction>(mutating: { orders, action in
    if case .order(let id, .fulfil) = action, orders.byID[id]?.status == .accepted {
        orders.fulfilled += 1
    }
})

/// One order: `.fulfil` ships an accepted order; anything else is left as it is.
let orderReducer = Reducer<Order, OrderAction>(mutating: { order, action in
    switch action {
    case .fulfil where order.status == .accepted:
        order.status = .fulfilled
    case .fulfil:
        break
    }
})

/// The inventory module: a delivery adds its units once, if its ticket is the one due (a repeated delivery of the
/// same ticket changes nothing).
let restockReducer = Reducer<InventoryState, (sku: String, ticket: Int, quantity: Int)>(
    mutating: { inventory, delivery in
        guard inventory.restockDue[delivery.sku] == delivery.ticket else { return }
        inventory.restockDue[delivery.sku] = nil
        inventory.stock[delivery.sku, default: 0] += delivery.quantity
        inventory.restockedUnits += delivery.quantity
    }
)
