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
@usableFromInline
package final class Cancellation: Sendable {
    private struct Flag {
        var isCancelled = false
        var handlers: [UInt64: @Sendable () -> Void] = [:]
        var nextKey: UInt64 = 0
        /// The key of this cancellation's handler in `parent`, while it follows the parent.
        var keyInParent: UInt64?
        /// Whether a handler was registered, so that this cancellation follows (or is starting to follow) its parent.
        var followsParent = false
        /// Set by ``detachFromParent()``: no handler in the parent from then on.
        var isDetached = false
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
    }

    /// Whether `cancel()` was called on this cancellation or one of its ancestors.
    @usableFromInline
    package var isCancelled: Bool {
        flag.withLock { $0.isCancelled } || (parent?.isCancelled ?? false)
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
            if flag.handlers.isEmpty {
                return ([], flag.keyInParent)  // a run that started nothing: no sorting of nothing
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
        if let parent, parent.isCancelled {
            // Cancelled with the parent already: as if it had followed the parent all along.
            cancel()
        }
        let (key, follow): (UInt64?, Bool) = flag.withLock { flag in
            guard !flag.isCancelled else { return (nil, false) }
            flag.nextKey &+= 1
            flag.handlers[flag.nextKey] = handler
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
        let cancelledMeanwhile: Bool = flag.withLock { flag in
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
        let key: UInt64? = flag.withLock { flag in
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
        flag.withLock { $0.handlers.count }
    }

    /// Forgets a handler that is no longer needed (its timer fired, its task finished).
    package func removeHandler(_ key: UInt64) {
        let removed = flag.withLock { $0.handlers.removeValue(forKey: key) }
        _ = removed
    }
}
