import Dispatch

extension StoreDependencies {
    /// The store's scheduler: where time-based work runs and what time it is (monotonic `DispatchTime`).
    ///
    /// The time modifiers (``Middlewares/throttle(_:latest:runs:on:_:)-(Duration,_,_,_,SideEffect<State,Action>)``,
    /// ``Middlewares/debounce(_:maxWait:runs:on:_:)-(Duration,_,_,_,SideEffect<State,Action>)``,
    /// ``Middlewares/delay(_:runs:on:_:)-(Duration,_,_,SideEffect<State,Action>)``) given no `on:` scheduler use the
    /// store's scheduler when its dependencies set one, so one line puts every throttle, debounce and delay of a store
    /// on virtual time:
    ///
    /// ```swift
    /// let scheduler = TestScheduler()
    /// let store = Store<AppState, AppAction>(
    ///     initialState: AppState(),
    ///     reducer: appReducer,
    ///     middleware: [Middleware(Middlewares.debounce(.milliseconds(300), save))],
    ///     dependencies: .test { $0.scheduler = scheduler }
    /// )
    /// ```
    ///
    /// The store's timers (``MiddlewareAPI/schedule(id:cancelInFlight:after:_:)``) run on it too.
    ///
    /// When it is not set, each modifier keeps its own serial queue, and a read of `scheduler` gives a scheduler on
    /// one serial queue that the process shares. It has no test value: a test that reads it sets it. In a test
    /// context, a modifier given no `on:` reads it when the store installs the modifier, so that a test store that
    /// did not set it fails the test rather than let the modifier run on a real queue, out of the test's sight.
    ///
    /// Named for what it is, an ``EffectScheduler``, as ``date`` is a date provider and ``random`` a random source.
    public var scheduler: any EffectScheduler {
        get { self[SchedulerKey.self] }
        set { self[SchedulerKey.self] = newValue }
    }

    /// The scheduler, if these dependencies set one.
    var schedulerIfSet: (any EffectScheduler)? {
        valueIfSet(SchedulerKey.self)
    }
}

private enum SchedulerKey: StoreDependencyKey {
    static let liveValue: any EffectScheduler = DispatchQueueScheduler(queue: DispatchQueue(label: "sluice.scheduler"))
}
