/// A value derived from a store's state, as streams and scoped stores consume it: read it, watch it, learn when
/// the store goes away.
///
/// It hides the store's `State` and `Action` types behind closures, so that ``StateStream`` and ``ScopedStore``
/// depend only on the value they show, and a scoped store of a scoped store is one more `map`. It refers to the
/// store's core, never to the ``Store``, so it does not keep the store alive.
struct StateSource<Value: Sendable>: Sendable {
    /// The current value; Observation tracks the read (as ``Store/state``).
    let read: @Sendable () -> Value
    /// Calls `body` with a pointer to the current value, with the store's lock held, without copying the value
    /// when a chain of stored properties leads to it; Observation tracks the read (as ``Store/state``).
    let withValue: @Sendable (_ body: (UnsafePointer<Value>) -> Void) -> Void
    /// Adds a store subscriber. `makeObserver` receives the value at that moment, under the store's lock, and
    /// returns the function that receives the value after each action. The subscriber is removed when the
    /// returned subscription is cancelled or released.
    let subscribe: @Sendable (_ makeObserver: (Value) -> @Sendable (Value) -> Void) -> Subscription
    /// Registers work to run when the store goes away (at once if it is gone), and returns the function that
    /// unregisters it.
    let onTeardown: @Sendable (_ handler: @escaping @Sendable () -> Void) -> @Sendable () -> Void

    init<State, Action>(core: StoreCore<State, Action>, select: @escaping @Sendable (State) -> Value) {
        self.init(core: core, select: select) { body in
            core.withStatePointer(tracked: true) { state in
                withUnsafePointer(to: select(state.pointee)) { body($0) }
            }
        }
    }

    /// The source of the value at `keyPath` in the store's state; ``withValue`` borrows it in place when the key
    /// path is a chain of stored properties.
    init<State, Action>(core: StoreCore<State, Action>, keyPath: any KeyPath<State, Value> & Sendable) {
        let reader = KeyPathReader(keyPath)
        self.init(
            core: core,
            select: { reader($0) },
            withValue: { body in
                core.withStatePointer(tracked: true) { state in reader.withPointer(in: state, body) }
            }
        )
    }

    private init<State, Action>(
        core: StoreCore<State, Action>,
        select: @escaping @Sendable (State) -> Value,
        withValue: @escaping @Sendable ((UnsafePointer<Value>) -> Void) -> Void
    ) {
        read = { select(core.observedState) }
        self.withValue = withValue
        subscribe = { makeObserver in
            let id = core.subscribe { state in
                let observer = makeObserver(select(state))
                return { state in observer(select(state)) }
            }
            return Subscription(core: core, id: id)
        }
        onTeardown = { handler in
            let lifetime = core.lifetime
            guard let key = lifetime.onCancel(handler) else { return {} }
            return { lifetime.removeHandler(key) }
        }
    }

    private init(
        read: @escaping @Sendable () -> Value,
        withValue: @escaping @Sendable ((UnsafePointer<Value>) -> Void) -> Void,
        subscribe: @escaping @Sendable ((Value) -> @Sendable (Value) -> Void) -> Subscription,
        onTeardown: @escaping @Sendable (@escaping @Sendable () -> Void) -> @Sendable () -> Void
    ) {
        self.read = read
        self.withValue = withValue
        self.subscribe = subscribe
        self.onTeardown = onTeardown
    }

    /// The source of a value derived from this one.
    func map<Derived: Sendable>(_ transform: @escaping @Sendable (Value) -> Derived) -> StateSource<Derived> {
        let read = self.read
        let withValue = self.withValue
        let subscribe = self.subscribe
        return StateSource<Derived>(
            read: { transform(read()) },
            withValue: { body in
                withValue { value in withUnsafePointer(to: transform(value.pointee)) { body($0) } }
            },
            subscribe: { makeObserver in
                subscribe { value in
                    let observer = makeObserver(transform(value))
                    return { value in observer(transform(value)) }
                }
            },
            onTeardown: onTeardown
        )
    }

    /// The source of the value at `keyPath` inside this one; ``withValue`` borrows it in place when the key path is
    /// a chain of stored properties.
    func map<Derived: Sendable>(_ keyPath: any KeyPath<Value, Derived> & Sendable) -> StateSource<Derived> {
        let reader = KeyPathReader(keyPath)
        let mapped = map { reader($0) }
        let withValue = self.withValue
        return StateSource<Derived>(
            read: mapped.read,
            withValue: { body in
                withValue { value in reader.withPointer(in: value, body) }
            },
            subscribe: mapped.subscribe,
            onTeardown: mapped.onTeardown
        )
    }
}

extension Store {
    /// The number of subscribers, streams included (for tests).
    package var subscriberCount: Int {
        core.lock.withLock { core.subscribers.count }
    }

    /// The number of handlers that run when the store goes away (for tests).
    package var teardownHandlerCount: Int {
        core.lifetime.handlerCount
    }
}
