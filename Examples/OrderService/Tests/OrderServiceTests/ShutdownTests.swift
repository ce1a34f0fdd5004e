import Hummingbird
import HummingbirdTesting
import Sluice
import SluiceJournal
import Testing

@testable import OrderServiceCore

/// The real executable: SIGTERM while clients are ordering, then the journal is read back.
@Suite struct ShutdownTests {
    static let clients = 8

    @Test(.timeLimit(.minutes(3)))
    func sigtermExitsZeroAndTheJournalHoldsEveryAcknowledgedOrder() async throws {
        try await withTemporaryDirectory { directory in
            let server = try ServerProcess(arguments: ["--port", "0", "--data-dir", directory])
            let port = try await server.port()
            let (acks, ack) = AsyncStream.makeStream(of: Void.self)
            // Each client's acknowledged orders, and what went wrong if anything.
            let results = try await withThrowingTaskGroup(of: ([Order], String?).self) { group in
                for clientIndex in 0..<Self.clients {
                    group.addTask {
                        // Each client orders until the server stops answering.
                        let connection = TestClient(host: "127.0.0.1", port: port)
                        connection.connect()
                        defer { Task { try? await connection.shutdown() } }
                        var orders: [Order] = []
                        while true {
                            let response: TestClient.Response
                            do {
                                response = try await connection.post(
                                    "/orders",
                                    body: orderBody(customer: "client-\(clientIndex)", sku: "pear", quantity: 1)
                                )
                            } catch {
                                return (orders, nil)  // the server closed the connection
                            }
                            switch response.status {
                            case .created:
                                orders.append(try decode(Order.self, response.body))
                                ack.yield()
                            case .serviceUnavailable:
                                return (orders, nil)
                            default:
                                return (
                                    orders,
                                    "status \(response.status) after \(orders.count) orders of client \(clientIndex)"
                                )
                            }
                        }
                    }
                }
                // SIGTERM in the middle of the traffic.
                var count = 0
                for await _ in acks {
                    count += 1
                    if count == 200 { break }
                }
                server.terminate()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            ack.finish()
            let failures = results.compactMap(\.1)
            #expect(failures.isEmpty, "\(failures)")
            #expect(await server.waitForExit() == 0)

            let orders = results.flatMap(\.0)
            #expect(orders.count >= 200)
            let journal = try Journal(directory: directory)
            let (state, recovery) = try Store<ShopState, ShopAction>.recover(
                from: journal,
                initialState: ShopState(),
                reducer: shopReducer
            )
            // The final snapshot covers the whole journal.
            #expect(recovery.replayedActions == 0)
            #expect(recovery.snapshotSequence == recovery.lastSequence)
            #expect(recovery.snapshotSequence > 0)
            for order in orders {
                var fulfilled = order
                fulfilled.status = .fulfilled
                #expect(state.orders.byID[order.id] == fulfilled)
            }
            // An order can be recorded and its answer lost with its connection, never the other way round.
            #expect(state.orders.lastID >= orders.count)
            journal.close()

            // A restart recovers them.
            let restarted = try ServerProcess(arguments: ["--port", "0", "--data-dir", directory])
            let newPort = try await restarted.port()
            try await TestClient.withClient(host: "127.0.0.1", port: newPort) { connection in
                let stats = try decode(ServiceStats.self, try await connection.get("/stats").body)
                #expect(stats.orders == state.orders.lastID)
                #expect(stats.fulfilled == state.orders.fulfilled)
                let next = try await connection.post("/orders", body: orderBody())
                #expect(try decode(Order.self, next.body).id == state.orders.lastID + 1)
            }
            restarted.terminate()
            #expect(await restarted.waitForExit() == 0)
        }
    }
}
