import Dispatch
public import Sluice
public import SluiceJournal

/// Many stores in one process, each addressed by an id: activated on first use from its journal, kept while it is
/// used, passivated when idle or to stay under an active limit.
///
/// An order service with a store per customer, an auction house with one per auction: millions of ids, a few
/// thousand in use at a time. The host keeps a directory of the active stores and routes each request to the store
/// of its id:
///
/// ```swift
/// let host = StoreHost<String, Counter, CounterAction>(
///     directory: dataDirectory,
///     durability: .none,
///     activeLimit: 10_000,
///     idleTimeout: .seconds(120),
///     initialState: { _ in Counter() },
///     reducer: counterReducer
/// )
/// try await host.sendDurably(.add(1), to: "alice")  // returns once the action is on stable storage
/// let count = try await host.read("alice") { $0.count }
/// await host.shutdown()
/// ```
///
/// - **Activation.** The first request for an id opens its journal (a directory per id under the host's directory,
///   or the storage that the host's `storage` closure makes), recovers the store from its newest snapshot and the
///   actions after it (an empty journal starts from `initialState(id)`), and keeps it. Requests for the same id that
///   arrive meanwhile wait for that activation: an id is activated once, however many requests ask at once.
/// - **Passivation.** A store that received no request for `idleTimeout` is passivated, and so is one not used
///   recently (a clock over the active stores) when an activation would pass `activeLimit`: the store is shut down
///   (`Store.shutdown(timeout:)`: accepted actions and owed runs complete), a snapshot of its state is written if the
///   journal holds actions after its newest snapshot, the journal is closed, and the store is released. A request
///   that arrives during a passivation waits for it, then activates the id again: it is never lost, and never handed
///   to a store that is shut down.
/// - **Requests.** ``dispatch(_:to:)``, ``send(_:to:)``, ``dispatch(_:to:reading:)``, ``send(_:to:reading:)``,
///   ``sendDurably(_:to:)`` and ``read(_:_:)`` mirror the store's own calls; they throw ``StoreHostError`` when the
///   host cannot apply the request.
/// - **Shutdown.** ``shutdown()`` passivates every store; later requests throw ``StoreHostError/shutDown``.
///   ``run()`` gives the host the shape of a service: it runs until its task is cancelled, then shuts the host down.
///
/// The idle time is measured on `scheduler` (virtual time with `SluiceTesting.TestScheduler`), in sweeps of a
/// quarter of `idleTimeout`: a store is passivated after between `idleTimeout` and 1.25 × `idleTimeout` without a
/// request. A request to an active store takes the host's lock once, to find the store and mark it used.
///
/// `@unchecked Sendable`: the directory, the waiting continuations and the pending sweep are guarded by `lock`, whose
/// condition wakes the threads that wait for a change in ``dispatch(_:to:)``; the other stored properties are
/// constants.
public final class StoreHost<ID: Hashable & Sendable, State: Codable & Sendable, Action: Codable & Sendable>:
    @unchecked Sendable
{
    @usableFromInline
    let lock = Lock()
    @usableFromInline @exclusivity(unchecked)
    var directory: HostDirectory<ID, State, Action>
    /// The requests in `send` that wait for a change of the directory, and the calls waiting for it to settle.
    /// Guarded by `lock`.
    @exclusivity(unchecked)
    var waiters: [CheckedContinuation<Void, Never>] = []
    @exclusivity(unchecked)
    var settleWaiters: [CheckedContinuation<Void, Never>] = []
    /// The pending sweep of idle stores. Guarded by `lock`.
    @exclusivity(unchecked)
    var sweepWork: ScheduledWork?

    let storage: @Sendable (ID) throws(JournalError) -> any JournalStorage
    let durability: JournalDurability
    let reducerVersion: Int
    let makeStore: @Sendable (ID, Journal) throws(JournalError) -> Store<State, Action>
    let scheduler: any EffectScheduler
    let sweepInterval: UInt64?
    let ownership: (any StoreOwnership<ID>)?
    let passivationTimeout: Duration
    let onError: (@Sendable (ID, EffectFailure) -> Void)?
    /// Serial queues for the work that blocks on the file system (activations from tasks, snapshots and closes at
    /// passivation), chosen by the id's hash: custom serial queues get threads of their own when one blocks, and
    /// never hold a thread of Swift's cooperative pool, which the tasks of every request share.
    let ioQueues: [DispatchQueue]

    /// Creates a host whose stores journal to a directory each, under `directory`.
    ///
    /// The journal of an id is in `directory/<id>`: the id's description, with every byte other than ASCII letters,
    /// digits, `-`, `_` and `.` (and a leading `.`) written as `%` and two hexadecimal digits, so that every id
    /// names one directory inside `directory` and no other. `directory` is created if missing (its parent must exist).
    ///
    /// - Parameters:
    ///   - directory: The directory of the journals.
    ///   - durability: The durability of every store's journal. `.none` writes each action and makes it durable
    ///     when a request asks (``sendDurably(_:to:)``); `.everyAction` syncs each action; `.groupCommit` runs a
    ///     writer thread per active store.
    ///   - reducerVersion: The reducer's version, stored with the snapshots; snapshots of another version are skipped.
    ///   - activeLimit: The most stores alive at once (active, or being activated or passivated).
    ///   - idleTimeout: How long a store stays active without a request; `nil` keeps stores until the limit or
    ///     shutdown passivates them.
    ///   - passivationTimeout: How long a passivation waits for the store's running tasks (`Store.shutdown(timeout:)`).
    ///   - scheduler: The clock of the idle time.
    ///   - initialState: The state of an id whose journal is empty.
    ///   - reducer: The reducer of every store.
    ///   - middleware: The middleware of the store of an id, made at each activation.
    ///   - dependencies: The services of every store.
    ///   - ownership: Consulted before each activation; see ``StoreOwnership``.
    ///   - onError: Receives, with the id, each failure of a store's effects and journal (as the store's
    ///     `onEffectError` does) and each failure to write a snapshot at passivation.
    @inlinable
    public convenience init(
        directory: String,
        durability: JournalDurability,
        reducerVersion: Int = 0,
        activeLimit: Int = 10_000,
        idleTimeout: Duration? = .seconds(120),
        passivationTimeout: Duration = .seconds(10),
        scheduler: any EffectScheduler = DispatchQueueScheduler(),
        initialState: @escaping @Sendable (ID) -> State,
        reducer: Reducer<State, Action>,
        middleware: @escaping @Sendable (ID) -> [Middleware<State, Action>] = { _ in [] },
        dependencies: StoreDependencies = StoreDependencies.current,
        ownership: (any StoreOwnership<ID>)? = nil,
        onError: (@Sendable (ID, EffectFailure) -> Void)? = nil
    ) where ID: CustomStringConvertible {
        let root = directory
        self.init(
            storage: { id throws(JournalError) in
                FileJournalStorage(directory: root + "/" + journalDirectoryName(String(describing: id)))
            },
            durability: durability,
            reducerVersion: reducerVersion,
            activeLimit: activeLimit,
            idleTimeout: idleTimeout,
            passivationTimeout: passivationTimeout,
            scheduler: scheduler,
            initialState: initialState,
            reducer: reducer,
            middleware: middleware,
            dependencies: dependencies,
            ownership: ownership,
            onError: onError
        )
        createDirectory(root)
    }

    /// Creates a host whose stores journal to the storage that `storage` makes for each id (a directory, a
    /// database table).
    ///
    /// - Parameters:
    ///   - storage: The journal storage of an id; called at each activation of the id. The storage's `acquire()`
    ///     must fail while another journal holds the id's log: that keeps one writer per id.
    ///   - durability: The durability of every store's journal; see
    ///     ``init(directory:durability:reducerVersion:activeLimit:idleTimeout:passivationTimeout:scheduler:initialState:reducer:middleware:dependencies:ownership:onError:)``.
    ///   - reducerVersion: The reducer's version, stored with the snapshots.
    ///   - activeLimit: The most stores alive at once.
    ///   - idleTimeout: How long a store stays active without a request; `nil` for no idle passivation.
    ///   - passivationTimeout: How long a passivation waits for the store's running tasks.
    ///   - scheduler: The clock of the idle time.
    ///   - initialState: The state of an id whose journal is empty.
    ///   - reducer: The reducer of every store.
    ///   - middleware: The middleware of the store of an id, made at each activation.
    ///   - dependencies: The services of every store.
    ///   - ownership: Consulted before each activation; see ``StoreOwnership``.
    ///   - onError: Receives, with the id, each failure of a store's effects and journal and each failure to write
    ///     a snapshot at passivation.
    @inlinable
    public convenience init(
        storage: @escaping @Sendable (ID) throws(JournalError) -> any JournalStorage,
        durability: JournalDurability,
        reducerVersion: Int = 0,
        activeLimit: Int = 10_000,
        idleTimeout: Duration? = .seconds(120),
        passivationTimeout: Duration = .seconds(10),
        scheduler: any EffectScheduler = DispatchQueueScheduler(),
        initialState: @escaping @Sendable (ID) -> State,
        reducer: Reducer<State, Action>,
        middleware: @escaping @Sendable (ID) -> [Middleware<State, Action>] = { _ in [] },
        dependencies: StoreDependencies = StoreDependencies.current,
        ownership: (any StoreOwnership<ID>)? = nil,
        onError: (@Sendable (ID, EffectFailure) -> Void)? = nil
    ) {
        // The store is made here, in the caller's module, so that its dispatch path is specialized for the caller's
        // `State` and `Action` (as `Store`'s own initializers do).
        let makeStore: @Sendable (ID, Journal) throws(JournalError) -> Store<State, Action> = {
            (id: ID, journal: Journal) throws(JournalError) -> Store<State, Action> in
            var onEffectError: (@Sendable (EffectFailure) -> Void)? = nil
            if let onError {
                onEffectError = { failure in onError(id, failure) }
            }
            return try Store(
                recoveringFrom: journal,
                durability: durability,
                reducerVersion: reducerVersion,
                initialState: initialState(id),
                reducer: reducer,
                middleware: middleware(id),
                dependencies: dependencies,
                onEffectError: onEffectError
            )
        }
        self.init(
            storage: storage,
            durability: durability,
            reducerVersion: reducerVersion,
            activeLimit: activeLimit,
            idleTimeout: idleTimeout,
            passivationTimeout: passivationTimeout,
            scheduler: scheduler,
            ownership: ownership,
            onError: onError,
            makeStore: makeStore
        )
    }

    /// The initializer behind the public ones; `makeStore` creates the store of an id from its journal.
    @usableFromInline
    init(
        storage: @escaping @Sendable (ID) throws(JournalError) -> any JournalStorage,
        durability: JournalDurability,
        reducerVersion: Int,
        activeLimit: Int,
        idleTimeout: Duration?,
        passivationTimeout: Duration,
        scheduler: any EffectScheduler,
        ownership: (any StoreOwnership<ID>)?,
        onError: (@Sendable (ID, EffectFailure) -> Void)?,
        makeStore: @escaping @Sendable (ID, Journal) throws(JournalError) -> Store<State, Action>
    ) {
        if activeLimit < 1 {
            usageError("StoreHost: the active limit must be at least 1, got \(activeLimit).")
        }
        if passivationTimeout < .zero {
            usageError("StoreHost: the passivation timeout must not be negative, got \(passivationTimeout).")
        }
        directory = HostDirectory(activeLimit: activeLimit)
        self.storage = storage
        self.durability = durability
        self.reducerVersion = reducerVersion
        self.makeStore = makeStore
        self.scheduler = scheduler
        // Sweeps every quarter of the idle time: a store is passivated between 4 and 5 sweeps after its last use.
        if let idleTimeout {
            let nanoseconds = idleTimeout.nanoseconds(checking: "StoreHost(idleTimeout:)")
            sweepInterval = nanoseconds.map { max(1, $0 / UInt64(Self.sweepsPerIdleTimeout)) }
        } else {
            sweepInterval = nil
        }
        self.ownership = ownership
        self.passivationTimeout = passivationTimeout
        self.onError = onError
        ioQueues = (0..<Self.ioQueueCount).map { DispatchQueue(label: "sluice.store-host.io-\($0)") }
        scheduleSweep()
    }

    deinit {
        sweepWork?.cancel()
    }

    /// How many activations, snapshots and closes may block on the file system at once.
    static var ioQueueCount: Int { 4 }

    /// A store is idle once this many sweeps passed without a request, plus the one in which it was last used.
    static var sweepsPerIdleTimeout: Int { 4 }

    // MARK: - Requests

    /// Dispatches an action to the store of `id`, activating the store first if it is not active.
    ///
    /// Returns once the action was processed, as `Store.dispatch(_:)` does. It blocks the calling thread while the
    /// store is activated (its journal read) and while another request activates or passivates it: call it from
    /// threads of your own, and from tasks prefer ``send(_:to:)``, which suspends instead.
    ///
    /// - Parameters:
    ///   - action: The action.
    ///   - id: The store's id.
    /// - Throws: ``StoreHostError/shutDown`` once the host is shut down; ``StoreHostError/activationFailed(id:error:)``
    ///   or ``StoreHostError/notOwned(id:reason:)`` when the store could not be activated.
    @inlinable
    public func dispatch(_ action: Action, to id: ID) throws(StoreHostError) {
        if let store = activeStore(id), store.dispatch(action) {
            return
        }
        try dispatchWaiting(action, to: id)
    }

    /// Dispatches an action to the store of `id` and returns a value read from the state right after the reducer
    /// handled it, as `Store.dispatch(_:reading:)` does; blocks as ``dispatch(_:to:)`` does.
    ///
    /// - Parameters:
    ///   - action: The action.
    ///   - id: The store's id.
    ///   - body: Reads the state right after the action; runs under the store's lock.
    /// - Returns: What `body` returned, or `nil` if it was not called (see `Store.dispatch(_:reading:)`).
    /// - Throws: As ``dispatch(_:to:)``.
    public func dispatch<T>(
        _ action: Action,
        to id: ID,
        reading body: (borrowing State) -> T
    ) throws(StoreHostError) -> T? {
        while true {
            let hosted = try hostedStoreWaiting(for: id)
            if let value = hosted.store.dispatch(action, reading: body) {
                return value
            }
            // Not read: a middleware swallowed the action, or passivation began and the store refused it.
            if !hosted.store.core.isRefusingDispatches {
                return nil
            }
        }
    }

    /// Sends an action to the store of `id`, activating the store first if it is not active; suspends instead of
    /// blocking while the store is busy, activated or passivated by another request.
    ///
    /// - Parameters:
    ///   - action: The action.
    ///   - id: The store's id.
    /// - Returns: The work that the action started, as `Store.send(_:)` returns it.
    /// - Throws: As ``dispatch(_:to:)``; ``StoreHostError/cancelled`` when the task was cancelled while it waited.
    @discardableResult
    public func send(_ action: Action, to id: ID) async throws(StoreHostError) -> StoreTask {
        while true {
            let hosted = try await hostedStore(for: id)
            let task = await hosted.store.send(action)
            if task.isAccepted {
                return task
            }
            if Task.isCancelled {
                throw .cancelled
            }
        }
    }

    /// Sends an action to the store of `id` and returns a value read from the state right after the reducer handled
    /// it, as `Store.send(_:reading:)` does.
    ///
    /// - Parameters:
    ///   - action: The action.
    ///   - id: The store's id.
    ///   - body: Reads the state right after the action; runs under the store's lock, maybe on another thread.
    /// - Returns: What `body` returned, or `nil` if it was not called (see `Store.send(_:reading:)`).
    /// - Throws: As ``send(_:to:)``.
    public func send<T: Sendable>(
        _ action: Action,
        to id: ID,
        reading body: @escaping @Sendable (borrowing State) -> T
    ) async throws(StoreHostError) -> T? {
        while true {
            let hosted = try await hostedStore(for: id)
            if let value = await hosted.store.send(action, reading: body) {
                return value
            }
            if Task.isCancelled {
                throw .cancelled
            }
            if !hosted.store.core.isRefusingDispatches {
                return nil
            }
        }
    }

    /// Sends an action to the store of `id`, then waits until its journal holds the action on stable storage: the
    /// acknowledgement of a request handler, as `Store.send(_:durableIn:)` gives it.
    ///
    /// ```swift
    /// try await host.sendDurably(.placeOrder(order), to: customer)
    /// return .accepted
    /// ```
    ///
    /// - Parameters:
    ///   - action: The action.
    ///   - id: The store's id.
    /// - Throws: As ``send(_:to:)``; ``StoreHostError/notDurable(_:)`` when the journal did not make the action
    ///   durable.
    public func sendDurably(_ action: Action, to id: ID) async throws(StoreHostError) {
        try await durablyInActiveStore(id) { hosted throws(JournalError) in
            try await hosted.store.send(action, durableIn: hosted.journal)
        }
    }

    /// Sends an action to the store of `id`, reads the state right after the reducer handled it, and returns that
    /// reading once the journal holds the action on stable storage, as `Store.send(_:durableIn:reading:)` does.
    ///
    /// - Parameters:
    ///   - action: The action.
    ///   - id: The store's id.
    ///   - body: Reads the state right after the action; runs under the store's lock, maybe on another thread.
    /// - Returns: What `body` read.
    /// - Throws: As ``sendDurably(_:to:)``.
    public func sendDurably<T: Sendable>(
        _ action: Action,
        to id: ID,
        reading body: @escaping @Sendable (borrowing State) -> T
    ) async throws(StoreHostError) -> T {
        try await durablyInActiveStore(id) { hosted throws(JournalError) in
            try await hosted.store.send(action, durableIn: hosted.journal, reading: body)
        }
    }

    /// Runs `send`, a durable send, in the active store of `id`: again in the store activated anew when the store
    /// refused the action because its passivation began (the action was not taken).
    private func durablyInActiveStore<T>(
        _ id: ID,
        _ send: (HostedStore<State, Action>) async throws(JournalError) -> T
    ) async throws(StoreHostError) -> T {
        while true {
            let hosted = try await hostedStore(for: id)
            do throws(JournalError) {
                return try await send(hosted)
            } catch .refused {
                continue
            } catch .cancelled {
                throw .cancelled
            } catch {
                throw .notDurable(error)
            }
        }
    }

    /// Reads the state of the store of `id`, activating the store first if it is not active.
    ///
    /// ```swift
    /// let count = try await host.read("alice") { $0.count }
    /// ```
    ///
    /// - Parameters:
    ///   - id: The store's id.
    ///   - body: Reads what you need; borrows the state, as `Store.read(_:)` does.
    /// - Returns: What `body` returned.
    /// - Throws: As ``send(_:to:)``.
    public func read<T: Sendable>(
        _ id: ID,
        _ body: (borrowing State) -> T
    ) async throws(StoreHostError) -> T {
        // A store being passivated is still readable, and holds every action it accepted.
        try await hostedStore(for: id).store.read(body)
    }

    /// Whether the store of `id` is active now (not being activated or passivated).
    public func isActive(_ id: ID) -> Bool {
        lock.withLock { directory.isActive(id) }
    }

    /// What the host did so far, and how many stores are alive now.
    public var statistics: StoreHostStatistics {
        lock.withLock { directory.currentStatistics }
    }

    // MARK: - Routing

    /// The store of `id` if it is active: the fast path of a request.
    @inlinable
    func activeStore(_ id: ID) -> Store<State, Action>? {
        lock.lock()
        defer { lock.unlock() }
        return directory.touch(id)
    }

    /// The slow path of ``dispatch(_:to:)``: the store is not active, or refused the action because its passivation
    /// began.
    @usableFromInline
    func dispatchWaiting(_ action: Action, to id: ID) throws(StoreHostError) {
        while true {
            if try hostedStoreWaiting(for: id).store.dispatch(action) {
                return
            }
        }
    }

    /// The store of `id`, once active: activates it on this thread, or blocks while another request activates or
    /// passivates it.
    func hostedStoreWaiting(for id: ID) throws(StoreHostError) -> HostedStore<State, Action> {
        lock.lock()
        while true {
            switch directory.route(id) {
            case .active(let hosted):
                lock.unlock()
                return hosted
            case .activate:
                lock.unlock()
                return try activate(id)
            case .wait:
                lock.wait()
            case .passivate(let victims):
                lock.unlock()
                startPassivations(victims, reason: .limit)
                lock.lock()
            case .shutDown:
                lock.unlock()
                throw .shutDown
            }
        }
    }

    /// The store of `id`, once active: activates it in this task, or suspends while another request activates or
    /// passivates it.
    func hostedStore(for id: ID) async throws(StoreHostError) -> HostedStore<State, Action> {
        while true {
            lock.lock()
            let route = directory.route(id)
            let generation = directory.generation
            lock.unlock()
            switch route {
            case .active(let hosted):
                return hosted
            case .activate:
                return try await activate(id)
            case .wait:
                await waitForChange(after: generation)
            case .passivate(let victims):
                startPassivations(victims, reason: .limit)
                await waitForChange(after: generation)
            case .shutDown:
                throw .shutDown
            }
        }
    }

    /// Suspends until the directory changed after `generation`.
    private func waitForChange(after generation: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if directory.generation != generation {
                lock.unlock()
                continuation.resume()
                return
            }
            waiters.append(continuation)
            lock.unlock()
        }
    }

    /// Wakes every request that waits for a change, and the calls waiting for the host to settle if it has; called
    /// with `lock` held, after a change of the directory.
    func takeWaiters() -> [CheckedContinuation<Void, Never>] {
        lock.broadcast()
        var woken = waiters
        waiters = []
        if directory.isSettled {
            woken += settleWaiters
            settleWaiters = []
        }
        return woken
    }
}

/// The name of the journal directory of an id whose description is `description`: the description with every byte
/// other than ASCII letters, digits, `-`, `_` and `.` (and a leading `.`) written as `%XX`, so that every id names one
/// directory and no id names `.`, `..` or a path.
@usableFromInline
package func journalDirectoryName(_ description: String) -> String {
    if description.isEmpty { return "%" }
    let hex = Array("0123456789ABCDEF".utf8)
    var name: [UInt8] = []
    name.reserveCapacity(description.utf8.count)
    for (offset, byte) in description.utf8.enumerated() {
        let plain =
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x2D || byte == 0x5F || (byte == 0x2E && offset > 0)
        if plain {
            name.append(byte)
        } else {
            name += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
        }
    }
    return String(decoding: name, as: UTF8.self)
}
