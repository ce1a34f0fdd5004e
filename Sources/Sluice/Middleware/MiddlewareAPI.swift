/// What a middleware, a side effect or an effect can do with its store: read the state and dispatch.
///
/// An API value stays valid after its store is gone: `dispatch` then does nothing, `isCancelled` is `true`,
/// and `state` returns the last state. It does not keep the store alive.
public struct MiddlewareAPI<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline
    package let core: StoreCore<State, Action>
    /// Set for a run of a side effect under `takeLatest` (or an effect with an id): cancelled when superseded.
    @usableFromInline
    package let cancellation: Cancellation?

    @usableFromInline
    init(core: StoreCore<State, Action>, cancellation: Cancellation? = nil) {
        self.core = core
        self.cancellation = cancellation
    }

    /// The current state, read under the store's lock.
    ///
    /// After the store is gone, the last state it had.
    @inlinable
    public var state: State {
        core.state
    }

    /// Dispatches an action through the whole middleware chain of the store.
    ///
    /// Called while the same thread is dispatching on this store (the usual case inside a middleware), the action
    /// is queued and processed after the current one. Called from another thread while the store is still
    /// installing its middleware, it waits for the installation and then goes through the whole chain.
    ///
    /// The answer tells whether the action was accepted, so that work which counts its results (a lookup that
    /// reports "done", say) counts only what the store really took:
    ///
    /// ```swift
    /// let lookup = Middlewares.takeLatest(SideEffect<AppState, AppAction> { action, api in
    ///     let quote = await fetchQuote(for: action)
    ///     if api.dispatch(.quoteReceived(quote)) {
    ///         completedLookups.increment()
    ///     }
    /// })
    /// ```
    ///
    /// - Returns: `true` if the action was accepted: processed before this call returned, or queued for the thread
    ///   that is dispatching on the store, which processes it before its own dispatch returns. `false` if it was
    ///   dropped: this run was cancelled (``isCancelled`` is `true`: superseded by `takeLatest` or by an effect with
    ///   the same id), the store is gone, or ``Store/shutdown(timeout:)`` has begun (then the refusal is counted).
    ///   The run is checked again once the store is free for the action: a dispatch that waited for a busy store
    ///   while its run was superseded is dropped then, so a stale result never overwrites a newer one. An action
    ///   accepted and queued is still processed if the run is cancelled afterwards; an action queued when the
    ///   store goes away is dropped with the rest of the queue.
    @inlinable @discardableResult
    public func dispatch(_ action: Action) -> Bool {
        if runIsCancelled {
            return false
        }
        return core.dispatchFromAPI(action, unlessCancelled: cancellation)
    }

    /// `true` once this run was superseded (by `takeLatest` or an effect with the same id), the store is gone, or
    /// its ``Store/shutdown(timeout:)`` has ended.
    public var isCancelled: Bool {
        // The store's lifetime ends when the store goes away and when its shutdown ends: the one record of both.
        runIsCancelled || core.lifetime.isCancelled
    }

    /// Whether this run was superseded (by `takeLatest` or an effect with the same id); its dispatches and sends
    /// are then dropped.
    @inlinable
    var runIsCancelled: Bool {
        cancellation?.isCancelled ?? false
    }

    /// The same API with its dispatches tied to `cancellation` as well.
    @usableFromInline
    package func cancellable(by cancellation: Cancellation) -> MiddlewareAPI {
        MiddlewareAPI(core: core, cancellation: cancellation)
    }

    /// What cancels work started by this run: the run's own cancellation, or else the store's lifetime.
    @usableFromInline
    package var runCancellation: Cancellation {
        cancellation ?? core.lifetime
    }

    /// Cancelled when the store goes away.
    @usableFromInline
    package var storeLifetime: Cancellation {
        core.lifetime
    }
}
