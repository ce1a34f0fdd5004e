internal import Sluice

/// The actions that a test store's store processed, recorded by a middleware placed first in the chain: the action
/// that `send` dispatched, and the queue of actions that the store's own work dispatched (received, not yet
/// asserted), each with the state before and after it.
///
/// The middleware sees an action before the rest of the chain and reads the state again when `next` returns: the
/// store processes one action at a time and queues the actions dispatched meanwhile (rules 1 and 2 of the dispatch
/// contract), so `after` is the state that this action produced.
///
/// `@unchecked Sendable`: every mutable property is read and written with `lock` held.
final class ActionLog<State: Sendable, Action: Sendable>: @unchecked Sendable {
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

    init() {}

    /// The middleware that records; it goes first in the chain.
    var middleware: Middleware<State, Action> {
        Middleware { api in
            { next in
                { [self] action in
                    let isSent = claimSend()
                    let before = api.state
                    let outer = beginProcessing(action)
                    next(action)
                    endProcessing(restoring: outer)
                    let entry = Entry(action: action, before: before, after: api.state)
                    lock.withLock {
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

    private func beginProcessing(_ action: Action) -> (thread: ThreadID, action: Action)? {
        lock.withLock {
            defer { processing = (.current, action) }
            return processing
        }
    }

    private func endProcessing(restoring outer: (thread: ThreadID, action: Action)?) {
        lock.withLock { processing = outer }
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
