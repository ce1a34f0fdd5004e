import Dispatch
import Sluice
import SluiceJournal

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension StoreHost {
    /// Passivates the store of `id` now, if it is active: shuts it down, writes a snapshot if its journal holds
    /// actions after the newest one, closes the journal and releases the store. Returns once that is done; a
    /// request for the id meanwhile waits, then activates it again.
    ///
    /// A placement policy calls it to hand an id off to another process; a service, to release a store it knows
    /// it will not use for a while.
    ///
    /// - Parameter id: The store's id.
    /// - Returns: `true` if the store was active and is now passivated, `false` if it was not active (not
    ///   activated, or being activated or passivated by someone else).
    @discardableResult
    public func passivate(_ id: ID) async -> Bool {
        guard let hosted = lock.withLock({ directory.passivate(id) }) else {
            return false
        }
        await passivate(id, hosted, reason: .requested)
        return true
    }

    /// Passivates every active store, waits for the activations and passivations in progress, and refuses every
    /// later request with ``StoreHostError/shutDown``.
    ///
    /// A request waiting for an activation or a passivation when the host shuts down fails with
    /// ``StoreHostError/shutDown``; an action that a store accepted before is processed and journaled. Calling it
    /// again, or from several tasks at once, is safe: each call returns once every store is passivated.
    public func shutdown() async {
        let (stores, woken, sweep) = lock.withLock {
            let stores = directory.shutDown()
            let sweep = sweepWork
            sweepWork = nil
            return (stores, takeWaiters(), sweep)
        }
        sweep?.cancel()
        for waiter in woken { waiter.resume() }
        await withTaskGroup(of: Void.self) { group in
            for (id, hosted) in stores {
                group.addTask { await self.passivate(id, hosted, reason: .requested) }
            }
        }
        await waitUntilSettled()
    }

    /// Runs until the calling task is cancelled, then shuts the host down (``shutdown()``): the shape of a
    /// long-running part of a service, for a task group or a service group.
    ///
    /// ```swift
    /// try await withThrowingTaskGroup(of: Void.self) { group in
    ///     group.addTask { await host.run() }
    ///     // serve requests with host.send(_:to:) ...
    ///     group.cancelAll()  // passivates every store
    /// }
    /// ```
    ///
    /// The host takes requests whether or not `run()` runs; `run()` only ties its shutdown to a task's cancellation.
    public func run() async {
        let waiting = Locked<CheckedContinuation<Void, Never>?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let cancelled = waiting.withLock { waiting in
                    if Task.isCancelled { return true }
                    waiting = continuation
                    return false
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            waiting.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }?.resume()
        }
        await shutdown()
    }

    /// Waits until no activation or passivation is in progress (for tests, and for ``shutdown()``).
    package func waitUntilSettled() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if directory.isSettled {
                lock.unlock()
                continuation.resume()
                return
            }
            settleWaiters.append(continuation)
            lock.unlock()
        }
    }

    // MARK: - Activation

    /// Activates the store of `id`, marked activating for this caller, on the calling thread: consults the ownership
    /// hook, opens the journal, recovers the store, and makes it active (or passivates it at once if the host shut
    /// down meanwhile).
    func activate(_ id: ID) throws(StoreHostError) -> HostedStore<State, Action> {
        try install(id, makeHostedStore(id))
    }

    /// ``activate(_:)`` for a task: the journal is opened and read on one of the host's I/O queues, so that the
    /// blocking reads (and the directory's `flock`) never hold a thread of Swift's cooperative pool.
    func activate(_ id: ID) async throws(StoreHostError) -> HostedStore<State, Action> {
        let made = await onIOQueue(for: id) { self.makeHostedStore(id) }
        return try install(id, made)
    }

    /// Makes the store that an activation made active, or frees the id if the activation failed.
    private func install(
        _ id: ID,
        _ made: Result<HostedStore<State, Action>, StoreHostError>
    ) throws(StoreHostError) -> HostedStore<State, Action> {
        let (activated, woken) = lock.withLock { () -> (Bool, [CheckedContinuation<Void, Never>]) in
            switch made {
            case .success(let hosted):
                return (directory.didActivate(id, hosted), takeWaiters())
            case .failure:
                directory.didFailToActivate(id)
                return (false, takeWaiters())
            }
        }
        for waiter in woken { waiter.resume() }
        switch made {
        case .success(let hosted):
            if activated { return hosted }
            // The host shut down while the journal was read: its shutdown waits for this passivation.
            Task { await self.passivate(id, hosted, reason: .requested) }
            throw .shutDown
        case .failure(let error):
            throw error
        }
    }

    /// Runs `body` on the I/O queue of `id` and returns its result: for the work that blocks on the file system
    /// (opening and reading a journal, writing a snapshot, closing with a sync).
    func onIOQueue<T: Sendable>(for id: ID, _ body: @escaping @Sendable () -> T) async -> T {
        let queue = ioQueues[Int(UInt(bitPattern: id.hashValue) % UInt(ioQueues.count))]
        return await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    /// Opens the journal of `id` and recovers its store.
    private func makeHostedStore(_ id: ID) -> Result<HostedStore<State, Action>, StoreHostError> {
        if let ownership {
            do {
                try ownership.acquire(id)
            } catch {
                return .failure(.notOwned(id: String(describing: id), reason: error))
            }
        }
        do throws(JournalError) {
            let journal = try Journal(storage: try storage(id))
            let store = try makeStore(id, journal)
            return .success(HostedStore(store: store, journal: journal, durability: durability))
        } catch {
            ownership?.release(id)
            return .failure(.activationFailed(id: String(describing: id), error: error))
        }
    }

    // MARK: - Passivation

    /// Passivates `stores`, each in a task of its own.
    func startPassivations(
        _ stores: [(ID, HostedStore<State, Action>)],
        reason: HostDirectory<ID, State, Action>.Reason
    ) {
        for (id, hosted) in stores {
            Task { await self.passivate(id, hosted, reason: reason) }
        }
    }

    /// Shuts the store down, writes a snapshot if the journal holds actions after its newest one, closes the
    /// journal, and frees the id; the store is marked passivating.
    func passivate(
        _ id: ID,
        _ hosted: HostedStore<State, Action>,
        reason: HostDirectory<ID, State, Action>.Reason
    ) async {
        // Accepted actions and owed runs complete; every later request waits for this passivation.
        await hosted.store.shutdown(timeout: passivationTimeout)
        // The snapshot and the close sync the file system: off the cooperative pool.
        await onIOQueue(for: id) { self.saveAndClose(id, hosted) }
        if let writer = hosted.writer {
            writer.cancel()
            await writer.value
        }
        ownership?.release(id)
        let woken = lock.withLock {
            directory.didPassivate(id, reason: reason)
            return takeWaiters()
        }
        for waiter in woken { waiter.resume() }
    }

    /// Writes a snapshot if the journal holds actions after its newest one, then closes the journal.
    private func saveAndClose(_ id: ID, _ hosted: HostedStore<State, Action>) {
        let journal = hosted.journal
        if journal.lastSequence > hosted.snapshotSequence {
            do throws(JournalError) {
                try journal.snapshot(hosted.store, reducerVersion: reducerVersion)
            } catch {
                // The actions are in the journal: the next activation replays them instead.
                onError?(id, EffectFailure(error: error, source: .journal))
            }
        }
        journal.close()
    }

    // MARK: - Idle time

    /// Schedules the next sweep of idle stores, unless the host has no idle time or is shut down.
    func scheduleSweep() {
        guard let sweepInterval, let deadline = scheduler.now.adding(sweepInterval) else { return }
        let work = scheduler.schedule(after: deadline) { [weak self] in self?.sweep() }
        let cancel = lock.withLock {
            if directory.isShutDown { return true }
            sweepWork = work
            return false
        }
        if cancel { work.cancel() }
    }

    /// Passivates the stores that received no request for the idle time, then schedules the next sweep.
    func sweep() {
        let idle = lock.withLock {
            directory.sweep(idleEpochs: UInt64(Self.sweepsPerIdleTimeout + 1))
        }
        startPassivations(idle, reason: .idle)
        scheduleSweep()
    }
}

/// Creates `path` if it does not exist (one level: its parent must exist); an error shows at the first activation.
@usableFromInline
func createDirectory(_ path: String) {
    _ = mkdir(path, 0o755)
}
