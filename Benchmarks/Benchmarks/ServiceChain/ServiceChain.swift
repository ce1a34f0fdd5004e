// The work an order service does per request (`ServiceModel`): `place` and its follow-up decision, on a store with
// the chain a service writes and on its floor, a `Mutex`-guarded struct with the same reducer and rules. Each
// iteration places 1,000 orders in all, split evenly between the threads or tasks, so the figures are per request,
// all threads together. Each service lives for the whole benchmark: its orders dictionary holds 10,000 orders from
// the warm-up on. Loads: 1, 2 and 4 threads calling `dispatch(_:reading:)` (`place`), and 32 tasks calling
// `await send(_:reading:)`; the floor's tasks call its `place`.

import Benchmark
import BenchmarkSupport
import ServiceModel
import Sluice

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 20,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 10_000
    )

    let services: [(name: String, make: @Sendable () -> any OrderService)] = [
        ("Sluice", { SluiceService() }),
        ("Mutex", { MutexService() }),
    ]
    for threads in [1, 2, 4] {
        for (backend, make) in services {
            Benchmark("\(threads)-thread\(threads == 1 ? "" : "s")-\(backend)", configuration: configuration) {
                benchmark,
                service in
                let perThread = benchmark.scaledIterations.count / threads
                runOnThreads(threads) { thread in
                    for index in 0..<perThread {
                        let (item, quantity) = request(thread &* perThread &+ index)
                        blackHole(service.place(item: item, quantity: quantity))
                    }
                }
            } setup: {
                make()
            }
        }
    }

    let tasks = 32
    Benchmark("32-tasks-Sluice-send", configuration: configuration) { benchmark, service in
        let perTask = benchmark.scaledIterations.count / tasks
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for index in 0..<perTask {
                        let (item, quantity) = request(task &* perTask &+ index)
                        blackHole(await service.send(item: item, quantity: quantity))
                    }
                }
            }
        }
    } setup: {
        SluiceService()
    }

    Benchmark("32-tasks-Mutex", configuration: configuration) { benchmark, service in
        let perTask = benchmark.scaledIterations.count / tasks
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for index in 0..<perTask {
                        let (item, quantity) = request(task &* perTask &+ index)
                        blackHole(service.place(item: item, quantity: quantity))
                    }
                }
            }
        }
    } setup: {
        MutexService()
    }
}
