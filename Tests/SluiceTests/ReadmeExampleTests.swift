import Sluice
import Testing

/// The README's quick start, verbatim apart from `print` going to a log: if this stops compiling or passing,
/// the README is wrong.
@Suite struct ReadmeExampleTests {
    struct AppState: Sendable {
        var count = 0
        var history: [Int] = []
    }

    enum AppAction: Sendable {
        case increment
        case add(Int)
    }

    @Test func quickStart() {
        let printed = Locked<[String]>([])
        @Sendable func print(_ items: Any...) {
            printed.append(items.map { "\($0)" }.joined(separator: " "))
        }

        let counter = Reducer<AppState, AppAction>(mutating: { state, action in
            switch action {
            case .increment: state.count += 1
            case .add(let amount): state.count += amount
            }
            state.history.append(state.count)
        })

        let logger = Middleware<AppState, AppAction> { api in
            { next in
                { action in
                    next(action)
                    print("\(action) -> count \(api.state.count)")
                }
            }
        }

        let store = Store<AppState, AppAction>(initialState: AppState(), reducer: counter, middleware: [logger])
        let subscription = store.subscribe(to: \.count) { count in print("count is now", count) }

        store.dispatch(.increment)
        store.dispatch(.add(41))
        assert(store.state.count == 42)
        subscription.cancel()

        #expect(store.state.count == 42)
        #expect(store.state.history == [1, 42])
        #expect(
            printed.current == ["count is now 1", "increment -> count 1", "count is now 42", "add(41) -> count 42"]
        )
    }

    /// The README's "Large states" snippet.
    @Test func largeStates() {
        let printed = Locked<[String]>([])
        @Sendable func print(_ items: Any...) {
            printed.append(items.map { "\($0)" }.joined(separator: " "))
        }
        let store = Store<AppState, AppAction>(
            initialState: AppState(count: 1, history: [1]),
            reducer: Reducer(mutating: { state, action in
                if case .add(let amount) = action { state.count += amount }
                state.history.append(state.count)
            })
        )

        let last = store.read { $0.history.last }  // borrowed, under the lock
        let total = store.dispatch(.add(5), reading: { $0.count })  // the state right after this action
        let watcher = store.subscribe(to: \.history, by: \.count) { history in print(history.count, "entries") }

        store.dispatch(.increment)
        #expect(last == 1)
        #expect(total == 6)
        #expect(printed.current == ["3 entries"])
        watcher.cancel()
    }
}
