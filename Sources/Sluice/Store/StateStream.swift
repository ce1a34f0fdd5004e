extension Store {
    /// The store's state as an asynchronous sequence: the current state, then the state after each reduced action.
    ///
    /// ```swift
    /// for await state in store.states {
    ///     render(state)
    /// }
    /// ```
    ///
    /// Each iteration subscribes anew and starts with the state at the moment it starts. A consumer that is slower
    /// than the store does not make it buffer: it sees the newest state when it asks for the next one, skipping
    /// the ones in between. The iteration ends when the store goes away (after the newest state was delivered)
    /// or when the iterating task is cancelled. The sequence does not keep the store alive.
    public var states: StateStream<State> {
        StateStream(source: StateSource(core: core) { $0 }, isRepeat: nil)
    }

    /// The value at `keyPath` as an asynchronous sequence: the current value, then each value that differs from the
    /// one before it.
    ///
    /// ```swift
    /// for await count in store.values(of: \.orders.count) {
    ///     print("orders:", count)
    /// }
    /// ```
    ///
    /// It never yields a value equal to the one it yielded last. A slower consumer sees the newest value (and none
    /// if the value went back to the one it has); the iteration ends when the store goes away or the iterating task
    /// is cancelled. The sequence does not keep the store alive.
    ///
    /// - Parameter keyPath: The value to follow.
    public func values<Value: Equatable & Sendable>(
        of keyPath: any KeyPath<State, Value> & Sendable
    ) -> StateStream<Value> {
        StateStream(source: StateSource(core: core) { $0[keyPath: keyPath] }, isRepeat: ==)
    }
}

/// An asynchronous sequence of a store's state, or of a value derived from it; see ``Store/states`` and
/// ``Store/values(of:)``.
///
/// Each iteration (each `for await` loop, each iterator) has its own subscription to the store, which starts when
/// the iterator is made and ends when the iteration ends or the iterator is released. Between two calls to `next()`
/// an iteration holds at most one value, the newest: it never buffers without bound, whatever the speed of the
/// consumer. Iteration ends (`next()` returns `nil`) when the store goes away, after the newest value was delivered,
/// or when the iterating task is cancelled.
public struct StateStream<Element: Sendable>: AsyncSequence, Sendable {
    /// The iteration never throws.
    public typealias Failure = Never

    private let source: StateSource<Element>
    private let isRepeat: (@Sendable (Element, Element) -> Bool)?

    init(source: StateSource<Element>, isRepeat: (@Sendable (Element, Element) -> Bool)?) {
        self.source = source
        self.isRepeat = isRepeat
    }

    /// Starts an iteration: subscribes to the store, with the current value as the first element.
    public func makeAsyncIterator() -> Iterator {
        Iterator(buffer: StreamBuffer(source: source, isRepeat: isRepeat))
    }

    /// Delivers the values of one iteration of a ``StateStream``.
    ///
    /// Use an iterator from one task at a time: calling `next()` while another call is waiting is a programmer
    /// error. Releasing the iterator ends its subscription.
    public struct Iterator: AsyncIteratorProtocol {
        /// The iteration never throws.
        public typealias Failure = Never

        private let buffer: StreamBuffer<Element>

        init(buffer: StreamBuffer<Element>) {
            self.buffer = buffer
        }

        /// The newest value not yet delivered; waits for one if there is none. `nil` once the iteration ended.
        public mutating func next() async -> Element? {
            await buffer.next()
        }

        /// The newest value not yet delivered; waits for one if there is none. `nil` once the iteration ended.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await buffer.next()
        }
    }
}

/// One iteration of a ``StateStream``: its subscription to the store and the newest value not yet delivered.
///
/// The store's subscriber and teardown handler refer to the buffer weakly, so that releasing the iterator releases
/// the buffer, whose `deinit` ends the subscription.
///
/// `@unchecked Sendable`: every mutable property is read and written with `lock` held. `lock` is taken inside the
/// store's lock (the first value arrives from `subscribe`, which holds it) and never the other way round: the
/// subscription is cancelled after `lock` is released.
final class StreamBuffer<Element: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private let isRepeat: (@Sendable (Element, Element) -> Bool)?
    /// The newest value not yet delivered.
    private var pending: Element?
    /// The value `next()` returned last, to skip repeats of it.
    private var lastDelivered: Element?
    /// The continuation of a `next()` that waits for a value.
    private var waiter: UnsafeContinuation<Element?, Never>?
    private var isFinished = false
    private var subscription: Subscription?
    private var removeTeardownHandler: (@Sendable () -> Void)?

    init(source: StateSource<Element>, isRepeat: (@Sendable (Element, Element) -> Bool)?) {
        self.isRepeat = isRepeat
        let subscription = source.subscribe { [weak self] initial in
            self?.start(with: initial)
            return { [weak self] value in self?.send(value) }
        }
        let removeTeardownHandler = source.onTeardown { [weak self] in
            self?.finish(droppingPending: false)
        }
        let attached: Bool = lock.withLock {
            guard !isFinished else { return false }
            self.subscription = subscription
            self.removeTeardownHandler = removeTeardownHandler
            return true
        }
        if !attached {
            // The store went away while this iteration was starting.
            subscription.cancel()
            removeTeardownHandler()
        }
    }

    deinit {
        removeTeardownHandler?()
        // `subscription` is released with the buffer, which cancels it.
    }

    /// Receives the value at the moment the subscription starts (called with the store's lock held).
    private func start(with initial: Element) {
        lock.withLock { pending = initial }
    }

    /// Receives the value after an action: hands it to a waiting `next()`, or keeps it as the newest one.
    private func send(_ value: Element) {
        lock.lock()
        guard !isFinished else {
            lock.unlock()
            return
        }
        let repeatsLast: Bool
        if let isRepeat, let lastDelivered {
            repeatsLast = isRepeat(lastDelivered, value)
        } else {
            repeatsLast = false
        }
        if let waiter {
            // A waiting `next()` means nothing is pending.
            guard !repeatsLast else {
                lock.unlock()
                return
            }
            self.waiter = nil
            lastDelivered = value
            lock.unlock()
            waiter.resume(returning: value)
            return
        }
        // The newest value wins; one equal to the last delivered cancels a pending change.
        pending = repeatsLast ? nil : value
        lock.unlock()
    }

    /// Ends the iteration: a waiting `next()` returns `nil`, the subscription and the teardown handler go.
    ///
    /// - Parameter droppingPending: `true` when the task was cancelled (nothing more is delivered); `false` when the
    ///   store went away (the newest value is still delivered, then `nil`).
    private func finish(droppingPending: Bool) {
        lock.lock()
        guard !isFinished else {
            lock.unlock()
            return
        }
        isFinished = true
        if droppingPending {
            pending = nil
        }
        let waiter = self.waiter
        self.waiter = nil
        let subscription = self.subscription
        self.subscription = nil
        let removeTeardownHandler = self.removeTeardownHandler
        self.removeTeardownHandler = nil
        lock.unlock()
        waiter?.resume(returning: nil)
        subscription?.cancel()
        removeTeardownHandler?()
    }

    /// The newest value not yet delivered, waiting for one if needed; `nil` once finished or cancelled.
    func next() async -> Element? {
        if Task.isCancelled {
            finish(droppingPending: true)
            return nil
        }
        if let value = takePending() {
            return value
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Element?, Never>) in
                lock.lock()
                if let value = pending {
                    pending = nil
                    lastDelivered = value
                    lock.unlock()
                    continuation.resume(returning: value)
                } else if isFinished {
                    lock.unlock()
                    continuation.resume(returning: nil)
                } else {
                    if waiter != nil {
                        usageError("StateStream: an iterator was used by two tasks at once.")
                    }
                    waiter = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            finish(droppingPending: true)
        }
    }

    /// Takes the pending value, or returns `nil` if there is none (and the caller must wait or finish).
    private func takePending() -> Element? {
        lock.withLock {
            guard let value = pending else { return nil }
            pending = nil
            lastDelivered = value
            return value
        }
    }
}
