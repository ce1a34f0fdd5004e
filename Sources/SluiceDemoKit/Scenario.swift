import Dispatch
public import Foundation
public import Sluice

/// What a run of the demo did and found.
public struct DemoSummary: Sendable {
    /// One consistency check on the final state.
    public struct Check: Sendable {
        public var name: String
        public var passed: Bool
        public var detail: String
    }

    public var options: DemoOptions
    public var finalState: ServiceState
    /// Actions the producers dispatched.
    public var dispatches: Int
    /// Actions the reducer processed (the producers' and those the side effects dispatched).
    public var actionsProcessed: Int
    /// Wall-clock seconds from the first to the last producer dispatch.
    public var seconds: Double
    /// Runs of each side effect, by modifier.
    public var effectRuns: [(name: String, count: Int)]
    public var checks: [Check]
    /// The first lines of the logging middleware and the throttled metrics reporter.
    public var logExcerpt: [String]
    public var snapshotPath: String

    /// Producer dispatches per second of wall-clock time.
    public var dispatchesPerSecond: Double {
        seconds > 0 ? Double(dispatches) / seconds : 0
    }

    /// Whether every consistency check passed.
    public var passed: Bool {
        checks.allSatisfy(\.passed)
    }

    /// The summary as printed by `sluice-demo`.
    public var report: String {
        var lines = [String]()
        lines.append("Summary")
        lines.append("  orders placed        \(finalState.orders.placed) by \(options.producers) producer threads")
        lines.append(
            "  fulfilled / rejected \(finalState.orders.fulfilled) / \(finalState.orders.rejected)"
                + " (revenue \(formatCents(finalState.orders.revenueCents)))"
        )
        lines.append("  actions processed    \(actionsProcessed) (\(dispatches) dispatched by the producers)")
        lines.append(
            "  throughput           \(Int(dispatchesPerSecond.rounded())) dispatches/s"
                + " (\(String(format: "%.3f", seconds)) s wall clock, all middleware on)"
        )
        lines.append("Effect runs")
        for (name, count) in effectRuns {
            lines.append("  \(name.padding(toLength: 36, withPad: " ", startingAt: 0)) \(count)")
        }
        lines.append("Consistency checks")
        for check in checks {
            lines.append("  [\(check.passed ? "ok" : "FAILED")] \(check.name): \(check.detail)")
        }
        lines.append(passed ? "All checks passed." : "Some checks FAILED.")
        return lines.joined(separator: "\n")
    }
}

private func formatCents(_ cents: Int) -> String {
    "$\(cents / 100).\(String(format: "%02d", cents % 100))"
}

/// Counts of side-effect runs, shared by the effects and the scenario.
final class Counter: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = 0

    func increment() {
        lock.withLock { value += 1 }
    }

    var current: Int {
        lock.withLock { value }
    }
}

/// Lines for the log excerpt, keeping the first `limit`.
final class Excerpt: @unchecked Sendable {
    // @unchecked: `lines` is guarded by `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func append(_ line: String) {
        lock.withLock {
            if lines.count < limit { lines.append(line) }
        }
    }

    var current: [String] {
        lock.withLock { lines }
    }
}

/// The catalogue: eight SKUs, one of them a limited edition that is never restocked (so some orders are rejected).
public let demoCatalogue: [SKU: Int] = [
    "apple": 500, "banana": 500, "cherry": 500, "date": 500,
    "elderberry": 500, "fig": 500, "grape": 500, "limited-edition": 40,
]

/// The order a producer places for an order id: deterministic, so runs are comparable.
public func demoOrder(id: Int) -> Order {
    let skus = demoCatalogue.keys.sorted()
    let sku = skus[id % skus.count]
    return Order(id: id, sku: sku, quantity: id % 3 + 1, priceCents: 199 + (id % 7) * 100)
}

/// Runs the order-processing scenario and returns what happened.
///
/// - Parameters:
///   - snapshotDirectory: Where the snapshot is written; the folder is created if needed and kept.
///   - dependencies: The services of the store (its price service, say); the snapshot store is set to
///     `snapshotDirectory`.
public func runDemo(
    _ options: DemoOptions,
    snapshotDirectory: URL,
    dependencies: StoreDependencies = StoreDependencies()
) -> DemoSummary {
    let directory = snapshotDirectory
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let snapshotURL = directory.appendingPathComponent("state.json")

    let excerpt = Excerpt(limit: 12)
    let counters = (
        fulfilment: Counter(), reorders: Counter(), reports: Counter(), snapshots: Counter(),
        lookupsStarted: Counter(), lookupsCompleted: Counter(), lookupsSuperseded: Counter(), snapshotErrors: Counter()
    )
    let negativeStock = Counter()

    // Fulfilment: a plain side effect that decides, from the state, whether an order can be served.
    let fulfilment = Middlewares.filter(
        { (action: ServiceAction) in if case .placeOrder = action { true } else { false } },
        SideEffect<ServiceState, ServiceAction> { action, api in
            guard case .placeOrder(let order) = action else { return }
            counters.fulfilment.increment()
            if order.quantity <= 0 {
                api.dispatch(.reject(order, .invalidQuantity))
            } else if api.state.inventory.stock[order.sku, default: 0] >= order.quantity {
                api.dispatch(.fulfill(order))
            } else {
                api.dispatch(.reject(order, .outOfStock))
            }
        }
    )
    // Reordering: when a fulfilment leaves a SKU low, restock it (never the limited edition).
    let reorder = SideEffect<ServiceState, ServiceAction> { action, api in
        guard case .fulfill(let order) = action, order.sku != "limited-edition",
            api.state.inventory.stock[order.sku, default: 0] < 50
        else { return }
        counters.reorders.increment()
        api.dispatch(.restock(order.sku, quantity: 500))
    }
    // A throttled metrics reporter: at most one line every 100 ms, the newest state trailing.
    let reporter = Middlewares.throttle(.milliseconds(100), latest: true) {
        (_: ServiceAction, api: MiddlewareAPI<ServiceState, ServiceAction>) in
        counters.reports.increment()
        let state = api.state
        excerpt.append(
            "metrics  placed=\(state.orders.placed) fulfilled=\(state.orders.fulfilled) "
                + "rejected=\(state.orders.rejected) actions=\(state.metrics.actions)"
        )
    }
    // A debounced snapshot writer: 50 ms after the last action, and at least every 500 ms under load, write the
    // state as JSON, atomically, to the store's snapshot store (a dependency), on the debounce's queue (never inside
    // a dispatch). Shutdown writes the last one.
    let snapshot = Middlewares.debounce(.milliseconds(50), maxWait: .milliseconds(500), runs: .onScheduler) {
        (_: ServiceAction, api: MiddlewareAPI<ServiceState, ServiceAction>) in
        do {
            try api.dependencies.snapshotStore.write(api.state)
            counters.snapshots.increment()
        } catch {
            counters.snapshotErrors.increment()
        }
    }
    // A takeLatest quote lookup: a newer request supersedes the one in flight, whose result is then dropped. The
    // price comes from the store's price service (a dependency), through a helper that reads it from the task.
    @Sendable func price(of sku: String, requestID: Int) async throws -> Int {
        try await StoreDependencies.current.priceService.price(of: sku, requestID: requestID)
    }
    let quotes = Middlewares.filter(
        { (action: ServiceAction) in if case .requestQuote = action { true } else { false } },
        Middlewares.takeLatest { (action: ServiceAction, api: MiddlewareAPI<ServiceState, ServiceAction>) async in
            guard case .requestQuote(let sku, let requestID) = action else { return }
            counters.lookupsStarted.increment()
            guard let priceCents = try? await price(of: sku, requestID: requestID), !Task.isCancelled else {
                counters.lookupsSuperseded.increment()
                return
            }
            // A newer request can supersede this run between the check above and this dispatch; the store then
            // drops the result, and says so. Count only what it accepted, so "every action reduced once" is exact.
            if api.dispatch(.quoteReceived(sku, requestID: requestID, priceCents: priceCents)) {
                counters.lookupsCompleted.increment()
            } else {
                counters.lookupsSuperseded.increment()
            }
        }
    )

    let actionsPerOrder = 2
    let logging: Middleware<ServiceState, ServiceAction> = Middlewares.logging(
        diff: true,
        maxLineLength: 150,
        sampling: .every(max(1, options.orders * actionsPerOrder / 6)),
        sink: { line in excerpt.append("log      " + line) }
    )
    // The store's services: the price service that the caller gave (the simulated one by default), and the
    // snapshot store in `snapshotDirectory`.
    var services = dependencies
    services.snapshotStore = SnapshotStore(url: snapshotURL)
    let store = Store<ServiceState, ServiceAction>(
        initialState: ServiceState(stock: demoCatalogue),
        reducer: serviceReducer,
        middleware: [
            logging,
            Middleware(fulfilment),
            Middleware(reorder),
            Middleware(reporter),
            Middleware(snapshot),
            Middleware(quotes),
        ],
        dependencies: services
    )
    let stockWatch = store.subscribe(to: \.inventory.stock) { stock in
        if stock.values.contains(where: { $0 < 0 }) { negativeStock.increment() }
    }

    // Producers: each places every P-th order; every `quoteEvery`-th order also asks for a quote.
    let quoteRequests = Counter()
    let dispatched = Counter()
    let group = DispatchGroup()
    let start = DispatchTime.now()
    for producer in 0..<options.producers {
        group.enter()
        Thread.detachNewThread {
            var count = 0
            var id = producer + 1
            while id <= options.orders {
                let order = demoOrder(id: id)
                store.dispatch(.placeOrder(order))
                count += 1
                if id.isMultiple(of: options.quoteEvery) {
                    store.dispatch(.requestQuote(order.sku, requestID: id))
                    quoteRequests.increment()
                    count += 1
                }
                id += options.producers
            }
            for _ in 0..<count { dispatched.increment() }
            group.leave()
        }
    }
    group.wait()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9

    // Let the quote lookup in flight deliver its result (shutdown refuses dispatches, including that one).
    let settled = waitFor(seconds: 60) {
        let state = store.state
        return state.quotes.lastReceivedID == state.quotes.lastRequestID
    }
    // Shutdown runs the snapshot that the debounce owes, so the file on disk holds the final state when it returns.
    let shutdownDone = DispatchSemaphore(value: 0)
    Task {
        await store.shutdown(timeout: .seconds(10))
        shutdownDone.signal()
    }
    shutdownDone.wait()
    let final = store.state
    stockWatch.cancel()

    var checks = [DemoSummary.Check]()
    let orders = final.orders
    checks.append(
        .init(
            name: "every order accounted for",
            passed: orders.placed == options.orders && orders.fulfilled + orders.rejected == orders.placed
                && orders.pending == 0,
            detail: "\(orders.placed) placed = \(orders.fulfilled) fulfilled + \(orders.rejected) rejected,"
                + " \(orders.pending) pending"
        )
    )
    let lowest = final.inventory.stock.values.min() ?? 0
    checks.append(
        .init(
            name: "stock never negative",
            passed: negativeStock.current == 0 && lowest >= 0,
            detail: "checked after every change; lowest final stock \(lowest)"
        )
    )
    let expectedActions =
        orders.placed + orders.fulfilled + orders.rejected + final.inventory.restocks + quoteRequests.current
        + counters.lookupsCompleted.current
    checks.append(
        .init(
            name: "every action reduced once",
            passed: final.metrics.actions == expectedActions,
            detail: "\(final.metrics.actions) reduced, \(expectedActions) expected"
        )
    )
    checks.append(
        .init(
            name: "latest quote wins",
            passed: settled && final.quotes.lastReceivedID == final.quotes.lastRequestID,
            detail: "last request #\(final.quotes.lastRequestID), last result #\(final.quotes.lastReceivedID)"
        )
    )
    checks.append(
        .init(
            name: "snapshot on disk matches the state",
            passed: readSnapshot(at: snapshotURL) == final && counters.snapshotErrors.current == 0,
            detail: snapshotURL.path
        )
    )

    return DemoSummary(
        options: options,
        finalState: final,
        dispatches: dispatched.current,
        actionsProcessed: final.metrics.actions,
        seconds: seconds,
        effectRuns: [
            ("fulfilment (filter)", counters.fulfilment.current),
            ("reorder (side effect)", counters.reorders.current),
            ("metrics report (throttle, latest)", counters.reports.current),
            ("snapshot written (debounce)", counters.snapshots.current),
            ("quote lookups started (takeLatest)", counters.lookupsStarted.current),
            ("quote lookups completed", counters.lookupsCompleted.current),
            ("quote lookups superseded", counters.lookupsSuperseded.current),
        ],
        checks: checks,
        logExcerpt: excerpt.current,
        snapshotPath: snapshotURL.path
    )
}

/// Writes the state as JSON next to `url`, then renames it over `url`, so a reader never sees half a file.
func writeSnapshot(_ state: ServiceState, to url: URL) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let data = try encoder.encode(state)
    let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
    try data.write(to: temporary)
    guard rename(temporary.path, url.path) == 0 else {
        throw CocoaError(.fileWriteUnknown)
    }
}

/// Reads a snapshot back; `nil` if there is none or it does not decode.
func readSnapshot(at url: URL) -> ServiceState? {
    guard let data = try? Data(contentsOf: url) else { return nil }
    return try? JSONDecoder().decode(ServiceState.self, from: data)
}

/// Polls `condition` every millisecond for at most `seconds`.
private func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    while !condition() {
        if DispatchTime.now().uptimeNanoseconds > deadline { return false }
        usleep(1_000)
    }
    return true
}
