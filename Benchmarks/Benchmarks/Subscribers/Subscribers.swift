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

let benchmarks: @Sendable () -> Void = {
    for count in [1, 10, 1_000] {
        Benchmark("\(count)-whole-state-subscriber\(count == 1 ? "" : "s")", configuration: .perDispatch) {
            benchmark,
            subscribed in
            let store = subscribed.store
            for _ in benchmark.scaledIterations {
                store.dispatch(1)
            }
        } setup: { () -> Subscribed in
            let store = makeCounterStore()
            let subscriptions = (0..<count).map { _ in
                store.subscribe { state in blackHole(state.count) }
            }
            return Subscribed(store: store, subscriptions: subscriptions)
        }
    }

    for count in [10, 1_000] {
        Benchmark("\(count)-unchanged-key-path-subscribers", configuration: .perDispatch) {
            benchmark,
            subscribed in
            let store = subscribed.store
            for _ in benchmark.scaledIterations {
                store.dispatch(1)
            }
        } setup: { () -> Subscribed in
            let store = makeCounterStore()
            let subscriptions = (0..<count).map { _ in
                store.subscribe(to: \.unchanged) { value in blackHole(value) }
            }
            return Subscribed(store: store, subscriptions: subscriptions)
        }
    }
}
