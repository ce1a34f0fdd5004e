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
/// `@unchecked Sendable`: every mutable property is read and written with `lock` held.
final class ActionLog<State: Equatable & Sendable, Action: Sendable>: @unchecked Sendable {
    struct Entry: Sendable {
        let action: Action
        let before: State
        let after: State
    }

    private let lock = Lock()
    /// The thread that is sending an action through `send`, until the middleware saw that action.
    private var sendingThread = ThreadID.none
    private var sent: Entry?
    private var received: [Entry] = []
    /// The action in the chain and the thread processing it, for naming the cause of a dependency read.
    private var processing: (thread: ThreadID, action: Action)?
    /// The state after the last action recorded (at first, the initial state).
    private var lastState: State
    /// Changes that no recorded action made: the state after the last action, and the state found later.
    private var unseen: [(from: State, to: State)] = []
    /// How many actions were recorded.
    private var recordedCount: UInt64 = 0

    init(initialState: State) {
        lastState = initialState
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
                    lock.withLock {
                        processing = outer
                        lastState = entry.after
                        recordedCount &+= 1
                        if isSent {
                            sent = entry
                        } else {
                            received.append(entry)
                        }
                    }
                }
            }
        }
    }

    /// The changes that no recorded action made, found since the last call, with the store's state now (read by
    /// `current`) compared as well. The state now is compared only if no action was processed or recorded while it
    /// was read: the state of an action in progress is not recorded yet.
    func unseenChanges(current: () -> State) -> [(from: State, to: State)] {
        let countBefore = lock.withLock { recordedCount }
        let state = current()
        return lock.withLock {
            if processing == nil, recordedCount == countBefore, state != lastState {
                unseen.append((lastState, state))
                lastState = state
            }
            defer { unseen.removeAll() }
            return unseen
        }
    }

    /// Marks the calling thread as sending: the next action that enters the chain on it is the sent one.
    func beginSend() {
        lock.withLock {
            sendingThread = .current
            sent = nil
        }
    }

    /// The entry of the action sent since ``beginSend()``, or `nil` if the store did not process it.
    func endSend() -> Entry? {
        lock.withLock {
            sendingThread = .none
            defer { sent = nil }
            return sent
        }
    }

    /// The action that the chain is processing on the calling thread, if any: the cause of a read that a
    /// synchronous middleware makes.
    var actionProcessedOnThisThread: Action? {
        lock.withLock {
            guard let processing, processing.thread == .current else { return nil }
            return processing.action
        }
    }

    /// Marks `action` as processed on this thread, and keeps the change from the state after the last recorded
    /// action to `before`, which no recorded action made.
    private func beginProcessing(_ action: Action, before: State) -> (thread: ThreadID, action: Action)? {
        lock.withLock {
            if before != lastState {
                unseen.append((lastState, before))
                lastState = before
            }
            defer { processing = (.current, action) }
            return processing
        }
    }

    private func claimSend() -> Bool {
        lock.withLock {
            guard sendingThread != .none, sendingThread == .current else { return false }
            sendingThread = .none
            return true
        }
    }

    /// The received actions not yet asserted, in order.
    var pending: [Entry] {
        lock.withLock { received }
    }

    func removeFirst() -> Entry? {
        lock.withLock { received.isEmpty ? nil : received.removeFirst() }
    }

    /// Removes the received actions up to and including the first one that matches; `nil` (and nothing removed)
    /// when none matches.
    func removeThroughFirst(where isMatching: (Action) -> Bool) -> (skipped: [Entry], match: Entry)? {
        lock.withLock {
            guard let index = received.firstIndex(where: { isMatching($0.action) }) else { return nil }
            let skipped = Array(received[..<index])
            let match = received[index]
            received.removeFirst(index + 1)
            return (skipped, match)
        }
    }

    func removeAll() -> [Entry] {
        lock.withLock {
            defer { received.removeAll() }
            return received
        }
    }
}
