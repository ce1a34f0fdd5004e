import Foundation
import Sluice
import Testing

/// How long a test waits for something that should happen at once before it fails: a hang guard, not a pause.
///
/// Waits end as soon as their condition holds, so this bound costs nothing when the code works; it only decides how
/// long a regression takes to fail. It leaves room for a slow, loaded 2-core machine, where the suites' tasks share
/// two threads of the cooperative pool with tests that keep them busy: in whole runs of the suite on a shared
/// machine (load 10 to 12) a task that was ready waited more than 30 s for a thread. Under the thread sanitizer,
/// which slows every thread several times over, the whole suite keeps both cores busy for three to five minutes
/// (the demo's thirty runs alone take that long), and a ready task waited more than 180 s for its turn while other
/// builds shared the machine: ten minutes there, still well inside CI's time for a real hang.
let hangGuard: Duration = isThreadSanitized ? .seconds(600) : .seconds(60)

/// The time limit of the suites whose tests wait on threads and tasks: three minutes, ten under the thread
/// sanitizer, for the reason ``hangGuard`` gives.
let suiteTimeLimit: TimeLimitTrait.Duration = isThreadSanitized ? .minutes(10) : .minutes(3)

/// ``hangGuard`` in seconds, for `DispatchSemaphore.wait(timeout:)` and `DispatchTime`.
let hangGuardSeconds = Double(hangGuard.components.seconds)

/// Whether this process runs under the thread sanitizer (its runtime is linked in).
let isThreadSanitized: Bool = {
    #if canImport(Darwin)
    dlsym(UnsafeMutableRawPointer(bitPattern: -2), "__tsan_init") != nil
    #else
    dlsym(nil, "__tsan_init") != nil
    #endif
}()

/// A value shared between threads in tests, guarded by Sluice's own lock; a test can wait for a condition on it.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value`, `waiters` and `nextWaiterKey` are guarded by `lock`.
    private struct Waiter {
        let condition: (Value) -> Bool
        let resume: () -> Void
    }

    private let lock = Lock()
    private var value: Value
    private var waiters: [UInt64: Waiter] = [:]
    private var nextWaiterKey: UInt64 = 0

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` on the value under the lock, then resumes the waits whose condition now holds.
    func withValue<T>(_ body: (inout Value) -> T) -> T {
        let (result, ready): (T, [Waiter]) = lock.withLock {
            let result = body(&value)
            if waiters.isEmpty { return (result, []) }
            let keys = waiters.filter { $0.value.condition(value) }.map(\.key)
            return (result, keys.compactMap { waiters.removeValue(forKey: $0) })
        }
        for waiter in ready {
            waiter.resume()
        }
        return result
    }

    var current: Value {
        lock.withLock { value }
    }

    /// Waits until `condition` holds for the value, or until `timeout` (a hang guard) passes; returns whether it
    /// holds. Every change through ``withValue(_:)`` checks the condition: nothing polls.
    ///
    /// A Dispatch timer ends the wait at the timeout, so the waiting task is resumed once, by whichever comes
    /// first: on a cooperative pool that a test under load keeps busy, each resumption can wait long for a thread.
    func wait(
        timeout: Duration = hangGuard,
        until condition: @escaping @Sendable (Value) -> Bool
    ) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            register(condition, timeout: timeout) { continuation.resume() }
        }
        return lock.withLock { condition(value) }
    }

    /// ``wait(timeout:until:)`` that blocks the calling thread; for a test that runs on a thread of its own, or
    /// that waits for work on a queue (not on the cooperative pool).
    func waitBlocking(
        timeout: Duration = hangGuard,
        until condition: @escaping @Sendable (Value) -> Bool
    ) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        register(condition, timeout: timeout) { semaphore.signal() }
        semaphore.wait()
        return lock.withLock { condition(value) }
    }

    /// Calls `resume` once: when `condition` holds (now or after a change), or at `timeout`, whichever removes the
    /// waiter from `waiters` first.
    private func register(
        _ condition: @escaping @Sendable (Value) -> Bool,
        timeout: Duration,
        resume: @escaping @Sendable () -> Void
    ) {
        let key: UInt64? = lock.withLock {
            if condition(value) { return nil }
            nextWaiterKey += 1
            waiters[nextWaiterKey] = Waiter(condition: condition, resume: resume)
            return nextWaiterKey
        }
        guard let key else { return resume() }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            let waiter = self.lock.withLock { self.waiters.removeValue(forKey: key) }
            waiter?.resume()
        }
    }
}

extension Locked where Value: RangeReplaceableCollection {
    func append(_ element: Value.Element) {
        withValue { $0.append(element) }
    }
}

extension Store {
    /// Waits until the store's state satisfies `condition`, or until `timeout` (a hang guard) passes; returns
    /// whether it does. A subscription checks each new state: nothing polls.
    func state(
        timeout: Duration = hangGuard,
        reaches condition: @escaping @Sendable (State) -> Bool
    ) async -> Bool {
        let reached = Locked(false)
        let subscription = subscribe { state in
            if condition(state) { reached.withValue { $0 = true } }
        }
        defer { subscription.cancel() }
        // Subscribed first, so a change between this read and the wait is seen by the subscription.
        if condition(state) { return true }
        return await reached.wait(timeout: timeout) { $0 }
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

/// A store whose first middleware logs the actions `include` picks, on a clock that does not move, with `after`
/// behind it; `sink` receives each line and the store, to read it or dispatch to it.
func storeWritingLines(
    include: @escaping @Sendable (TestAction) -> Bool = { _ in true },
    after: [Middleware<TestState, TestAction>] = [],
    sink: @escaping @Sendable (_ line: String, _ store: Store<TestState, TestAction>) -> Void
) -> Store<TestState, TestAction> {
    let reference = StoreReference()
    let store = Store<TestState, TestAction>(
        initialState: TestState(),
        reducer: testReducer,
        middleware: [
            Middlewares.logging(
                include: include,
                sink: { line in
                    if let store = reference.store {
                        sink(line, store)
                    }
                },
                clock: { 0 }
            )
        ] + after
    )
    reference.store = store
    return store
}

/// A weak reference to the store of ``storeWritingLines(include:after:sink:)``, which its own sink cannot capture.
private final class StoreReference: @unchecked Sendable {
    // @unchecked: written once, before the store's first dispatch; only read after that, by the sink, which a
    // dispatch calls (so after the write).
    weak var store: Store<TestState, TestAction>?
}
