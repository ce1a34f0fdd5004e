/// A one-way cancellation flag with handlers, shared by a run of a side effect and everything it started.
///
/// `takeLatest` gives each run its own `Cancellation`; the run's ``MiddlewareAPI`` reports it through
/// `isCancelled` and drops its dispatches once it is cancelled, and the timers and tasks that the run started
/// register handlers here, so that superseding the run cancels them. A cancellation made with a parent is
/// cancelled with its parent.
///
/// `@unchecked Sendable`: `isCancelledFlag`, `handlers` and `nextKey` are guarded by `lock`.
@usableFromInline
package final class Cancellation: @unchecked Sendable {
    private let lock = Lock()
    private var isCancelledFlag = false
    private var handlers: [UInt64: @Sendable () -> Void] = [:]
    private var nextKey: UInt64 = 0
    private let parent: Cancellation?
    private var keyInParent: UInt64?
    /// The `takeLeading` run (an entry of the store's ``StoreWork``) that the work this cancellation covers belongs
    /// to; inherited from the parent.
    package let run: UInt64?

    /// Creates a cancellation that is cancelled when `parent` is, or at once if `parent` already is.
    ///
    /// - Parameter run: The run of the work; by default the parent's.
    package init(parent: Cancellation? = nil, run: UInt64? = nil) {
        self.parent = parent
        self.run = run ?? parent?.run
        if let parent {
            let key = parent.onCancel { [weak self] in self?.cancel() }
            lock.withLock { keyInParent = key }
        }
    }

    /// Whether `cancel()` was called on this cancellation or one of its ancestors.
    @usableFromInline
    package var isCancelled: Bool {
        lock.withLock { isCancelledFlag }
    }

    /// Cancels this cancellation and runs its handlers once, in registration order is not guaranteed.
    package func cancel() {
        let (toRun, parentKey): ([@Sendable () -> Void], UInt64?) = lock.withLock {
            guard !isCancelledFlag else { return ([], nil) }
            isCancelledFlag = true
            defer {
                handlers = [:]
                keyInParent = nil
            }
            return (handlers.sorted { $0.key < $1.key }.map(\.value), keyInParent)
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
        let key: UInt64? = lock.withLock {
            guard !isCancelledFlag else { return nil }
            nextKey &+= 1
            handlers[nextKey] = handler
            return nextKey
        }
        if key == nil {
            handler()
        }
        return key
    }

    /// Stops following the parent: the work this cancellation covers has finished.
    ///
    /// Without it, a long-lived parent (an effect that starts many short ones) would keep one handler per finished
    /// child until it is cancelled itself.
    package func detachFromParent() {
        let key: UInt64? = lock.withLock {
            defer { keyInParent = nil }
            return keyInParent
        }
        if let key {
            parent?.removeHandler(key)
        }
    }

    /// The number of handlers waiting for the cancellation (for tests).
    package var handlerCount: Int {
        lock.withLock { handlers.count }
    }

    /// Forgets a handler that is no longer needed (its timer fired, its task finished).
    package func removeHandler(_ key: UInt64) {
        let removed = lock.withLock { handlers.removeValue(forKey: key) }
        _ = removed
    }
}
