/// What a middleware, a side effect or an effect can do with its store: read the state and dispatch.
///
/// An API value stays valid after its store is gone: `dispatch` then does nothing, `isCancelled` is `true`,
/// and `state` returns the last state. It does not keep the store alive.
public struct MiddlewareAPI<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline
    let core: StoreCore<State, Action>
    /// Set for a run of a side effect under `takeLatest` (or an effect with an id): cancelled when superseded.
    package let cancellation: Cancellation?

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
    /// is queued and processed after the current one. Does nothing once ``isCancelled`` is `true`.
    public func dispatch(_ action: Action) {
        if let cancellation, cancellation.isCancelled {
            return
        }
        core.dispatchFromAPI(action)
    }

    /// `true` once this run was superseded (by `takeLatest` or an effect with the same id) or the store is gone.
    public var isCancelled: Bool {
        if let cancellation, cancellation.isCancelled {
            return true
        }
        return !core.alive
    }

    /// The same API with its dispatches tied to `cancellation` as well.
    package func cancellable(by cancellation: Cancellation) -> MiddlewareAPI {
        MiddlewareAPI(core: core, cancellation: cancellation)
    }

    /// What cancels work started by this run: the run's own cancellation, or else the store's lifetime.
    package var runCancellation: Cancellation {
        cancellation ?? core.lifetime
    }

    /// Cancelled when the store goes away.
    @usableFromInline
    package var storeLifetime: Cancellation {
        core.lifetime
    }
}
