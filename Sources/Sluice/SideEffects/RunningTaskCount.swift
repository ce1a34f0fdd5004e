/// How many tasks of asynchronous side effects a store is running: counted up before a task starts, down when its
/// work returns (cancelled or not).
///
/// Only tests read it (through `Store.runningSideEffectTaskCount`), to tell whether work is still in flight.
///
/// `@unchecked Sendable`: `count` is read and written with `lock` held.
final class RunningTaskCount: @unchecked Sendable {
    private let lock = Lock()
    private var count = 0

    init() {}

    func increment() {
        lock.withLock { count += 1 }
    }

    func decrement() {
        lock.withLock { count -= 1 }
    }

    var value: Int {
        lock.withLock { count }
    }
}

extension Store {
    /// The number of tasks of asynchronous side effects (``SideEffect/init(_:)-(_)`` with an `async` closure)
    /// whose work has not returned yet (for tests).
    package var runningSideEffectTaskCount: Int {
        core.sideEffectTasks.value
    }
}
