// The side-effect modifiers on the dispatch path: what an action costs when a modifier lets it through (the effect
// runs for it), drops it (the effect does not run), or holds it (a pending trailing, debounced or delayed run). Each
// store has exactly one middleware; `Pass-through` (one pass-through middleware) is the floor of this area, measured
// in the same run, so each modifier's cost is its median minus that one (Benchmarks/README.md, "What each modifier
// costs").

import Benchmark
import BenchmarkSupport
import Sluice

/// The effect that the modifiers wrap: it only hands the action to `blackHole`.
let effect = SideEffect<Counter, Int> { action, _ in blackHole(action) }

/// A store whose only middleware is `middleware`, after `warmUp` actions (1 opens the throttle window, or arms the
/// debounce timer).
func makeStore(_ middleware: Middleware<Counter, Int>, warmUp: Int = 0) -> Store<Counter, Int> {
    let store = Store(initialState: Counter(), reducer: counterReducer, middleware: [middleware])
    for _ in 0..<warmUp {
        store.dispatch(1)
    }
    return store
}

/// The key of the per-key benchmarks' actions: the action itself, among `keys` keys.
func key(among keys: Int) -> @Sendable (Int) -> Int? {
    { $0 % keys }
}

/// A store whose only middleware is `middleware`, after one action of each of `keys` keys (which opens each key's
/// throttle window, or arms its debounce timer).
func makeKeyedStore(_ middleware: Middleware<Counter, Int>, keys: Int) -> Store<Counter, Int> {
    let store = Store(initialState: Counter(), reducer: counterReducer, middleware: [middleware])
    for key in 0..<keys {
        store.dispatch(key)
    }
    return store
}

let benchmarks: @Sendable () -> Void = {
    func dispatches(_ name: String, _ makeStore: @escaping () -> Store<Counter, Int>) {
        Benchmark(name, configuration: .perDispatch) { benchmark, store in
            for _ in benchmark.scaledIterations {
                store.dispatch(1)
            }
        } setup: {
            makeStore()
        }
    }

    /// Dispatches the actions 0, 1, 2, …: with a key of `action % keys`, each key in turn.
    func dispatchesCycling(_ name: String, _ makeStore: @escaping () -> Store<Counter, Int>) {
        Benchmark(name, configuration: .perDispatch) { benchmark, store in
            var action = 0
            for _ in benchmark.scaledIterations {
                store.dispatch(action)
                action &+= 1
            }
        } setup: {
            makeStore()
        }
    }

    // The floor: one middleware that passes every action on.
    dispatches("Pass-through") {
        makeStore(passThrough)
    }
    // `filter` on a side effect: every action here is rejected, so the effect never runs.
    dispatches("Skipped-by-filter") {
        makeStore(Middleware(Middlewares.filter({ $0 < 0 }, effect)))
    }
    // `filter` on a middleware: rejected actions go straight to `next`.
    dispatches("Skipped-by-filter-middleware") {
        makeStore(Middlewares.filter({ $0 < 0 }, passThrough))
    }
    // `throttle` with an hour-long window that the first action opened: every later action is dropped.
    dispatches("Dropped-by-throttle") {
        makeStore(Middleware(Middlewares.throttle(.seconds(3_600), effect)), warmUp: 1)
    }
    // `debounce` with an hour of quiet time: every action restarts it (the timer armed by the first stays).
    dispatches("Restarted-debounce") {
        makeStore(Middleware(Middlewares.debounce(.seconds(3_600), effect)), warmUp: 1)
    }
    // A side effect lifted into the chain, which runs for every action.
    dispatches("Side-effect-runs") {
        makeStore(Middleware(effect))
    }
    // `filter` on a side effect and on a middleware that accept every action.
    dispatches("Let-through-by-filter") {
        makeStore(Middleware(Middlewares.filter({ $0 > 0 }, effect)))
    }
    dispatches("Let-through-by-filter-middleware") {
        makeStore(Middlewares.filter({ $0 > 0 }, passThrough))
    }
    // `throttle` with a 1 ns window, which has always ended when the next action comes: every action runs at once,
    // on the throttle's queue (the default), or inside `dispatch`.
    dispatches("Let-through-by-throttle") {
        makeStore(Middleware(Middlewares.throttle(.nanoseconds(1), effect)))
    }
    dispatches("Let-through-by-throttle-in-dispatch") {
        makeStore(Middleware(Middlewares.throttle(.nanoseconds(1), runs: .inDispatch, effect)))
    }
    // `throttle(latest: true)` with an hour-long window: every action replaces the pending trailing run.
    dispatches("Held-by-throttle-latest") {
        makeStore(Middleware(Middlewares.throttle(.seconds(3_600), latest: true, effect)), warmUp: 1)
    }
    // `delay` of an hour: every action is queued (the dispatching thread's part of a delayed run).
    dispatches("Held-by-delay") {
        makeStore(Middleware(Middlewares.delay(.seconds(3_600), effect)))
    }
    // `takeLatest`: every action supersedes the previous run and runs the effect.
    dispatches("Let-through-by-takeLatest") {
        makeStore(Middleware(Middlewares.takeLatest(effect)))
    }
    // `takeLatest` inside a filter that rejects every action: nothing is superseded.
    dispatches("Dropped-by-filtered-takeLatest") {
        makeStore(Middleware(Middlewares.filter({ $0 < 0 }, Middlewares.takeLatest(effect))))
    }
    // `takeLeading` of a synchronous effect: no run is in progress when an action comes, so every action runs.
    dispatches("Let-through-by-takeLeading") {
        makeStore(Middleware(Middlewares.takeLeading(effect)))
    }
    // `takeLeading` whose first run never ends (its task waits an hour): every later action is dropped.
    dispatches("Dropped-by-takeLeading") {
        makeStore(
            Middleware(
                Middlewares.takeLeading(
                    SideEffect<Counter, Int> { _, _ async in try? await Task.sleep(for: .seconds(3_600)) }
                )
            ),
            warmUp: 1
        )
    }

    // The same modifiers per key (`by:`), beside their store-wide forms above: with one key (every action has the
    // key 0: the price of keying alone), and with 1,000 keys that the actions visit in turn (each key's window
    // open, each key's debounce timer armed, …). The store-wide form of each, fed the same cycling actions, is
    // measured in the same run for the ratio (Benchmarks/README.md, "Modifiers per key").
    let oneKey: @Sendable (Int) -> Int? = { _ in 0 }
    dispatchesCycling("Dropped-by-throttle-cycling") {
        makeKeyedStore(Middleware(Middlewares.throttle(.seconds(3_600), effect)), keys: 1)
    }
    dispatchesCycling("Dropped-by-throttle-per-key") {
        makeKeyedStore(Middleware(Middlewares.throttle(.seconds(3_600), by: oneKey, effect)), keys: 1)
    }
    dispatchesCycling("Dropped-by-throttle-1000-keys") {
        makeKeyedStore(Middleware(Middlewares.throttle(.seconds(3_600), by: key(among: 1_000), effect)), keys: 1_000)
    }
    dispatchesCycling("Held-by-throttle-latest-cycling") {
        makeKeyedStore(Middleware(Middlewares.throttle(.seconds(3_600), trailing: true, effect)), keys: 1)
    }
    dispatchesCycling("Held-by-throttle-latest-per-key") {
        makeKeyedStore(Middleware(Middlewares.throttle(.seconds(3_600), trailing: true, by: oneKey, effect)), keys: 1)
    }
    dispatchesCycling("Held-by-throttle-latest-1000-keys") {
        makeKeyedStore(
            Middleware(Middlewares.throttle(.seconds(3_600), trailing: true, by: key(among: 1_000), effect)),
            keys: 1_000
        )
    }
    dispatchesCycling("Restarted-debounce-cycling") {
        makeKeyedStore(Middleware(Middlewares.debounce(.seconds(3_600), effect)), keys: 1)
    }
    dispatchesCycling("Restarted-debounce-per-key") {
        makeKeyedStore(Middleware(Middlewares.debounce(.seconds(3_600), by: oneKey, effect)), keys: 1)
    }
    dispatchesCycling("Restarted-debounce-1000-keys") {
        makeKeyedStore(Middleware(Middlewares.debounce(.seconds(3_600), by: key(among: 1_000), effect)), keys: 1_000)
    }
    dispatchesCycling("Held-by-delay-cycling") {
        makeKeyedStore(Middleware(Middlewares.delay(.seconds(3_600), effect)), keys: 1)
    }
    dispatchesCycling("Held-by-delay-per-key") {
        makeKeyedStore(Middleware(Middlewares.delay(.seconds(3_600), by: oneKey, effect)), keys: 1)
    }
    dispatchesCycling("Held-by-delay-1000-keys") {
        makeKeyedStore(Middleware(Middlewares.delay(.seconds(3_600), by: key(among: 1_000), effect)), keys: 1_000)
    }
    dispatchesCycling("Let-through-by-throttle-cycling") {
        makeKeyedStore(Middleware(Middlewares.throttle(.nanoseconds(1), effect)), keys: 1)
    }
    dispatchesCycling("Let-through-by-throttle-per-key") {
        makeKeyedStore(Middleware(Middlewares.throttle(.nanoseconds(1), by: oneKey, effect)), keys: 1)
    }
    dispatchesCycling("Let-through-by-throttle-1000-keys") {
        makeKeyedStore(Middleware(Middlewares.throttle(.nanoseconds(1), by: key(among: 1_000), effect)), keys: 1_000)
    }
    dispatchesCycling("Let-through-by-takeLatest-cycling") {
        makeKeyedStore(Middleware(Middlewares.takeLatest(effect)), keys: 1)
    }
    dispatchesCycling("Let-through-by-takeLatest-per-key") {
        makeKeyedStore(Middleware(Middlewares.takeLatest(by: oneKey, effect)), keys: 1)
    }
    dispatchesCycling("Let-through-by-takeLatest-1000-keys") {
        makeKeyedStore(Middleware(Middlewares.takeLatest(by: key(among: 1_000), effect)), keys: 1_000)
    }
    dispatchesCycling("Let-through-by-takeLeading-cycling") {
        makeKeyedStore(Middleware(Middlewares.takeLeading(effect)), keys: 1)
    }
    dispatchesCycling("Let-through-by-takeLeading-per-key") {
        makeKeyedStore(Middleware(Middlewares.takeLeading(by: oneKey, effect)), keys: 1)
    }
    dispatchesCycling("Let-through-by-takeLeading-1000-keys") {
        makeKeyedStore(Middleware(Middlewares.takeLeading(by: key(among: 1_000), effect)), keys: 1_000)
    }
    // `takeLeading` whose runs never end (each waits an hour): every later action of a key is dropped.
    let endless = SideEffect<Counter, Int> { _, _ async in try? await Task.sleep(for: .seconds(3_600)) }
    dispatchesCycling("Dropped-by-takeLeading-cycling") {
        makeKeyedStore(Middleware(Middlewares.takeLeading(endless)), keys: 1)
    }
    dispatchesCycling("Dropped-by-takeLeading-per-key") {
        makeKeyedStore(Middleware(Middlewares.takeLeading(by: oneKey, endless)), keys: 1)
    }
    dispatchesCycling("Dropped-by-takeLeading-1000-keys") {
        makeKeyedStore(Middleware(Middlewares.takeLeading(by: key(among: 1_000), endless)), keys: 1_000)
    }
}
