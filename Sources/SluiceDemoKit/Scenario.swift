import Dispatch
public import Foundation
public import Sluice
import SluiceJournal

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
    /// The JSON snapshot file, or the data directory with `--data-dir`.
    public var snapshotPath: String
    /// What `--data-dir` recovered, journaled and verified; `nil` without it.
    public var journal: JournalSummary?

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
        lines.append("  order book           \(finalState.orders.byID.count) orders by id (forEach)")
        if dispatches > 0 {
            lines.append(
                "  throughput           \(Int(dispatchesPerSecond.rounded())) dispatches/s"
                    + " (\(String(format: "%.3f", seconds)) s wall clock, all middleware on)"
            )
        } else {
            lines.append("  throughput           no orders left to place")
        }
        if let journal {
            lines += journal.lines
        }
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
final class Counter: Sendable {
    private let value = Locked(0)

    func increment() {
        value.withLock { $0 += 1 }
    }

    var current: Int {
        value.withLock { $0 }
    }
}

/// Lines for the log excerpt, keeping the first `limit`.
final class Excerpt: Sendable {
    private let lines = Locked<[String]>([])
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func append(_ line: String) {
        lines.withLock {
            if $0.count < limit { $0.append(line) }
        }
    }

    var current: [String] {
        lines.withLock { $0 }
    }
}

/// The catalogue: eight SKUs, one of them a limited edition that is never restocked (so some orders are rejected).
public let demoCatalogue: [SKU: Int] = [
    "apple": 500, "banana": 500, "cherry": 500, "date": 500,
    "elderberry": 500, "fig": 500, "grape": 500, "limited-edition": 40,
]

/// The catalogue's SKUs in order, sorted once (the order book check describes every fulfilled order).
private let demoSKUs = demoCatalogue.keys.sorted()

/// The order a producer places for an order id: deterministic, so runs are comparable.
public func demoOrder(id: Int) -> Order {
    let sku = demoSKUs[id % demoSKUs.count]
    return Order(id: id, sku: sku, quantity: id % 3 + 1, priceCents: 199 + (id % 7) * 100)
}

/// Runs the order-processing scenario and returns what happened.
///
/// With `options.dataDirectory`, every action is journaled there and the run resumes from the journal that the
/// directory holds: it starts from the recovered state, decides the pending orders again, requests the quote in
/// flight again, and places only the orders of `1...options.orders` that the journal lacks.
///
/// - Parameters:
///   - snapshotDirectory: Where the JSON snapshot is written without a data directory; the folder is created if
///     needed and kept.
///   - dependencies: The services of the store (its price service, say); the snapshot store is set to
///     `snapshotDirectory`.
///   - acknowledge: With `options.acknowledge`, receives the placed orders once durable; by default they are
///     written to standard output.
/// - Throws: A ``DemoError`` when the data directory cannot be used; nothing ran then.
public func runDemo(
    _ options: DemoOptions,
    snapshotDirectory: URL,
    dependencies: StoreDependencies = StoreDependencies(),
    acknowledge: @escaping @Sendable ([DemoAcknowledgement]) -> Void = writeAcknowledgementsToStandardOutput
) throws(DemoError) -> DemoSummary {
    // The journal first: a data directory that cannot be used stops the run before anything happens.
    let journal: DemoJournal?
    if let dataDirectory = options.dataDirectory {
        journal = try DemoJournal.open(dataDirectory, orders: options.orders)
    } else {
        journal = nil
    }
    let start = journal?.recovered ?? ServiceState(stock: demoCatalogue)
    let directory = snapshotDirectory
    if journal == nil {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    let snapshotURL = directory.appendingPathComponent("state.json")

    let excerpt = Excerpt(limit: 12)
    let counters = (
        fulfilment: Counter(), reorders: Counter(), reports: Counter(), snapshots: Counter(),
        lookupsStarted: Counter(), lookupsCompleted: Counter(), lookupsSuperseded: Counter(), snapshotErrors: Counter()
    )
    let negativeStock = Counter()

    // Fulfilment: a plain side effect that decides, from the state, whether an order can be served: a new order,
    // or one that an earlier run left pending.
    let fulfilment = Middlewares.filter(
        { (action: ServiceAction) in
            switch action {
            case .placeOrder, .resumeOrder: true
            default: false
            }
        },
        SideEffect<ServiceState, ServiceAction> { action, api in
            let order: Order
            switch action {
            case .placeOrder(let placed), .resumeOrder(let placed): order = placed
            default: return
            }
            counters.fulfilment.increment()
            if order.quantity <= 0 {
                api.dispatch(.reject(order, .invalidQuantity))
            } else if api.read({ $0.inventory.stock[order.sku, default: 0] }) >= order.quantity {
                api.dispatch(.fulfill(order))
            } else {
                api.dispatch(.reject(order, .outOfStock))
            }
        }
    )
    // Reordering: when a fulfilment leaves a SKU low, restock it (never the limited edition).
    let reorder = SideEffect<ServiceState, ServiceAction> { action, api in
        guard case .fulfill(let order) = action, order.sku != "limited-edition",
            api.read({ $0.inventory.stock[order.sku, default: 0] }) < 50
        else { return }
        counters.reorders.increment()
        api.dispatch(.restock(order.sku, quantity: 500))
    }
    // A throttled metrics reporter: at most one line every 100 ms, the newest state trailing.
    let reporter = Middlewares.throttle(.milliseconds(100), latest: true) {
        (_: ServiceAction, api: MiddlewareAPI<ServiceState, ServiceAction>) in
        counters.reports.increment()
        // A borrowed read of four numbers: holding a copy of the state would make the reducer copy the order book.
        let (placed, fulfilled, rejected, actions) = api.read {
            ($0.orders.placed, $0.orders.fulfilled, $0.orders.rejected, $0.metrics.actions)
        }
        excerpt.append("metrics  placed=\(placed) fulfilled=\(fulfilled) rejected=\(rejected) actions=\(actions)")
    }
    // A debounced snapshot writer: 50 ms after the last action, and at least every 500 ms under load, write the
    // state as JSON, atomically, to the store's snapshot store (a dependency), on the debounce's queue (never inside
    // a dispatch). Shutdown writes the last one. With a data directory, it writes a journal snapshot instead: the
    // state with the sequence number it covers, so that recovery replays only the actions after it.
    let storeReference = StoreReference()
    let snapshot = Middlewares.debounce(.milliseconds(50), maxWait: .milliseconds(500), runs: .onScheduler) {
        (_: ServiceAction, api: MiddlewareAPI<ServiceState, ServiceAction>) in
        do {
            if let journal {
                guard let store = storeReference.current else { return }
                try journal.snapshot(store)
            } else {
                try api.dependencies.snapshotStore.write(api.state)
            }
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
    // The journal middleware goes last: it records exactly the actions that reach the reducer, in its order.
    var middleware = [
        logging,
        Middleware(fulfilment),
        Middleware(reorder),
        Middleware(reporter),
        Middleware(snapshot),
        Middleware(quotes),
    ]
    if let journal {
        middleware.append(journal.middleware)
    }
    let store = Store<ServiceState, ServiceAction>(
        initialState: start,
        reducer: serviceReducer,
        middleware: middleware,
        dependencies: services
    )
    storeReference.set(store)
    journal?.startWriter()
    let acknowledger = journal.flatMap { journal in
        options.acknowledge ? Acknowledger(journal: journal.journal, sink: acknowledge) : nil
    }
    let stockWatch = store.subscribe(to: \.inventory.stock) { stock in
        if stock.values.contains(where: { $0 < 0 }) { negativeStock.increment() }
    }

    // Resuming: recovery replayed the journal through the reducer only, so the effects of its last actions may
    // never have run. Decide the orders left pending again, and ask again for the quote whose result is missing.
    let quoteRequests = Counter()
    var resumedOrders = 0
    var resumedQuote = false
    if journal != nil {
        for (id, status) in start.orders.byID.sorted(by: { $0.key < $1.key }) where status == .pending {
            store.dispatch(.resumeOrder(demoOrder(id: id)))
            resumedOrders += 1
        }
        let quotes = start.quotes
        if quotes.lastRequestID != quotes.lastReceivedID {
            store.dispatch(.requestQuote(demoOrder(id: quotes.lastRequestID).sku, requestID: quotes.lastRequestID))
            quoteRequests.increment()
            resumedQuote = true
        }
    }

    // Producers: each places every P-th order that is not in the order book yet; every `quoteEvery`-th order also
    // asks for a quote.
    let alreadyPlaced = start.orders.byID
    let dispatched = Counter()
    let group = DispatchGroup()
    let startTime = DispatchTime.now()
    for producer in 0..<options.producers {
        group.enter()
        Thread.detachNewThread {
            var count = 0
            var id = producer + 1
            while id <= options.orders {
                defer { id += options.producers }
                guard alreadyPlaced[id] == nil else { continue }
                let order = demoOrder(id: id)
                store.dispatch(.placeOrder(order))
                count += 1
                if let acknowledger, let journal {
                    // At least the order's own sequence number: its dispatch has returned.
                    acknowledger.add(order: id, sequence: journal.journal.lastSequence)
                }
                if id.isMultiple(of: options.quoteEvery) {
                    store.dispatch(.requestQuote(order.sku, requestID: id))
                    quoteRequests.increment()
                    count += 1
                }
            }
            for _ in 0..<count { dispatched.increment() }
            group.leave()
        }
    }
    group.wait()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - startTime.uptimeNanoseconds) / 1e9

    // Let the quote lookup in flight deliver its result (shutdown refuses dispatches, including that one).
    let settleStart = DispatchTime.now()
    let quotesSettled = DispatchSemaphore(value: 0)
    let quotesWatch = store.subscribe(to: \.quotes) { quotes in
        if quotes.lastReceivedID == quotes.lastRequestID { quotesSettled.signal() }
    }
    let settled =
        store.state.quotes.lastReceivedID == store.state.quotes.lastRequestID
        || quotesSettled.wait(timeout: .now() + .seconds(Int(options.settleTimeout.components.seconds))) == .success
    quotesWatch.cancel()
    let settleSeconds = Double(DispatchTime.now().uptimeNanoseconds - settleStart.uptimeNanoseconds) / 1e9
    // Shutdown runs the snapshot that the debounce owes, so the file on disk holds the final state when it returns.
    blockingWait { _ = await store.shutdown(timeout: .seconds(10)) }
    let final = store.state
    stockWatch.cancel()
    // Then the journal: durable, closed, and recovered afresh as the next run would.
    let journalSummary = journal.map { journal in
        let (durableThrough, error) = journal.finish(acknowledger: acknowledger)
        let (verification, matches) = DemoJournal.verify(journal.directory, against: final)
        return JournalSummary(
            directory: journal.directory,
            recovery: journal.recovery,
            ordersAlreadyPlaced: start.orders.placed,
            resumedOrders: resumedOrders,
            resumedQuote: resumedQuote,
            lastSequence: journal.journal.lastSequence,
            durableThrough: durableThrough,
            acknowledgedOrders: acknowledger?.acknowledged ?? 0,
            error: error,
            verification: verification,
            verificationMatches: matches
        )
    }

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
    checks.append(orderBookCheck(orders))
    let lowest = final.inventory.stock.values.min() ?? 0
    checks.append(
        .init(
            name: "stock never negative",
            passed: negativeStock.current == 0 && lowest >= 0,
            detail: "checked after every change; lowest final stock \(lowest)"
        )
    )
    // The actions of this run: the orders' stages and restocks beyond the recovered state, and the actions the
    // counters saw; the recovered state counted the journal's actions.
    let expectedActions =
        start.metrics.actions + (orders.placed - start.orders.placed) + (orders.fulfilled - start.orders.fulfilled)
        + (orders.rejected - start.orders.rejected) + (final.inventory.restocks - start.inventory.restocks)
        + quoteRequests.current + counters.lookupsCompleted.current + resumedOrders
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
                + (settled
                    ? ""
                    : " (not delivered within \(options.settleTimeout) of the producers' end; waited "
                        + String(format: "%.1f s)", settleSeconds))
        )
    )
    if let journalSummary {
        checks.append(journalCheck(journalSummary, final: final))
    } else {
        checks.append(
            .init(
                name: "snapshot on disk matches the state",
                passed: readSnapshot(at: snapshotURL) == final && counters.snapshotErrors.current == 0,
                detail: snapshotURL.path
            )
        )
    }

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
        snapshotPath: journal?.directory ?? snapshotURL.path,
        journal: journalSummary
    )
}

/// The order book that `forEach` kept, against the counters that the orders module kept on its own (the revenue
/// recomputed from the fulfilled orders, which `demoOrder(id:)` describes).
private func orderBookCheck(_ orders: OrdersState) -> DemoSummary.Check {
    var pending = 0
    var fulfilled = 0
    var rejected = 0
    var revenue = 0
    for (id, status) in orders.byID {
        switch status {
        case .pending:
            pending += 1
        case .fulfilled:
            fulfilled += 1
            let order = demoOrder(id: id)
            revenue += order.priceCents * order.quantity
        case .rejected:
            rejected += 1
        }
    }
    return .init(
        name: "order book matches the counters",
        passed: orders.byID.count == orders.placed && pending == orders.pending && fulfilled == orders.fulfilled
            && rejected == orders.rejected && revenue == orders.revenueCents,
        detail: "\(orders.byID.count) orders by id: \(fulfilled) fulfilled, \(rejected) rejected, \(pending) pending,"
            + " revenue \(revenue == orders.revenueCents ? "equal" : "\(formatCents(revenue)) (DIFFERS)")"
    )
}

/// The journal against the final state: no write error, one sequence number per reduced action, and a fresh
/// recovery of the directory that rebuilds the final state.
private func journalCheck(_ journal: JournalSummary, final: ServiceState) -> DemoSummary.Check {
    let name = "journal recovers the final state"
    if let error = journal.error {
        return .init(name: name, passed: false, detail: "the journal stopped: \(error)")
    }
    switch journal.verification {
    case .failure(let error):
        return .init(name: name, passed: false, detail: "recovery failed: \(error)")
    case .success(let recovery):
        let counted = journal.lastSequence == UInt64(final.metrics.actions)
        return .init(
            name: name,
            passed: journal.verificationMatches && counted && journal.durableThrough == journal.lastSequence,
            detail: "a new recovery (snapshot at sequence \(recovery.snapshotSequence), then "
                + "\(recovery.replayedActions) replayed) \(journal.verificationMatches ? "equals" : "DIFFERS FROM") "
                + "the final state; \(journal.lastSequence) sequences for \(final.metrics.actions) reduced actions"
        )
    }
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

/// The demo's invariants on any state of the service, by name: what `sluice-demo-replay --find NAME` looks for
/// in a journal. The run checks the same properties on its final state.
public let demoInvariants: [(name: String, holds: @Sendable (ServiceState) -> Bool)] = [
    ("stock never negative", { state in state.inventory.stock.values.allSatisfy { $0 >= 0 } }),
    ("order book matches the counters", { state in orderBookCheck(state.orders).passed }),
]
