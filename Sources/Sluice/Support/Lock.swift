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

/// A mutex and a condition variable over `pthread_mutex_t` / `pthread_cond_t`.
///
/// Sluice does not use `Synchronization.Mutex`: on Swift 6.3.1 / Linux it costs about three times as much
/// per uncontended lock as a `pthread_mutex_t`, and it makes `swift test --sanitize=thread` report false
/// "Swift access race" warnings. `NSLock` would add Foundation to the dependency graph.
///
/// The primitives live in their own heap allocations because a pthread mutex must never move in memory.
/// In debug builds the mutex is an error-checking one, so that a thread that locks it twice (a reducer that
/// calls back into its own store) stops with a message instead of hanging forever.
@usableFromInline
package final class Lock: @unchecked Sendable {
    // @unchecked: the pointers are written once in `init` and freed in `deinit`; all access to what they point
    // to goes through the pthread functions, which are thread-safe by definition.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// `mutex`, untyped: what the inlined ``lock()`` and ``unlock()`` pass to CSluiceSupport (`pthread_mutex_t` is
    /// not visible to inlinable code, the C library not being imported publicly).
    @usableFromInline
    let mutexAddress: UnsafeMutableRawPointer

    /// Creates an unlocked lock.
    package init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        var error = pthread_mutex_init(mutex, &attributes)
        precondition(error == 0, "pthread_mutex_init failed: \(error)")
        pthread_mutexattr_destroy(&attributes)
        error = pthread_cond_init(condition, nil)
        precondition(error == 0, "pthread_cond_init failed: \(error)")
        mutexAddress = UnsafeMutableRawPointer(mutex)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Acquires the mutex, waiting for it if another thread holds it.
    ///
    /// Inlinable, like ``unlock()``: every dispatch locks at least once, and as a call into Sluice each of the two
    /// cost 14 instructions more than the pthread function itself (callgrind).
    @inlinable
    package func lock() {
        let error = csluice_mutex_lock(mutexAddress)
        if _slowPath(error != 0) {
            Lock.lockFailed(error)
        }
    }

    /// Releases the mutex.
    @inlinable
    package func unlock() {
        let error = csluice_mutex_unlock(mutexAddress)
        if _slowPath(error != 0) {
            Lock.unlockFailed(error)
        }
    }

    /// Atomically releases the mutex and waits for `signal()`; holds the mutex again when it returns.
    ///
    /// As with every condition variable, the wait can end spuriously: call it in a loop over the condition.
    @usableFromInline
    package func wait() {
        let error = pthread_cond_wait(condition, mutex)
        precondition(error == 0, "Sluice: pthread_cond_wait failed with \(error)")
    }

    /// Atomically releases the mutex and waits for `wakeUp.signal()`; holds the mutex again when it returns.
    ///
    /// The wait can end spuriously: call it in a loop over the condition.
    package func wait(for wakeUp: ThreadWakeUp) {
        let error = pthread_cond_wait(wakeUp.condition, mutex)
        precondition(error == 0, "Sluice: pthread_cond_wait failed with \(error)")
    }

    /// Wakes one thread in `wait()`.
    @usableFromInline
    package func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every thread in `wait()`.
    @usableFromInline
    package func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Runs `body` with the mutex held.
    @inlinable
    package func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    @usableFromInline
    static func unlockFailed(_ error: Int32) -> Never {
        preconditionFailure("Sluice: pthread_mutex_unlock failed with \(error)")
    }

    @usableFromInline
    static func lockFailed(_ error: Int32) -> Never {
        if error == EDEADLK {
            preconditionFailure(
                """
                Sluice: deadlock: this thread already holds the store's lock. A reducer must be pure, and the body \
                of read(_:) or dispatch(_:reading:) runs under the lock: neither may call its own store (dispatch, \
                state, read, subscribe) while it runs.
                """
            )
        }
        preconditionFailure("Sluice: pthread_mutex_lock failed with \(error)")
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
    /// Inlinable: a pipeline's owner looks itself up at least twice per dispatch through a middleware, and as a call
    /// into Sluice each lookup cost 10 instructions more than `pthread_self` (callgrind).
    @inlinable
    package static var current: ThreadID {
        ThreadID(raw: csluice_thread_self())
    }

    /// No thread.
    @usableFromInline
    package static let none = ThreadID(raw: 0)
}

/// The calling thread's own condition variable (a C thread-local), on which it waits for a store's pipeline.
///
/// One per thread, so that the owner of a pipeline wakes exactly the thread that it hands the pipeline to (the
/// oldest waiter), not every waiter. Signal it with the store's lock held: the woken thread may otherwise see
/// itself owner, finish, and exit before the signal.
@usableFromInline
package struct ThreadWakeUp: @unchecked Sendable {
    // @unchecked: a pointer to a pthread condition variable, used only through the pthread functions.
    let condition: UnsafeMutablePointer<pthread_cond_t>

    /// The calling thread's.
    package static var current: ThreadWakeUp {
        ThreadWakeUp(condition: csluice_thread_condition())
    }

    /// Wakes the thread, if it waits.
    package func signal() {
        pthread_cond_signal(condition)
    }
}

/// How many store pipelines the calling thread owns right now, in a thread-local variable.
///
/// A thread that owns a pipeline and dispatches into another store whose pipeline another thread owns hands its
/// action over to that thread instead of waiting for it: waiting could deadlock when the other thread dispatches
/// back (two stores whose subscribers dispatch into each other, driven from two threads).
///
/// The variable is a C `__thread` variable (`CSluiceSupport`): one instruction to read or change, where
/// `pthread_getspecific` costs about twenty and a Swift global's lazy initialization more. Inlinable: as a call, the
/// two changes of an uncontended dispatch cost 24 instructions (callgrind), more than the rest of taking and giving up
/// the pipeline.
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
