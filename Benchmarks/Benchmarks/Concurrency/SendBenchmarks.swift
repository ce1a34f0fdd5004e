// 64 tasks changing one counter at once on the cooperative pool: with `await store.send`, and, as the floor, with
// `Mutex.withLock` around the same reducer. Each iteration runs 64,000 changes in all (1,000 per task), so the
// figures are per change, all tasks together. `Blocked-threads` counts the waits that blocked a thread of the pool
// (`StoreStatistics.blockedWaits`): it must stay 0 for `send`.

import Benchmark
import BenchmarkSupport
import Sluice
import Synchronization

let tasks = 64
let changesPerTask = 1_000

let sendBenchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .custom("Blocked-threads", polarity: .prefersSmaller)],
        timeUnits: .nanoseconds,
        warmupIterations: 2,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000
    )

    Benchmark("64-tasks-send", configuration: configuration) { benchmark in
        let store = makeCounterStore()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<changesPerTask {
                        await store.send(1)
                    }
                }
            }
        }
        benchmark.measurement(.custom("Blocked-threads"), store.statistics.blockedWaits)
        blackHole(store.state.count)
    }

    Benchmark("64-tasks-send-1-middleware", configuration: configuration) { benchmark in
        let store = makeCounterStore(middlewareCount: 1)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<changesPerTask {
                        await store.send(1)
                    }
                }
            }
        }
        benchmark.measurement(.custom("Blocked-threads"), store.statistics.blockedWaits)
        blackHole(store.state.count)
    }

    Benchmark("64-tasks-Mutex.withLock", configuration: configuration) { benchmark in
        let reducer = counterReducer
        let box = MutexBox()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<changesPerTask {
                        box.mutex.withLock { state in
                            reducer.reduce(into: &state, 1)
                        }
                    }
                }
            }
        }
        benchmark.measurement(.custom("Blocked-threads"), 0)
        blackHole(box.mutex.withLock { $0.count })
    }
}

/// A `Mutex` that tasks can share (it is not copyable, so a closure cannot capture it by value).
final class MutexBox: Sendable {
    let mutex = Mutex(Counter())
}
