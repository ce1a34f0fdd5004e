extension Store {
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
