// One dispatch into a store with no subscribers, through 0, 1, 5 or 10 middleware that pass every action on.

import Benchmark
import BenchmarkSupport
import Sluice

let benchmarks: @Sendable () -> Void = {
    for count in [0, 1, 5, 10] {
        let name = count == 0 ? "No middleware, no subscribers" : "\(count) pass-through middleware"
        Benchmark(name, configuration: .perDispatch) { benchmark, store in
            for _ in benchmark.scaledIterations {
                store.dispatch(1)
            }
        } setup: {
            makeCounterStore(middlewareCount: count)
        }
    }
}
