import Foundation

@testable import Sluice

/// Builds a store whose middleware `poller` starts a thread, when it is installed, that calls `dispatchFromPoller`
/// with its API, while the installation of the rest of the chain is slow: the outer middleware (installed after
/// `poller`, since the store installs the chain from the innermost middleware outwards) goes on installing until the
/// poller's thread waits for the pipeline, which the installing thread owns. Returns once `dispatchFromPoller`
/// returned, with the store and what each middleware saw, outer first.
func storeWithAPollerDuringSlowInstallation(
    _ dispatchFromPoller: @escaping @Sendable (MiddlewareAPI<TestState, TestAction>) -> Void
) -> (store: Store<TestState, TestAction>, seen: [String]) {
    let seen = Locked<[String]>([])
    let pollerDispatched = DispatchSemaphore(value: 0)
    let poller = Middleware<TestState, TestAction> { api in
        Thread {
            dispatchFromPoller(api)
            pollerDispatched.signal()
        }.start()
        return { next in
            { action in
                seen.append("poller saw \(action)")
                next(action)
            }
        }
    }
    let slowToInstall = Middleware<TestState, TestAction> { api in
        // No event announces the poller's thread joining the line: this thread (not one of the task pool) checks
        // every millisecond, for at most the hang guard.
        let deadline = ContinuousClock.now + hangGuard
        while api.core.lock.withLock({ api.core.waiters }) == 0 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        return { next in
            { action in
                seen.append("slow saw \(action)")
                next(action)
            }
        }
    }
    let store = Store(initialState: TestState(), reducer: testReducer, middleware: [slowToInstall, poller])
    pollerDispatched.wait()
    return (store, seen.current)
}
