/// A one-way cancellation flag with handlers, shared by a run of a side effect and everything it started.
///
/// `takeLatest` gives each run its own `Cancellation`; the run's ``MiddlewareAPI`` reports it through
/// `isCancelled` and drops its dispatches once it is cancelled, and the timers and tasks that the run started
/// register handlers here, so that superseding the run cancels them. A cancellation made with a parent is
/// cancelled with its parent.
///
/// A child follows its parent (a handler in the parent that cancels the child) only from its first handler on:
/// until then ``isCancelled`` asks the parent as well, and there is nothing in the child to run when the parent is
/// cancelled. So a `takeLatest` run whose effect starts nothing costs no handler, no weak reference and no entry in
/// the store's lifetime.
///
/// A `takeLatest` makes one per action, so it is one allocation: its state is a field of the object, guarded by one
/// of a fixed set of locks shared by every cancellation (picked by the object's address), rather than a lock and
/// state of its own in a second allocation. Critical sections are a few loads and stores, no code that could take
/// another cancellation's lock runs inside one (handlers run after it), so two cancellations that share a lock
/// only ever wait for each other's few instructions, and never deadlock.
///
/// `@unchecked Sendable`: `flag` is only accessed with `lock` held (``withFlag(_:)``).
@usableFromInline
package final class Cancellation: @unchecked Sendable {
    private struct Flag {
        var isCancelled = false
        /// `nil` until the first handler: most cancellations never get one.
        var handlers: [UInt64: @Sendable () -> Void]?
        var nextKey: UInt64 = 0
        /// The key of this cancellation's handler in `parent`, while it follows the parent.
        var keyInParent: UInt64?
        /// Whether a handler was registered, so that this cancellation follows (or is starting to follow) its parent.
        var followsParent = false
        /// Set by ``detachFromParent()``: no handler in the parent from then on.
        var isDetached = false
    }

    @exclusivity(unchecked)
    private var flag = Flag()
    /// One of ``locks``, chosen once in `init`; they live as long as the program, hence `unowned(unsafe)` (no
    /// reference counting).
    @exclusivity(unchecked)
    private unowned(unsafe) var lock: Lock
    private let parent: Cancellation?

    /// The locks shared by all cancellations.
    private static let locks: [Lock] = (0..<64).map { _ in Lock() }

    /// Runs `body` on the state with its lock held.
    @inline(__always)
    private func withFlag<T>(_ body: (inout Flag) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&flag)
    }
    /// The `takeLeading` run (an entry of the store's ``StoreWork``) that the work this cancellation covers belongs
    /// to; inherited from the parent.
    @usableFromInline
    package let run: UInt64?

    /// Creates a cancellation that is cancelled when `parent` is, or at once if `parent` already is.
    ///
    /// - Parameter run: The run of the work; by default the parent's.
    @usableFromInline
    package init(parent: Cancellation? = nil, run: UInt64? = nil) {
        self.parent = parent
        self.run = run ?? parent?.run
        lock = Cancellation.locks[0]
        // Objects are at least 16-byte aligned: the bits above those pick the lock.
        let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        lock = Cancellation.locks[Int((address >> 4) & 63)]
    }

    /// Whether `cancel()` was called on this cancellation or one of its ancestors.
    @usableFromInline
    package var isCancelled: Bool {
        withFlag { $0.isCancelled } || (parent?.isCancelled ?? false)
    }

    /// Cancels this cancellation and runs its handlers once, in registration order is not guaranteed.
    @usableFromInline
    package func cancel() {
        let (toRun, parentKey): ([@Sendable () -> Void], UInt64?) = withFlag { flag in
            guard !flag.isCancelled else { return ([], nil) }
            flag.isCancelled = true
            defer {
                flag.handlers = nil
                flag.keyInParent = nil
            }
            guard let handlers = flag.handlers, !handlers.isEmpty else {
                return ([], flag.keyInParent)  // a run that started nothing: no sorting of nothing
            }
            return (handlers.sorted { $0.key < $1.key }.map(\.value), flag.keyInParent)
        }
        if let parentKey {
            parent?.removeHandler(parentKey)
        }
        for handler in toRun {
            handler()
        }
    }

    /// Registers `handler` to run when this is cancelled; runs it at once if it already is.
    ///
    /// - Returns: A key for ``removeHandler(_:)``, or `nil` if the handler already ran.
    @discardableResult
    package func onCancel(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
        if let parent, parent.isCancelled {
            // Cancelled with the parent already: as if it had followed the parent all along.
            cancel()
        }
        let (key, follow): (UInt64?, Bool) = withFlag { flag in
            guard !flag.isCancelled else { return (nil, false) }
            flag.nextKey &+= 1
            if flag.handlers == nil {
                flag.handlers = [flag.nextKey: handler]
            } else {
                flag.handlers![flag.nextKey] = handler
            }
            defer { flag.followsParent = true }
            return (flag.nextKey, !flag.followsParent && !flag.isDetached)
        }
        guard let key else {
            handler()
            return nil
        }
        if follow, let parent {
            followParent(parent)
        }
        return key
    }

    /// Registers the handler in `parent` that cancels this cancellation with it (at once if `parent` was cancelled
    /// meanwhile).
    private func followParent(_ parent: Cancellation) {
        guard let keyInParent = parent.onCancel({ [weak self] in self?.cancel() }) else { return }
        let cancelledMeanwhile: Bool = withFlag { flag in
            if flag.isCancelled || flag.isDetached { return true }
            flag.keyInParent = keyInParent
            return false
        }
        if cancelledMeanwhile {
            parent.removeHandler(keyInParent)
        }
    }

    /// Stops following the parent: the work this cancellation covers has finished.
    ///
    /// Without it, a long-lived parent (an effect that starts many short ones) would keep one handler per finished
    /// child until it is cancelled itself.
    package func detachFromParent() {
        let key: UInt64? = withFlag { flag in
            flag.isDetached = true
            defer { flag.keyInParent = nil }
            return flag.keyInParent
        }
        if let key {
            parent?.removeHandler(key)
        }
    }

    /// The number of handlers waiting for the cancellation (for tests).
    package var handlerCount: Int {
        withFlag { $0.handlers?.count ?? 0 }
    }

    /// Forgets a handler that is no longer needed (its timer fired, its task finished).
    package func removeHandler(_ key: UInt64) {
        let removed = withFlag { $0.handlers?.removeValue(forKey: key) }
        _ = removed
    }
}
