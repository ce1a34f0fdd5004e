// One dispatch into a store with no subscribers, through 0, 1, 5 or 10 middleware that pass every action on
// (`next(action)`). And one uncontended `await store.send` (0 and 1 middleware): its allocations must be 0. And
// the same dispatch through 0 or 1 middleware with a `StoreInstrumentation` hook that reads each measurement's
// duration (`instrumented-N-middleware`): the hook's cost is the difference to `N-middleware` in the same run.

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

    for count in [0, 1] {
        Benchmark("instrumented-\(count)-middleware", configuration: .perDispatch) { benchmark, store in
            for _ in benchmark.scaledIterations {
                store.dispatch(1)
            }
        } setup: {
            makeCounterStore(
                middlewareCount: count,
                instrumentation: StoreInstrumentation { measurement in blackHole(measurement.duration) }
            )
        }
    }

    for count in [0, 1] {
        Benchmark("send-\(count)-middleware", configuration: .perDispatch) { benchmark in
            let store = makeCounterStore(middlewareCount: count)
            await store.send(1)  // the first send may size the store's queues
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                await store.send(1)
            }
            benchmark.stopMeasurement()
            blackHole(store.state.count)
        }
    }
}
