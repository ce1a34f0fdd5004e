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
        core.states(skippingRepeats: nil)
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
        core.values(of: keyPath)
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

    /// What the stream follows: the store's state, or a part of it.
    private let handle: any StateHandle<Element>
    private let isRepeat: (@Sendable (Element, Element) -> Bool)?

    init(handle: some StateHandle<Element>, isRepeat: (@Sendable (Element, Element) -> Bool)?) {
        self.handle = handle
        self.isRepeat = isRepeat
    }

    /// Starts an iteration: subscribes to the store, with the current value as the first element.
    public func makeAsyncIterator() -> Iterator {
        Iterator(buffer: StreamBuffer(handle: handle, isRepeat: isRepeat))
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
/// Its state is one ``Locked`` value. That lock is taken inside the store's lock (the first value arrives from
/// `subscribe`, which holds it) and never the other way round: the subscription is cancelled after it is released.
///
/// Waking a waiting `next()` and the thread sanitizer: the waiter's continuation carries no value, it is resumed
/// with the lock held, and the woken task takes the lock before it does anything else (to take the value). This is
/// not needed for correctness; it keeps `swift test --sanitize=thread` quiet. When a continuation is resumed from
/// another thread after `withUnsafeContinuation`'s closure returned but before the task finished suspending, the
/// Swift runtime (6.3.1) lets the task continue at once in `swift_continuation_await`, ordered by an atomic that the
/// sanitizer cannot see (the runtime is not instrumented, and that path lacks the `__tsan_acquire` that the ordinary
/// path through the executor has). The resumer's read of the continuation's context then looks unordered with the
/// task's next writes to the same task-allocator memory, and the sanitizer reported a data race in
/// `withUnsafeContinuation` against `UnsafeContinuation.resume` in `send` (a false positive: the atomic orders
/// them). Resuming inside the lock, and taking the lock right after waking, gives the sanitizer an ordering it sees:
/// everything the resumer did happens before the woken task's next access to its memory.
final class StreamBuffer<Element: Sendable>: Sendable {
    private struct Buffer: Sendable {
        /// The newest value not yet delivered.
        var pending: Element?
        /// The value `next()` returned last, to skip repeats of it.
        var lastDelivered: Element?
        /// The continuation of a `next()` that waits for a value or the end; resumed with the lock held. The value
        /// is left in `pending` for the woken task to take.
        var waiter: UnsafeContinuation<Void, Never>?
        var isFinished = false
        var subscription: Subscription?
        var removeTeardownHandler: (@Sendable () -> Void)?
    }

    private let buffer = Locked(Buffer())
    private let isRepeat: (@Sendable (Element, Element) -> Bool)?

    init(handle: any StateHandle<Element>, isRepeat: (@Sendable (Element, Element) -> Bool)?) {
        self.isRepeat = isRepeat
        let subscription = handle.addSubscriber { [weak self] initial in
            self?.start(with: initial)
            return { [weak self] value in self?.send(value.pointee) }
        }
        let lifetime = handle.storeLifetime
        let teardownKey = lifetime.onCancel { [weak self] in
            self?.finish(droppingPending: false)
        }
        let removeTeardownHandler: @Sendable () -> Void = {
            if let teardownKey { lifetime.removeHandler(teardownKey) }
        }
        let attached: Bool = buffer.withLock {
            guard !$0.isFinished else { return false }
            $0.subscription = subscription
            $0.removeTeardownHandler = removeTeardownHandler
            return true
        }
        if !attached {
            // The store went away while this iteration was starting.
            subscription.cancel()
            removeTeardownHandler()
        }
    }

    deinit {
        buffer.withLock { $0.removeTeardownHandler }?()
        // `subscription` is released with the buffer, which cancels it.
    }

    /// Receives the value at the moment the subscription starts (called with the store's lock held).
    private func start(with initial: Element) {
        buffer.withLock { $0.pending = initial }
    }

    /// Receives the value after an action: keeps it as the newest one, and wakes a waiting `next()`.
    private func send(_ value: Element) {
        buffer.withLock { buffer in
            guard !buffer.isFinished else { return }
            // The newest value wins; one equal to the last delivered cancels a pending change (and a woken `next()`
            // that finds nothing waits again).
            if let isRepeat, let lastDelivered = buffer.lastDelivered, isRepeat(lastDelivered, value) {
                buffer.pending = nil
                return
            }
            buffer.pending = value
            // With the lock held: see the type's comment.
            buffer.waiter?.resume()
            buffer.waiter = nil
        }
    }

    /// Ends the iteration: a waiting `next()` returns `nil`, the subscription and the teardown handler go.
    ///
    /// - Parameter droppingPending: `true` when the task was cancelled (nothing more is delivered); `false` when the
    ///   store went away (the newest value is still delivered, then `nil`).
    private func finish(droppingPending: Bool) {
        let ended: (Subscription?, (@Sendable () -> Void)?)? = buffer.withLock { buffer in
            guard !buffer.isFinished else { return nil }
            buffer.isFinished = true
            if droppingPending {
                buffer.pending = nil
            }
            // With the lock held: see the type's comment.
            buffer.waiter?.resume()
            buffer.waiter = nil
            defer {
                buffer.subscription = nil
                buffer.removeTeardownHandler = nil
            }
            return (buffer.subscription, buffer.removeTeardownHandler)
        }
        guard let (subscription, removeTeardownHandler) = ended else { return }
        subscription?.cancel()
        removeTeardownHandler?()
    }

    /// The newest value not yet delivered, waiting for one if needed; `nil` once finished or cancelled.
    func next() async -> Element? {
        if Task.isCancelled {
            finish(droppingPending: true)
            return nil
        }
        while true {
            switch poll() {
            case .value(let value):
                return value
            case .finished:
                return nil
            case .empty:
                break
            }
            // Woken by a value, the end or cancellation; `poll()` (which takes `lock`) tells which. A value that
            // was withdrawn before this task ran (a repeat of the last delivered one) means waiting again.
            await withTaskCancellationHandler {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    let resumeNow: Bool = buffer.withLock { buffer in
                        if buffer.pending != nil || buffer.isFinished { return true }
                        if buffer.waiter != nil {
                            usageError("StateStream: an iterator was used by two tasks at once.")
                        }
                        buffer.waiter = continuation
                        return false
                    }
                    if resumeNow {
                        continuation.resume()
                    }
                }
            } onCancel: {
                finish(droppingPending: true)
            }
        }
    }

    private enum Poll {
        case value(Element)
        case finished
        case empty
    }

    /// Takes the pending value; otherwise says whether the iteration ended or the caller must wait.
    private func poll() -> Poll {
        buffer.withLock { buffer in
            if let value = buffer.pending {
                buffer.pending = nil
                buffer.lastDelivered = value
                return .value(value)
            }
            return buffer.isFinished ? .finished : .empty
        }
    }
}
