// Appending to an array of 1,000, 100,000 or 1,000,000 elements that lives in the state, with a reducer in the
// usual pure spelling (`var state = state; ...; return state`), directly and as one of 10 module reducers
// combined by key path. If the store or the combinators copied the state, the cost would grow with the array.

import Benchmark
import Sluice

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
}

extension Int {
    /// `1000` as `1K`, `1000000` as `1M`: short names, since a benchmark's name becomes its thresholds file's name.
    var abbreviated: String {
        if self >= 1_000_000 && self % 1_000_000 == 0 { return "\(self / 1_000_000)M" }
        if self >= 1_000 && self % 1_000 == 0 { return "\(self / 1_000)K" }
        return "\(self)"
    }
}
