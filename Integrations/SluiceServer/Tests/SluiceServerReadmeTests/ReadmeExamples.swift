// The README's samples, compiled: each function's body is a block of README.md, with the declarations it assumes
// around it. Keep the two in step.

import Foundation
import Logging
import ServiceLifecycle
import Sluice
import SluiceJournal
import SluiceLifecycle
import SluiceLogging
import SluiceMetrics
import SluiceTracing
import Testing

struct AppState: Sendable {
    var count = 0
}

enum AppAction: Sendable {
    case place(id: Int)
    case cancel(id: Int)
    case ship
}

let appReducer = Reducer<AppState, AppAction>(mutating: { state, _ in state.count += 1 })

struct Orders: Codable, Sendable {
    var placed = 0
}

enum OrderAction: Codable, Sendable {
    case place(id: Int)
}

let ordersReducer = Reducer<Orders, OrderAction>(mutating: { state, _ in state.placed += 1 })

struct Payments: Sendable {
    func charge(_ action: OrderAction) async throws {}
}

struct Shipping: Sendable {
    func ship(_ action: OrderAction) async throws {}
}

let payments = Payments()
let shipping = Shipping()

/// Stands for the service's HTTP server.
struct Server: Service {
    func run() async throws { try? await gracefulShutdown() }
}

/// The block of "SluiceLogging".
func loggingExample(logger: Logger) -> Store<AppState, AppAction> {
    let store = Store<AppState, AppAction>(
        initialState: AppState(),
        reducer: appReducer,
        middleware: [Middlewares.logging(to: logger, level: .debug, store: "orders", sampling: .every(100))]
    )
    return store
}

/// The block of "SluiceMetrics".
func metricsExample() -> Store<AppState, AppAction> {
    let store = Store<AppState, AppAction>(
        initialState: AppState(),
        reducer: appReducer,
        instrumentation: .metrics(store: "orders", actionCases: ["place", "cancel", "ship"])
    )
    return store
}

/// The block of "SluiceLifecycle" (compiled, not run: it runs until SIGTERM).
func lifecycleExample(logger: Logger, server: Server) async throws {
    let journal = try Journal(directory: "/var/lib/orders")
    let store = try Store<Orders, OrderAction>(
        recoveringFrom: journal,
        durability: .groupCommit(interval: .milliseconds(2)),
        initialState: Orders(),
        reducer: ordersReducer
    )
    let group = ServiceGroup(
        services: [StoreService(store: store, journal: journal, label: "orders", logger: logger), server],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
    try await group.run()
}

/// The block of "SluiceTracing".
func tracingExample(journal: Journal) throws -> Store<Orders, OrderAction> {
    let store = try Store<Orders, OrderAction>(
        recoveringFrom: journal,
        durability: .groupCommit(interval: .milliseconds(2)),
        initialState: Orders(),
        reducer: ordersReducer,
        middleware: [
            Middlewares.tracing(store: "orders", journal: journal),
            Middleware(
                SideEffect.traced("charge") { action, api in
                    try await payments.charge(action)
                    api.startTraced("ship") { _ in try await shipping.ship(action) }
                }
            ),
        ]
    )
    return store
}

@Suite struct ReadmeExamplesTests {
    @Test func theSamplesRun() throws {
        loggingExample(logger: Logger(label: "readme") { _ in SwiftLogNoOpLogHandler() }).dispatch(.ship)
        metricsExample().dispatch(.place(id: 1))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = try Journal(directory: directory)
        let store = try tracingExample(journal: journal)
        store.dispatch(.place(id: 1))
        #expect(store.state.placed == 1)
        journal.close()
        _ = lifecycleExample as (Logger, Server) async throws -> Void
    }
}
