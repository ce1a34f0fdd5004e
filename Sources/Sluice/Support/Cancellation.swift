/// A one-way cancellation flag with handlers, shared by a run of a side effect and everything it started.
///
/// `takeLatest` gives each run its own `Cancellation`; the run's ``MiddlewareAPI`` reports it through
/// `isCancelled` and drops its dispatches once it is cancelled, and the timers and tasks that the run started
/// register handlers here, so that superseding the run cancels them. A cancellation made with a parent is
/// cancelled with its parent.
///
@usableFromInline
package final class Cancellation: Sendable {
    private struct Flag {
        var isCancelled = false
        var handlers: [UInt64: @Sendable () -> Void] = [:]
        var nextKey: UInt64 = 0
        /// The key of this cancellation's handler in `parent`, while it follows the parent.
        var keyInParent: UInt64?
    }

    private let flag = Locked(Flag())
    private let parent: Cancellation?
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
            flag.withLock { $0.keyInParent = key }
        }
    }

    /// Whether `cancel()` was called on this cancellation or one of its ancestors.
    @usableFromInline
    package var isCancelled: Bool {
        flag.withLock { $0.isCancelled }
    }

    /// Cancels this cancellation and runs its handlers once, in registration order is not guaranteed.
    package func cancel() {
        let (toRun, parentKey): ([@Sendable () -> Void], UInt64?) = flag.withLock { flag in
            guard !flag.isCancelled else { return ([], nil) }
            flag.isCancelled = true
            defer {
                flag.handlers = [:]
                flag.keyInParent = nil
            }
            return (flag.handlers.sorted { $0.key < $1.key }.map(\.value), flag.keyInParent)
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
        let key: UInt64? = flag.withLock { flag in
            guard !flag.isCancelled else { return nil }
            flag.nextKey &+= 1
            flag.handlers[flag.nextKey] = handler
            return flag.nextKey
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
        let key: UInt64? = flag.withLock { flag in
            defer { flag.keyInParent = nil }
            return flag.keyInParent
        }
        if let key {
            parent?.removeHandler(key)
        }
    }

    /// The number of handlers waiting for the cancellation (for tests).
    package var handlerCount: Int {
        flag.withLock { $0.handlers.count }
    }

    /// Forgets a handler that is no longer needed (its timer fired, its task finished).
    package func removeHandler(_ key: UInt64) {
        let removed = flag.withLock { $0.handlers.removeValue(forKey: key) }
        _ = removed
    }
}
