// The side-effect modifiers on the dispatch path: what an action costs when a modifier decides that the effect
// does not run (skipped by `filter`, dropped by `throttle`), when it only restarts a `debounce` timer, and when a
// lifted side effect runs. Each store has exactly one middleware, so compare with `DispatchPath:1-middleware` for
// the modifier's own cost, and with `DispatchPath:0-middleware` for the cost above a plain dispatch.

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
}
