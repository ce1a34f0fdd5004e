// The floors: what the reducer costs on its own, and with a lock around it. A dispatch is measured against these.

import Benchmark
import BenchmarkSupport
import Sluice
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let benchmarks: @Sendable () -> Void = {
    Benchmark("Reducer", configuration: .perDispatch) { benchmark in
        let reducer = counterReducer
        var state = Counter()
        for _ in benchmark.scaledIterations {
            reducer.reduce(into: &state, 1)
        }
        blackHole(state)
    }

    Benchmark("Reducer-in-pthread_mutex_t", configuration: .perDispatch) { benchmark, mutex in
        let reducer = counterReducer
        var state = Counter()
        for _ in benchmark.scaledIterations {
            pthread_mutex_lock(mutex)
            reducer.reduce(into: &state, 1)
            pthread_mutex_unlock(mutex)
        }
        blackHole(state)
    } setup: { () -> UnsafeMutablePointer<pthread_mutex_t> in
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }

    Benchmark("Reducer-in-Mutex", configuration: .perDispatch) { benchmark in
        let reducer = counterReducer
        let mutex = Mutex(Counter())
        for _ in benchmark.scaledIterations {
            mutex.withLock { state in
                reducer.reduce(into: &state, 1)
            }
        }
        blackHole(mutex.withLock { $0 })
    }
}
