// `dispatch(_:reading:)`: a dispatch that returns a value read from the state right after the reducer handled its
// action, before any later action. The core's `dispatch(_:through:reading:)` is the one implementation; `Store` and
// `MiddlewareAPI` forward to it (and so can a later `send(_:reading:)`).

extension StoreCore {
    /// Dispatches `action` like ``dispatch(_:through:)``, and returns `body`'s reading of the state right after the
    /// reducer handled it, or `nil`.
    ///
    /// The reading is taken under the lock when this thread's run of `chain` returns, before the actions queued
    /// meanwhile run and before the pipeline is given up: so it includes every action that reached the reducer
    /// during that run (this dispatch's action, or what the middleware passed on in its place) and no later action
    /// from any thread. `nil` when no action reached the reducer during that run (a middleware swallowed the action,
    /// or passes it on later or from another thread), when the store is gone, and when the action had to be queued
    /// (this thread is already dispatching on this store, or hands the action to the thread that is): its result is
    /// not known before this call returns.
    ///
    /// The plain dispatch does not pay for this: without a chain this is a separate path, and with one the only
    /// trace in the shared code is the `isReading` test in the slow path of a reduce (while it is `true`,
    /// `nobodyToNotify` is `false`). Nothing is stored but two flags: no closure, no allocation.
    @inlinable
    func dispatch<T>(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        reading body: (borrowing State) -> T
    ) -> T? {
        if chain != nil {
            return dispatchThroughChain(action, through: chain, reading: body)
        }
        lock.lock()
        return dispatchLocked(action, through: nil, fromAPI: false, reading: body)
    }

    /// ``dispatch(_:through:reading:)`` through middleware: on the fast path if the pipeline is free. Out of line,
    /// so that the dispatch without middleware, which reduces and reads in one critical section, stays small.
    @inlinable @inline(never)
    func dispatchThroughChain<T>(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        reading body: (borrowing State) -> T
    ) -> T? {
        let thread = ThreadID.current
        if _fastPath(entryWord.tryTake(thread)) {
            return runReadingOnFastPipeline(action, through: chain, thread: thread, reading: body)
        }
        lock.lock()
        return dispatchLocked(action, through: chain, fromAPI: false, reading: body)
    }

    /// Runs `action` through `chain` on the pipeline that this thread took on the fast path (the state machine
    /// idle), reads the state under the lock when the run returns, then gives the pipeline up as a plain dispatch
    /// does: the actions it queued for itself first (``StoreCore/ownerQueue``), through the machine only if someone
    /// needed the pipeline meanwhile. The lock is taken twice, to mark the run as reading (which `nobodyToNotify`,
    /// read under the lock, depends on) and to read.
    @inlinable
    func runReadingOnFastPipeline<T>(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        thread: ThreadID,
        reading body: (borrowing State) -> T
    ) -> T? {
        OwnedPipelines.add(1)
        lock.lock()
        beginReadingLocked()
        lock.unlock()
        chain!(action)
        lock.lock()
        // This thread still owns the pipeline: no other thread has reduced since the run of the chain began.
        let value: T? = pipelineStorage.run.reducedWhileReading ? body(statePointer.pointee) : nil
        endReadingLocked()
        lock.unlock()
        if _fastPath(entryWord.tryRelease(thread)) {
            OwnedPipelines.add(-1)
            return value
        }
        releaseAfterQueueing(through: chain, thread: thread)
        return value
    }

    /// ``dispatchSlowLocked(_:through:fromAPI:run:)`` with the reading; called with `lock` held, returns without it.
    /// Queued (rule 2, or handed to the pipeline's owner): `nil`, reduced after this call returns. Waiting: in line,
    /// as ``dispatch(_:through:)`` waits, then it runs as the owner (through `entry` when `fromAPI`, read after the
    /// wait) if the machine still admits it.
    @inlinable
    func dispatchLocked<T>(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool,
        run: Cancellation? = nil,
        reading body: (borrowing State) -> T
    ) -> T? {
        let admission = admitLocked(action, run: run)
        guard _fastPath(admission.isRun) else {
            return performLocked(admission, of: action, through: chain, fromAPI: fromAPI, run: run, reading: body)
        }
        return runAdmittedReadingLocked(action, through: fromAPI ? entry : chain, reading: body)
    }

    /// Runs `action`, admitted by the state machine on the free pipeline, and reads the state after it; called with
    /// `lock` held, returns without it. Shared by the reading dispatch and the reading send; always inlined, as the
    /// reading dispatch without middleware is this critical section and little else.
    @inlinable @inline(__always)
    func runAdmittedReadingLocked<T>(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        reading body: (borrowing State) -> T
    ) -> T? {
        if chain == nil && nobodyToNotify {
            // Reduced and read in this critical section: the pipeline is never taken. The machine stays in charge,
            // which spares the next reading dispatch the atomic operation of putting it back in charge.
            applyLocked(action)
            let value = body(statePointer.pointee)
            lock.unlock()
            return value
        }
        takeLocked(ThreadID.current)
        return runAsOwnerLocked(action, through: chain, reading: body)
    }

    /// ``dispatchLocked(_:through:fromAPI:run:reading:)`` for every admission but ``PipelineStateMachine/Admission/run``
    /// (out of line, so that the uncontended reading dispatch stays small enough to inline; inlinable, so that the
    /// work this thread runs as the owner after waiting is specialized).
    @inlinable @inline(never)
    func performLocked<T>(
        _ admission: Pipeline.Admission,
        of action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool,
        run: Cancellation?,
        reading body: (borrowing State) -> T
    ) -> T? {
        guard case .wait = admission else {
            lock.unlock()
            return nil
        }
        _ = waitForPipeline(ThreadID.current)
        let chain = fromAPI ? entry : chain
        guard pipeline.admitOwner(superseded: isSuperseded(run)).isRun else {
            drainLocked(through: chain)
            return nil
        }
        return runAsOwnerLocked(action, through: chain, reading: body)
    }

    /// Runs `action` as the pipeline's owner and reads the state after it; called with `lock` held, returns without
    /// it, after draining the queue and giving up the pipeline.
    @inlinable
    func runAsOwnerLocked<T>(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        reading body: (borrowing State) -> T
    ) -> T? {
        guard let chain else {
            applyLocked(action)
            if !nobodyToNotify {
                let notice = noticeLocked()
                lock.unlock()
                deliver(notice)
                lock.lock()
            }
            let value = body(statePointer.pointee)
            drainLocked(through: nil)
            return value
        }
        beginReadingLocked()
        lock.unlock()
        chain(action)
        lock.lock()
        // This thread still owns the pipeline: no other thread has reduced since the run of the chain began.
        let value: T? = pipelineStorage.run.reducedWhileReading ? body(statePointer.pointee) : nil
        endReadingLocked()
        drainLocked(through: chain)
        return value
    }

    /// The owner begins a reading run of the chain (``PipelineStateMachine/RunContext/beginReading()``), which
    /// `nobodyToNotify` depends on. Called with `lock` held.
    @inlinable
    func beginReadingLocked() {
        pipelineStorage.run.beginReading()
        updateNobodyToNotifyLocked()
    }

    /// The owner's reading run of the chain returned. Called with `lock` held.
    @inlinable
    func endReadingLocked() {
        // Still reading: no action reached the reducer during the run, and `nobodyToNotify` changes back.
        let wasReading = pipelineStorage.run.isReading
        pipelineStorage.run.endReading()
        if wasReading {
            updateNobodyToNotifyLocked()
        }
    }

    /// Records that an action reached the reducer while a ``dispatch(_:through:reading:)`` runs the chain; called by
    /// the pipeline owner with `lock` held and `isReading` true.
    @inlinable
    func noteReduceWhileReadingLocked() {
        pipelineStorage.run.noteReduce()
        updateNobodyToNotifyLocked()
    }

    /// ``dispatch(_:through:reading:)`` through the whole chain, on behalf of a ``MiddlewareAPI``.
    ///
    /// The chain is read only once the pipeline is this thread's: while the store installs its middleware (which
    /// holds the pipeline), `entry` is not set yet. A strong reference for the call: `storeDidGoAway()` may clear
    /// `entry`. `run`: the dispatching side-effect run, if any; the action is dropped if it is cancelled before the
    /// action's work begins, as in ``dispatchFromAPI(_:unlessCancelled:)``.
    @usableFromInline
    func dispatchFromAPI<T>(
        _ action: Action,
        unlessCancelled run: Cancellation? = nil,
        reading body: (borrowing State) -> T
    ) -> T? {
        if entryWord.isBareOwner(ThreadID.current) {
            // From this thread's own work on the fast path: queued without the lock (rule 2), so not read.
            queueForOwner(action)
            return nil
        }
        lock.lock()
        return dispatchLocked(action, through: nil, fromAPI: true, run: run, reading: body)
    }
}

extension Store {
    /// Dispatches an action, and returns a value read from the state right after the reducer handled it.
    ///
    /// ```swift
    /// let id = store.dispatch(.orders(.place(order)), reading: { $0.orders.lastID })
    /// ```
    ///
    /// Reading ``state`` after ``dispatch(_:)`` can show a later action of another thread. `body` reads the state
    /// after the reducer handled this dispatch's action and before any later action from any thread, under the
    /// store's lock. It borrows the state, as ``read(_:)`` does, and the same rule applies: it must not call this
    /// store (in a debug build that stops the program, in a release build it deadlocks). Otherwise this is
    /// ``dispatch(_:)``: it returns when the action, and every action its processing dispatched, is done.
    ///
    /// What *this dispatch's action* is when middleware is involved: the reading is taken when this call's run of
    /// the middleware chain returns, on this thread. It shows every action that reached the reducer during that run:
    /// the action itself, or what a middleware passed on in its place (a transformed action; all of them, if a
    /// middleware passed on several). It does not show the actions dispatched meanwhile (from a middleware, a side
    /// effect or a subscriber, through the store or its API): they are queued and run after the reading, before this
    /// call returns. The subscribers of the action have been notified when `body` runs. The result is `nil`, and
    /// `body` is not called, when:
    ///
    /// - no action reached the reducer during that run: a middleware swallowed the action, or passes it on later or
    ///   from another thread (it is reduced then, but not read);
    /// - this thread is already dispatching on this store (from a middleware, a side effect or a subscriber): the
    ///   action is queued as ``dispatch(_:)`` queues it, and reduced after this call returns;
    /// - this thread is dispatching on another store while another thread dispatches on this one: the action is
    ///   handed to that thread (rule 3), and reduced there.
    ///
    /// Observation does not track this reading. It costs a dispatch plus `body`, and allocates nothing; the plain
    /// ``dispatch(_:)`` costs what it did before this method existed.
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
        if runIsCancelled {
            return nil
        }
        return core.dispatchFromAPI(action, unlessCancelled: cancellation, reading: body)
    }
}

// MARK: - send(_:reading:)

extension StoreCore {
    /// Runs `action` as the pipeline's owner, then calls `reader` with the state if an action reached the reducer
    /// during that run (see ``dispatch(_:through:reading:)``); called with `lock` held, returns with it, before the
    /// actions queued meanwhile run.
    @usableFromInline
    func runReadingLocked(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        waited: UInt64,
        reader: (borrowing State) -> Void
    ) {
        beginReadingLocked()
        runLocked(action, through: chain, waited: waited)
        if pipelineStorage.run.reducedWhileReading {
            reader(statePointer.pointee)
        }
        endReadingLocked()
    }

    /// ``send(_:through:fromAPI:)`` with a reading: ``dispatch(_:through:reading:)`` for a task, which suspends instead
    /// of blocking while another thread or task owns the pipeline; the owner then processes its action and takes the
    /// reading for it, before any later action.
    ///
    /// Inlinable for its fast paths: through middleware, a free pipeline is taken as ``dispatch(_:through:reading:)``
    /// takes it, in code specialized for the store's types (such a send never waits, so it need not suspend);
    /// without middleware and nobody to notify, the action is reduced and read in one critical section. Always
    /// inlined: as a call, an async function costs more than either fast path.
    @inlinable @inline(__always)
    nonisolated(nonsending) func send<T: Sendable>(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool,
        run: Cancellation? = nil,
        reading body: @escaping @Sendable (borrowing State) -> T
    ) async -> T? {
        if !fromAPI {
            if chain != nil {
                let thread = ThreadID.current
                if _fastPath(entryWord.tryTake(thread)) {
                    return runReadingOnFastPipeline(action, through: chain, thread: thread, reading: body)
                }
            } else {
                lock.lock()
                if entryWord.value == 0 && nobodyToNotify {
                    // Idle, alive and accepting, with nothing to notify: reduced and read in one critical section,
                    // as the plain `send(_:through:fromAPI:)` reduces (without a chain, the pipeline is taken only
                    // under the lock, which this thread holds).
                    applyLocked(action)
                    let value = body(statePointer.pointee)
                    lock.unlock()
                    return value
                }
                lock.unlock()
            }
        }
        return await sendAdmitted(action, through: chain, fromAPI: fromAPI, run: run, reading: body)
    }

    /// ``send(_:through:fromAPI:run:reading:)`` through the state machine: run, queue, refuse, drop, or wait in line.
    ///
    /// Inlinable, so specialized in the caller's module: a send admitted here to run often runs the store's work
    /// for every task in line behind it, which unspecialized code would pay for in generic metadata lookups. Never
    /// inlined: it is the slow path, and its callers' fast path stays small.
    @inlinable @inline(never)
    nonisolated(nonsending) func sendAdmitted<T: Sendable>(
        _ action: Action,
        through chain: DispatchFunction<Action>?,
        fromAPI: Bool,
        run: Cancellation?,
        reading body: @escaping @Sendable (borrowing State) -> T
    ) async -> T? {
        while true {
            lock.lock()
            let admission = admitLocked(action, run: run)
            switch admission {
            case .run:
                return runAdmittedReadingLocked(action, through: fromAPI ? entry : chain, reading: body)
            case .queued, .refused, .dropped:
                // Queued like a dispatch (rule 2, or the hand-over between stores), reduced after this call returns;
                // or not processed at all.
                lock.unlock()
                return nil
            case .wait:
                break
            }
            let ticket = pipeline.makeTicket()
            lock.unlock()
            let reading = Locked<T?>(nil)
            let outcome = await waitInLine(
                ticket: ticket,
                action: action,
                reader: StateReader { state in reading.withLock { $0 = body(state) } },
                run: run
            )
            switch outcome {
            case .processed(_, let leftWork):
                runLeftWork(leftWork)
                return reading.withLock { $0 }
            case .dropped, .cancelled:
                return nil
            case .retry:
                continue  // the pipeline was free when it came to wait: look again (a loop, not a recursion)
            }
        }
    }
}

extension Store {
    /// Sends an action, and returns a value read from the state right after the reducer handled it; the `send`
    /// form of ``dispatch(_:reading:)``.
    ///
    /// ```swift
    /// let id = await store.send(.orders(.place(order)), reading: { $0.orders.lastID })
    /// ```
    ///
    /// The reading follows the rules of ``dispatch(_:reading:)``: every action that reached the reducer during this
    /// call's run of the middleware chain, after their subscribers, before any later action from any thread; `nil`
    /// when no action reached the reducer in that run, when the action was queued (sent from inside the store's own
    /// work), when the store is gone or shut down, and when the task was cancelled while it waited in line. Like
    /// ``send(_:)``, it suspends instead of blocking while another thread or task runs the store's work; the thread
    /// that runs it then processes this action and takes the reading for it. `body` runs under the store's lock,
    /// possibly on that other thread (so it is `@Sendable`, and escaping: it is kept in the line while the task
    /// waits), and must not call this store.
    ///
    /// - Parameters:
    ///   - action: The action to send.
    ///   - body: Reads what you need from the state right after the action was reduced.
    /// - Returns: What `body` returned, or `nil` if it was not called.
    @inlinable @inline(__always)
    public nonisolated(nonsending) func send<T: Sendable>(
        _ action: Action,
        reading body: @escaping @Sendable (borrowing State) -> T
    ) async -> T? {
        await core.send(action, through: chain, fromAPI: false, reading: body)
    }
}

extension MiddlewareAPI {
    /// Sends an action through the whole middleware chain, and returns a value read from the state right after the
    /// reducer handled it; see ``Store/send(_:reading:)``. `nil`, without sending, once ``isCancelled`` is `true`.
    ///
    /// - Parameters:
    ///   - action: The action to send.
    ///   - body: Reads what you need from the state right after the action was reduced.
    /// - Returns: What `body` returned, or `nil` if it was not called.
    @inlinable
    public nonisolated(nonsending) func send<T: Sendable>(
        _ action: Action,
        reading body: @escaping @Sendable (borrowing State) -> T
    ) async -> T? {
        if runIsCancelled {
            return nil
        }
        return await core.send(action, through: nil, fromAPI: true, run: cancellation, reading: body)
    }
}
