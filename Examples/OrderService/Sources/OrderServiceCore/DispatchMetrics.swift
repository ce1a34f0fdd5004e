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
    }

    /// Counts one action of the case `caseName` that took `nanoseconds`.
    public func record(_ caseName: String, nanoseconds: UInt64) {
        counters[caseName]?.increment()
        timers[caseName]?.recordNanoseconds(Int64(truncatingIfNeeded: nanoseconds))
    }

    /// A middleware that records each action that passes it, with the time that the rest of the chain (the
    /// middleware after it, the reducer and the subscribers) took for it.
    ///
    /// Today's form: the time waited for the store's pipeline is not visible to a middleware.
    public func middleware<State>() -> Middleware<State, ShopAction> {
        Middleware { _ in
            { next in
                { action in
                    let start = DispatchTime.now().uptimeNanoseconds
                    next(action)
                    record(action.caseName, nanoseconds: DispatchTime.now().uptimeNanoseconds &- start)
                }
            }
        }
    }
}
