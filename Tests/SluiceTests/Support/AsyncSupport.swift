import Foundation
import Sluice

/// A one-shot latch for tasks: `wait()` suspends until `open()` was called (before or after).
final class AsyncGate: @unchecked Sendable {
    // @unchecked: `isOpen` and `waiters` are guarded by `lock`.
    private let lock = Lock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        let toResume: [CheckedContinuation<Void, Never>] = lock.withLock {
            isOpen = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in toResume {
            waiter.resume()
        }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = lock.withLock {
                if isOpen { return true }
                waiters.append(continuation)
                return false
            }
            if resumeNow {
                continuation.resume()
            }
        }
    }
}

/// Suspends until the current task is cancelled (returns at once if it already is). Waits for an event, not for time.
func waitUntilCancelled() async {
    let gate = AsyncGate()
    await withTaskCancellationHandler {
        await gate.wait()
    } onCancel: {
        gate.open()
    }
}

/// Runs `body` on a new thread and waits for it without blocking a thread of the task pool (which the tasks that
/// `body` waits for may need, and which the other suites' tasks need: two on two cores).
@discardableResult
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    let done = AsyncGate()
    let result = Locked<T?>(nil)
    let thread = Thread {
        let value = body()
        result.withValue { $0 = value }
        done.open()
    }
    thread.stackSize = 1 << 20
    thread.start()
    await done.wait()
    return result.current!
}
