import Foundation
import Sluice

/// A value shared between threads in tests, guarded by Sluice's own lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withValue<T>(_ body: (inout Value) -> T) -> T {
        lock.withLock { body(&value) }
    }

    var current: Value {
        withValue { $0 }
    }
}

extension Locked where Value: RangeReplaceableCollection {
    func append(_ element: Value.Element) {
        withValue { $0.append(element) }
    }
}

/// Runs `body` on `count` new threads that start together, and returns when all of them finished.
///
/// Waits without holding a thread of the cooperative pool: on a loaded 2-core machine the threads can run for
/// seconds, and a test that blocked a pool thread meanwhile starved the other suites' tasks (a `takeLatest` lookup of
/// the demo test waited a minute for a pool thread on CI).
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await onThread { runOnThreadsBlocking(count, body) }
}

/// ``runOnThreads(_:_:)`` that blocks the calling thread; for code that already runs on a thread of its own.
func runOnThreadsBlocking(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
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
        thread.stackSize = 1 << 20
        thread.start()
    }
    ready.wait()
    for _ in 0..<count {
        start.signal()
    }
    done.wait()
}

/// A middleware that calls `body` for every action, then passes it on (unless `body` returns `false`).
func tap(
    _ body: @escaping @Sendable (TestAction, MiddlewareAPI<TestState, TestAction>) -> Bool
) -> Middleware<TestState, TestAction> {
    Middleware { api in
        { next in
            { action in
                if body(action, api) {
                    next(action)
                }
            }
        }
    }
}

/// A store held in a box, so a test can release it, and the `MiddlewareAPI` its one middleware received when the
/// store installed it.
func makeStoreAndAPI() -> (store: Locked<Store<TestState, TestAction>?>, api: MiddlewareAPI<TestState, TestAction>) {
    let saved = Locked<MiddlewareAPI<TestState, TestAction>?>(nil)
    let store = Store<TestState, TestAction>(
        initialState: TestState(),
        reducer: testReducer,
        middleware: [savingAPI(into: saved)]
    )
    return (Locked(store), saved.current!)
}

/// A middleware that records "`name` in" before it passes an action on and "`name` out" after.
func recording(_ name: String, into events: Locked<[String]>) -> Middleware<TestState, TestAction> {
    Middleware { _ in
        { next in
            { action in
                events.append("\(name) in")
                next(action)
                events.append("\(name) out")
            }
        }
    }
}

/// A middleware that passes each action on, then calls `body` with it and the API (as a side effect would).
func afterNext(
    _ body: @escaping @Sendable (TestAction, MiddlewareAPI<TestState, TestAction>) -> Void
) -> Middleware<TestState, TestAction> {
    Middleware { api in
        { next in
            { action in
                next(action)
                body(action, api)
            }
        }
    }
}

/// A pass-through middleware that saves the `MiddlewareAPI` it receives at installation in `box`.
func savingAPI(into box: Locked<MiddlewareAPI<TestState, TestAction>?>) -> Middleware<TestState, TestAction> {
    Middleware { api in
        box.withValue { $0 = api }
        return { next in { action in next(action) } }
    }
}
