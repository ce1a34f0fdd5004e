import Benchmark
import Sluice

/// The state of the dispatch benchmarks: a counter that every action changes, and a value that none changes.
public struct Counter: Sendable {
    /// Incremented by every action.
    public var count = 0
    /// Never changed by the reducer: what the `subscribe(to:)` benchmarks observe.
    public var unchanged = 0

    /// Creates a counter at zero.
    public init() {}
}

/// The reducer of every dispatch benchmark and of the floors, in the usual pure spelling.
///
/// A global of this module, so the benchmark targets see an opaque closure, as a store does.
public let counterReducer = Reducer<Counter, Int> { state, action in
    var state = state
    state.count &+= action
    return state
}

/// A middleware that passes every action on unchanged.
public let passThrough = Middleware<Counter, Int> { _ in
    { next in
        { action in next(action) }
    }
}

/// A store of `Counter` with `middlewareCount` pass-through middleware.
public func makeCounterStore(
    middlewareCount: Int = 0,
    instrumentation: StoreInstrumentation<Int>? = nil
) -> Store<Counter, Int> {
    Store(
        initialState: Counter(),
        reducer: counterReducer,
        middleware: Array(repeating: passThrough, count: middlewareCount),
        instrumentation: instrumentation
    )
}

// Benchmark names have no spaces: benchmark 1.38.1 writes a thresholds file with `_` for each space of the name
// (`thresholds update`) but looks for it with the spaces (`thresholds check`), so a name with a space never
// finds its thresholds.

extension Benchmark.Configuration {
    /// Throughput, wall clock and heap allocations, per dispatch: each iteration runs 1,000 of them.
    public static var perDispatch: Benchmark.Configuration {
        .init(
            metrics: [.throughput, .wallClock, .mallocCountTotal],
            timeUnits: .nanoseconds,
            warmupIterations: 100,
            scalingFactor: .kilo,
            maxDuration: .seconds(1),
            maxIterations: 1_000_000
        )
    }
}
