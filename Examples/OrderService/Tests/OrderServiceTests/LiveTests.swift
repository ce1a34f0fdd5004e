import Hummingbird
import HummingbirdTesting
import Testing

@testable import OrderServiceCore

/// Many clients on 127.0.0.1 at once, each on its own connection, against the real server.
@Suite struct LiveTests {
    static let clients = 16
    static let ordersPerClient = 25
    static let products = ["apple", "pear", "plum"]
    /// Low enough that the products cross the restock threshold while the clients order.
    static let initialStock = 150

    @Test(.timeLimit(.minutes(2)), arguments: BackendKind.allCases)
    func concurrentClientsLeaveExactlyTheStateOfTheirAcknowledgedOrders(_ kind: BackendKind) async throws {
        let initial = ShopState(stock: Dictionary(uniqueKeysWithValues: Self.products.map { ($0, Self.initialStock) }))
        let app = testApplication(kind.make(initial))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let acknowledged = try await withThrowingTaskGroup(of: [Order].self) { group in
                for clientIndex in 0..<Self.clients {
                    group.addTask {
                        try await TestClient.withClient(host: "127.0.0.1", port: port) { connection in
                            var orders: [Order] = []
                            for index in 0..<Self.ordersPerClient {
                                let body = orderBody(
                                    customer: "client-\(clientIndex)",
                                    sku: Self.products[(clientIndex + index) % Self.products.count],
                                    quantity: 1 + (clientIndex * 7 + index) % 5
                                )
                                let response = try await connection.post("/orders", body: body)
                                #expect(response.status == .created)
                                orders.append(try decode(Order.self, response.body))
                            }
                            return orders
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let total = Self.clients * Self.ordersPerClient
            // Every order got its own id, and was answered with its own outcome.
            #expect(acknowledged.map(\.id).sorted() == Array(1...total))
            #expect(acknowledged.allSatisfy { $0.status == .accepted && $0.reason == nil })

            let stats = try decode(ServiceStats.self, try await client.execute(uri: "/stats", method: .get).body)
            #expect(stats.orders == total && stats.accepted == total && stats.fulfilled == total && stats.rejected == 0)
            // Every unit is accounted for: what was there, plus what restocks brought, minus what was ordered.
            let ordered = acknowledged.reduce(0) { $0 + $1.quantity }
            let left = stats.stock.values.reduce(0, +)
            #expect(Self.products.count * Self.initialStock + stats.restockedUnits - ordered == left)
            #expect(stats.restockedUnits > 0 && stats.restockedUnits % InventoryState.restockQuantity == 0)
            #expect(stats.stock.values.allSatisfy { $0 >= 0 })

            // Every order reads back as it was acknowledged, now fulfilled.
            for order in acknowledged {
                let read = try decode(
                    Order.self,
                    try await client.execute(uri: "/orders/\(order.id)", method: .get).body
                )
                var fulfilled = order
                fulfilled.status = .fulfilled
                #expect(read == fulfilled)
            }
        }
    }
}
