// 1, 2 and 4 threads dispatching into one store at once (no middleware, no subscribers): each iteration runs a
// million dispatches in all, split evenly between the threads, so the figures are per dispatch, all threads
// together. Starting the threads is part of each iteration (tens of microseconds out of tens of milliseconds).

import Benchmark
import BenchmarkSupport
import Sluice

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

    sendBenchmarks()
}
