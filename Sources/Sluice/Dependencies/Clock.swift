import Dispatch

extension StoreDependencies {
    /// The store's clock: where time-based work runs and what time it is (monotonic `DispatchTime`).
    ///
    /// The time modifiers (``Middlewares/throttle(_:latest:on:_:)-(_,_,_,SideEffect<State,Action>)``,
    /// ``Middlewares/debounce(_:maxWait:runs:on:_:)-(_,_,_,_,SideEffect<State,Action>)``,
    /// ``Middlewares/delay(_:runs:on:_:)-(_,_,_,SideEffect<State,Action>)``) given no `on:` scheduler use the store's clock
    /// when its dependencies set one, so one line puts every throttle, debounce and delay of a store on virtual time:
    ///
    /// ```swift
    /// let scheduler = TestScheduler()
    /// let store = Store<AppState, AppAction>(
    ///     initialState: AppState(),
    ///     reducer: appReducer,
    ///     middleware: [Middleware(Middlewares.debounce(.milliseconds(300), save))],
    ///     dependencies: .test { $0.clock = scheduler }
    /// )
    /// ```
    ///
    /// When it is not set, each modifier keeps its own serial queue, and a read of `clock` gives a scheduler on one
    /// serial queue that the process shares. It has no test value: a test that reads it sets it. In a test
    /// context, a modifier given no `on:` reads it when the store installs the modifier, so that a test store that
    /// did not set it fails the test rather than let the modifier run on a real queue, out of the test's sight.
    public var clock: any EffectScheduler {
        get { self[ClockKey.self] }
        set { self[ClockKey.self] = newValue }
    }

    /// The clock, if these dependencies set one.
    var clockIfSet: (any EffectScheduler)? {
        valueIfSet(ClockKey.self)
    }
}

private enum ClockKey: StoreDependencyKey {
    static let liveValue: any EffectScheduler = DispatchQueueScheduler(queue: DispatchQueue(label: "sluice.clock"))
}
