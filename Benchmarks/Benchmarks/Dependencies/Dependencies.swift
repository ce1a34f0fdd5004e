// Services for middleware and effects (`StoreDependencies`): what a store that has dependencies pays on the
// dispatch path when none is read (compare `1-middleware-with-dependencies` with `DispatchPath:1-middleware`), and
// what one read costs, through a `MiddlewareAPI` (a key the store set, and one it did not) and through the
// task-local `StoreDependencies.current` inside an effect.

import Benchmark
import BenchmarkSupport
import Sluice

/// A service the store sets.
enum ServiceKey: StoreDependencyKey {
    static let liveValue = 0
}

/// A service the store does not set: reads take the key's `liveValue`.
enum UnsetServiceKey: StoreDependencyKey {
    static let liveValue = 1
}

extension StoreDependencies {
    var service: Int {
        get { self[ServiceKey.self] }
        set { self[ServiceKey.self] = newValue }
    }
    var unsetService: Int {
        self[UnsetServiceKey.self]
    }
}

/// Dependencies as a service sets them: its own service and three built-in ones.
let dependencies = StoreDependencies {
    $0.makeID = .incrementing()
    $0.random = .seeded(1)
    $0.date = .live
    $0.service = 42
}

/// A store of `Counter` with one pass-through middleware and `dependencies`.
func makeStore() -> Store<Counter, Int> {
    Store(initialState: Counter(), reducer: counterReducer, middleware: [passThrough], dependencies: dependencies)
}

/// A middleware that reads the service for every action, then passes the action on.
let reading = Middleware<Counter, Int> { api in
    { next in
        { action in next(action &+ api.dependencies.service) }
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark("1-middleware-with-dependencies", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: {
        makeStore()
    }

    // The same store with a first middleware that reads the service for every action: minus
    // `1-middleware-with-dependencies`, what a read costs in a middleware.
    Benchmark("1-middleware-reading-a-dependency", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: {
        Store(initialState: Counter(), reducer: counterReducer, middleware: [reading], dependencies: dependencies)
    }

    // 1,000 reads per iteration, so the figures are per read. `identity` (an opaque call of about 1 ns) keeps the
    // optimizer from reading once for the whole loop: the container is immutable, so the read is loop-invariant.
    Benchmark("Read-set-key-through-API", configuration: .perDispatch) { benchmark, api in
        for _ in benchmark.scaledIterations {
            blackHole(identity(api).dependencies.service)
        }
    } setup: {
        makeStore().run { api in api }
    }

    Benchmark("Read-unset-key-through-API", configuration: .perDispatch) { benchmark, api in
        for _ in benchmark.scaledIterations {
            blackHole(identity(api).dependencies.unsetService)
        }
    } setup: {
        makeStore().run { api in api }
    }

    // `identity` alone, to subtract from the two above.
    Benchmark("Identity-of-an-API", configuration: .perDispatch) { benchmark, api in
        for _ in benchmark.scaledIterations {
            blackHole(identity(api))
        }
    } setup: {
        makeStore().run { api in api }
    }

    // Inside an effect (a `Task` that the store started and bound its dependencies to); one effect per 1,000 reads.
    Benchmark("Read-through-current-in-effect", configuration: .perDispatch) { benchmark, store in
        let iterations = benchmark.scaledIterations
        try await store.run { _ in
            for _ in iterations {
                blackHole(StoreDependencies.current.service)
            }
        }
    } setup: {
        makeStore()
    }
}
