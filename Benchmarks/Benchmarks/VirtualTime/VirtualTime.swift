// `SluiceTesting.TestScheduler` at scale: `run()` of 100,000 pending units of work, scheduled at 1,000 distinct
// deadlines (100 units each, so ties are the common case) in an order unrelated to their deadlines. Scheduling
// happens before the measurement starts; each iteration measures `run()` alone, which is O(n log n) on the
// scheduler's binary heap (it was a scan of everything pending per unit, about 2.5 s for 16,000 units).

import Benchmark
import Dispatch
import SluiceTesting

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.throughput, .wallClock],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(5),
        maxIterations: 50
    )

    Benchmark("Run-100K-pending", configuration: configuration) { benchmark in
        let scheduler = TestScheduler()
        let start = scheduler.now
        for index in 0..<100_000 {
            let deadline = (index &* 7_919) % 1_000
            _ = scheduler.schedule(after: start + .milliseconds(deadline)) { blackHole(index) }
        }
        benchmark.startMeasurement()
        scheduler.run()
        benchmark.stopMeasurement()
        precondition(scheduler.pendingWorkCount == 0)
    }
}
