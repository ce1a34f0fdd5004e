// A small executable for instruction-level profiling of the dispatch path, without the benchmark harness:
//
//     swift build -c release --product DispatchProfile
//     valgrind --tool=callgrind .build/release/DispatchProfile middleware 1 100000
//
// Arguments: the scenario (`plain`, `middleware`, `instrumented` (`middleware` with a `StoreInstrumentation` hook that
// reads each measurement's duration), `send`, `send-reading`, `subscribers`, `keyed`, `modules`, `floor`, the modifiers
// `filter`, `throttle` (every action dropped), `throttle-runs` (every action runs the effect), `debounce`, and the
// others of the modifier case below, `effect`, `reading` (`dispatch(_:reading:)` through N middleware), `read` and `api-read` (borrowed reads, no
// dispatch), `dependencies` / `dependency-read`: a store with four dependencies set, of which none / one is read
// per action, `foreach` / `foreach-extractor` / `foreach-hand`: one entry of a dictionary of `size` entries updated
// through `Reducer.forEach` with a closure / with an `ActionExtractor` / a hand-written in-place reducer,
// `modules-closure` / `modules-extractor`: `size` modules combined through `withKey(_:action:use:)` with a closure /
// with an `ActionExtractor`, `journal` / `journal-no-writer`: a `.groupCommit` journal
// with and without its writer, `journal-paced` / `journal-paced-no-writer` / `paced`: a bid dispatched every `size` ns
// to a `.groupCommit` journal with / without its writer, and to a store without a journal (wall clock per dispatch), `reentrant` / `two-outer`: a follow-up action dispatched from a side effect against
// the same action dispatched from outside, `service` / `service-mutex`: the order service of the `ServiceChain` area on a store
// and on its `Mutex` floor, one thread (`service-sync`: the delivery dispatched at once, not from a task, so that no other thread takes the
// pipeline and callgrind counts alike in every run; `service-threads` / `service-mutex-threads`: `size` pthreads at once,
// `service-tasks` / `service-mutex-tasks`: `size` tasks at once, both for perf), `log-diff` / `log-diff-unchanged` / `log-line` / `log-diffing`: a logged
// action on a state of a `size`-entry dictionary with `diff: true` (one entry changed / none) / without a diff /
// with `diffing:` of the changed entry (`log-describable`: `log-line` for an action type that is `LogDescribable`;
// `log-off` / `log-hand`: its floors, the logging middleware leaving every action out / a line formatted by hand),
// `encode-bid` / `encode-add` (and their `JSONEncoder` floors `encode-bid-json` / `encode-add-json`): one action
// encoded by the journal's coder, and, for `perf stat` rather than callgrind (which runs one thread at a time),
// `tasks-send` / `tasks-mutex` (64 tasks at once) and `threads` (4 pthreads at once)), its size (middleware, subscriber or module count; ignored by the modifiers and the
// reads), and the
// number of dispatches (or reads). Compare two instruction totals (say, 100,000 and 200,000
// dispatches) to get the instructions of one dispatch; `callgrind_annotate` shows where they go. Run `foreach` and
// `foreach-hand` with `SWIFT_DETERMINISTIC_HASHING=1`: otherwise each process's dictionary gets its own hash seed and
// the updated key its own number of probes (Benchmarks/README.md, "Child reducers").

import Dispatch
import Foundation
import ServiceModel
import Sluice
import SluiceJournal
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Counter: Sendable {
    var count = 0
    var unchanged = 0
}

let reducer = Reducer<Counter, Int> { state, action in
    var state = state
    state.count &+= action
    return state
}

let passThrough = Middleware<Counter, Int> { _ in
    { next in
        { action in next(action) }
    }
}

enum ServiceKey: StoreDependencyKey {
    static let liveValue = 0
}

extension StoreDependencies {
    var service: Int {
        get { self[ServiceKey.self] }
        set { self[ServiceKey.self] = newValue }
    }
}

/// What a thread of the `threads` scenario runs.
final class ThreadWork: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// Starts a pthread (not a thread of the cooperative pool) that runs `work`. Not isolated to the main actor, as the
/// top-level code is: the thread's entry point is a C function that runs off the main thread.
nonisolated func startThread(_ work: ThreadWork) -> pthread_t {
    var handle = pthread_t()
    let context = Unmanaged.passRetained(work).toOpaque()
    let error = pthread_create(
        &handle,
        nil,
        { context in
            Unmanaged<ThreadWork>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        },
        context
    )
    precondition(error == 0, "pthread_create failed: \(error)")
    return handle
}

/// A state of orders by id, for `Reducer.forEach` (the `ChildReducers` benchmarks).
struct Shop: Sendable {
    var orders: [Int: Counter] = [:]
}

enum ShopAction: Sendable {
    case order(id: Int, Int)
}

let orderReducer = Reducer<Counter, Int>(mutating: { order, amount in
    order.count &+= amount
    order.unchanged &+= amount &* 3
})

/// The `action:` of `foreach-extractor`: the same match as `foreach`'s closure, as an `ActionExtractor` type.
struct OrderActions: ActionExtractor {
    func extract(from action: ShopAction) -> (Int, Int)? {
        switch action {
        case .order(let id, let amount): (id, amount)
        }
    }
}

/// A state of `Counter` modules, each reduced through `withKey`.
struct Modules: Sendable {
    var modules: [Counter] = []
    var first = Counter()
    var second = Counter()
    var third = Counter()
}

/// The action of `modules-closure` / `modules-extractor`: an amount for the module at an index (16 bytes, like
/// `ShopAction`).
enum ModuleAction: Sendable {
    case add(module: Int, amount: Int)
}

/// The amount of an action for the module at `index`, as an `ActionExtractor`.
struct ModuleAmount: ActionExtractor {
    let index: Int

    func extract(from action: ModuleAction) -> Int? {
        switch action {
        case .add(let module, let amount): module == index ? amount : nil
        }
    }
}

/// A Codable counter for the journal scenarios.
struct Tally: Codable, Sendable {
    var count = 0
}

/// The state and action of `journal-paced`: an auction house taking bids.
struct Auctions: Codable, Sendable {
    var count = 0
    var total = 0
}

/// The bid of `journal-paced`: ``Bid`` without its time, so that the figures of the scenario keep their payload.
struct PacedBid: Codable, Sendable {
    var auctionID: Int
    var bidder: String
    var amount: Int
    var currency: String
}

enum AuctionAction: Codable, Sendable {
    case bid(PacedBid)
}

/// The names in a directory (without `.` and `..`).
func listDirectory(_ path: String) throws -> [String] {
    guard let stream = opendir(path) else { return [] }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
        let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
            String(cString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// A `Mutex` that tasks can share (not copyable, so a closure cannot capture it by value).
final class MutexBox: Sendable {
    let mutex = Mutex(Counter())
}

/// The state of the `log-*` scenarios: a large dictionary and a counter beside it.
struct LoggedEntry: Sendable, Equatable {
    var id: Int
    var quantity: Int
}

struct LoggedState: Sendable, Equatable {
    var entries: [Int: LoggedEntry] = [:]
    var ticks = 0
}

enum LoggedAction: Sendable {
    case set(id: Int, quantity: Int)
    case tick
}

let loggedReducer = Reducer<LoggedState, LoggedAction>(mutating: { state, action in
    switch action {
    case .set(let id, let quantity): state.entries[id]?.quantity = quantity
    case .tick: state.ticks += 1
    }
})

/// A bid in an auction house, as the `Journal` area's: the shape of a service's action.
struct Bid: Codable, Sendable {
    var auctionID: Int
    var bidder: String
    var amount: Int
    var currency: String
    var placedAt: Date
}

/// The actions of the `encode-*` scenarios, as the `Journal` area's.
enum HouseAction: Codable, Sendable {
    case add(Int)
    case bid(Bid)
}

/// The `Journal` area's bid.
let sampleBid = HouseAction.bid(
    Bid(
        auctionID: 35,
        bidder: "Ada Lovelace",
        amount: 101_500,
        currency: "EUR",
        placedAt: Date(timeIntervalSinceReferenceDate: 786_000_000.25)
    )
)

/// `LoggedAction` describing itself for the logging middleware (`log-describable`).
enum SelfDescribedAction: Sendable, LogDescribable {
    case set(id: Int, quantity: Int)
    case tick

    func describe(into description: inout LogDescription) {
        switch self {
        case .set(let id, let quantity):
            description.enumCase("set")
            description.field("id", id)
            description.field("quantity", quantity)
        case .tick:
            description.enumCase("tick")
        }
    }
}

let selfDescribedReducer = Reducer<LoggedState, SelfDescribedAction>(mutating: { state, action in
    switch action {
    case .set(let id, let quantity): state.entries[id]?.quantity = quantity
    case .tick: state.ticks += 1
    }
})

/// Keeps the total length of the lines a logging sink receives, so that making them is not optimized away.
final class KeptLength: Sendable {
    let total = Mutex(0)

    func keep(_ line: String) {
        total.withLock { $0 += line.utf8.count }
    }
}

@inline(never)
func consume<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

let arguments = CommandLine.arguments
let scenario = arguments.count > 1 ? arguments[1] : "plain"
let size = arguments.count > 2 ? Int(arguments[2]) ?? 0 : 0
let count = arguments.count > 3 ? Int(arguments[3]) ?? 100_000 : 100_000

switch scenario {
case "floor":
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
    var state = Counter()
    for _ in 0..<count {
        pthread_mutex_lock(mutex)
        reducer.reduce(into: &state, 1)
        pthread_mutex_unlock(mutex)
    }
    consume(state)
case "plain", "middleware":
    let store = Store(
        initialState: Counter(),
        reducer: reducer,
        middleware: Array(repeating: passThrough, count: scenario == "plain" ? 0 : size)
    )
    for _ in 0..<count {
        store.dispatch(1)
    }
    consume(store.state)
case "instrumented":
    let store = Store(
        initialState: Counter(),
        reducer: reducer,
        middleware: Array(repeating: passThrough, count: size),
        instrumentation: StoreInstrumentation { measurement in consume(measurement.duration) }
    )
    for _ in 0..<count {
        store.dispatch(1)
    }
    consume(store.state)
case "journal", "journal-no-writer":
    // A `.groupCommit` store made by `Store(recoveringFrom:)` (the journal records in the reducer). `journal`: with
    // its writer running, and closed at the end, so the total holds the writer's work for every action (encoding,
    // checksums, one write and one fdatasync per batch). `journal-no-writer`: the dispatch side alone; at most
    // 65,536 dispatches (then a dispatch waits for the writer).
    let directory = "/tmp/sluice-dispatch-profile-\(getpid())"
    let journal = try Journal(directory: directory)
    let store = try Store<Tally, Int>(
        recoveringFrom: journal,
        durability: .groupCommit(interval: .milliseconds(1)),
        initialState: Tally(),
        reducer: Reducer(mutating: { state, action in state.count &+= action })
    )
    let writer = scenario == "journal" ? Task.detached { try await journal.run() } : nil
    for _ in 0..<count {
        store.dispatch(1)
    }
    writer?.cancel()
    journal.close()
    consume(store.state)
    for name in (try? listDirectory(directory)) ?? [] {
        unlink(directory + "/" + name)
    }
    rmdir(directory)
case "journal-paced", "journal-paced-no-writer", "paced":
    // One producer dispatching a bid to a `.groupCommit(interval: .milliseconds(1))` store, with `size` ns of other
    // work (a spin) between dispatches, as a service does: the time of each `dispatch` call, with the writer running
    // (`journal-paced`), without it (`journal-paced-no-writer`, at most 65,536 dispatches) and without a journal
    // (`paced`). Wall clock, for `perf`; prints the mean, p50 and p99 of a dispatch.
    let directory = "/tmp/sluice-dispatch-profile-\(getpid())"
    let journal = try Journal(directory: directory)
    let reduce = Reducer<Auctions, AuctionAction>(mutating: { state, action in
        switch action {
        case .bid(let bid): state.total &+= bid.amount
        }
        state.count &+= 1
    })
    let store =
        scenario == "paced"
        ? Store(initialState: Auctions(), reducer: reduce)
        : try Store<Auctions, AuctionAction>(
            recoveringFrom: journal,
            durability: .groupCommit(interval: .milliseconds(1)),
            initialState: Auctions(),
            reducer: reduce
        )
    let writer = scenario == "journal-paced" ? Task.detached { try await journal.run() } : nil
    var times = [UInt64](repeating: 0, count: count)
    for index in 0..<count {
        let spinUntil = DispatchTime.now().uptimeNanoseconds + UInt64(size)
        while DispatchTime.now().uptimeNanoseconds < spinUntil {}
        let bid = PacedBid(auctionID: index % 100, bidder: "Ada Lovelace", amount: 101_500 + index, currency: "EUR")
        let start = DispatchTime.now().uptimeNanoseconds
        store.dispatch(.bid(bid))
        times[index] = DispatchTime.now().uptimeNanoseconds - start
    }
    writer?.cancel()
    journal.close()
    consume(store.state)
    let mean = Double(times.reduce(0, +)) / Double(count)
    times.sort()
    let stalls = times.filter { $0 > 10_000 }
    print(
        "\(scenario) \(size): mean \(Int(mean)) ns, p50 \(times[count / 2]) ns, p99 \(times[count * 99 / 100]) ns,",
        "p99.9 \(times[count * 999 / 1000]) ns, max \(times[count - 1]) ns;",
        "\(stalls.count) dispatches over 10 µs, \(stalls.reduce(0, +) / 1000) µs in all"
    )
    for name in (try? listDirectory(directory)) ?? [] {
        unlink(directory + "/" + name)
    }
    rmdir(directory)
case "reading":
    // `dispatch(_:reading:)` through `size` pass-through middleware.
    let store = Store(initialState: Counter(), reducer: reducer, middleware: Array(repeating: passThrough, count: size))
    var total = 0
    for _ in 0..<count {
        total &+= store.dispatch(1, reading: { $0.count }) ?? 0
    }
    consume(total)
case "read", "api-read":
    // `count` borrowed reads: `Store.read` (tracked by Observation) or `MiddlewareAPI.read` (not tracked).
    let store = Store(initialState: Counter(), reducer: reducer)
    var total = 0
    if scenario == "read" {
        for _ in 0..<count {
            total &+= store.read { $0.count }
        }
    } else {
        store.run { api in
            for _ in 0..<count {
                total &+= api.read { $0.count }
            }
        }
    }
    consume(total)
case "send", "send-reading":
    // `await store.send(1)` (`send-reading`: `await store.send(1, reading: { $0.count })`) through `size` pass-through
    // middleware, uncontended, from a task (not from the main code: an `await` here would make all of this file
    // async, and the other scenarios dearer).
    let store = Store(
        initialState: Counter(),
        reducer: reducer,
        middleware: Array(repeating: passThrough, count: size)
    )
    let done = DispatchSemaphore(value: 0)
    let reads = scenario == "send-reading"
    Task.detached {
        for _ in 0..<count {
            if reads {
                consume(await store.send(1, reading: { $0.count }))
            } else {
                await store.send(1)
            }
        }
        done.signal()
    }
    done.wait()
    consume(store.state)
case "tasks-send", "tasks-mutex":
    // 64 tasks of one task group on the cooperative pool, `count / 64` changes each, all at once: `await store.send(1)`
    // through `size` pass-through middleware (`tasks-send`), or the reducer inside `Mutex.withLock` (`tasks-mutex`,
    // the floor of the `Concurrency` area's `64-tasks-*` benchmarks). Prints the wall-clock time per change, for
    // `perf stat` (cycles, context switches, futex calls) rather than callgrind, which serializes the threads.
    let tasks = 64
    let perTask = max(count / tasks, 1)
    let store = Store(initialState: Counter(), reducer: reducer, middleware: Array(repeating: passThrough, count: size))
    let box = MutexBox()
    let done = DispatchSemaphore(value: 0)
    let start = DispatchTime.now().uptimeNanoseconds
    Task.detached {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                if scenario == "tasks-send" {
                    group.addTask {
                        for _ in 0..<perTask {
                            await store.send(1)
                        }
                    }
                } else {
                    group.addTask {
                        for _ in 0..<perTask {
                            box.mutex.withLock { state in reducer.reduce(into: &state, 1) }
                        }
                    }
                }
            }
        }
        done.signal()
    }
    done.wait()
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    print("\(scenario): \(Double(elapsed) / Double(tasks * perTask)) ns per change")
    consume(store.state)
    consume(box.mutex.withLock { $0.count })
case "threads":
    // 4 threads (pthreads, not the cooperative pool) dispatching `count / 4` actions each into one store through
    // `size` pass-through middleware, all at once (the `Concurrency` area's `4-threads*` benchmarks). Prints the
    // wall-clock time per dispatch and how many dispatches waited, for `perf stat` (context switches, futex calls).
    let threads = 4
    let perThread = max(count / threads, 1)
    let store = Store(initialState: Counter(), reducer: reducer, middleware: Array(repeating: passThrough, count: size))
    let work = ThreadWork {
        for _ in 0..<perThread {
            store.dispatch(1)
        }
    }
    let start = DispatchTime.now().uptimeNanoseconds
    let handles = (0..<threads).map { _ in startThread(work) }
    for handle in handles {
        pthread_join(handle, nil)
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    let statistics = store.statistics
    print(
        "threads: \(Double(elapsed) / Double(threads * perThread)) ns per dispatch, \(statistics.waits) waits, "
            + "\(statistics.blockedWaits) blocked"
    )
    consume(store.state)
case "subscribers", "keyed":
    let store = Store(initialState: Counter(), reducer: reducer)
    let subscriptions = (0..<size).map { _ in
        scenario == "keyed"
            ? store.subscribe(to: \.unchanged) { value in consume(value) }
            : store.subscribe { state in consume(state.count) }
    }
    for _ in 0..<count {
        store.dispatch(1)
    }
    consume(subscriptions)
case "modules":
    // `size` reducers, each `withKey` on one of three stored properties, combined.
    let keyPaths: [any WritableKeyPath<Modules, Counter> & Sendable] = [\.first, \.second, \.third]
    let reducers = (0..<size).map { index in withKey(keyPaths[index % 3], use: reducer) }
    let store = Store<Modules, Int>(initialState: Modules(), reducer: combineReducers(reducers))
    for _ in 0..<count {
        store.dispatch(1)
    }
    consume(store.state)
case "modules-closure", "modules-extractor":
    // `size` reducers, each `withKey(_:action:use:)` on one of three stored properties, combined; every action is
    // for module 0, so each module extracts and all but one skip.
    let keyPaths: [any WritableKeyPath<Modules, Counter> & Sendable] = [\.first, \.second, \.third]
    let reducers: [Reducer<Modules, ModuleAction>] = (0..<size).map { index in
        if scenario == "modules-extractor" {
            return withKey(keyPaths[index % 3], action: ModuleAmount(index: index), use: reducer)
        }
        return withKey(
            keyPaths[index % 3],
            action: { action in
                switch action {
                case .add(let module, let amount): module == index ? amount : nil
                }
            },
            use: reducer
        )
    }
    let store = Store<Modules, ModuleAction>(initialState: Modules(), reducer: combineReducers(reducers))
    for _ in 0..<count {
        store.dispatch(.add(module: 0, amount: 1))
    }
    consume(store.state)
case "filter", "filter-through", "filter-middleware", "filter-middleware-through", "throttle", "throttle-runs",
    "throttle-runs-in-dispatch", "throttle-latest", "debounce", "delay", "takelatest", "takelatest-dropped",
    "takeleading", "takeleading-dropped", "throttle-per-key", "throttle-latest-per-key", "debounce-per-key",
    "delay-per-key", "takelatest-per-key", "takeleading-per-key",
    "effect":
    // One modifier around an empty effect (the `Modifiers` area; compare with `middleware 1`, one pass-through
    // middleware). Every action is let through (`-through`, `-runs`, `takelatest`, `takeleading`: the effect runs
    // for it) or dropped (`filter`, `filter-middleware`, `throttle`, `takelatest-dropped`: rejected by the filter
    // around it, `takeleading-dropped`: a run is in progress), or held (`throttle-latest`: it replaces the pending
    // trailing run; `debounce`: it supersedes the pending run; `delay`: it is queued for an hour, so the count has
    // the dispatching thread's part alone).
    let effect = SideEffect<Counter, Int> { action, _ in consume(action) }
    let oneKey: @Sendable (Int) -> Int? = { _ in 0 }
    let middleware: Middleware<Counter, Int>
    switch scenario {
    case "filter": middleware = Middleware(Middlewares.filter({ $0 < 0 }, effect))
    case "filter-through": middleware = Middleware(Middlewares.filter({ $0 > 0 }, effect))
    case "filter-middleware": middleware = Middlewares.filter({ $0 < 0 }, passThrough)
    case "filter-middleware-through": middleware = Middlewares.filter({ $0 > 0 }, passThrough)
    case "throttle": middleware = Middleware(Middlewares.throttle(.seconds(3_600), effect))
    // A 1 ns window has always ended when the next action comes: every action runs the effect at once.
    // (By default each run is handed to the throttle's queue, whose work callgrind counts too; `-in-dispatch`:
    // inside `dispatch`.)
    case "throttle-runs": middleware = Middleware(Middlewares.throttle(.nanoseconds(1), effect))
    case "throttle-runs-in-dispatch":
        middleware = Middleware(Middlewares.throttle(.nanoseconds(1), runs: .inDispatch, effect))
    case "throttle-latest": middleware = Middleware(Middlewares.throttle(.seconds(3_600), latest: true, effect))
    case "debounce": middleware = Middleware(Middlewares.debounce(.seconds(3_600), effect))
    case "delay": middleware = Middleware(Middlewares.delay(.seconds(3_600), effect))
    case "takelatest": middleware = Middleware(Middlewares.takeLatest(effect))
    case "takelatest-dropped": middleware = Middleware(Middlewares.filter({ $0 < 0 }, Middlewares.takeLatest(effect)))
    case "takeleading": middleware = Middleware(Middlewares.takeLeading(effect))
    case "takeleading-dropped":
        // The first action starts a run that never ends (its task waits an hour); every later one is dropped.
        middleware = Middleware(
            Middlewares.takeLeading(
                SideEffect<Counter, Int> { _, _ async in try? await Task.sleep(for: .seconds(3_600)) }
            )
        )
    // The same modifiers per key (`by:`), every action with the key 0: the price of keying alone (Benchmarks/README.md,
    // "Modifiers per key").
    case "throttle-per-key": middleware = Middleware(Middlewares.throttle(.seconds(3_600), by: oneKey, effect))
    case "throttle-latest-per-key":
        middleware = Middleware(Middlewares.throttle(.seconds(3_600), trailing: true, by: oneKey, effect))
    case "debounce-per-key": middleware = Middleware(Middlewares.debounce(.seconds(3_600), by: oneKey, effect))
    case "delay-per-key": middleware = Middleware(Middlewares.delay(.seconds(3_600), by: oneKey, effect))
    case "takelatest-per-key": middleware = Middleware(Middlewares.takeLatest(by: oneKey, effect))
    case "takeleading-per-key": middleware = Middleware(Middlewares.takeLeading(by: oneKey, effect))
    default: middleware = Middleware(effect)
    }
    let store = Store(initialState: Counter(), reducer: reducer, middleware: [middleware])
    for _ in 0..<count {
        store.dispatch(1)
    }
    consume(store.state)
case "start", "send-async":
    // The work a service starts: `start`, a side effect that starts an effect (`api.start`) for each dispatched
    // action; `send-async`, an `async` side effect for each sent action, awaited through its `StoreTask`. Every task
    // is waited for, so the count covers starting, running and ending them.
    let done = DispatchSemaphore(value: 0)
    if scenario == "start" {
        let starts = SideEffect<Counter, Int> { action, api in api.start { _ in consume(action) } }
        let store = Store(initialState: Counter(), reducer: reducer, middleware: [Middleware(starts)])
        for _ in 0..<count {
            store.dispatch(1)
        }
        Task.detached {
            _ = await store.shutdown(timeout: .seconds(3_600))
            done.signal()
        }
        done.wait()
        consume(store.state)
    } else {
        let work = SideEffect<Counter, Int> { action, _ async in consume(action) }
        let store = Store(initialState: Counter(), reducer: reducer, middleware: [Middleware(work)])
        Task.detached {
            for _ in 0..<count {
                await store.send(1).finish()
            }
            done.signal()
        }
        done.wait()
        consume(store.state)
    }
case "dependencies", "dependency-read":
    // A store with four dependencies set and `size` middleware; with `dependency-read`, the first middleware reads
    // one of them for every action.
    let dependencies = StoreDependencies {
        $0.makeID = .incrementing()
        $0.random = .seeded(1)
        $0.date = .live
        $0.service = 42
    }
    let reading = Middleware<Counter, Int> { api in
        { next in
            { action in next(action &+ api.dependencies.service) }
        }
    }
    var middleware = Array(repeating: passThrough, count: size)
    if scenario == "dependency-read", !middleware.isEmpty {
        middleware[0] = reading
    }
    let store = Store(initialState: Counter(), reducer: reducer, middleware: middleware, dependencies: dependencies)
    for _ in 0..<count {
        store.dispatch(1)
    }
    consume(store.state)
case "foreach", "foreach-extractor", "foreach-hand":
    let forEach: Reducer<Shop, ShopAction> = .forEach(
        \.orders,
        action: { action in
            switch action {
            case .order(let id, let amount): (id, amount)
            }
        },
        element: orderReducer
    )
    let handWritten = Reducer<Shop, ShopAction>(mutating: { state, action in
        switch action {
        case .order(let id, let amount):
            if let index = state.orders.index(forKey: id) {
                state.orders.values[index].count &+= amount
                state.orders.values[index].unchanged &+= amount &* 3
            }
        }
    })
    var orders = [Int: Counter](minimumCapacity: size)
    for id in 0..<size {
        orders[id] = Counter()
    }
    let withExtractor: Reducer<Shop, ShopAction> = .forEach(\.orders, action: OrderActions(), element: orderReducer)
    let chosen =
        switch scenario {
        case "foreach": forEach
        case "foreach-extractor": withExtractor
        default: handWritten
        }
    let store = Store(initialState: Shop(orders: orders), reducer: chosen)
    let id = size / 2
    for _ in 0..<count {
        store.dispatch(.order(id: id, 1))
    }
    consume(store.state.orders[id])
case "reentrant", "two-outer":
    // The cost of an action dispatched from a side effect while the pipeline is owned (rule 2: queued, processed
    // after the current action), against the same action dispatched from outside through the same chain (a
    // pass-through middleware and the lifted side effect). `reentrant`: each iteration dispatches 1, whose side
    // effect dispatches 2 from inside; `two-outer`: each iteration dispatches 1 and then 2 from outside, and the
    // side effect dispatches nothing. The difference of the two, per iteration, is what re-entrancy costs more.
    let reentrant = scenario == "reentrant"
    let followUp = SideEffect<Counter, Int> { action, api in
        if reentrant && action == 1 { api.dispatch(2) }
    }
    let store = Store(initialState: Counter(), reducer: reducer, middleware: [passThrough, Middleware(followUp)])
    for _ in 0..<count {
        store.dispatch(1)
        if !reentrant { store.dispatch(2) }
    }
    consume(store.state)
case "service", "service-sync", "service-mutex":
    // The order service of the `ServiceChain` area, one thread: on a store with the chain a service writes, and on
    // a `Mutex`-guarded struct. A request is `place` and its follow-up decision. The first 10,000 requests fill the
    // orders dictionary to its kept size in both, so compare two counts above that. `size`: the interval of the
    // throttled snapshot in milliseconds (1,000 when 0); under callgrind, whose clock runs at its own pace, give
    // one longer than the run (3600000), so that the count does not depend on how many snapshots the run took.
    let interval = Duration.milliseconds(size > 0 ? size : 1_000)
    var placed = 0
    if scenario != "service-mutex" {
        let service = SluiceService(snapshotInterval: interval, deliversInTask: scenario == "service")
        for index in 0..<count {
            let (item, quantity) = request(index)
            if service.place(item: item, quantity: quantity) != nil { placed += 1 }
        }
        consume(service.store.state.orders.fulfilled)
    } else {
        let service = MutexService(snapshotInterval: interval)
        for index in 0..<count {
            let (item, quantity) = request(index)
            if service.place(item: item, quantity: quantity) != nil { placed += 1 }
        }
        consume(service.state.orders.fulfilled)
    }
    consume(placed)
case "service-threads", "service-mutex-threads":
    // The same two services with `size` threads (pthreads; 4 when 0) placing `count / size` orders each, all at
    // once, as the `ServiceChain` area's thread loads do. For `perf record -g` and `perf stat`, not callgrind.
    let threads = size > 0 ? size : 4
    let perThread = max(count / threads, 1)
    let service: any OrderService =
        scenario == "service-threads"
        ? SluiceService(snapshotInterval: .milliseconds(1_000)) : MutexService(snapshotInterval: .milliseconds(1_000))
    let work = ThreadWork {
        for index in 0..<perThread {
            let (item, quantity) = request(index)
            consume(service.place(item: item, quantity: quantity))
        }
    }
    let start = DispatchTime.now().uptimeNanoseconds
    let handles = (0..<threads).map { _ in startThread(work) }
    for handle in handles {
        pthread_join(handle, nil)
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    print("\(scenario): \(Double(elapsed) / Double(threads * perThread)) ns per request")
case "service-tasks", "service-mutex-tasks":
    // The same two services with `size` tasks (32 when 0) of one task group placing `count / size` orders each:
    // `await send(_:reading:)` on the store, `place` on the `Mutex` floor, as the `ServiceChain` area's task load
    // does. For `perf record -g` and `perf stat`, not callgrind.
    let tasks = size > 0 ? size : 32
    let perTask = max(count / tasks, 1)
    let sluice = scenario == "service-tasks" ? SluiceService(snapshotInterval: .milliseconds(1_000)) : nil
    let floor = MutexService(snapshotInterval: .milliseconds(1_000))
    let done = DispatchSemaphore(value: 0)
    let start = DispatchTime.now().uptimeNanoseconds
    Task.detached {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for index in 0..<perTask {
                        let (item, quantity) = request(index)
                        if let sluice {
                            consume(await sluice.send(item: item, quantity: quantity))
                        } else {
                            consume(floor.place(item: item, quantity: quantity))
                        }
                    }
                }
            }
        }
        done.signal()
    }
    done.wait()
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    print("\(scenario): \(Double(elapsed) / Double(tasks * perTask)) ns per request")
case "log-diff", "log-diff-unchanged", "log-line", "log-diffing":
    // The logging middleware on a state holding a dictionary of `size` entries (100,000 when 0), every action
    // logged: `log-diff` changes one entry per action with `diff: true`; `log-diff-unchanged` changes only a counter
    // beside the dictionary; `log-line` changes one entry without a diff (the line alone); `log-diffing` changes
    // one entry and compares that entry and the count with `diffing:`. Prints the wall-clock time per logged
    // action.
    let entries = size > 0 ? size : 100_000
    var initial = LoggedState()
    for key in 0..<entries { initial.entries[key] = LoggedEntry(id: key, quantity: 1) }
    let touchEntry = scenario != "log-diff-unchanged"
    let lineCount = KeptLength()
    let store = Store(
        initialState: initial,
        reducer: loggedReducer,
        middleware: [
            scenario == "log-diffing"
                ? Middlewares.logging(
                    diffing: { state, action -> (entries: Int, entry: LoggedEntry?) in
                        switch action {
                        case .set(let id, _): (entries: state.entries.count, entry: state.entries[id])
                        case .tick: (entries: state.entries.count, entry: nil)
                        }
                    },
                    sink: { line in lineCount.keep(line) }
                )
                : Middlewares.logging(
                    diff: scenario != "log-line",
                    sink: { line in lineCount.keep(line) }
                )
        ]
    )
    let start = DispatchTime.now().uptimeNanoseconds
    for index in 0..<count {
        store.dispatch(touchEntry ? .set(id: index % entries, quantity: index) : .tick)
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    print("\(scenario): \(Double(elapsed) / Double(count) / 1_000) µs per logged action")
    consume(lineCount.total.withLock { $0 })
case "log-off", "log-hand":
    // The floors of `log-line`, on the same state and actions: `log-off` is the logging middleware with every action
    // left out by `include` (what a line adds is `log-line` minus this); `log-hand` is a middleware that times the
    // action with the same clock and formats its line by hand (`set(id: 1, quantity: 2) in 850ns`) for the same sink.
    let entries = size > 0 ? size : 100_000
    var initial = LoggedState()
    for key in 0..<entries { initial.entries[key] = LoggedEntry(id: key, quantity: 1) }
    let lineCount = KeptLength()
    let byHand = Middleware<LoggedState, LoggedAction> { _ in
        { next in
            { action in
                let start = DispatchTime.now().uptimeNanoseconds
                next(action)
                let elapsed = DispatchTime.now().uptimeNanoseconds &- start
                switch action {
                case .set(let id, let quantity): lineCount.keep("set(id: \(id), quantity: \(quantity)) in \(elapsed)ns")
                case .tick: lineCount.keep("tick in \(elapsed)ns")
                }
            }
        }
    }
    let store = Store(
        initialState: initial,
        reducer: loggedReducer,
        middleware: [
            scenario == "log-hand"
                ? byHand : Middlewares.logging(include: { _ in false }, sink: { line in lineCount.keep(line) })
        ]
    )
    let start = DispatchTime.now().uptimeNanoseconds
    for index in 0..<count {
        store.dispatch(.set(id: index % entries, quantity: index))
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    print("\(scenario): \(Double(elapsed) / Double(count) / 1_000) µs per action")
    consume(lineCount.total.withLock { $0 })
case "log-describable":
    // `log-line` for an action type that is `LogDescribable`: the same line, written without reflection.
    let entries = size > 0 ? size : 100_000
    var initial = LoggedState()
    for key in 0..<entries { initial.entries[key] = LoggedEntry(id: key, quantity: 1) }
    let lineCount = KeptLength()
    let store = Store(
        initialState: initial,
        reducer: selfDescribedReducer,
        middleware: [Middlewares.logging(sink: { line in lineCount.keep(line) })]
    )
    let start = DispatchTime.now().uptimeNanoseconds
    for index in 0..<count {
        store.dispatch(.set(id: index % entries, quantity: index))
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    print("\(scenario): \(Double(elapsed) / Double(count) / 1_000) µs per logged action")
    consume(lineCount.total.withLock { $0 })
case "encode-bid", "encode-bid-json", "encode-add", "encode-add-json":
    // One action encoded per operation: the `Journal` area's bid (an enum case with a struct payload of five
    // fields, two strings and a `Date`) or `.add(7)`, by the journal's coder (`JournalPayloadCoder`) or, for the
    // floor, by `JSONEncoder`. Prints the wall-clock time per action and the payload's size.
    let action = scenario.hasPrefix("encode-bid") ? sampleBid : HouseAction.add(7)
    let coder = JournalPayloadCoder()
    let json = JSONEncoder()
    let useJSON = scenario.hasSuffix("-json")
    var size = 0
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count {
        if useJSON {
            let data = try! json.encode(action)
            size = data.count
        } else {
            let bytes = try! coder.encode(action)
            size = bytes.count
        }
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    print("\(scenario): \(Double(elapsed) / Double(max(count, 1))) ns per action, \(size) bytes")
default:
    print("unknown scenario \(scenario)")
    exit(1)
}
