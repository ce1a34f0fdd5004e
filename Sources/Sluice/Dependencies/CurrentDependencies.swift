extension StoreDependencies {
    /// The dependencies that are bound to the current task, for code that has no ``MiddlewareAPI`` at hand.
    ///
    /// Inside the work that a store runs as its own — an effect (`run`, synchronous or not, and `start`), an async
    /// side effect, a run of a time modifier — these are the store's dependencies, whatever region the code that
    /// started or drove the work is in, so a helper function deep inside an effect reads them without being passed
    /// the API:
    ///
    /// ```swift
    /// func charge(_ order: Order) async throws -> Receipt {
    ///     try await StoreDependencies.current.paymentGateway.charge(order.total, for: order.id)
    /// }
    /// ```
    ///
    /// Anywhere else (a `Task.detached`, a thread that no store work started, a synchronous middleware as
    /// `dispatch` runs it), they are the dependencies of the innermost ``withStoreDependencies(_:operation:)`` around
    /// the code, or else an empty live container: every key reads its live value. In a synchronous middleware or
    /// side effect, read ``MiddlewareAPI/dependencies`` instead, which is always the store's and costs a load (a
    /// test store binds its store's dependencies around the chain, so that a read of a key without a test value
    /// there fails the test). See <doc:ServicesAndDependencies> for the rule.
    ///
    /// A task-local value (the store binds it when it starts a task), since only a task-local follows an effect
    /// across its suspension points and into the child tasks it creates. Rule 3 of the dispatch contract avoids
    /// task-locals for re-entrancy detection, where inheriting them into a `Task` would be wrong; inheriting the
    /// store's services into the tasks an effect creates is what is wanted here.
    public static var current: StoreDependencies {
        bound
    }

    @TaskLocal
    static var bound = StoreDependencies()
}

/// Runs `operation` with the dependencies that `update` changes, for a region of code and the tasks it creates.
///
/// Starts from ``StoreDependencies/current`` (inside an effect, the store's dependencies), so a region inside an
/// effect changes only what it sets:
///
/// ```swift
/// try await withStoreDependencies {
///     $0.paymentGateway = RetryingGateway(wrapping: $0.paymentGateway)
/// } operation: {
///     try await charge(order)
/// }
/// ```
///
/// The change is seen by ``StoreDependencies/current`` inside `operation` only: not by other effects, not by later
/// actions, and not by ``MiddlewareAPI/dependencies`` (a store's own dependencies are fixed when it is created; a
/// store created inside the region takes the region's).
///
/// - Parameters:
///   - update: Changes the dependencies for the region.
///   - operation: The region.
/// - Returns: What `operation` returns.
@discardableResult
public func withStoreDependencies<R>(
    _ update: (inout StoreDependencies) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    var dependencies = StoreDependencies.current
    try update(&dependencies)
    return try StoreDependencies.$bound.withValue(dependencies, operation: operation)
}

/// Runs asynchronous `operation` with the dependencies that `update` changes; see
/// ``withStoreDependencies(_:operation:)``.
///
/// - Parameters:
///   - update: Changes the dependencies for the region.
///   - isolation: The caller's actor isolation.
///   - operation: The region.
/// - Returns: What `operation` returns.
@discardableResult
public func withStoreDependencies<R>(
    _ update: (inout StoreDependencies) throws -> Void,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    var dependencies = StoreDependencies.current
    try update(&dependencies)
    return try await StoreDependencies.$bound.withValue(dependencies, operation: operation)
}

extension MiddlewareAPI {
    /// Runs `operation` with this store's dependencies bound to ``StoreDependencies/current``, recording `action`
    /// as the cause of the reads in a test context.
    func withDependenciesBound<R>(
        for action: Action?,
        isolation: isolated (any Actor)? = #isolation,
        _ operation: () async throws -> R
    ) async rethrows -> R {
        let dependencies = action.map { core.dependencies.causedBy($0) } ?? core.dependencies
        return try await StoreDependencies.$bound.withValue(dependencies, operation: operation)
    }
}
