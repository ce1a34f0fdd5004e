public import CoreMetrics
import Dispatch
public import Sluice

/// Per-action metrics through swift-metrics: how many actions of each case the state machine reduced, and how long
/// each took.
///
/// Both backends record the same figures: the Sluice backend through ``middleware()``, the Mutex backend by
/// calling ``record(_:nanoseconds:)`` under its lock. One `Counter` and one `Timer` per case of `ShopAction`,
/// made up front: making a metric asks the factory, which takes a lock and looks the name up.
public struct DispatchMetrics: Sendable {
    private let counters: [String: Counter]
    private let timers: [String: Timer]
    private let waits: Counter
    private let waited: Timer
    private let queueDepth: Recorder

    /// Makes the metrics with `factory` (in the service, a `PrometheusMetricsFactory`).
    ///
    /// - Parameter factory: Where the metrics go.
    public init(factory: any MetricsFactory) {
        var counters: [String: Counter] = [:]
        var timers: [String: Timer] = [:]
        for name in ShopAction.caseNames {
            counters[name] = Counter(label: "sluice_actions_total", dimensions: [("action", name)], factory: factory)
            timers[name] = Timer(label: "sluice_dispatch_duration", dimensions: [("action", name)], factory: factory)
        }
        self.counters = counters
        self.timers = timers
        waits = Counter(label: "sluice_dispatch_waits_total", factory: factory)
        waited = Timer(label: "sluice_dispatch_wait", factory: factory)
        queueDepth = Recorder(label: "sluice_queue_depth", factory: factory)
    }

    /// Counts one action of the case `caseName` that took `nanoseconds`.
    public func record(_ caseName: String, nanoseconds: UInt64) {
        counters[caseName]?.increment()
        timers[caseName]?.recordNanoseconds(Int64(truncatingIfNeeded: nanoseconds))
    }

    /// The store's instrumentation hook, recording each action as ``record(_:nanoseconds:)`` does (the time of its
    /// work: middleware, reducer, subscribers), and also how often and how long dispatches waited for the store,
    /// and the queue depth.
    public func instrumentation() -> StoreInstrumentation<ShopAction> {
        StoreInstrumentation { measurement in
            record(measurement.action.caseName, nanoseconds: UInt64(max(0, measurement.durationNanoseconds)))
            queueDepth.record(measurement.queueDepth)
            if measurement.waited > .zero {
                waits.increment()
                waited.recordNanoseconds(measurement.waitedNanoseconds)
            }
        }
    }
}
