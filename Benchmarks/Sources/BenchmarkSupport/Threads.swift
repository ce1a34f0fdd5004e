import Foundation

/// Runs `body` on `count` new threads that start together, and returns when all of them finished.
///
/// Starting a thread costs tens of microseconds; the benchmarks that use this run a million dispatches per
/// iteration so that it stays out of the figures.
public func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let ready = DispatchGroup()
    let done = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        ready.enter()
        done.enter()
        let thread = Thread {
            ready.leave()
            start.wait()
            body(index)
            done.leave()
        }
        thread.start()
    }
    ready.wait()
    for _ in 0..<count {
        start.signal()
    }
    done.wait()
}
