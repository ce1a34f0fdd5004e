import Hummingbird
import HummingbirdTesting
import Sluice
import Synchronization
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
            let acknowledged = Mutex<[Order]>([])
            let (acks, ack) = AsyncStream.makeStream(of: Void.self)
            let failures = try await withThrowingTaskGroup(of: [String].self) { group in
                for clientIndex in 0..<Self.clients {
                    group.addTask {
                        // Each client orders until the server stops answering.
                        let connection = TestClient(host: "127.0.0.1", port: port)
                        connection.connect()
                        defer { Task { try? await connection.shutdown() } }
                        var index = 0
                        while true {
                            let response: TestClient.Response
                            do {
                                response = try await connection.post(
                                    "/orders",
                                    body: orderBody(customer: "client-\(clientIndex)", sku: "pear", quantity: 1)
                                )
                            } catch {
                                return []  // the server closed the connection
                            }
                            switch response.status {
                            case .created:
                                let order = try decode(Order.self, response.body)
                                acknowledged.withLock { $0.append(order) }
                                ack.yield()
                            case .serviceUnavailable:
                                return []
                            default:
                                return ["status \(response.status) for order \(index) of client \(clientIndex)"]
                            }
                            index += 1
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
                return try await group.reduce(into: []) { $0 += $1 }
            }
            ack.finish()
            #expect(failures.isEmpty, "\(failures)")
            #expect(await server.waitForExit() == 0)

            let orders = acknowledged.withLock { $0 }
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
