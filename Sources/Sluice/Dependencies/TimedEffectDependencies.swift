/// How the time modifiers take their clock and bind their runs to the store's dependencies.
extension EffectScheduler {
    /// The scheduler a time modifier installed in the store of `api` uses: the store's clock if the modifier was
    /// given the default scheduler and the store's dependencies set a clock, else this scheduler.
    @usableFromInline
    func resolved<State, Action>(with api: MiddlewareAPI<State, Action>) -> any EffectScheduler {
        if let queue = self as? DispatchQueueScheduler, queue.prefersStoreClock,
            let clock = api.dependencies.clockIfSet
        {
            return clock
        }
        return self
    }
}

extension MiddlewareAPI {
    /// Whether runs of time modifiers bind the store's dependencies to ``StoreDependencies/current``: not for a
    /// store with none set in a live context, whose runs then cost what they cost before dependencies existed.
    @usableFromInline
    var bindsDependencies: Bool {
        !dependencies.isEmptyLive
    }

    /// ``runUnlessCancelled(_:_:)`` with the store's dependencies bound to ``StoreDependencies/current``.
    @usableFromInline
    func runWithDependenciesUnlessCancelled(_ handler: SideEffect<State, Action>.Handler, _ action: Action) {
        StoreDependencies.$bound.withValue(core.dependencies.causedBy(action)) {
            runUnlessCancelled(handler, action)
        }
    }
}
