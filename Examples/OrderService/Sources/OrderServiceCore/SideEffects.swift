public import Sluice

// Fulfilment and restock. What follows an action is decided by two pure functions of the action and the state right
// after it, so that the Sluice backend (as side effects) and the Mutex backend (inline, under its lock) do the same.

/// The fulfilment that follows a placed order: `.order(id:, .fulfil)` when the order was accepted.
///
/// - Parameters:
///   - action: The action that was just reduced.
///   - state: The state right after it.
func fulfilment(after action: ShopAction, in state: borrowing ShopState) -> ShopAction? {
    guard case .place = action, let order = state.orders.byID[state.orders.lastID], order.status == .accepted
    else { return nil }
    return .order(id: order.id, .fulfil)
}

/// The restock that follows a placed order: the supplier's delivery, when the order left its product with a restock
/// due. (A real supplier answers later; here the delivery is the next action, which keeps the final state exact.)
func restock(after action: ShopAction, in state: borrowing ShopState) -> ShopAction? {
    guard case .place(let request) = action, let ticket = state.inventory.restockDue[request.sku] else { return nil }
    return .restocked(sku: request.sku, ticket: ticket, quantity: InventoryState.restockQuantity)
}

/// The service's side effects, in the order they run after each `.place`: fulfilment, then restock.
///
/// Each runs on the dispatching thread right after the reducer handled the order, and dispatches its follow-up,
/// which the store queues and reduces right after (rule 2 of the dispatch contract), through the whole chain: so
/// the journal records the follow-ups too, and a recovery replays them without running the effects again.
public let shopSideEffects: [Middleware<ShopState, ShopAction>] = [
    Middleware(
        Middlewares.filter(
            isPlace,
            SideEffect<ShopState, ShopAction> { action, api in
                if let next = api.read({ fulfilment(after: action, in: $0) }) {
                    _ = api.dispatch(next)
                }
            }
        )
    ),
    Middleware(
        Middlewares.filter(
            isPlace,
            SideEffect<ShopState, ShopAction> { action, api in
                if let next = api.read({ restock(after: action, in: $0) }) {
                    _ = api.dispatch(next)
                }
            }
        )
    ),
]

@Sendable
func isPlace(_ action: ShopAction) -> Bool {
    if case .place = action { true } else { false }
}
