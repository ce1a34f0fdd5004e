import CoreMetrics
import Sluice
import SluiceMetrics
import Synchronization
import Testing

/// An in-memory swift-metrics backend: keeps every value recorded, by label and dimensions, and counts the calls
/// that made a metric.
final class MemoryMetrics: MetricsFactory, Sendable {
    struct Key: Hashable, Sendable {
        let label: String
        let dimensions: [String]

        init(_ label: String, _ dimensions: [(String, String)]) {
            self.label = label
            self.dimensions = dimensions.map { "\($0.0)=\($0.1)" }
        }
    }

    final class Values: CounterHandler, TimerHandler, RecorderHandler, Sendable {
        let values = Mutex<[Int64]>([])
        let onRecord: @Sendable () -> Void

        init(onRecord: @escaping @Sendable () -> Void) { self.onRecord = onRecord }

        func increment(by amount: Int64) { append(amount) }
        func reset() { values.withLock { $0 = [] } }
        func recordNanoseconds(_ duration: Int64) { append(duration) }
        func record(_ value: Int64) { append(value) }
        func record(_ value: Double) { append(Int64(value)) }

        private func append(_ value: Int64) {
            onRecord()
            values.withLock { $0.append(value) }
        }

        var recorded: [Int64] { values.withLock { $0 } }
    }

    let metrics = Mutex<[Key: Values]>([:])
    let makeCount = Atomic<Int>(0)
    let onRecord: @Sendable () -> Void

    init(onRecord: @escaping @Sendable () -> Void = {}) { self.onRecord = onRecord }

    private func make(_ label: String, _ dimensions: [(String, String)]) -> Values {
        makeCount.add(1, ordering: .relaxed)
        return metrics.withLock { metrics in
            let key = Key(label, dimensions)
            if let values = metrics[key] { return values }
            let values = Values(onRecord: onRecord)
            metrics[key] = values
            return values
        }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { make(label, dimensions) }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        make(label, dimensions)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { make(label, dimensions) }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}

    func values(_ label: String, _ dimensions: [(String, String)] = []) -> [Int64]? {
        metrics.withLock { $0[Key(label, dimensions)] }?.recorded
    }

    var makes: Int { makeCount.load(ordering: .relaxed) }
    var dimensions: Set<String> { Set(metrics.withLock { $0.keys.flatMap(\.dimensions) }) }
}

enum ShopAction: Sendable {
    case place(id: Int)
    case cancel(id: Int)
    case ship
}

let shopReducer = Reducer<Int, ShopAction>(mutating: { state, _ in state += 1 })

@Suite struct SluiceMetricsTests {
    @Test func reportsACounterAndATimerPerCaseAndTheQueue() {
        let backend = MemoryMetrics()
        let store = Store<Int, ShopAction>(
            initialState: 0,
            reducer: shopReducer,
            instrumentation: .metrics(store: "shop", actionCases: ["place", "cancel", "ship"], factory: backend)
        )
        store.dispatch(.place(id: 1))
        store.dispatch(.place(id: 2))
        store.dispatch(.ship)
        let place = [("action", "place"), ("store", "shop")]
        #expect(backend.values("sluice_actions_total", place) == [1, 1])
        #expect(backend.values("sluice_action_duration_seconds", place)?.count == 2)
        #expect(backend.values("sluice_actions_total", [("action", "ship"), ("store", "shop")]) == [1])
        #expect(backend.values("sluice_actions_total", [("action", "cancel"), ("store", "shop")]) == [])
        #expect(backend.values("sluice_queue_depth", [("store", "shop")]) == [0, 0, 0])
        // Nothing waited: one thread dispatched.
        #expect(backend.values("sluice_dispatch_waits_total", [("store", "shop")]) == [])
        #expect(backend.values("sluice_dispatch_wait_seconds", [("store", "shop")]) == [])
    }

    @Test func everyMetricIsMadeOnceUpFront() {
        let backend = MemoryMetrics()
        let store = Store<Int, ShopAction>(
            initialState: 0,
            reducer: shopReducer,
            instrumentation: .metrics(actionCases: ["place", "cancel", "ship"], factory: backend)
        )
        // Three cases times two, the "(other)" pair, the waits, the wait timer and the queue depth.
        let madeUpFront = backend.makes
        #expect(madeUpFront == 11)
        for id in 0..<100 { store.dispatch(id.isMultiple(of: 2) ? .place(id: id) : .cancel(id: id)) }
        #expect(backend.makes == madeUpFront)
        #expect(backend.values("sluice_actions_total", [("action", "place")])?.count == 50)
        // Without a store label, no `store` dimension.
        #expect(!backend.dimensions.contains { $0.hasPrefix("store=") })
    }

    @Test func aCaseNotNamedUpFrontIsMadeOnceWhenFirstSeen() {
        let backend = MemoryMetrics()
        let store = Store<Int, ShopAction>(
            initialState: 0,
            reducer: shopReducer,
            instrumentation: .metrics(prefix: "shop", factory: backend)
        )
        let madeUpFront = backend.makes
        for _ in 0..<10 { store.dispatch(.ship) }
        #expect(backend.makes == madeUpFront + 2)
        #expect(backend.values("shop_actions_total", [("action", "ship")])?.count == 10)
    }

    @Test func aCustomCaseNameReplacesReflection() {
        let backend = MemoryMetrics()
        let store = Store<Int, ShopAction>(
            initialState: 0,
            reducer: shopReducer,
            instrumentation: .metrics(
                caseName: { action in if case .ship = action { "shipping" } else { "orders" } },
                factory: backend
            )
        )
        store.dispatch(.ship)
        store.dispatch(.place(id: 3))
        #expect(backend.values("sluice_actions_total", [("action", "shipping")]) == [1])
        #expect(backend.values("sluice_actions_total", [("action", "orders")]) == [1])
    }

    @Test func unboundedCaseNamesStopAtTheLimit() {
        let backend = MemoryMetrics()
        let store = Store<Int, ShopAction>(
            initialState: 0,
            reducer: shopReducer,
            instrumentation: .metrics(
                caseName: { action in if case .place(let id) = action { "place-\(id)" } else { "other" } },
                factory: backend
            )
        )
        for id in 0..<(StoreMetricLimits.maxActionCases + 10) { store.dispatch(.place(id: id)) }
        #expect(backend.values("sluice_actions_total", [("action", "(other)")])?.count == 10)
        #expect(store.state == StoreMetricLimits.maxActionCases + 10)
    }

    @Test func aSlowBackendDoesNotBreakConcurrentDispatches() async {
        let backend = MemoryMetrics(onRecord: {
            let deadline = ContinuousClock.now + .microseconds(200)
            while ContinuousClock.now < deadline {}
        })
        let store = Store<Int, ShopAction>(
            initialState: 0,
            reducer: shopReducer,
            instrumentation: .metrics(actionCases: ["ship"], factory: backend)
        )
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<10 { store.dispatch(.ship) } }
            }
        }
        #expect(store.state == 80)
        #expect(backend.values("sluice_actions_total", [("action", "ship")])?.count == 80)
        let waits = backend.values("sluice_dispatch_waits_total")?.count ?? 0
        #expect(backend.values("sluice_dispatch_wait_seconds")?.count == waits)
    }

    @Test func aBackendThatDispatchesIntoTheStoreDoesNotDeadlock() {
        let storeBox = Mutex<Store<Int, ShopAction>?>(nil)
        let reentered = Atomic<Bool>(false)
        let backend = MemoryMetrics(onRecord: {
            if let store = storeBox.withLock({ $0 }), !reentered.exchange(true, ordering: .relaxed) {
                store.dispatch(.ship)
            }
        })
        let store = Store<Int, ShopAction>(
            initialState: 0,
            reducer: shopReducer,
            instrumentation: .metrics(factory: backend)
        )
        storeBox.withLock { $0 = store }
        store.dispatch(.place(id: 1))
        #expect(store.state == 2)
        storeBox.withLock { $0 = nil }
    }

    @Test func storeMetricsRecordWithoutAStoreAndAcrossStores() {
        let backend = MemoryMetrics()
        let metrics = StoreMetrics(store: "shop", actionCases: ["ship"], factory: backend)
        let made = backend.makes
        metrics.record(caseName: "ship", durationNanoseconds: 850)
        metrics.record(caseName: "ship", durationNanoseconds: 900, waitedNanoseconds: 40, queueDepth: 2)
        let first = Store<Int, ShopAction>(
            initialState: 0,
            reducer: shopReducer,
            instrumentation: metrics.instrumentation()
        )
        let second = Store<Int, ShopAction>(
            initialState: 0,
            reducer: shopReducer,
            instrumentation: metrics.instrumentation()
        )
        first.dispatch(.ship)
        second.dispatch(.ship)
        let ship = [("action", "ship"), ("store", "shop")]
        #expect(backend.values("sluice_actions_total", ship)?.count == 4)
        #expect(backend.values("sluice_action_duration_seconds", ship)?.prefix(2) == [850, 900])
        #expect(backend.values("sluice_dispatch_wait_seconds", [("store", "shop")]) == [40])
        #expect(backend.values("sluice_queue_depth", [("store", "shop")])?.prefix(2) == [0, 2])
        #expect(backend.makes == made)
    }
}
