// `public import`: `LatestRunsByKey.nextSerial()` is inlined into the caller's module (see TimedEffect.swift).
public import CSluiceSupport

/// The current run of each key of a `takeLatest(by:)`, for one store.
///
/// A key's run is an entry of the store's ledger (``StoreWork/beginRun(in:onIdle:)``), under way until its
/// synchronous call returned and the tasks it started ended, as a `takeLeading` run is. The key is forgotten when
/// its current run is over, so the modifier holds a key only while a run of it is under way; a newer action of the
/// key replaces the run (and cancels the older one) before that.
///
/// `@unchecked Sendable`: `current` is a ``Locked`` value and `serials` is only accessed through C11 atomics.
@usableFromInline
final class LatestRunsByKey<Key: Hashable & Sendable>: @unchecked Sendable {
    @usableFromInline
    struct Current: Sendable {
        @usableFromInline
        let run: Cancellation
        @usableFromInline
        let serial: UInt64

        @inlinable
        init(run: Cancellation, serial: UInt64) {
            self.run = run
            self.serial = serial
        }
    }

    @usableFromInline
    let current = Locked<[Key: Current]>([:])
    /// The serial number of the next run, so that a run that is over finds out whether it is still its key's
    /// current one; read and incremented only through the C11 atomics of CSluiceSupport.
    @usableFromInline
    let serials: UnsafeMutablePointer<UInt64>

    @usableFromInline
    init() {
        serials = .allocate(capacity: 1)
        serials.initialize(to: 0)
    }

    deinit {
        serials.deallocate()
    }

    /// A serial number for a new run.
    @inlinable
    func nextSerial() -> UInt64 {
        csluice_counter_next(serials)
    }

    /// Makes `run` (with `serial`) the current run of `key` and returns the previous one, which the caller cancels.
    @inlinable
    func replace(_ key: Key, with run: Cancellation, serial: UInt64) -> Cancellation? {
        current.withLock { current in
            current.updateValue(Current(run: run, serial: serial), forKey: key)?.run
        }
    }

    /// Run `serial` of `key` is over: forgets the key unless a newer run replaced it. The run's cancellation stops
    /// following the store's, so that finished runs do not pile up there.
    @inlinable
    func finish(_ key: Key, serial: UInt64) {
        let finished: Cancellation? = current.withLock { current in
            guard let index = current.index(forKey: key), current.values[index].serial == serial else { return nil }
            return current.remove(at: index).value.run
        }
        if let finished {
            finishedRun(finished)
        }
    }

    /// The number of keys with a run under way (for tests).
    @usableFromInline
    var keyCount: Int {
        current.withLock { $0.count }
    }
}

/// The keys of a `takeLeading(by:)` whose run is in progress, for one store, with each run's cancellation.
@usableFromInline
final class LeadingRunsByKey<Key: Hashable & Sendable>: Sendable {
    /// A key is present from ``tryStart(_:)`` to ``finish(_:)``; its value is `nil` until ``started(_:_:)``.
    @usableFromInline
    let running = Locked<[Key: Cancellation?]>([:])

    @usableFromInline
    init() {}

    /// Starts a run of `key` unless one is in progress; returns whether it did.
    @inlinable
    func tryStart(_ key: Key) -> Bool {
        running.withLock { running in
            if running.index(forKey: key) != nil { return false }
            running[key] = .some(nil)
            return true
        }
    }

    /// The cancellation of the run of `key` that ``tryStart(_:)`` admitted.
    @inlinable
    func started(_ key: Key, _ run: Cancellation) {
        running.withLock { $0[key] = run }
    }

    /// The run of `key` is over: the next action of the key may start one.
    @inlinable
    func finish(_ key: Key) {
        let run: Cancellation?? = running.withLock { $0.removeValue(forKey: key) }
        if let run = run ?? nil {
            finishedRun(run)
        }
    }

    /// The number of keys with a run in progress (for tests).
    @usableFromInline
    var keyCount: Int {
        running.withLock { $0.count }
    }
}

/// A run of a key is over: its cancellation stops following the store's, so that finished runs do not pile up there.
@usableFromInline
func finishedRun(_ run: Cancellation) {
    run.detachFromParent()
}

extension MiddlewareAPI {
    /// Lets tests count the keys of a `takeLatest(by:)` or `takeLeading(by:)`; nothing of theirs is owed at shutdown.
    @usableFromInline
    func registerKeys(_ keyCount: @escaping @Sendable () -> Int) {
        core.work.register(flush: { _ in 0 }, keyCount: keyCount)
    }
}
