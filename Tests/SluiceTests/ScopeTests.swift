import Sluice
import Testing

/// `store.scope(\.part)`: a read-only view of a part of the state that dispatches to the store.
@Suite(.timeLimit(suiteTimeLimit)) struct ScopeTests {
    struct Profile: Sendable, Equatable {
        var name = ""
        var visits = 0
    }

    struct AppState: Sendable, Equatable {
        var profile = Profile()
        var counter = 0
    }

    enum AppAction: Sendable, Equatable {
        case rename(String)
        case visit
        case tick
    }

    private let reducer = Reducer<AppState, AppAction>(mutating: { state, action in
        switch action {
        case .rename(let name): state.profile.name = name
        case .visit: state.profile.visits += 1
        case .tick: state.counter += 1
        }
    })

    private func makeStore(middleware: [Middleware<AppState, AppAction>] = []) -> Store<AppState, AppAction> {
        Store(initialState: AppState(), reducer: reducer, middleware: middleware)
    }

    @Test func stateIsThePartOfTheStoreState() {
        let store = makeStore()
        let profile = store.scope(\.profile)
        #expect(profile.state == Profile())
        store.dispatch(.rename("Ada"))
        #expect(profile.state.name == "Ada")
        #expect(profile.scope(\.name).state == "Ada")
    }

    @Test func dispatchGoesToTheStoreThroughItsMiddleware() {
        let seen = Locked<[AppAction]>([])
        let store = makeStore(middleware: [
            Middleware { _ in
                { next in
                    { action in
                        seen.append(action)
                        next(action)
                    }
                }
            }
        ])
        let profile = store.scope(\.profile)
        profile.dispatch(.visit)
        profile.scope(\.visits).dispatch(.tick)
        #expect(seen.current == [.visit, .tick])
        #expect(store.state.profile.visits == 1)
        #expect(store.state.counter == 1)
    }

    @Test func subscribeIsNotifiedOnlyWhenThePartChanged() {
        let store = makeStore()
        let profile = store.scope(\.profile)
        let seen = Locked<[Profile]>([])
        let subscription = profile.subscribe { seen.append($0) }
        store.dispatch(.tick)
        store.dispatch(.visit)
        store.dispatch(.tick)
        store.dispatch(.rename(""))  // same name: unchanged
        store.dispatch(.rename("Ada"))
        #expect(seen.current == [Profile(name: "", visits: 1), Profile(name: "Ada", visits: 1)])
        subscription.cancel()
        store.dispatch(.visit)
        #expect(seen.current.count == 2)
    }

    @Test func subscribeToAKeyPathOfThePartSkipsRepeats() {
        let store = makeStore()
        let profile = store.scope(\.profile)
        let names = Locked<[String]>([])
        let subscription = profile.subscribe(to: \.name) { names.append($0) }
        store.dispatch(.visit)
        store.dispatch(.rename("Ada"))
        store.dispatch(.visit)
        store.dispatch(.rename("Ada"))
        store.dispatch(.rename("Grace"))
        #expect(names.current == ["Ada", "Grace"])
        subscription.cancel()
    }

    @Test func aScopeOfAScopeNotifiesOnlyForItsPart() {
        let store = makeStore()
        let visits = store.scope(\.profile).scope(\.visits)
        let seen = Locked<[Int]>([])
        let subscription = visits.subscribe { seen.append($0) }
        store.dispatch(.rename("Ada"))
        store.dispatch(.visit)
        store.dispatch(.tick)
        store.dispatch(.visit)
        #expect(seen.current == [1, 2])
        subscription.cancel()
    }

    @Test func valuesOfStartsWithTheCurrentValueAndSkipsRepeats() async {
        let store = makeStore()
        let profile = store.scope(\.profile)
        var names = profile.values(of: \.name).makeAsyncIterator()
        var profiles = profile.states.makeAsyncIterator()
        #expect(await names.next() == "")
        #expect(await profiles.next() == Profile())
        store.dispatch(.tick)
        store.dispatch(.rename("Ada"))
        #expect(await names.next() == "Ada")
        #expect(await profiles.next() == Profile(name: "Ada"))
        store.dispatch(.tick)
        store.dispatch(.visit)
        #expect(await profiles.next() == Profile(name: "Ada", visits: 1))
    }

    @Test func aScopeDoesNotKeepTheStoreAliveAndGoesQuietWithIt() async {
        var store: Store<AppState, AppAction>? = makeStore()
        weak let weakStore = store
        store!.dispatch(.rename("Ada"))
        let profile = store!.scope(\.profile)
        let seen = Locked<[Profile]>([])
        let subscription = profile.subscribe { seen.append($0) }
        var names = profile.values(of: \.name).makeAsyncIterator()
        #expect(await names.next() == "Ada")
        store = nil
        #expect(weakStore == nil)
        profile.dispatch(.visit)
        #expect(profile.state.name == "Ada")
        #expect(profile.state.visits == 0)
        #expect(seen.current.isEmpty)
        #expect(await names.next() == nil)
        subscription.cancel()
    }

    @Test func scopedSubscribersOnManyThreadsSeeExactlyTheirChanges() async {
        let store = makeStore()
        let visits = store.scope(\.profile.visits)
        let seen = Locked<[Int]>([])
        let subscription = visits.subscribe { seen.append($0) }
        await runOnThreads(4) { thread in
            for _ in 0..<500 {
                store.dispatch(thread.isMultiple(of: 2) ? .visit : .tick)
            }
        }
        #expect(seen.current == Array(1...1_000))
        #expect(store.state.counter == 1_000)
        subscription.cancel()
    }
}
