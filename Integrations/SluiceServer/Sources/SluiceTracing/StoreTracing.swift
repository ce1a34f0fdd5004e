public import Sluice
public import SluiceJournal
public import Tracing

/// The span attributes that SluiceTracing sets, so that a trace backend can query them by name.
public enum SluiceSpanAttribute {
    /// The label of the store that processed the action.
    public static let store = "sluice.store"
    /// The name of the action's case: `place`, `orders.place` through nested enums.
    public static let action = "sluice.action"
    /// The sequence number that the store's journal gave the action; only for a journaled action.
    public static let sequence = "sluice.sequence"
}

extension Middlewares {
    /// A middleware that makes a span for each action the store processes, as a child of the caller's
    /// `ServiceContext`, and runs the rest of the chain inside it.
    ///
    /// ```swift
    /// let store = Store<AppState, AppAction>(
    ///     initialState: AppState(),
    ///     reducer: appReducer,
    ///     middleware: [Middlewares.tracing(store: "orders"), sideEffects]
    /// )
    /// ```
    ///
    /// The span is named `<store> <case>` (`orders place`) and carries the attributes in ``SluiceSpanAttribute``.
    /// It covers the middleware after this one, the reducer and the subscribers. While they run, the span's
    /// context is the current `ServiceContext`: the tasks that the chain starts (`async` side effects, effects
    /// started with `start`) inherit it, so their spans
    /// (``Sluice/SideEffect/traced(_:tracer:_:)``, ``Sluice/MiddlewareAPI/startTraced(_:tracer:_:)``) are children of
    /// the action's span.
    ///
    /// Tracing is off unless a store is given this middleware. The tracer is read once, when the store installs the
    /// middleware: when it is the `NoOpTracer` (`InstrumentationSystem` not bootstrapped with a tracer), the
    /// middleware installs nothing, and the store's chain is exactly the chain without it. Bootstrap the tracer
    /// before creating the stores.
    ///
    /// The caller's context is read on the thread that runs the action's work: for a dispatch that found the
    /// store free, the dispatching task's. An action queued behind another thread's work is run by that thread,
    /// and its span is a child of that thread's context; an action dispatched from inside the store's work is a
    /// child of the span of the action whose work dispatched it.
    ///
    /// - Parameters:
    ///   - store: The label of the store, in each span's name and attributes.
    ///   - journal: The store's journal, to put each action's sequence number on its span; `nil` for none. A store
    ///     made with `Store(recoveringFrom:)` records after its middleware, so the action is recorded when the span
    ///     ends; with `Middlewares.journal` placed by hand, put this middleware before it.
    ///   - tracer: The tracer; `nil` for the one `InstrumentationSystem` was bootstrapped with.
    ///   - caseName: Names an action's case; `nil` names it by reflection
    ///     (``Sluice/DispatchMeasurement/actionCaseName``). A `switch` over the action is faster.
    /// - Returns: The middleware.
    public static func tracing<State: Sendable, Action: Sendable>(
        store: String,
        journal: Journal? = nil,
        tracer: (any Tracer)? = nil,
        caseName: (@Sendable (Action) -> String)? = nil
    ) -> Middleware<State, Action> {
        Middleware { _ in
            let tracer = tracer ?? InstrumentationSystem.tracer
            if tracer is NoOpTracer {
                return { next in next }
            }
            return tracingStep(tracer, store: store, journal: journal, caseName: caseName)
        }
    }

    /// The per-action step for one tracer type: opened once, so that each action calls the tracer directly.
    private static func tracingStep<T: Tracer, Action: Sendable>(
        _ tracer: T,
        store: String,
        journal: Journal?,
        caseName: (@Sendable (Action) -> String)?
    ) -> (@escaping DispatchFunction<Action>) -> DispatchFunction<Action> {
        { next in
            { action in
                let name = caseName?(action) ?? Self.reflectedCaseName(action)
                let span = tracer.startSpan(store + " " + name, context: ServiceContext.current ?? .topLevel)
                span.attributes[SluiceSpanAttribute.store] = store
                span.attributes[SluiceSpanAttribute.action] = name
                let sequenceBefore = journal?.lastSequence
                ServiceContext.$current.withValue(span.context) {
                    next(action)
                }
                if let journal, let sequenceBefore {
                    let sequence = journal.lastSequence
                    if sequence != sequenceBefore {
                        span.attributes[SluiceSpanAttribute.sequence] = Int64(clamping: sequence)
                    }
                }
                span.end()
            }
        }
    }

    /// The case name that ``Sluice/DispatchMeasurement/actionCaseName`` gives `action`.
    private static func reflectedCaseName<Action: Sendable>(_ action: Action) -> String {
        DispatchMeasurement(action: action, waited: .zero, duration: .zero, queueDepth: 0).actionCaseName
    }
}

extension SideEffect {
    /// An `async` side effect whose run is a span named `name`: a child of the span of the action that ran it when
    /// the store traces (``Sluice/Middlewares/tracing(store:journal:tracer:caseName:)``). An error that `run`
    /// throws is recorded on the span, which then ends with an error status; cancellation is not an error.
    ///
    /// - Parameters:
    ///   - name: The span's name.
    ///   - tracer: The tracer; `nil` for the one `InstrumentationSystem` was bootstrapped with, read at each run.
    ///   - run: The side effect, run in a task of its own as ``Sluice/SideEffect/init(_:)-(_)`` runs it.
    /// - Returns: The side effect.
    public static func traced(
        _ name: String,
        tracer: (any Tracer)? = nil,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) async throws -> Void
    ) -> SideEffect {
        SideEffect { action, api in
            try await inSpan(name, tracer: tracer ?? InstrumentationSystem.tracer) {
                try await run(action, api)
            }
        }
    }
}

extension MiddlewareAPI {
    /// ``Sluice/MiddlewareAPI/start(_:)``, with the effect's run as a span named `name`: a child of the current
    /// `ServiceContext` (the action's span, when the store traces). An error that `work` throws is recorded on the
    /// span; cancellation is not an error.
    ///
    /// - Parameters:
    ///   - name: The span's name.
    ///   - tracer: The tracer; `nil` for the one `InstrumentationSystem` was bootstrapped with.
    ///   - work: The effect.
    /// - Returns: The effect's task, as `start` returns it.
    @discardableResult
    public func startTraced<T: Sendable>(
        _ name: String,
        tracer: (any Tracer)? = nil,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) -> Task<T, any Error> {
        let tracer = tracer ?? InstrumentationSystem.tracer
        return start { api in
            try await inSpan(name, tracer: tracer) { try await work(api) }
        }
    }
}

extension Store {
    /// ``Sluice/Store/start(_:)``, with the effect's run as a span named `name`, as
    /// ``Sluice/MiddlewareAPI/startTraced(_:tracer:_:)`` makes it.
    ///
    /// - Parameters:
    ///   - name: The span's name.
    ///   - tracer: The tracer; `nil` for the one `InstrumentationSystem` was bootstrapped with.
    ///   - work: The effect.
    /// - Returns: The effect's task, as `start` returns it.
    @discardableResult
    public func startTraced<T: Sendable>(
        _ name: String,
        tracer: (any Tracer)? = nil,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) -> Task<T, any Error> {
        let tracer = tracer ?? InstrumentationSystem.tracer
        return start { api in
            try await inSpan(name, tracer: tracer) { try await work(api) }
        }
    }
}

/// Runs `work` in a span named `name`, a child of the current context, recording its error (not a cancellation).
func inSpan<T: Sendable>(
    _ name: String,
    tracer: any Tracer,
    _ work: @Sendable () async throws -> T
) async throws -> T {
    if tracer is NoOpTracer { return try await work() }
    let span = tracer.startSpan(name, context: ServiceContext.current ?? .topLevel)
    defer { span.end() }
    do {
        return try await ServiceContext.$current.withValue(span.context) {
            try await work()
        }
    } catch {
        if !(error is CancellationError) && !Task.isCancelled {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
        }
        throw error
    }
}
