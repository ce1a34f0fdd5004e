// One dispatch that notifies N subscribers of the whole state, or N `subscribe(to:)` subscribers whose value
// did not change (so their observer is not called).

import Benchmark
import BenchmarkSupport
import Sluice

/// A store and the subscriptions that keep its subscribers.
struct Subscribed {
    let store: Store<Counter, Int>
    let subscriptions: [Subscription]
}

/// A benchmark of one dispatch into a store with `count` subscribers made by `subscribe`.
func subscriberBenchmark(
    _ name: String,
    count: Int,
    subscribe: @escaping (Store<Counter, Int>) -> Subscription
) {
    Benchmark(name, configuration: .perDispatch) { benchmark, subscribed in
        let store = subscribed.store
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: { () -> Subscribed in
        let store = makeCounterStore()
        let subscriptions = (0..<count).map { _ in subscribe(store) }
        return Subscribed(store: store, subscriptions: subscriptions)
    }
}

let benchmarks: @Sendable () -> Void = {
    for count in [1, 10, 1_000] {
        subscriberBenchmark("\(count)-whole-state-subscriber\(count == 1 ? "" : "s")", count: count) { store in
            store.subscribe { state in blackHole(state.count) }
        }
    }
    for count in [10, 1_000] {
        subscriberBenchmark("\(count)-unchanged-key-path-subscribers", count: count) { store in
            store.subscribe(to: \.unchanged) { value in blackHole(value) }
        }
    }
}
