/// A hook that a ``Store`` calls after the work of each action, with what that action cost: for metrics and tracing.
///
/// ```swift
/// let instrumentation = StoreInstrumentation<AppAction> { measurement in
///     print(measurement.actionCaseName, measurement.duration, measurement.waited, measurement.queueDepth)
/// }
/// let store = Store<AppState, AppAction>(
///     initialState: AppState(),
///     reducer: appReducer,
///     instrumentation: instrumentation
/// )
/// ```
///
/// The store calls `didProcess` once for every action that goes through its middleware and reducer: dispatched,
/// sent, queued by a dispatch from inside the store's work, or handed over from another store. It is called on the
/// thread that ran the action's work, right after that work (the middleware, the reducer, the subscribers), while
/// this thread still owns the store's pipeline: the store's next action waits for it, so keep it short (record a
/// metric, end a span), and do not block in it on anything that waits for this store. An action that the store
/// refuses (after ``Store/shutdown(timeout:)`` began) or drops (the store is gone) is not measured.
///
/// ## Cost
///
/// Without instrumentation (the default) a dispatch runs exactly the code it runs without this feature. With it,
/// the store puts a pass-through step before its middleware: a dispatch then takes the pipeline like a dispatch
/// through one middleware, and adds two clock reads, one lock round trip (for the queue depth) and the call of
/// `didProcess`. The action's case name is made by reflection only when ``DispatchMeasurement/actionCaseName`` is
/// read.
public struct StoreInstrumentation<Action: Sendable>: Sendable {
    @usableFromInline
    let didProcess: @Sendable (DispatchMeasurement<Action>) -> Void
    /// Returns a monotonic time in nanoseconds; injected by tests.
    @usableFromInline
    let clock: @Sendable () -> UInt64

    /// Creates instrumentation that calls `didProcess` after the work of each action.
    ///
    /// - Parameter didProcess: Receives the measurement of each action, on the thread that ran its work. It may
    ///   be called from different threads, one call at a time per store, in the order in which the store processed
    ///   the actions. It may dispatch to the store (the action is queued, like any dispatch from inside the store's
    ///   work).
    public init(didProcess: @escaping @Sendable (DispatchMeasurement<Action>) -> Void) {
        self.init(clock: monotonicNanoseconds, didProcess: didProcess)
    }

    /// ``init(didProcess:)`` with the clock injected, for tests.
    ///
    /// - Parameter clock: Returns a monotonic time in nanoseconds; called just before and just after the chain.
    package init(
        clock: @escaping @Sendable () -> UInt64,
        didProcess: @escaping @Sendable (DispatchMeasurement<Action>) -> Void
    ) {
        self.clock = clock
        self.didProcess = didProcess
    }

    /// The outermost step of the store's chain: measures the rest of the chain for each action.
    ///
    /// Inlinable, and made by the store's inlinable initializers, so that it runs code specialized for the caller's
    /// `State` and `Action`: made in the unspecialized initializer, it would look up generic metadata on every action.
    @inlinable
    func middleware<State: Sendable>() -> Middleware<State, Action> {
        let didProcess = self.didProcess
        let clock = self.clock
        return Middleware { api in
            { next in
                { action in
                    // Called by the store for each action it processes, on the thread that owns the pipeline.
                    let (waited, queueDepth) = api.core.pipelineLoadOfCurrentAction()
                    let start = clock()
                    next(action)
                    let elapsed = clock() &- start
                    didProcess(
                        DispatchMeasurement(
                            action: action,
                            waited: .nanoseconds(Int64(clamping: waited)),
                            duration: .nanoseconds(Int64(clamping: elapsed)),
                            queueDepth: queueDepth
                        )
                    )
                }
            }
        }
    }
}

/// What the work of one action cost; see ``StoreInstrumentation``.
public struct DispatchMeasurement<Action: Sendable>: Sendable {
    /// The action.
    public let action: Action
    /// How long the dispatch or send of this action waited for another thread or task to finish the store's work
    /// before its own work began; zero when it did not wait, and for an action queued by a dispatch from inside the
    /// store's work (it waited in the queue, not for the pipeline).
    public let waited: Duration
    /// How long the action's work took: the middleware, the reducer and the subscribers, measured with the
    /// monotonic clock. Actions that this work dispatched are queued, and measured on their own.
    public let duration: Duration
    /// The actions waiting for the store when this action's work began: queued behind it, plus the dispatches and
    /// sends of other threads and tasks waiting for the pipeline.
    public let queueDepth: Int

    /// Creates a measurement (for tests of code that consumes measurements).
    public init(action: Action, waited: Duration, duration: Duration, queueDepth: Int) {
        self.action = action
        self.waited = waited
        self.duration = duration
        self.queueDepth = queueDepth
    }

    /// ``duration`` in nanoseconds, for APIs that take an integer (swift-metrics' `Timer.recordNanoseconds`).
    public var durationNanoseconds: Int64 {
        Self.nanoseconds(duration)
    }

    /// ``waited`` in nanoseconds, like ``durationNanoseconds``.
    public var waitedNanoseconds: Int64 {
        Self.nanoseconds(waited)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000).overflow
            ? .max : whole + attoseconds / 1_000_000_000
    }

    /// The name of the action's enum case, made by reflection on each read: `place` for `.place(id: 7)`; through
    /// nested enums, the names joined with dots: `orders.place` for `.orders(.place(id: 7))`.
    ///
    /// Cheap enough for a metric's label (about a microsecond), and bounded: a name has one part per nesting
    /// level, at most 8. A value that is not an enum is named by its type: `String`, `Int`. A case without a
    /// payload of a type with its own `description` (`CustomStringConvertible`) is named by that description.
    public var actionCaseName: String {
        ActionCaseName.of(action)
    }
}

/// Names enum cases by reflection.
enum ActionCaseName {
    static let maxDepth = 8

    static func of(_ value: Any) -> String {
        var parts: [String] = []
        var current = value
        while parts.count < maxDepth {
            let mirror = Mirror(reflecting: current)
            guard mirror.displayStyle == .enum else {
                if parts.isEmpty { return String(describing: type(of: current)) }
                break
            }
            guard let payload = mirror.children.first else {
                parts.append(LogText.escapingControlCharacters(String(describing: current)))
                break
            }
            parts.append(payload.label ?? String(describing: type(of: current)))
            current = payload.value
        }
        return parts.joined(separator: ".")
    }
}

extension StoreCore {
    /// For the action whose work the calling thread runs as the pipeline's owner: the nanoseconds it waited for the
    /// pipeline, and the actions waiting now (queued, plus waiting threads and tasks). `(0, 0)` when the calling
    /// thread does not own the pipeline (a middleware before the caller called `next` from another thread).
    @inlinable
    func pipelineLoadOfCurrentAction() -> (waited: UInt64, queueDepth: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard pipeline.owner == ThreadID.current else { return (0, 0) }
        return (waitOfCurrentAction, ownerQueue.count + pipeline.queue.count + pipeline.waitingCount)
    }
}
