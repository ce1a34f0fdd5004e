// One dispatch into a store with no subscribers, through 0, 1, 5 or 10 middleware that pass every action on
// (`next(action)`).

import Benchmark
import BenchmarkSupport
import Sluice

let benchmarks: @Sendable () -> Void = {
    for count in [0, 1, 5, 10] {
        Benchmark("\(count)-middleware", configuration: .perDispatch) { benchmark, store in
            for _ in benchmark.scaledIterations {
                store.dispatch(1)
            }
        } setup: {
            makeCounterStore(middlewareCount: count)
        }
    }
}
