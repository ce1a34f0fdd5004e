// The store host: a dispatch to an active store by id (`host.dispatch(_:to:)`), against the same dispatch through a
// direct reference to a store made the same way (`store.dispatch`), with one store and cycling over 1,000 active
// stores (an array of references for the direct form). Both journal with `.none` durability to a storage that
// discards (HostSupport), so that the difference is the host's routing: its lock, the lookup of the id and the mark
// of use. The activation and the million-id run are timed by the `HostRun` executable (see README.md).

import Benchmark
import BenchmarkSupport
import HostSupport
import Sluice
import SluiceHost

let benchmarks: @Sendable () -> Void = {
    Benchmark("Dispatch-direct", configuration: .perDispatch) { benchmark, store in
        for _ in benchmark.scaledIterations {
            store.dispatch(1)
        }
    } setup: {
        try makeDirectStore()
    }

    Benchmark("Dispatch-by-id", configuration: .perDispatch) { benchmark, host in
        for _ in benchmark.scaledIterations {
            try host.dispatch(1, to: 7)
        }
    } setup: {
        try makeActiveHost(ids: [7])
    }

    Benchmark("Dispatch-direct-1000-stores", configuration: .perDispatch) { benchmark, stores in
        var index = 0
        for _ in benchmark.scaledIterations {
            stores[index].dispatch(1)
            index = index == 999 ? 0 : index + 1
        }
    } setup: {
        try (0..<1000).map { _ in try makeDirectStore() }
    }

    Benchmark("Dispatch-by-id-1000-stores", configuration: .perDispatch) { benchmark, host in
        var id = 0
        for _ in benchmark.scaledIterations {
            try host.dispatch(1, to: id)
            id = id == 999 ? 0 : id + 1
        }
    } setup: {
        try makeActiveHost(ids: 0..<1000)
    }
}
