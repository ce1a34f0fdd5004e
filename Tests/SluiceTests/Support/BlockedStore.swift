import Foundation
import Testing

@testable import Sluice

/// A store whose middleware blocks the thread that dispatches `.record("block")` until `unblock()`, so that other
/// dispatches and sends line up behind it.
final class BlockedStore: Sendable {
    let store: Store<TestState, TestAction>
    private let entered = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let blockerReturned = DispatchSemaphore(value: 0)

    init(
        middleware: Middleware<TestState, TestAction>? = nil,
        instrumentation: StoreInstrumentation<TestAction>? = nil
    ) {
        let entered = self.entered
        let release = self.release
        let blocker = Middleware<TestState, TestAction> { _ in
            { next in
                { action in
                    next(action)
                    if action == .record("block") {
                        entered.signal()
                        release.wait()
                    }
                }
            }
        }
        store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [middleware, blocker].compactMap(\.self),
            instrumentation: instrumentation
        )
    }

    var waiterCount: Int {
        store.core.lock.withLock { store.core.waiters }
    }

    /// Dispatches `.record("block")` on a new thread, and returns once that thread is blocked inside the work.
    func blockOnAnotherThread() {
        let store = self.store
        let blockerReturned = self.blockerReturned
        Thread {
            store.dispatch(.record("block"))
            blockerReturned.signal()
        }.start()
        entered.wait()
    }

    /// Waits until the dispatch that ``blockOnAnotherThread()`` made returned (after ``unblock()``), so the thread
    /// gave up the pipeline; `false` after the hang guard.
    func blockerReturns() async -> Bool {
        let blockerReturned = self.blockerReturned
        return await onThread { blockerReturned.wait(timeout: .now() + hangGuardSeconds) == .success }
    }

    func unblock() {
        release.signal()
    }

    /// Dispatches `.record(name)` on a new thread, and returns once it waits in line.
    func dispatchOnAnotherThreadAndWaitInLine(_ name: String) async throws {
        let store = self.store
        let before = waiterCount
        Thread { store.dispatch(.record(name)) }.start()
        try await poll("\(name) in line") { self.waiterCount == before + 1 }
    }

    /// Sends `.record(name)` from a new task, and returns the task once it waits in line.
    func sendInATaskAndWaitInLine(_ name: String) async throws -> Task<StoreTask, Never> {
        let store = self.store
        let before = waiterCount
        let task = Task { await store.send(.record(name)) }
        try await poll("\(name) in line") { self.waiterCount == before + 1 }
        return task
    }

    func waitUntilLogged(_ count: Int) async throws {
        guard await store.state(reaches: { $0.log.count == count }) else {
            throw Timeout(description: "timed out waiting for \(count) actions logged")
        }
    }
}

struct Timeout: Error, CustomStringConvertible {
    let description: String
}

/// Polls `condition` every millisecond until it holds, for at most ``hangGuard``, suspending (not blocking a thread
/// of the pool, which the tasks it waits for may need) in between.
///
/// Only for a thread or task joining the pipeline's line of waiters, which no event announces; it holds a moment
/// after the dispatch or send that the test just started.
func poll(_ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + hangGuard
    while !condition() {
        if ContinuousClock.now > deadline { throw Timeout(description: "timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(1))
    }
}
