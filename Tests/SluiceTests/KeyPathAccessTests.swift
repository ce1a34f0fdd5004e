import Testing

@testable import Sluice

/// `subscribe(to:)` reads, and `withKey` changes, stored-property key paths by offset and every other key path by
/// projection; both must reach the same values.
@Suite struct KeyPathAccessTests {
    final class Settings: Sendable {
        let theme: String

        init(theme: String) {
            self.theme = theme
        }
    }

    struct Profile: Sendable, Equatable {
        var name: String
        var visits = 0
    }

    struct ReaderState: Sendable {
        var flag = false
        var profile = Profile(name: "ada")
        var tags: [String] = []
        var settings = Settings(theme: "light")
        var maybe: Profile? = nil

        var doubledVisits: Int { profile.visits * 2 }

        /// A computed, writable view of the profile's name.
        var shoutedName: String {
            get { profile.name.uppercased() }
            set { profile.name = newValue.lowercased() }
        }
    }

    enum ReaderAction: Sendable {
        case rename(String)
        case visit
        case theme(String)
        case toggle
        case setMaybe(Profile?)
    }

    static let reducer = Reducer<ReaderState, ReaderAction>(mutating: { state, action in
        switch action {
        case .rename(let name): state.profile.name = name
        case .visit: state.profile.visits += 1
        case .theme(let theme): state.settings = Settings(theme: theme)
        case .toggle: state.flag.toggle()
        case .setMaybe(let profile): state.maybe = profile
        }
    })

    @Test func storedPropertyPathsAreReadByOffset() {
        var state = ReaderState()
        state.profile.name = "grace"
        state.profile.visits = 7
        state.tags = ["a", "b"]
        let name = KeyPathReader(\ReaderState.profile.name)
        let visits = KeyPathReader(\ReaderState.profile.visits)
        let tags = KeyPathReader(\ReaderState.tags)
        #expect(name.offset != nil)
        #expect(visits.offset != nil)
        #expect(tags.offset != nil)
        #expect(name(state) == "grace")
        #expect(visits(state) == 7)
        #expect(tags(state) == ["a", "b"])
    }

    @Test func otherPathsFallBackToTheProjection() {
        var state = ReaderState()
        state.profile.visits = 4
        state.maybe = Profile(name: "x", visits: 3)
        let computed = KeyPathReader(\ReaderState.doubledVisits)
        let throughClass = KeyPathReader(\ReaderState.settings.theme)
        let optional = KeyPathReader(\ReaderState.maybe?.visits)
        #expect(computed.offset == nil)
        #expect(throughClass.offset == nil)
        #expect(optional.offset == nil)
        #expect(computed(state) == 8)
        #expect(throughClass(state) == "light")
        #expect(optional(state) == 3)
    }

    @Test func subscribeToANestedStoredPropertySkipsRepeats() {
        let names = Locked<[String]>([])
        let store = Store(initialState: ReaderState(), reducer: Self.reducer)
        let subscription = store.subscribe(to: \.profile.name) { name in names.append(name) }
        store.dispatch(.visit)
        store.dispatch(.rename("ada"))
        store.dispatch(.rename("grace"))
        store.dispatch(.toggle)
        store.dispatch(.rename("linus"))
        #expect(names.current == ["grace", "linus"])
        subscription.cancel()
    }

    @Test func subscribeToComputedClassAndOptionalPathsSkipsRepeats() {
        let doubled = Locked<[Int]>([])
        let themes = Locked<[String]>([])
        let maybes = Locked<[Int?]>([])
        let store = Store(initialState: ReaderState(), reducer: Self.reducer)
        let subscriptions = [
            store.subscribe(to: \.doubledVisits) { value in doubled.append(value) },
            store.subscribe(to: \.settings.theme) { theme in themes.append(theme) },
            store.subscribe(to: \.maybe?.visits) { visits in maybes.append(visits) },
        ]
        store.dispatch(.visit)
        store.dispatch(.theme("light"))
        store.dispatch(.theme("dark"))
        store.dispatch(.setMaybe(Profile(name: "m", visits: 1)))
        store.dispatch(.setMaybe(Profile(name: "n", visits: 1)))
        store.dispatch(.visit)
        #expect(doubled.current == [2, 4])
        #expect(themes.current == ["dark"])
        #expect(maybes.current == [1])
        for subscription in subscriptions {
            subscription.cancel()
        }
    }

    @Test func storedPropertyPathsAreChangedInPlaceByOffset() {
        var state = ReaderState()
        let visits = KeyPathWriter(\ReaderState.profile.visits)
        let tags = KeyPathWriter(\ReaderState.tags)
        #expect(visits.offset != nil)
        #expect(tags.offset != nil)
        visits.modify(&state) { $0 += 5 }
        tags.modify(&state) { $0.append("x") }
        #expect(state.profile.visits == 5)
        #expect(state.tags == ["x"])
        #expect(state.profile.name == "ada")
        #expect(state.flag == false)
    }

    @Test func withKeyChangesComputedPathsByProjectionAndStoredPathsByOffset() {
        let shout = Reducer<String, ReaderAction>(mutating: { name, action in
            if case .rename(let new) = action { name = new }
        })
        let count = Reducer<Int, ReaderAction>(mutating: { visits, action in
            if case .visit = action { visits += 10 }
        })
        #expect(KeyPathWriter(\ReaderState.shoutedName).offset == nil)
        let reducer = combineReducers(
            withKey(\ReaderState.shoutedName, use: shout),
            withKey(\ReaderState.profile.visits, use: count),
            withKey(
                \ReaderState.maybe,
                action: { $0 },
                use: Reducer(mutating: { maybe, action in
                    if case .visit = action { maybe?.visits += 1 }
                })
            )
        )
        var state = ReaderState()
        state.maybe = Profile(name: "m")
        state = reducer(state, .rename("GRACE"))
        state = reducer(state, .visit)
        #expect(state.profile.name == "grace")
        #expect(state.shoutedName == "GRACE")
        #expect(state.profile.visits == 10)
        #expect(state.maybe?.visits == 1)
    }

    @Test func combineReducersRunsManyReducersLeftToRight() {
        let reducers = (0..<7).map { index in
            Reducer<[Int], Int>(mutating: { log, _ in log.append(index) })
        }
        #expect(combineReducers(reducers)([], 0) == [0, 1, 2, 3, 4, 5, 6])
        #expect(combineReducers([Reducer<[Int], Int>]())([9], 0) == [9])
    }
}
