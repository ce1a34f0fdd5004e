// 1, 2 and 4 threads dispatching into one store at once (no middleware, no subscribers): each iteration runs a
// million dispatches in all, split evenly between the threads, so the figures are per dispatch, all threads
// together. Starting the threads is part of each iteration (tens of microseconds out of tens of milliseconds).
// `4-threads-1-middleware` does the same through one pass-through middleware (each dispatch takes the pipeline);
// `4-threads-pthread_mutex_t` is their floor: the same four threads calling the reducer between
// `pthread_mutex_lock` and `pthread_mutex_unlock` of one shared mutex, contended exactly as the store's lock is.

import Benchmark
import BenchmarkSupport
import Sluice

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 2,
        scalingFactor: .mega,
        maxDuration: .seconds(3),
        maxIterations: 1_000
    )

    for threads in [1, 2, 4] {
        Benchmark("\(threads)-thread\(threads == 1 ? "" : "s")", configuration: configuration) {
            benchmark,
            store in
            let perThread = benchmark.scaledIterations.count / threads
            runOnThreads(threads) { _ in
                for _ in 0..<perThread {
                    store.dispatch(1)
                }
            }
        } setup: {
            makeCounterStore()
        }
    }

    Benchmark("4-threads-1-middleware", configuration: configuration) { benchmark, store in
        let perThread = benchmark.scaledIterations.count / 4
        runOnThreads(4) { _ in
            for _ in 0..<perThread {
                store.dispatch(1)
            }
        }
    } setup: {
        makeCounterStore(middlewareCount: 1)
    }

    Benchmark("4-threads-pthread_mutex_t", configuration: configuration) { benchmark, guarded in
        let perThread = benchmark.scaledIterations.count / 4
        runOnThreads(4) { _ in
            let reducer = counterReducer
            for _ in 0..<perThread {
                pthread_mutex_lock(guarded.mutex)
                reducer.reduce(into: &guarded.state.pointee, 1)
                pthread_mutex_unlock(guarded.mutex)
            }
        }
        blackHole(guarded.state.pointee.count)
    } setup: {
        MutexGuardedCounter()
    }

    sendBenchmarks()
}

/// A counter behind a `pthread_mutex_t` that threads share: the floor of a contended dispatch.
final class MutexGuardedCounter: @unchecked Sendable {
    // @unchecked: `state` is read and written only between `pthread_mutex_lock(mutex)` and its unlock.
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    let state: UnsafeMutablePointer<Counter>

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        state = .allocate(capacity: 1)
        state.initialize(to: Counter())
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }
}
