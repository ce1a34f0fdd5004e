extension Store {
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
        // caller's `State` and `Action`. Created in the unspecialized initializer, it spent about 1,100
        // instructions per action on generic metadata lookups (callgrind, one pass-through middleware).
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

    /// The services of this store; see ``StoreDependencies``.
    public var dependencies: StoreDependencies {
        core.dependencies
    }
}

extension MiddlewareAPI {
    /// The services of the store; see ``StoreDependencies``.
    ///
    /// Always the store's own dependencies, from any thread or task: a read costs a load (and, for a key that the
    /// store set, a scan of the keys it set). A ``withStoreDependencies(_:operation:)`` region changes
    /// ``StoreDependencies/current``, not this.
    @inlinable
    public var dependencies: StoreDependencies {
        core.dependencies
    }
}

extension MiddlewareAPI {
    /// Runs synchronous `work` with this store's dependencies bound to ``StoreDependencies/current``: the
    /// synchronous `run`, which is an effect like the asynchronous one and so follows the same rule.
    func runWithDependenciesBound<T, E: Error>(_ work: () throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = StoreDependencies.$bound.withValue(core.dependencies) {
            do throws(E) {
                return .success(try work())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
