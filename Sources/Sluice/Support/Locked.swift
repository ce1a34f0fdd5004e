public import CSluiceSupport

/// A value that is read and written only with its lock held: the state of a class that several threads share.
///
/// ```swift
/// let counts = Locked([String: Int]())
/// counts.withLock { $0["orders", default: 0] += 1 }
/// ```
///
/// The value and the lock live in one heap allocation (which never moves, as the lock needs): a type that holds a
/// `Locked` is `Sendable` without `@unchecked`, and nothing outside `withLock` can reach the value. Decisions are
/// made inside `withLock`, and what they call for (resuming a continuation, cancelling a task, calling a handler)
/// is returned and performed after it, never under the lock.
///
/// It uses the same lock as ``Lock`` (with its debug check against taking it twice). A type that waits on the lock's
/// condition (the store's pipeline) keeps a bare ``Lock``.
///
@usableFromInline
package struct Locked<Value> {
    @usableFromInline
    let storage: LockedStorage<Value>

    /// Puts `value` behind a new lock.
    @inlinable
    package init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with the lock held, on the value in place, and returns what it returns.
    @inlinable
    package func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try storage.withUnsafeMutablePointers { value, lock throws(E) -> T in
            Lock.lock(lock)
            defer { Lock.unlock(lock) }
            return try body(&value.pointee)
        }
    }
}

/// `@unchecked Sendable` when `Value` is `Sendable`: every access to the value goes through `withLock`, which holds
/// the lock.
extension Locked: @unchecked Sendable where Value: Sendable {}

/// The allocation behind a ``Locked`` value: the value as the header, the lock as the one element.
@usableFromInline
final class LockedStorage<Value>: ManagedBuffer<Value, csluice_lock_t> {
    @inlinable
    static func make(_ value: Value) -> LockedStorage {
        let buffer = create(minimumCapacity: 1) { _ in value }
        let storage = unsafeDowncast(buffer, to: LockedStorage.self)
        storage.withUnsafeMutablePointerToElements { csluice_lock_init($0) }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { csluice_lock_destroy($0) }
    }
}
