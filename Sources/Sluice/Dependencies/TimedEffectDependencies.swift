/// How the time modifiers take their scheduler and bind their runs to the store's dependencies.
extension EffectScheduler {
    /// The scheduler a time modifier installed in the store of `api` uses: the store's scheduler if the modifier was
    /// given the default scheduler and the store's dependencies set one, else this scheduler.
    ///
    /// In a test context whose dependencies do not set a scheduler, the default scheduler reads
    /// ``StoreDependencies/scheduler`` (and then keeps its own queue): that key has no test value, so a test store
    /// fails the test for a time modifier that would otherwise run on a real queue, out of the test's sight.
    @usableFromInline
    func resolved<State, Action>(with api: MiddlewareAPI<State, Action>) -> any EffectScheduler {
        guard let queue = self as? DispatchQueueScheduler, queue.prefersStoreScheduler else { return self }
        let dependencies = api.dependencies
        if let scheduler = dependencies.schedulerIfSet {
            return scheduler
        }
        if dependencies.context == .test {
            _ = dependencies.scheduler
        }
        return self
    }
}

extension MiddlewareAPI {
    /// ``runUnlessCancelled(_:_:)`` with the store's dependencies bound to ``StoreDependencies/current``, also for a
    /// store that set none: a run that a test scheduler's `advance` performs inside a
    /// ``withStoreDependencies(_:operation:)`` region sees the store's dependencies, not the region's.
    ///
    /// The binding is skipped only when it would change nothing: the store set no dependencies in a live context
    /// and neither did the code around the run, so every key reads its live value either way.
    @usableFromInline
    func runWithDependenciesUnlessCancelled(_ handler: SideEffect<State, Action>.Handler, _ action: Action) {
        let dependencies = core.dependencies
        if dependencies.isEmptyLive, StoreDependencies.bound.isEmptyLive {
            runUnlessCancelled(handler, action)
            return
        }
        StoreDependencies.$bound.withValue(dependencies.causedBy(action)) {
            runUnlessCancelled(handler, action)
        }
    }
}
