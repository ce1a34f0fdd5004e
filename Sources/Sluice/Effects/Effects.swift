/// Effects: work that is not an action (a thunk), run with the store's ``MiddlewareAPI``.
///
/// An effect bypasses the middleware and the reducer: it reads the state and dispatches actions (which go through
/// the whole chain, as any dispatch does), and may start other effects. A synchronous effect runs on the calling
/// thread; an asynchronous one runs in a `Task` that the store tracks, so that it can be cancelled by id and is
/// cancelled when the store goes away. See <doc:Effects>.
extension Store {
    /// Runs synchronous work with the store's ``MiddlewareAPI`` and returns its result.
    ///
    /// The work runs on the calling thread, before `run` returns. Its dispatches behave as any dispatch from that
    /// thread: run to completion, or queued if the thread is already dispatching on this store (a subscriber that
    /// runs an effect, say). Like every effect, it sees the store's dependencies as ``StoreDependencies/current``.
    ///
    /// ```swift
    /// store.run { api in
    ///     if api.state.cart.isEmpty { api.dispatch(.cart(.restoreSaved)) }
    /// }
    /// ```
    ///
    /// - Parameter work: The effect; it receives the store's API.
    /// - Returns: What `work` returns.
    /// - Throws: What `work` throws.
    @discardableResult
    public func run<T, E: Error>(_ work: (MiddlewareAPI<State, Action>) throws(E) -> T) throws(E) -> T {
        let api = MiddlewareAPI(core: core)
        return try api.runWithDependenciesBound { () throws(E) -> T in try work(api) }
    }

    /// Runs asynchronous work with the store's ``MiddlewareAPI`` in a new `Task`, and returns its result.
    ///
    /// ```swift
    /// let user = try await store.run { api in
    ///     let user = try await client.fetchUser(api.state.session.userID)
    ///     api.dispatch(.loaded(user))
    ///     return user
    /// }
    /// ```
    ///
    /// Cancelling the task that awaits `run` cancels the effect. The effect is also cancelled when the store goes
    /// away; then its `Task` is cancelled, ``MiddlewareAPI/isCancelled`` is `true` and its dispatches do nothing.
    /// While you await `run`, you hold the store (it is `self`): use ``start(_:)`` for an effect that must not keep
    /// the store alive.
    ///
    /// - Parameter work: The effect; it receives an API whose dispatches stop when the effect is cancelled.
    /// - Returns: What `work` returns.
    /// - Throws: What `work` throws (typically `CancellationError` once it was cancelled).
    @_disfavoredOverload  // a closure that does not await picks the synchronous `run`, even in an async context
    @discardableResult
    public func run<T: Sendable>(
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) async throws -> T {
        try await core.runEffect(id: nil, cancelInFlight: false, parent: core.lifetime, work)
    }

    /// Runs asynchronous work under an id, which ``cancel(id:)`` (and a later effect with `cancelInFlight`) can
    /// cancel, and returns its result.
    ///
    /// ```swift
    /// let results = try await store.run(id: "search", cancelInFlight: true) { api in
    ///     try await searchClient.search(api.state.query)
    /// }
    /// ```
    ///
    /// The effect is registered under `id` before `run` suspends, so a ``cancel(id:)`` made after that, even before
    /// the effect's `Task` started, cancels it. Several effects may share an id; they are cancelled together.
    ///
    /// - Parameters:
    ///   - id: Identifies the effect for cancellation.
    ///   - cancelInFlight: Whether to cancel the effects that are running under `id` first.
    ///   - work: The effect; it receives an API whose dispatches stop when the effect is cancelled.
    /// - Returns: What `work` returns.
    /// - Throws: What `work` throws (typically `CancellationError` once it was cancelled).
    @discardableResult
    public func run<T: Sendable>(
        id: some Hashable & Sendable,
        cancelInFlight: Bool = false,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) async throws -> T {
        try await core.runEffect(id: id, cancelInFlight: cancelInFlight, parent: core.lifetime, work)
    }

    /// Starts asynchronous work with the store's ``MiddlewareAPI`` in a new `Task`, and returns the task at once.
    ///
    /// Use it from synchronous code, or for an effect that outlives its caller: the task does not keep the store
    /// alive, and freeing the store cancels it. Cancelling the returned task cancels the effect (its dispatches
    /// stop too).
    ///
    /// - Parameter work: The effect; it receives an API whose dispatches stop when the effect is cancelled.
    /// - Returns: The effect's task; its `value` is what `work` returns.
    @discardableResult
    public func start<T: Sendable>(
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) -> Task<T, any Error> {
        core.startEffect(id: nil, cancelInFlight: false, parent: core.lifetime, reportsFailure: true, work)
    }

    /// Starts asynchronous work under an id in a new `Task`, and returns the task at once.
    ///
    /// The effect is registered under `id` before `start` returns: a ``cancel(id:)`` that follows cancels it.
    ///
    /// - Parameters:
    ///   - id: Identifies the effect for cancellation.
    ///   - cancelInFlight: Whether to cancel the effects that are running under `id` first.
    ///   - work: The effect; it receives an API whose dispatches stop when the effect is cancelled.
    /// - Returns: The effect's task; its `value` is what `work` returns.
    @discardableResult
    public func start<T: Sendable>(
        id: some Hashable & Sendable,
        cancelInFlight: Bool = false,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) -> Task<T, any Error> {
        core.startEffect(id: id, cancelInFlight: cancelInFlight, parent: core.lifetime, reportsFailure: true, work)
    }

    /// Cancels every running effect that was started with `id`, and every pending timer set with it
    /// (``schedule(id:cancelInFlight:after:_:)``).
    ///
    /// Each one's `Task` is cancelled and its API's dispatches do nothing from now on. An id with no running effect
    /// is ignored.
    public func cancel(id: some Hashable & Sendable) {
        core.work.cancel(id: EffectID(base: id))
    }

    /// The number of asynchronous effects started and neither finished nor cancelled (for tests).
    package var runningEffectCount: Int {
        core.work.listedEffectCount
    }

    /// Waits until no task of an effect or of an `async` side effect runs, or until `deadline`; returns whether none
    /// runs (for the test store). The store's ledger resumes the wait when the last task ends.
    package func waitForRunningTasks(until deadline: ContinuousClock.Instant) async -> Bool {
        await core.work.waitForTasks(excluding: nil, until: deadline)
    }

    /// The number of ids under which an effect is running (for tests).
    package var runningEffectIDCount: Int {
        core.work.effectIDCount
    }

    /// The number of effects running under `id` (for tests).
    package func runningEffectCount(id: some Hashable & Sendable) -> Int {
        core.work.effectCount(id: EffectID(base: id))
    }
}

/// An effect can start other effects through its API. An asynchronous effect started through the API of a
/// cancellable run (an effect's, or a `takeLatest` run's) is cancelled with that run.
extension MiddlewareAPI {
    /// Runs synchronous work with this API and returns its result; see `Store.run(_:)`.
    @discardableResult
    public func run<T, E: Error>(_ work: (MiddlewareAPI<State, Action>) throws(E) -> T) throws(E) -> T {
        try runWithDependenciesBound { () throws(E) -> T in try work(self) }
    }

    /// Runs asynchronous work in a new `Task` and returns its result; see `Store.run(_:)`.
    ///
    /// The new effect is cancelled when this API's run is cancelled, when the awaiting task is, and when the store
    /// goes away.
    @_disfavoredOverload  // a closure that does not await picks the synchronous `run`, even in an async context
    @discardableResult
    public func run<T: Sendable>(
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) async throws -> T {
        try await core.runEffect(id: nil, cancelInFlight: false, parent: runCancellation, work)
    }

    /// Runs asynchronous work under an id and returns its result; see ``Store/run(id:cancelInFlight:_:)``.
    @discardableResult
    public func run<T: Sendable>(
        id: some Hashable & Sendable,
        cancelInFlight: Bool = false,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) async throws -> T {
        try await core.runEffect(id: id, cancelInFlight: cancelInFlight, parent: runCancellation, work)
    }

    /// Starts asynchronous work in a new `Task` and returns the task at once; see ``Store/start(_:)``.
    @discardableResult
    public func start<T: Sendable>(
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) -> Task<T, any Error> {
        core.startEffect(id: nil, cancelInFlight: false, parent: runCancellation, reportsFailure: true, work)
    }

    /// Starts asynchronous work under an id and returns the task at once; see ``Store/start(id:cancelInFlight:_:)``.
    @discardableResult
    public func start<T: Sendable>(
        id: some Hashable & Sendable,
        cancelInFlight: Bool = false,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) -> Task<T, any Error> {
        core.startEffect(id: id, cancelInFlight: cancelInFlight, parent: runCancellation, reportsFailure: true, work)
    }

    /// Cancels every running effect of the store that was started with `id`; see ``Store/cancel(id:)``.
    public func cancel(id: some Hashable & Sendable) {
        core.work.cancel(id: EffectID(base: id))
    }
}

extension StoreCore {
    /// Registers an effect, then starts its task.
    ///
    /// `parent` is the store's lifetime or a cancellable run that leads to it, so freeing the store (or cancelling
    /// the run) cancels the effect; an effect started after that starts cancelled.
    ///
    /// The order matters: registering first means that `cancelInFlight` has cancelled the older effects before the
    /// new work starts, and that a cancel made as soon as this returns finds the effect. The effect's cancellation
    /// and its task cancel each other: cancelling the task (or the task awaiting it) makes the dispatches no-ops,
    /// and cancelling by id cancels the task, even if that happens before the task is created.
    func startEffect<T: Sendable>(
        id: (any Hashable & Sendable)?,
        cancelInFlight: Bool,
        parent: Cancellation,
        reportsFailure: Bool = false,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) -> Task<T, any Error> {
        let cancellation = Cancellation(parent: parent)
        let storeWork = self.work
        // One entry in the store's ledger: listed under its id, part of the `takeLeading` run that started it (if
        // any), and of the send group of the `send` being processed on this thread (if any).
        let token = storeWork.begin(
            .effect,
            id: id.map { EffectID(base: $0) },
            cancelInFlight: cancelInFlight,
            cancellation: cancellation,
            group: sendGroupOfCurrentRun()
        )
        let api = MiddlewareAPI(core: self, cancellation: cancellation)
        let task = Task {
            defer {
                cancellation.detachFromParent()
                storeWork.end(token)
            }
            do {
                return try await storeWork.track(token) {
                    try await withTaskCancellationHandler {
                        try await api.withDependenciesBound(for: nil) { try await work(api) }
                    } onCancel: {
                        cancellation.cancel()
                    }
                }
            } catch {
                if reportsFailure {
                    storeWork.report(error, wasCancelled: cancellation.isCancelled) {
                        EffectFailure(error: error, source: .effect, id: id)
                    }
                }
                throw error
            }
        }
        cancellation.onCancel { task.cancel() }
        return task
    }
}

extension StoreCore {
    /// Starts an effect and awaits its result: every `run` of an asynchronous effect. Cancelling the awaiting task
    /// cancels the effect.
    func runEffect<T: Sendable>(
        id: (any Hashable & Sendable)?,
        cancelInFlight: Bool,
        parent: Cancellation,
        _ work: @escaping @Sendable (MiddlewareAPI<State, Action>) async throws -> T
    ) async throws -> T {
        let task = startEffect(id: id, cancelInFlight: cancelInFlight, parent: parent, work)
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }
}
