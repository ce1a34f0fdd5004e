import Sluice
import Testing

@testable import OrderServiceCore

@Suite struct ReducerTests {
    @Test func aPlacedOrderReservesStock() {
        var state = ShopState(stock: ["apple": 5])
        shopReducer.reduce(into: &state, .place(PlaceOrder(customer: "ann", sku: "apple", quantity: 3)))
        #expect(state.inventory.stock["apple"] == 2)
        #expect(state.orders.byID[1]?.status == .accepted)
    }
}
