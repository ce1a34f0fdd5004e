public import Sluice

/// The ids of a ``StoreHost`` and the phase of each: the host's state machine, guarded by the host's lock.
///
/// Each mutating function is an event that returns what the host must do next, outside the lock (open a journal,
/// passivate some stores, wake the requests that wait). An id is in `slots` from the moment a request starts to
/// activate it until its passivation has closed its journal: a second request for the id meanwhile waits, so that
/// an id is activated once, and a request that arrives during passivation waits for it and then activates the id
/// again. `slots.count` is the number of live stores, which the active limit bounds.
@usableFromInline
struct HostDirectory<ID: Hashable & Sendable, State: Sendable, Action: Sendable> {
    @usableFromInline
    enum Phase {
        case activating
        case active(HostedStore<State, Action>)
        case passivating
    }

    @usableFromInline
    struct Slot {
        @usableFromInline
        var phase: Phase
        /// The store while active (the one of `phase`), kept beside it so that a request reaches the store with no
        /// further load than the table's.
        @usableFromInline
        var store: Store<State, Action>?
        /// The sweep epoch of the last request: the idle time is measured in sweeps.
        @usableFromInline
        var lastEpoch: UInt64
        /// Set by each request, cleared by the eviction's clock hand as it passes: a store used since the hand last
        /// passed gets a second chance.
        @usableFromInline
        var used: Bool
        /// The position in `ring` while active.
        var ringIndex: Int
    }

    /// Why a store is passivated.
    enum Reason {
        case idle, limit, requested
    }

    /// What a request must do for its id.
    enum Route {
        /// Use this store.
        case active(HostedStore<State, Action>)
        /// Activate the id: it is marked activating, for this request.
        case activate
        /// Wait for a change (an activation or a passivation that ends), then route again.
        case wait
        /// Passivate these stores to make room, then wait and route again.
        case passivate([(ID, HostedStore<State, Action>)])
        /// The host is shut down.
        case shutDown
    }

    @usableFromInline
    var slots: [ID: Slot] = [:]
    /// The number of sweeps so far.
    @usableFromInline
    var epoch: UInt64 = 0
    /// The active ids, in no order, for the eviction's clock hand.
    private var ring: [ID] = []
    private var hand = 0
    private let activeLimit: Int
    private let evictionBatch: Int
    private(set) var activating = 0
    private(set) var passivating = 0
    private(set) var isShutDown = false
    /// Bumped at every change that a waiting request may be waiting for.
    private(set) var generation: UInt64 = 0
    private(set) var statistics = StoreHostStatistics()

    init(activeLimit: Int) {
        self.activeLimit = activeLimit
        // Room for a burst of new ids: passivating a few stores at once lets the activations behind the first one
        // proceed without each waiting for a passivation of its own.
        evictionBatch = max(1, activeLimit / 64)
        // A table sized for the limit up front would spread a few busy stores over memory that a lookup then misses
        // in the cache; it grows as stores are activated.
        slots.reserveCapacity(min(activeLimit, 1024))
    }

    /// The store of `id` if it is active, marked as used: the fast path of every request.
    @inlinable
    mutating func touch(_ id: ID) -> Store<State, Action>? {
        guard let index = slots.index(forKey: id), let store = slots.values[index].store else {
            return nil
        }
        slots.values[index].used = true
        slots.values[index].lastEpoch = epoch
        return store
    }

    /// Whether the store of `id` is active.
    func isActive(_ id: ID) -> Bool {
        if case .active = slots[id]?.phase { return true }
        return false
    }

    /// Whether no activation or passivation is in progress.
    var isSettled: Bool {
        activating == 0 && passivating == 0
    }

    var currentStatistics: StoreHostStatistics {
        var statistics = statistics
        statistics.liveStores = slots.count
        return statistics
    }

    /// A request for `id`: what it must do.
    mutating func route(_ id: ID) -> Route {
        if isShutDown { return .shutDown }
        if let index = slots.index(forKey: id) {
            switch slots.values[index].phase {
            case .active(let hosted):
                slots.values[index].used = true
                slots.values[index].lastEpoch = epoch
                return .active(hosted)
            case .activating, .passivating:
                return .wait
            }
        }
        if slots.count < activeLimit {
            slots[id] = Slot(phase: .activating, store: nil, lastEpoch: epoch, used: true, ringIndex: -1)
            activating += 1
            return .activate
        }
        // Full. A passivation in progress frees a slot when it ends; otherwise make room.
        if passivating > 0 { return .wait }
        let victims = evict(evictionBatch)
        return victims.isEmpty ? .wait : .passivate(victims)
    }

    /// The activation of `id` succeeded: `true` if the store is now active, `false` if the host shut down meanwhile
    /// (the store is marked passivating, for the caller to passivate).
    mutating func didActivate(_ id: ID, _ hosted: HostedStore<State, Action>) -> Bool {
        activating -= 1
        generation &+= 1
        if isShutDown {
            slots[id]?.phase = .passivating
            passivating += 1
            return false
        }
        statistics.activations += 1
        slots[id] = Slot(
            phase: .active(hosted),
            store: hosted.store,
            lastEpoch: epoch,
            used: true,
            ringIndex: ring.count
        )
        ring.append(id)
        return true
    }

    /// The activation of `id` failed: the id is free again.
    mutating func didFailToActivate(_ id: ID) {
        activating -= 1
        generation &+= 1
        statistics.failedActivations += 1
        slots.removeValue(forKey: id)
    }

    /// The passivation of `id` ended: its journal is closed, the id is free again.
    mutating func didPassivate(_ id: ID, reason: Reason) {
        passivating -= 1
        generation &+= 1
        switch reason {
        case .idle: statistics.idlePassivations += 1
        case .limit: statistics.limitPassivations += 1
        case .requested: statistics.requestedPassivations += 1
        }
        slots.removeValue(forKey: id)
    }

    /// A request to passivate `id`: its store if it was active (now marked passivating), `nil` otherwise.
    mutating func passivate(_ id: ID) -> HostedStore<State, Action>? {
        guard let slot = slots[id], case .active = slot.phase else { return nil }
        return beginPassivation(id)
    }

    /// A sweep of the idle stores: the stores not used for `idleEpochs` sweeps, now marked passivating.
    mutating func sweep(idleEpochs: UInt64) -> [(ID, HostedStore<State, Action>)] {
        epoch += 1
        var idle: [(ID, HostedStore<State, Action>)] = []
        // Backwards: passivating removes the id from `ring` by moving the last one into its place.
        var index = ring.count - 1
        while index >= 0 {
            let id = ring[index]
            if let slot = slots[id], epoch - slot.lastEpoch >= idleEpochs {
                idle.append((id, beginPassivation(id)))
            }
            index -= 1
        }
        return idle
    }

    /// The host shuts down: every active store, now marked passivating. Activations in progress end in
    /// ``didActivate(_:_:)``, which marks them passivating too.
    mutating func shutDown() -> [(ID, HostedStore<State, Action>)] {
        isShutDown = true
        generation &+= 1
        var all: [(ID, HostedStore<State, Action>)] = []
        while let id = ring.last {
            all.append((id, beginPassivation(id)))
        }
        return all
    }

    /// Up to `count` stores to passivate, chosen by a clock over the active ones: a store used since the hand last
    /// passed it is skipped once (its mark cleared), so that the stores in use stay.
    private mutating func evict(_ count: Int) -> [(ID, HostedStore<State, Action>)] {
        var victims: [(ID, HostedStore<State, Action>)] = []
        var steps = 0
        let maximumSteps = 2 * ring.count + count
        while victims.count < count && !ring.isEmpty && steps < maximumSteps {
            steps += 1
            if hand >= ring.count { hand = 0 }
            let id = ring[hand]
            if slots[id]?.used == true {
                slots[id]?.used = false
                hand += 1
            } else {
                // `ring[hand]` is replaced by the last id, which the hand looks at next.
                victims.append((id, beginPassivation(id)))
            }
        }
        return victims
    }

    /// Marks the active store of `id` passivating and takes it out of the ring.
    private mutating func beginPassivation(_ id: ID) -> HostedStore<State, Action> {
        guard let slot = slots[id], case .active(let hosted) = slot.phase else {
            preconditionFailure("SluiceHost: passivating a store that is not active")
        }
        let last = ring.removeLast()
        if last != id {
            ring[slot.ringIndex] = last
            slots[last]?.ringIndex = slot.ringIndex
        }
        slots[id] = Slot(phase: .passivating, store: nil, lastEpoch: slot.lastEpoch, used: false, ringIndex: -1)
        passivating += 1
        return hosted
    }
}
