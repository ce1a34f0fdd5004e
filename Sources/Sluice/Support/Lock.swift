// `public import`: `OwnedPipelines` is inlined into the dispatch path of the caller's module (see below).
public import CSluiceSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// A mutex and a condition variable: on Linux a futex lock of Sluice's own (`CSluiceSupport.h`), elsewhere
/// `pthread_mutex_t` / `pthread_cond_t`.
///
/// Sluice keeps a lock of its own rather than `Synchronization.Mutex`: the library supports macOS 14 and iOS 17,
/// which predate `Mutex` (macOS 15, iOS 18); `Mutex` has no condition variable, which the store's pipeline waits on;
/// and it makes `swift test --sanitize=thread` report false "Swift access race" warnings. `NSLock` would add
/// Foundation to the dependency graph. State that a lock guards lives inside it, in a ``Locked`` value; a bare `Lock`
/// is for the pipeline, whose waits need the condition. On Linux the futex lock is taken with one compare-and-swap and
/// given up with one exchange, inline, and spins a little before it sleeps, where a `pthread_mutex_t` is a call into
/// glibc on each side and a system call on each side of every collision of two threads.
///
/// The lock lives in its own heap allocation because it must never move in memory. In debug builds it records its
/// holder, so that a thread that takes it twice (a reducer that calls back into its own store) stops with a message
/// instead of hanging forever.
@usableFromInline
package final class Lock: @unchecked Sendable {
    // @unchecked: the pointer is written once in `init` and freed in `deinit`; all access to what it points to goes
    // through the CSluiceSupport functions, which are thread-safe (atomics and futexes, or pthread functions).
    @usableFromInline
    let handle: UnsafeMutablePointer<csluice_lock_t>

    /// Creates an unlocked lock.
    package init() {
        handle = .allocate(capacity: 1)
        csluice_lock_init(handle)
    }

    deinit {
        csluice_lock_destroy(handle)
        handle.deallocate()
    }

    /// Acquires the mutex, waiting for it if another thread holds it.
    ///
    /// Inlinable, like ``unlock()``: every dispatch locks at least once, and inline each of the two is the lock's
    /// own operation, with no call into Sluice around it.
    @inlinable
    package func lock() {
        Lock.lock(handle)
    }

    /// Releases the mutex.
    @inlinable
    package func unlock() {
        Lock.unlock(handle)
    }

    /// Takes the lock at `handle` (this type's, or a ``Locked`` value's).
    @inlinable
    static func lock(_ handle: UnsafeMutablePointer<csluice_lock_t>) {
        #if DEBUG
        let thread = csluice_thread_self()
        if csluice_lock_owner(handle) == thread {
            Lock.lockedTwice()
        }
        csluice_lock_lock(handle)
        csluice_lock_set_owner(handle, thread)
        #else
        csluice_lock_lock(handle)
        #endif
    }

    /// Releases the lock at `handle`.
    @inlinable
    static func unlock(_ handle: UnsafeMutablePointer<csluice_lock_t>) {
        #if DEBUG
        if csluice_lock_owner(handle) != csluice_thread_self() {
            Lock.unlockedByAnotherThread()
        }
        csluice_lock_set_owner(handle, 0)
        #endif
        csluice_lock_unlock(handle)
    }

    /// Atomically releases the mutex and waits for `signal()`; holds the mutex again when it returns.
    ///
    /// As with every condition variable, the wait can end spuriously: call it in a loop over the condition.
    @usableFromInline
    package func wait() {
        waitReleasingOwnership { csluice_lock_wait(handle) }
    }

    /// Atomically releases the mutex and waits for `signal()` until `deadline` at the latest; holds the mutex again
    /// when it returns.
    ///
    /// The wait can end spuriously: call it in a loop over the condition and the deadline.
    package func wait(until deadline: ContinuousClock.Instant) {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return }
        // At most an hour at a time: the caller's loop waits again, and no conversion overflows.
        let (seconds, attoseconds) = min(remaining, .seconds(3600)).components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000 + 1
        waitReleasingOwnership { csluice_lock_wait_timeout(handle, nanoseconds) }
    }

    /// Atomically releases the mutex and waits for `wakeUp.signal()`; holds the mutex again when it returns.
    ///
    /// `wakeUp` must be the calling thread's (``ThreadWakeUp/current``). The wait can end spuriously: call it in a
    /// loop over the condition.
    package func wait(for wakeUp: ThreadWakeUp) {
        waitReleasingOwnership { csluice_lock_wait_for(handle, wakeUp.address) }
    }

    /// Runs `wait`, a C wait that releases the mutex and holds it again when it returns, with the debug build's
    /// record of the mutex's owner cleared for its duration (another thread takes the mutex meanwhile).
    @inline(__always)
    private func waitReleasingOwnership(_ wait: () -> Void) {
        #if DEBUG
        csluice_lock_set_owner(handle, 0)
        #endif
        wait()
        #if DEBUG
        csluice_lock_set_owner(handle, csluice_thread_self())
        #endif
    }

    /// Wakes one thread in `wait()`.
    @usableFromInline
    package func signal() {
        csluice_lock_signal(handle)
    }

    /// Wakes every thread in `wait()`.
    @usableFromInline
    package func broadcast() {
        csluice_lock_broadcast(handle)
    }

    /// Runs `body` with the mutex held.
    @inlinable
    package func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    @usableFromInline
    static func unlockedByAnotherThread() -> Never {
        preconditionFailure("Sluice: a lock was released by a thread that does not hold it")
    }

    @usableFromInline
    static func lockedTwice() -> Never {
        preconditionFailure(
            """
            Sluice: deadlock: this thread already holds the store's lock. A reducer must be pure, and the body \
            of read(_:) or dispatch(_:reading:) runs under the lock: neither may call its own store (dispatch, \
            state, read, subscribe) while it runs.
            """
        )
    }
}

/// Identifies the calling thread; compares threads without holding on to them.
@usableFromInline
package struct ThreadID: Equatable, Sendable {
    @usableFromInline
    let raw: UInt

    @inlinable
    package init(raw: UInt) {
        self.raw = raw
    }

    /// The thread that runs this code.
    ///
    /// Inlinable: a pipeline's owner looks itself up at least twice per dispatch through a middleware, and inline
    /// each lookup is `pthread_self`, with no call into Sluice around it.
    @inlinable
    package static var current: ThreadID {
        ThreadID(raw: csluice_thread_self())
    }

    /// No thread.
    @usableFromInline
    package static let none = ThreadID(raw: 0)
}

/// The calling thread's own wake-up (a C thread-local: a futex word on Linux, a condition variable elsewhere), on
/// which it waits for a store's pipeline.
///
/// One per thread, so that the owner of a pipeline wakes exactly the thread that it hands the pipeline to (the
/// oldest waiter), not every waiter. Signal it with the store's lock held: the woken thread may otherwise see
/// itself owner, finish, and exit before the signal.
@usableFromInline
package struct ThreadWakeUp: Sendable {
    /// The address of the thread's wake-up word, kept as an integer: it is an identity, read and written only
    /// through the CSluiceSupport functions (atomics and futexes), never as Swift memory.
    private let bits: UInt

    var address: UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: bits).unsafelyUnwrapped
    }

    /// The calling thread's.
    package static var current: ThreadWakeUp {
        ThreadWakeUp(bits: UInt(bitPattern: csluice_thread_wake_up()))
    }

    /// Wakes the thread, if it waits.
    @usableFromInline
    package func signal() {
        csluice_wake_up_signal(address)
    }
}

/// How many store pipelines the calling thread owns right now, in a thread-local variable.
///
/// A thread that owns a pipeline and dispatches into another store whose pipeline another thread owns hands its
/// action over to that thread instead of waiting for it: waiting could deadlock when the other thread dispatches
/// back (two stores whose subscribers dispatch into each other, driven from two threads).
///
/// The variable is a C `__thread` variable (`CSluiceSupport`): a plain load or store, where `pthread_getspecific` is
/// a call into the C library and a Swift global adds its lazy initialization. Inlinable: an uncontended dispatch
/// changes it twice, and as calls those changes would cost more than the rest of taking and giving up the pipeline.
@usableFromInline
package enum OwnedPipelines {
    /// The number of pipelines the calling thread owns.
    @inlinable
    package static var count: Int {
        csluice_owned_pipelines_count()
    }

    /// Records that the calling thread took (`+1`) or gave up (`-1`) a pipeline.
    @inlinable
    package static func add(_ delta: Int) {
        csluice_owned_pipelines_add(delta)
    }
}
