// `dispatch(_:reading:)`: a dispatch that returns a value read from the state right after the reducer handled its
// action, before any later action. The core's `dispatch(_:through:reading:)` is the one implementation; `Store` and
// `MiddlewareAPI` forward to it (and so can a later `send(_:reading:)`).

extension StoreCore {
    /// Dispatches `action` like ``dispatch(_:through:)``, and returns `body`'s reading of the state right after the
    /// reducer handled it, or `nil`.
    ///
    /// *This dispatch's action* is the first action that reaches the reducer while this thread's call of `chain`
    /// runs: the action itself, or what a middleware passed on in its place. The reading is taken under the lock,
    /// right after that reducer call and before the subscribers run, so no later action (from any thread) is in it.
    /// `nil` when no action reached the reducer during that call (a middleware swallowed the action, or passed it on
    /// later or from another thread), when the store is gone, and when the action had to be queued (this thread is
    /// already dispatching on this store, or hands the action to the thread that is): its result is not known before
    /// this call returns.
    ///
    /// The plain dispatch does not pay for this: without a chain this is a separate path, and with one the reading
    /// is a closure in `pendingRead` that only the slow path of a reduce tests (while it is set, `nobodyToNotify` is
    /// `false`).
    @inlinable
    func dispatch<T>(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        reading body: (borrowing State) -> T
    ) -> T? {
        lock.lock()
        if _slowPath(isDispatching) {
            if owner == ThreadID.current || OwnedPipelines.count > 0 {
                // Queued (rule 2, or handed to the pipeline's owner): reduced after this call returns.
                queue.append(action)
                lock.unlock()
                return nil
            }
            waitForPipeline()
        }
        guard isAlive else {
            lock.unlock()
            return nil
        }
        guard let chain else {
            reduce(&statePointer.pointee, action)
            let value = body(statePointer.pointee)
            if nobodyToNotify {
                lock.unlock()
                return value
            }
            takePipeline()
            notifyLocked()
            drainQueue(through: nil)
            return value
        }
        takePipeline()
        var value: T?
        // The reading is stored in the core for the duration of the chain call only, so it need not escape (and
        // its context stays on the stack: no allocation).
        withoutActuallyEscaping({ (state: borrowing State) in value = body(state) }) { reading in
            pendingRead = reading
            nobodyToNotify = false
            lock.unlock()
            chain(action)
            lock.lock()
            // Still set if no action reached the reducer during the call.
            pendingRead = nil
            nobodyToNotify = subscribers.isEmpty && !observedSinceLastChange
            lock.unlock()
        }
        drainQueue(through: chain)
        return value
    }

    /// Takes the reading that a ``dispatch(_:through:reading:)`` waits for, right after the reducer; called by the
    /// pipeline owner with `lock` held and `pendingRead` set.
    @usableFromInline
    func readAfterReduceLocked() {
        pendingRead.unsafelyUnwrapped(statePointer.pointee)
        pendingRead = nil
        nobodyToNotify = subscribers.isEmpty && !observedSinceLastChange
    }

    /// ``dispatch(_:through:reading:)`` through the whole chain, on behalf of a ``MiddlewareAPI``.
    @usableFromInline
    func dispatchFromAPI<T>(_ action: Action, reading body: (borrowing State) -> T) -> T? {
        lock.lock()
        let chain = entry
        lock.unlock()
        return dispatch(action, through: chain, reading: body)
    }
}

extension Store {
    /// Dispatches an action, and returns a value read from the state right after the reducer handled it.
    ///
    /// ```swift
    /// let id = store.dispatch(.orders(.place(order)), reading: { $0.orders.lastID })
    /// ```
    ///
    /// Reading ``state`` after ``dispatch(_:)`` can show a later action of another thread; `body` runs right after
    /// the reducer handled this dispatch's action, under the store's lock, before the subscribers and before any
    /// later action from any thread. It borrows the state, as ``read(_:)`` does, and the same rule applies: it must
    /// not call this store (in a debug build that stops the program, in a release build it deadlocks). Otherwise
    /// this is ``dispatch(_:)``: it returns when the action, and every action its processing dispatched, is done.
    ///
    /// *This dispatch's action* is the first action that reaches the reducer while this call runs the middleware
    /// chain on this thread: the action itself, or the one a middleware passed on in its place (a transformed
    /// action). If a middleware passes on a different action first (one it held back earlier, say), that is the one
    /// read after. The result is `nil`, and `body` is not called, when:
    ///
    /// - a middleware swallowed the action, or passes it on later or from another thread (after this call's run of
    ///   the chain returned);
    /// - this thread is already dispatching on this store (from a middleware, a side effect or a subscriber): the
    ///   action is queued as ``dispatch(_:)`` queues it, and reduced after this call returns;
    /// - this thread is dispatching on another store while another thread dispatches on this one: the action is
    ///   handed to that thread (rule 3), and reduced there.
    ///
    /// Observation does not track this reading. The plain ``dispatch(_:)`` costs the same as before this method
    /// existed; this one costs a dispatch plus `body`.
    ///
    /// - Parameters:
    ///   - action: The action to dispatch.
    ///   - body: Reads what you need from the state right after the action was reduced.
    /// - Returns: What `body` returned, or `nil` if it was not called (see above).
    @inlinable
    public func dispatch<T>(_ action: Action, reading body: (borrowing State) -> T) -> T? {
        core.dispatch(action, through: chain, reading: body)
    }
}

extension MiddlewareAPI {
    /// Dispatches an action through the whole middleware chain, and returns a value read from the state right after
    /// the reducer handled it; see ``Store/dispatch(_:reading:)``.
    ///
    /// Useful in effects that run outside a dispatch (an asynchronous effect, a synchronous one run by
    /// ``Store/run(_:)-ihak`` from outside a dispatch). From inside a middleware, a side effect that runs during a
    /// dispatch, or a subscriber, the action is queued and the result is `nil`. Also `nil`, without dispatching,
    /// once ``isCancelled`` is `true`.
    ///
    /// - Parameters:
    ///   - action: The action to dispatch.
    ///   - body: Reads what you need from the state right after the action was reduced.
    /// - Returns: What `body` returned, or `nil` if it was not called.
    public func dispatch<T>(_ action: Action, reading body: (borrowing State) -> T) -> T? {
        if let cancellation, cancellation.isCancelled {
            return nil
        }
        return core.dispatchFromAPI(action, reading: body)
    }
}
