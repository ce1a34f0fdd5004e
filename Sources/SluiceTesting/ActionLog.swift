internal import Sluice

/// The actions that a test store's store processed, recorded by a middleware placed first in the chain: the action
/// that `send` dispatched, and the queue of actions that the store's own work dispatched (received, not yet
/// asserted), each with the state before and after it.
///
/// The middleware sees an action before the rest of the chain and reads the state again when `next` returns: the
/// store processes one action at a time and queues the actions dispatched meanwhile (rules 1 and 2 of the dispatch
/// contract), so `after` is the state that this action produced.
///
/// A middleware may also call `next` after it returned (later, on another thread: the dispatch contract allows it).
/// The change that the action then makes happens after its entry was recorded, so the log keeps the state after the
/// last action it recorded, and an action that finds another state before it (or ``unseenChanges(current:)`` at a step
/// of the test) reveals the change as one that no recorded action made.
///
/// A test waits for a received action with ``waitForEntry(after:until:)``: a continuation that the next recorded
/// action resumes, raced against a timer to the deadline.
final class ActionLog<State: Equatable & Sendable, Action: Sendable>: Sendable {
    struct Entry: Sendable {
        let action: Action
        let before: State
        let after: State
    }

    private struct Log: Sendable {
        /// The thread that is sending an action through `send`, until the middleware saw that action.
        var sendingThread = ThreadID.none
        var sent: Entry?
        var received: [Entry] = []
        /// The action in the chain and the thread processing it, for naming the cause of a dependency read.
        var processing: (thread: ThreadID, action: Action)?
        /// The state after the last action recorded (at first, the initial state).
        var lastState: State
        /// Changes that no recorded action made: the state after the last action, and the state found later.
        var unseen: [(from: State, to: State)] = []
        /// How many actions were recorded.
        var recordedCount: UInt64 = 0
        /// Tasks waiting for an action to be recorded, by key; and the keys of those cancelled before they waited.
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var cancelledWaiters: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }

    private let log: Locked<Log>

    init(initialState: State) {
        log = Locked(Log(lastState: initialState))
    }

    /// The middleware that records; it goes first in the chain.
    var middleware: Middleware<State, Action> {
        Middleware { api in
            { next in
                { [self] action in
                    let isSent = claimSend()
                    let before = api.state
                    let outer = beginProcessing(action, before: before)
                    // The rest of the chain sees the store's dependencies as `StoreDependencies.current`, so that a
                    // synchronous middleware that reads a key there without a test value fails the test as a read
                    // through `api.dependencies` does. A live store leaves the caller's there (its dispatch binds
                    // nothing); see ServicesAndDependencies.md.
                    withStoreDependencies({ $0 = api.dependencies }) {
                        next(action)
                    }
                    let entry = Entry(action: action, before: before, after: api.state)
                    let waiters = log.withLock { log in
                        log.processing = outer
                        log.lastState = entry.after
                        log.recordedCount &+= 1
                        if isSent {
                            log.sent = entry
                        } else {
                            log.received.append(entry)
                        }
                        defer { log.waiters.removeAll() }
                        return log.waiters.values
                    }
                    for waiter in waiters {
                        waiter.resume()
                    }
                }
            }
        }
    }

    /// The changes that no recorded action made, found since the last call, with the store's state now (read by
    /// `current`) compared as well. The state now is compared only if no action was processed or recorded while it
    /// was read: the state of an action in progress is not recorded yet.
    func unseenChanges(current: () -> State) -> [(from: State, to: State)] {
        let countBefore = log.withLock { $0.recordedCount }
        let state = current()
        return log.withLock { log in
            if log.processing == nil, log.recordedCount == countBefore, state != log.lastState {
                log.unseen.append((log.lastState, state))
                log.lastState = state
            }
            defer { log.unseen.removeAll() }
            return log.unseen
        }
    }

    /// Marks the calling thread as sending: the next action that enters the chain on it is the sent one.
    func beginSend() {
        log.withLock {
            $0.sendingThread = .current
            $0.sent = nil
        }
    }

    /// The entry of the action sent since ``beginSend()``, or `nil` if the store did not process it.
    func endSend() -> Entry? {
        log.withLock { log in
            log.sendingThread = .none
            defer { log.sent = nil }
            return log.sent
        }
    }

    /// The action that the chain is processing on the calling thread, if any: the cause of a read that a
    /// synchronous middleware makes.
    var actionProcessedOnThisThread: Action? {
        log.withLock {
            guard let processing = $0.processing, processing.thread == .current else { return nil }
            return processing.action
        }
    }

    /// Marks `action` as processed on this thread, and keeps the change from the state after the last recorded
    /// action to `before`, which no recorded action made.
    private func beginProcessing(_ action: Action, before: State) -> (thread: ThreadID, action: Action)? {
        log.withLock { log in
            if before != log.lastState {
                log.unseen.append((log.lastState, before))
                log.lastState = before
            }
            defer { log.processing = (.current, action) }
            return log.processing
        }
    }

    private func claimSend() -> Bool {
        log.withLock {
            guard $0.sendingThread != .none, $0.sendingThread == .current else { return false }
            $0.sendingThread = .none
            return true
        }
    }

    /// The received actions not yet asserted, in order.
    var pending: [Entry] {
        log.withLock { $0.received }
    }

    /// The received actions not yet asserted, and how many actions were recorded (for ``waitForEntry(after:until:)``).
    var pendingAndCount: (pending: [Entry], count: UInt64) {
        log.withLock { ($0.received, $0.recordedCount) }
    }

    func removeFirst() -> Entry? {
        log.withLock { $0.received.isEmpty ? nil : $0.received.removeFirst() }
    }

    /// Removes the received actions up to and including the first one that matches; `nil` (and nothing removed)
    /// when none matches.
    func removeThroughFirst(where isMatching: (Action) -> Bool) -> (skipped: [Entry], match: Entry)? {
        log.withLock { log in
            guard let index = log.received.firstIndex(where: { isMatching($0.action) }) else { return nil }
            let skipped = Array(log.received[..<index])
            let match = log.received[index]
            log.received.removeFirst(index + 1)
            return (skipped, match)
        }
    }

    func removeAll() -> [Entry] {
        log.withLock { log in
            defer { log.received.removeAll() }
            return log.received
        }
    }

    /// Waits until more than `count` actions were recorded, or until `deadline`; returns whether they were.
    func waitForEntry(after count: UInt64, until deadline: ContinuousClock.Instant) async -> Bool {
        let recorded = await wait(until: deadline) { await self.waitForEntry(after: count) }
        return recorded || log.withLock { $0.recordedCount != count }
    }

    /// Returns once more than `count` actions were recorded, or the calling task is cancelled.
    private func waitForEntry(after count: UInt64) async {
        let key = log.withLock { log in
            log.nextWaiter &+= 1
            return log.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = log.withLock { log in
                    if log.recordedCount != count || log.cancelledWaiters.contains(key) { return true }
                    log.waiters[key] = continuation
                    return false
                }
                if resumeNow {
                    continuation.resume()
                }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, Never>? = log.withLock { log in
                if let continuation = log.waiters.removeValue(forKey: key) { return continuation }
                log.cancelledWaiters.insert(key)
                return nil
            }
            continuation?.resume()
        }
        log.withLock { _ = $0.cancelledWaiters.remove(key) }
    }
}
