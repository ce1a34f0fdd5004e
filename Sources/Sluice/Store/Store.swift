/// A function that takes an action into the store (or into the rest of a middleware chain).
public typealias DispatchFunction<Action> = @Sendable (Action) -> Void

/// Holds one state value and changes it, one action at a time, with a pure reducer behind a middleware chain.
///
/// ```swift
/// let store = Store<AppState, AppAction>(
///     initialState: AppState(),
///     reducer: appReducer,
///     middleware: [Middlewares.logging()]
/// )
/// let subscription = store.subscribe(to: \.orders.count) { count in print("orders:", count) }
/// store.dispatch(.orders(.place(id: 1)))
/// ```
///
/// ## The dispatch contract
///
/// 1. **Synchronous, run to completion.** `dispatch(_:)` returns after the action went through the middleware,
///    the reducer and the subscribers, together with every action that this work dispatched synchronously.
/// 2. **Re-entrant dispatch is queued.** An action dispatched while the same thread is already dispatching on
///    this store (from a middleware, a side effect, a subscriber) is appended to a FIFO queue and processed
///    after the current action completes, before the outermost `dispatch` returns: no recursion, no lost update.
/// 3. **Thread-safe.** `dispatch`, `state` and `subscribe` may be called from any thread at any time.
///    Dispatches from different threads are serialized; reading `state` waits for at most one reducer call.
///    A `dispatch` may wait for another thread's whole dispatch, so blocking inside a middleware or subscriber
///    on a thread that is itself waiting to dispatch to this store (say, `DispatchQueue.main.sync` from a
///    subscriber while the main thread dispatches) deadlocks. A dispatch made from inside another store's
///    dispatch never waits: if a different thread is dispatching on this store, the action is handed to that
///    thread, which processes it before its own `dispatch` returns. So stores whose subscribers dispatch into
///    each other do not deadlock, from any number of threads.
/// 4. **Reducers are pure.** The reducer always starts from the state as it is at that moment. It may not call
///    the store; in a debug build doing so stops the program with a message, in a release build it deadlocks.
/// 5. **Middleware order.** In `middleware: [a, b, c]`, `a` sees an action first and `c`'s `next` reduces it.
/// 6. **Subscribers** are notified after each reduced action, in subscription order, on the dispatching thread,
///    outside the lock. Subscribing or cancelling during a notification takes effect from the next action.
/// 7. **No retain cycles.** Releasing the last reference to a store frees it and its middleware and cancels its
///    scheduled work; later calls through a ``MiddlewareAPI`` of that store do nothing.
/// 8. **Large states stay cheap.** The state is moved into the reducer and back: the store itself never copies it.
///    A copy that someone else holds while the reducer changes a collection in place (a ``state`` read still
///    alive on another thread, a `subscribe(to:)` of the collection, a stream, the logging middleware's diff) makes
///    that change copy the collection; ``read(_:)``, ``dispatch(_:reading:)`` and ``subscribe(to:by:_:)`` hold
///    none. See <doc:LargeStates>.
///
/// Keep a strong reference to the store for as long as it should work: a subscriber or middleware that
/// captures the store strongly creates a cycle (capture the ``MiddlewareAPI`` instead, or the store weakly).
public final class Store<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline
    package let core: StoreCore<State, Action>
    /// The head of the middleware chain; `nil` when there is no middleware, so dispatch calls the reducer.
    @usableFromInline
    let chain: DispatchFunction<Action>?

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - initialState: The state before the first action.
    ///   - reducer: Produces each next state.
    ///   - middleware: The chain each action passes through before it reaches the reducer; the first element
    ///     sees the action first. Each middleware is installed now, once for this store; an action that one
    ///     dispatches while it is being installed is processed right after the whole chain is installed.
    ///   - instrumentation: Called after the work of each action with what it cost; see ``StoreInstrumentation``.
    ///     `nil` (the default) costs nothing.
    @inlinable
    public convenience init(
        initialState: State,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = [],
        instrumentation: StoreInstrumentation<Action>? = nil
    ) {
        // One initializer makes the innermost `next` (see the one with `dependencies:`): the optimizer merges two
        // identical closures behind a thunk, which every action would then call through.
        self.init(
            initialState: initialState,
            reducer: reducer,
            middleware: middleware,
            dependencies: StoreDependencies.current,
            instrumentation: instrumentation
        )
    }

    /// Creates a store with the services that its middleware, side effects and effects use.
    ///
    /// ```swift
    /// let store = Store<Shop, ShopAction>(
    ///     initialState: Shop(),
    ///     reducer: shopReducer,
    ///     middleware: [checkout],
    ///     dependencies: StoreDependencies { $0.paymentGateway = StripeGateway(apiKey: apiKey) }
    /// )
    /// ```
    ///
    /// The store created without `dependencies:` takes ``StoreDependencies/current``: an empty live container,
    /// or the dependencies of the ``withStoreDependencies(_:operation:)`` region or of the store work it is created
    /// in.
    ///
    /// - Parameters:
    ///   - initialState: The state before the first action.
    ///   - reducer: Produces each next state.
    ///   - middleware: The chain each action passes through; see ``init(initialState:reducer:middleware:instrumentation:)``.
    ///   - dependencies: What ``MiddlewareAPI/dependencies`` returns, and what the work that the store starts sees
    ///     as ``StoreDependencies/current``.
    ///   - onEffectError: Receives each failure of an effect or side effect that nobody awaits; see
    ///     ``Store/init(initialState:reducer:middleware:onEffectError:)``.
    ///   - instrumentation: Called after the work of each action with what it cost; see ``StoreInstrumentation``.
    @inlinable
    public convenience init(
        initialState: State,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = [],
        dependencies: StoreDependencies,
        onEffectError: (@Sendable (EffectFailure) -> Void)? = nil,
        instrumentation: StoreInstrumentation<Action>? = nil
    ) {
        // The innermost `next` is created here, in the caller's module, so that it runs code specialized for the
        // caller's `State` and `Action`. Created in the unspecialized initializer, it would look up generic metadata
        // on every action.
        self.init(
            initialState: initialState,
            reducer: reducer,
            middleware: middleware,
            dependencies: dependencies,
            innermost: { core in { action in core.reduceFromChain(action) } },
            onEffectError: onEffectError,
            // Made here, like `innermost`, so that it is specialized for the caller's types.
            outermost: instrumentation?.middleware()
        )
    }

    /// Creates a store that reports the errors of its side effects and effects to `onEffectError`.
    ///
    /// The handler is called, on the failed effect's task, for an error thrown by an `async` side effect and by an
    /// effect started with ``start(_:)`` or ``MiddlewareAPI/start(_:)`` (whose task nobody may await: its error
    /// would vanish otherwise). An effect run with `run`, which returns its error to the caller, is not reported.
    /// A cancellation is not an error: a `CancellationError`, or any error thrown by work that was cancelled
    /// (superseded by `takeLatest`, cancelled by id, or stopped because the store went away or shut down), is not
    /// reported. Each effect runs in its own task, so one that fails never stops another.
    ///
    /// ```swift
    /// let store = Store<AppState, AppAction>(
    ///     initialState: AppState(),
    ///     reducer: appReducer,
    ///     middleware: [],
    ///     onEffectError: { failure in print("effect failed:", failure.error) }
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - initialState: The state before the first action.
    ///   - reducer: Produces each next state.
    ///   - middleware: The chain each action passes through; see ``init(initialState:reducer:middleware:instrumentation:)``.
    ///   - onEffectError: Receives each failure.
    @inlinable
    public convenience init(
        initialState: State,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = [],
        onEffectError: @escaping @Sendable (EffectFailure) -> Void
    ) {
        self.init(
            initialState: initialState,
            reducer: reducer,
            middleware: middleware,
            dependencies: StoreDependencies.current,
            onEffectError: onEffectError
        )
    }

    /// The initializer behind ``init(initialState:reducer:middleware:instrumentation:)``; `innermost` makes the `next` that
    /// reduces.
    @usableFromInline
    init(
        initialState: State,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>],
        dependencies: StoreDependencies,
        innermost: (StoreCore<State, Action>) -> DispatchFunction<Action>,
        onEffectError: (@Sendable (EffectFailure) -> Void)? = nil,
        outermost: Middleware<State, Action>? = nil
    ) {
        // The instrumentation's step (`outermost`) measures the whole chain: it goes first.
        let middleware = outermost.map { [$0] + middleware } ?? middleware
        let core = StoreCore(initialState: initialState, reduce: reducer.reduce, dependencies: dependencies)
        core.work.setFailureHandler(onEffectError)
        self.core = core
        if middleware.isEmpty {
            chain = nil
        } else {
            chain = core.installChain {
                let api = MiddlewareAPI(core: core)
                var next = innermost(core)
                for middleware in middleware.reversed() {
                    next = middleware.body(api)(next)
                }
                return next
            }
        }
    }

    deinit {
        core.storeDidGoAway()
    }

    /// The current state.
    ///
    /// Safe from any thread; waits for at most one reducer call. Not to be called from inside the reducer.
    /// This is a copy of the whole state: while you hold it, the reducer's next in-place change of a collection in
    /// it copies that collection. To read a part, use ``read(_:)``, which borrows the state instead
    /// (see <doc:LargeStates>).
    /// Observation tracks this read: `withObservationTracking { store.state.count } onChange: { ... }` is told about
    /// the next action that the store reduces (see <doc:ConsumingState>).
    @inlinable
    public var state: State {
        core.observedState
    }

    /// Sends an action through the middleware to the reducer, then notifies the subscribers.
    ///
    /// Returns when the action, and every action that its processing dispatched on this thread, has been
    /// reduced and its subscribers notified. Called from inside such processing (a middleware, a side effect,
    /// a subscriber), it queues the action and returns at once. Safe from any thread. Once ``shutdown(timeout:)``
    /// has begun, the action is refused: dropped, and counted in ``StoreStatistics/refusedDispatches``.
    ///
    /// - Returns: `true` if the action was accepted (processed, or queued for the thread that runs the store's
    ///   work), `false` if it was refused (shutdown has begun) or the store is gone: the same answer as
    ///   ``MiddlewareAPI/dispatch(_:)`` and ``ScopedStore/dispatch(_:)``. Ignoring it costs nothing.
    @inlinable @inline(__always) @discardableResult
    public func dispatch(_ action: Action) -> Bool {
        core.dispatch(action, through: chain)
    }

    /// Calls `observer` with the new state after every action.
    ///
    /// Observers are called in subscription order on the dispatching thread, after the reducer ran and outside
    /// the store's lock; they may dispatch (the action is queued) and subscribe or cancel (effective from the next
    /// action). A new observer is first called for the next action, not with the current state.
    ///
    /// - Parameter observer: Receives each new state.
    /// - Returns: The subscription; notifications stop when it is cancelled or released.
    public func subscribe(_ observer: @escaping @Sendable (State) -> Void) -> Subscription {
        core.observeEveryAction(observer)
    }

    /// Calls `observer` with the value at `keyPath` after each action that changed it.
    ///
    /// The value is compared with the one that the previous notification saw (at first, the value when you
    /// subscribe), so repeats are skipped. The subscription keeps that value: for a large collection, that is a
    /// second reference to its storage, and every in-place change of the reducer then copies the whole collection.
    /// Observe a collection with ``subscribe(to:by:_:)`` instead (see <doc:LargeStates>).
    ///
    /// ```swift
    /// let subscription = store.subscribe(to: \.orders.pending) { pending in print("pending:", pending) }
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The value to observe.
    ///   - observer: Receives each changed value.
    /// - Returns: The subscription; notifications stop when it is cancelled or released.
    @inlinable
    public func subscribe<Value: Equatable & Sendable>(
        to keyPath: any KeyPath<State, Value> & Sendable,
        _ observer: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        core.observe(keyPath, observer)
    }
}
