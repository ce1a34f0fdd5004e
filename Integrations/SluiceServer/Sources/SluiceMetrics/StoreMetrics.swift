public import CoreMetrics
public import Sluice
import Synchronization

/// The names of the metrics that ``Sluice/StoreInstrumentation/metrics(store:prefix:actionCases:caseName:factory:)``
/// reports, each after the prefix and an underscore (`sluice_actions_total`), in Prometheus' conventions: snake
/// case, counters ending in `_total`, durations in seconds ending in `_seconds`.
public enum StoreMetricNames {
    /// A counter per action case: the actions that the store processed. Dimensions `action` and `store`.
    public static let actions = "actions_total"
    /// A timer per action case: the time of each action's work (its middleware, the reducer, the subscribers).
    /// Dimensions `action` and `store`.
    public static let actionDuration = "action_duration_seconds"
    /// A counter: the dispatches that waited for another thread or task to finish the store's work. Dimension
    /// `store`.
    public static let dispatchWaits = "dispatch_waits_total"
    /// A timer: how long those dispatches waited. Dimension `store`.
    public static let dispatchWait = "dispatch_wait_seconds"
    /// A recorder: the actions waiting for the store when an action's work began. Dimension `store`.
    public static let queueDepth = "queue_depth"
    /// The `action` value under which actions are counted once ``StoreMetricLimits/maxActionCases`` case names
    /// have metrics: it keeps the number of series bounded when case names are not.
    public static let otherActions = "(other)"
}

/// The bounds of ``Sluice/StoreInstrumentation/metrics(store:prefix:actionCases:caseName:factory:)``.
public enum StoreMetricLimits {
    /// The most action case names that get metrics of their own, per instrumentation; later names are counted
    /// under ``StoreMetricNames/otherActions``. A backend such as Prometheus keeps every series it was given, so
    /// the number of values of a dimension must stay bounded.
    public static let maxActionCases = 512
}

extension StoreInstrumentation {
    /// Instrumentation that reports each action to swift-metrics: per action case a counter and a timer, how often
    /// and how long dispatches waited for the store, and the queue depth.
    ///
    /// ```swift
    /// let store = Store<AppState, AppAction>(
    ///     initialState: AppState(),
    ///     reducer: appReducer,
    ///     instrumentation: .metrics(store: "orders", actionCases: ["place", "cancel", "ship"])
    /// )
    /// ```
    ///
    /// The metrics are named in ``StoreMetricNames``. Every metric is made when this is called: the fixed ones and
    /// those of each case in `actionCases`. Making a metric asks the factory, which usually takes a lock and looks
    /// the name up; an action then only finds its case's metrics in a dictionary made up front. A case missing
    /// from `actionCases` gets its metrics the first time it is seen (one factory call for each of its two metrics,
    /// under a lock that later actions of such cases take too); after ``StoreMetricLimits/maxActionCases`` names,
    /// the rest are counted under ``StoreMetricNames/otherActions``.
    ///
    /// The metrics are recorded on the thread that ran the action's work, while it still owns the store: a
    /// metrics backend that blocks delays the store's next action. swift-metrics backends record in memory.
    ///
    /// - Parameters:
    ///   - store: The value of the `store` dimension, to tell apart the stores of one service; `nil` for no such
    ///     dimension.
    ///   - prefix: Put before each name, with an underscore: the namespace of the metrics.
    ///   - actionCases: The case names to make metrics for up front, as `caseName` names them.
    ///   - caseName: Names an action's case, the `action` dimension; `nil` names it by reflection
    ///     (``Sluice/DispatchMeasurement/actionCaseName``: `place`, `orders.place` through nested enums). A
    ///     `switch` over the action is much faster than reflection (see the README's cost per dispatch).
    ///   - factory: Makes the metrics; the factory that `MetricsSystem` was bootstrapped with by default.
    /// - Returns: The instrumentation, for ``Sluice/Store/init(initialState:reducer:middleware:instrumentation:)``.
    public static func metrics(
        store: String? = nil,
        prefix: String = "sluice",
        actionCases: [String] = [],
        caseName: (@Sendable (Action) -> String)? = nil,
        factory: any MetricsFactory = MetricsSystem.factory
    ) -> StoreInstrumentation<Action> {
        StoreMetrics(store: store, prefix: prefix, actionCases: actionCases, factory: factory)
            .instrumentation(caseName: caseName)
    }
}

/// The metrics of ``Sluice/StoreInstrumentation/metrics(store:prefix:actionCases:caseName:factory:)``, made up
/// front, for code that records the same figures without a store (a comparison backend, a benchmark) or installs
/// them on several stores.
///
/// ```swift
/// let metrics = StoreMetrics(store: "orders", actionCases: ["place", "cancel"], factory: factory)
/// let store = Store<Orders, OrderAction>(
///     initialState: Orders(),
///     reducer: ordersReducer,
///     instrumentation: metrics.instrumentation()
/// )
/// metrics.record(caseName: "place", durationNanoseconds: 850)  // from code that is not a store
/// ```
///
/// Its instrumentation may be given to several stores: they then share the metrics (the same `store` dimension).
public final class StoreMetrics: Sendable {
    /// The counter and the timer of one action case.
    struct ActionMetrics: Sendable {
        let count: Counter
        let duration: Timer
    }

    private let dimensions: [(String, String)]
    private let prefix: String
    private let factory: any MetricsFactory
    /// The cases named up front: read without a lock.
    private let known: [String: ActionMetrics]
    /// The cases first seen in an action, and the metrics of the cases beyond the limit.
    private let late: Mutex<[String: ActionMetrics]>
    private let other: ActionMetrics
    private let waits: Counter
    private let waited: Timer
    private let depth: Recorder

    /// Makes the metrics; see ``Sluice/StoreInstrumentation/metrics(store:prefix:actionCases:caseName:factory:)``
    /// for the parameters.
    ///
    /// - Parameters:
    ///   - store: The value of the `store` dimension; `nil` for no such dimension.
    ///   - prefix: Put before each name, with an underscore.
    ///   - actionCases: The case names to make metrics for up front.
    ///   - factory: Makes the metrics.
    public init(
        store: String? = nil,
        prefix: String = "sluice",
        actionCases: [String] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        let dimensions = store.map { [("store", $0)] } ?? []
        self.dimensions = dimensions
        self.prefix = prefix
        self.factory = factory
        var known: [String: ActionMetrics] = [:]
        for name in actionCases.prefix(StoreMetricLimits.maxActionCases) where known[name] == nil {
            known[name] = Self.makeActionMetrics(name, prefix: prefix, dimensions: dimensions, factory: factory)
        }
        self.known = known
        late = Mutex([:])
        other = Self.makeActionMetrics(
            StoreMetricNames.otherActions,
            prefix: prefix,
            dimensions: dimensions,
            factory: factory
        )
        waits = Counter(label: prefix + "_" + StoreMetricNames.dispatchWaits, dimensions: dimensions, factory: factory)
        waited = Timer(label: prefix + "_" + StoreMetricNames.dispatchWait, dimensions: dimensions, factory: factory)
        depth = Recorder(label: prefix + "_" + StoreMetricNames.queueDepth, dimensions: dimensions, factory: factory)
    }

    private static func makeActionMetrics(
        _ name: String,
        prefix: String,
        dimensions: [(String, String)],
        factory: any MetricsFactory
    ) -> ActionMetrics {
        let dimensions = [("action", name)] + dimensions
        return ActionMetrics(
            count: Counter(label: prefix + "_" + StoreMetricNames.actions, dimensions: dimensions, factory: factory),
            duration: Timer(
                label: prefix + "_" + StoreMetricNames.actionDuration,
                dimensions: dimensions,
                factory: factory
            )
        )
    }

    /// The metrics of the case `name`: made up front, or made now the first time this name is seen.
    func actionMetrics(_ name: String) -> ActionMetrics {
        if let metrics = known[name] { return metrics }
        return late.withLock { late in
            if let metrics = late[name] { return metrics }
            guard known.count + late.count < StoreMetricLimits.maxActionCases else { return other }
            let metrics = Self.makeActionMetrics(name, prefix: prefix, dimensions: dimensions, factory: factory)
            late[name] = metrics
            return metrics
        }
    }

    /// The store's instrumentation hook, recording each action with ``record(caseName:durationNanoseconds:waitedNanoseconds:queueDepth:)``.
    ///
    /// - Parameter caseName: Names an action's case; `nil` names it by reflection
    ///   (``Sluice/DispatchMeasurement/actionCaseName``).
    /// - Returns: The instrumentation.
    public func instrumentation<Action: Sendable>(
        caseName: (@Sendable (Action) -> String)? = nil
    ) -> StoreInstrumentation<Action> {
        StoreInstrumentation { measurement in
            self.record(
                caseName: caseName?(measurement.action) ?? measurement.actionCaseName,
                durationNanoseconds: measurement.durationNanoseconds,
                waitedNanoseconds: measurement.waitedNanoseconds,
                queueDepth: measurement.queueDepth
            )
        }
    }

    /// Records one action of the case `caseName`: counts it, records its duration and the queue depth, and, when
    /// it waited, the wait.
    ///
    /// - Parameters:
    ///   - caseName: The action's case, the `action` dimension.
    ///   - durationNanoseconds: The time of the action's work.
    ///   - waitedNanoseconds: How long its dispatch waited for the store; 0 when it did not.
    ///   - queueDepth: The actions waiting when its work began.
    public func record(
        caseName: String,
        durationNanoseconds: Int64,
        waitedNanoseconds: Int64 = 0,
        queueDepth: Int = 0
    ) {
        let metrics = actionMetrics(caseName)
        metrics.count.increment()
        metrics.duration.recordNanoseconds(durationNanoseconds)
        depth.record(queueDepth)
        if waitedNanoseconds > 0 {
            waits.increment()
            waited.recordNanoseconds(waitedNanoseconds)
        }
    }
}
