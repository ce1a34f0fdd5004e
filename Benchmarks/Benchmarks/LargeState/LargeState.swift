// Appending to an array of 1,000, 100,000 or 1,000,000 elements that lives in the state, with a reducer in the
// usual pure spelling (`var state = state; ...; return state`), directly and as one of 10 module reducers
// combined by key path. If the store or the combinators copied the state, the cost would grow with the array.
//
// Inserting into a 200,000-entry dictionary while something else holds on to the state or reads it (issue 12):
// nobody, another thread reading one entry with `read` (or with `state`, which copies), a keyed subscriber, a
// scope's keyed subscriber, and (for contrast) the whole-value subscribers that keep a second reference; and a
// borrowed read against the same read under a bare `pthread_mutex_t`.

import Benchmark
import BenchmarkSupport
import Foundation
import Sluice

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct ListState: Sendable {
    var items: [Int]
}

struct ModuleState: Sendable {
    var count = 0
}

/// Nine small modules and the list, each reduced by its own reducer through `withKey`.
struct AppState: Sendable {
    var module0 = ModuleState()
    var module1 = ModuleState()
    var module2 = ModuleState()
    var module3 = ModuleState()
    var module4 = ModuleState()
    var module5 = ModuleState()
    var module6 = ModuleState()
    var module7 = ModuleState()
    var module8 = ModuleState()
    var list: ListState
}

enum ListAction: Sendable {
    case append(Int)
    /// Removes elements from the end until `count` are left (not measured: keeps the size constant).
    case trim(count: Int)
    case bump(module: Int)
}

let listReducer = Reducer<ListState, ListAction> { state, action in
    var state = state
    switch action {
    case .append(let value):
        state.items.append(value)
    case .trim(let count):
        state.items.removeLast(state.items.count - count)
    case .bump:
        break
    }
    return state
}

func moduleReducer(_ index: Int) -> Reducer<ModuleState, ListAction> {
    Reducer { state, action in
        var state = state
        if case .bump(let module) = action, module == index {
            state.count += 1
        }
        return state
    }
}

let appReducer: Reducer<AppState, ListAction> = {
    let modules: [any WritableKeyPath<AppState, ModuleState> & Sendable] = [
        \.module0, \.module1, \.module2, \.module3, \.module4, \.module5, \.module6, \.module7, \.module8,
    ]
    let reducers = modules.enumerated().map { index, keyPath in withKey(keyPath, use: moduleReducer(index)) }
    return combineReducers(reducers + [withKey(\AppState.list, use: listReducer)])
}()

/// A list of `count` elements with room for the appends of one iteration, so that appending never reallocates.
func makeItems(_ count: Int, room: Int) -> [Int] {
    var items = [Int]()
    items.reserveCapacity(count + room)
    items.append(contentsOf: 0..<count)
    return items
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 1_000_000
    )
    let room = configuration.scalingFactor.rawValue

    for count in [1_000, 100_000, 1_000_000] {
        Benchmark("Append-to-\(count.abbreviated)", configuration: configuration) { benchmark, store in
            for index in benchmark.scaledIterations {
                store.dispatch(.append(index))
            }
            benchmark.stopMeasurement()
            store.dispatch(.trim(count: count))
        } setup: {
            Store<ListState, ListAction>(
                initialState: ListState(items: makeItems(count, room: room)),
                reducer: listReducer
            )
        }

        Benchmark("Append-to-\(count.abbreviated)-via-withKey", configuration: configuration) {
            benchmark,
            store in
            for index in benchmark.scaledIterations {
                store.dispatch(.append(index))
            }
            benchmark.stopMeasurement()
            store.dispatch(.trim(count: count))
        } setup: {
            Store<AppState, ListAction>(
                initialState: AppState(list: ListState(items: makeItems(count, room: room))),
                reducer: appReducer
            )
        }
    }

    catalogBenchmarks()
}

extension Int {
    /// `1000` as `1K`, `1000000` as `1M`: short names, since a benchmark's name becomes its thresholds file's name.
    var abbreviated: String {
        if self >= 1_000_000 && self % 1_000_000 == 0 { return "\(self / 1_000_000)M" }
        if self >= 1_000 && self % 1_000 == 0 { return "\(self / 1_000)K" }
        return "\(self)"
    }
}

// MARK: A 200,000-entry dictionary (issue 12)

struct Catalog: Sendable, Equatable {
    var byID: [Int: String]
    /// Bumped by every change of `byID`: a change key that is a stored property.
    var version = 0

    /// `entries` entries, with room for `room` more without growing.
    init(entries: Int, room: Int) {
        byID = Dictionary(minimumCapacity: entries + room)
        for id in 0..<entries {
            byID[id] = "item \(id)"
        }
    }
}

enum CatalogAction: Sendable {
    case insert(Int)
    /// Removes the entries from `id` on (not measured: keeps the size constant).
    case removeFrom(Int)
}

let catalogReducer = Reducer<Catalog, CatalogAction>(mutating: { state, action in
    switch action {
    case .insert(let id):
        state.byID[id] = "new"
        state.version &+= 1
    case .removeFrom(let first):
        var id = first
        while state.byID.removeValue(forKey: id) != nil {
            id += 1
        }
        state.version &+= 1
    }
})

let catalogEntries = 200_000

/// A thread that reads from a store in a loop while a benchmark runs: started by the setup, stopped by the teardown.
final class ReaderLoop: @unchecked Sendable {
    // @unchecked: `running` is guarded by `lock`; `stop()` waits for the thread to leave its loop (`stopped`).
    private let lock = NSLock()
    private var running = false
    private let stopped = DispatchSemaphore(value: 0)

    func start(_ read: @escaping @Sendable () -> Void) {
        lock.withLock { running = true }
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                for _ in 0..<64 { read() }
            }
            stopped.signal()
        }
        thread.start()
    }

    func stop() {
        let wasRunning = lock.withLock {
            defer { running = false }
            return running
        }
        if wasRunning {
            stopped.wait()
        }
    }
}

/// Inserts `count` new entries into a store of a 200,000-entry catalog, then removes them (not measured).
@inline(__always)
func insertAndTrim(_ benchmark: Benchmark, _ store: Store<Catalog, CatalogAction>) {
    for index in benchmark.scaledIterations {
        store.dispatch(.insert(catalogEntries + index))
    }
    benchmark.stopMeasurement()
    store.dispatch(.removeFrom(catalogEntries))
}

func catalogBenchmarks() {
    let configuration = Benchmark.Configuration.perDispatch
    // The forms that may copy the dictionary on each insert take milliseconds per dispatch: few iterations.
    let copying = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 1,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 10
    )
    let room = 2 * configuration.scalingFactor.rawValue
    func makeStore() -> Store<Catalog, CatalogAction> {
        Store(initialState: Catalog(entries: catalogEntries, room: room), reducer: catalogReducer)
    }

    Benchmark("Insert-200K", configuration: configuration) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        makeStore()
    }

    let reader = ReaderLoop()
    Benchmark("Insert-200K-read-loop", configuration: configuration) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        reader.start { blackHole(store.read { $0.byID[7] }) }
        return store
    } teardown: {
        reader.stop()
    }

    let apiReader = ReaderLoop()
    Benchmark("Insert-200K-api-read-loop", configuration: configuration) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        let api = store.run { $0 }
        apiReader.start { blackHole(api.read { $0.byID[7] }) }
        return store
    } teardown: {
        apiReader.stop()
    }

    let subscriptions = SubscriptionBox()
    // The fixed cost of one subscriber (it makes each dispatch take the pipeline), without any comparison.
    Benchmark("Insert-200K-subscriber", configuration: configuration) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        subscriptions.keep(store.subscribe { state in blackHole(state.byID.count) })
        return store
    } teardown: {
        subscriptions.cancelAll()
    }

    Benchmark("Insert-200K-keyed-subscriber", configuration: configuration) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        subscriptions.keep(store.subscribe(to: \.byID, by: \.count) { byID in blackHole(byID.count) })
        return store
    } teardown: {
        subscriptions.cancelAll()
    }

    Benchmark("Insert-200K-keyed-scope-subscriber", configuration: configuration) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        subscriptions.keep(store.scope(\.byID).subscribe(by: \.count) { byID in blackHole(byID.count) })
        return store
    } teardown: {
        subscriptions.cancelAll()
    }

    // The same with a change key that is a stored property (read at its offset, not through key path projection).
    Benchmark("Insert-200K-version-subscriber", configuration: configuration) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        subscriptions.keep(store.subscribe(to: \.self, by: \.version) { catalog in blackHole(catalog.byID.count) })
        return store
    } teardown: {
        subscriptions.cancelAll()
    }

    Benchmark("Insert-200K-version-scope-subscriber", configuration: configuration) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        subscriptions.keep(store.scope(\.self).subscribe(by: \.version) { catalog in blackHole(catalog.byID.count) })
        return store
    } teardown: {
        subscriptions.cancelAll()
    }

    let stateReader = ReaderLoop()
    Benchmark("Insert-200K-state-loop", configuration: copying) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        stateReader.start { blackHole(store.state.byID[7]) }
        return store
    } teardown: {
        stateReader.stop()
    }

    Benchmark("Insert-200K-value-subscriber", configuration: copying) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        subscriptions.keep(store.subscribe(to: \.byID) { byID in blackHole(byID.count) })
        return store
    } teardown: {
        subscriptions.cancelAll()
    }

    Benchmark("Insert-200K-value-scope-subscriber", configuration: copying) { benchmark, store in
        insertAndTrim(benchmark, store)
    } setup: {
        let store = makeStore()
        subscriptions.keep(store.scope(\.byID).subscribe { byID in blackHole(byID.count) })
        return store
    } teardown: {
        subscriptions.cancelAll()
    }

    // A borrowed read of one field against the same read under a bare `pthread_mutex_t`.
    Benchmark("Read-count", configuration: configuration) { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(store.read { $0.byID.count })
        }
    } setup: {
        makeStore()
    }

    Benchmark("Read-count-via-api", configuration: configuration) {
        (benchmark: Benchmark, api: MiddlewareAPI<Catalog, CatalogAction>) in
        for _ in benchmark.scaledIterations {
            blackHole(api.read { $0.byID.count })
        }
    } setup: {
        let store = makeStore()
        storesKeptAlive.keep(store)
        return store.run { $0 }
    } teardown: {
        storesKeptAlive.releaseAll()
    }

    Benchmark("Read-count-in-pthread_mutex_t", configuration: configuration) { benchmark, guarded in
        for _ in benchmark.scaledIterations {
            blackHole(guarded.read { $0.byID.count })
        }
    } setup: {
        MutexGuarded(Catalog(entries: catalogEntries, room: room))
    }
}

/// Keeps what a benchmark's setup made until its teardown.
final class SubscriptionBox: @unchecked Sendable {
    // @unchecked: `items` is guarded by `lock`.
    private let lock = NSLock()
    private var items: [AnyObject] = []

    func keep(_ item: AnyObject) {
        lock.withLock { items.append(item) }
    }

    func cancelAll() {
        let released = lock.withLock {
            defer { items = [] }
            return items
        }
        for case let subscription as Subscription in released {
            subscription.cancel()
        }
    }

    func releaseAll() {
        cancelAll()
    }
}

let storesKeptAlive = SubscriptionBox()

/// A value under a bare `pthread_mutex_t`: the floor of a thread-safe read.
final class MutexGuarded<Value>: @unchecked Sendable {
    // @unchecked: `value` is read only with `mutex` held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    func read<T>(_ body: (borrowing Value) -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(value)
    }
}
