import Sluice
import Testing

/// A state with a large array, reserved so that appends never reallocate: any change of the buffer's address
/// is then a copy-on-write copy of the whole array.
struct BigState: Sendable {
    var items: [Int]

    init(elements: Int) {
        items = Array(repeating: 0, count: elements)
        items.reserveCapacity(elements * 2)
    }

    var itemsAddress: UInt {
        items.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}

struct AppState: Sendable {
    var big: BigState
    var counter = 0
    var other = [String]()
}

let appendReducer = Reducer<BigState, Int>(mutating: { state, value in state.items.append(value) })

/// Rule 8: large states are moved into the reducer and back, never copied per action. The tests run in a debug
/// build, where only `Reducer(mutating:)` and a closure that spells its parameter `consuming` are moves (the
/// inferred `var state = state` form is a move in release builds only; see ``Reducer``).
@Suite struct LargeStateTests {
    private func addresses<State: Sendable>(
        _ store: Store<State, Int>,
        dispatches: Int = 50,
        address: (State) -> UInt
    ) -> Set<UInt> {
        var seen = Set<UInt>()
        for value in 0..<dispatches {
            store.dispatch(value)
            seen.insert(address(store.state))
        }
        return seen
    }

    @Test func rule8_mutatingReducerDoesNotCopyA100kArray() {
        let store = Store(initialState: BigState(elements: 100_000), reducer: appendReducer)
        let before = store.state.itemsAddress
        let seen = addresses(store) { $0.itemsAddress }
        #expect(seen == [before])
        #expect(store.state.items.count == 100_050)
    }

    @Test func rule8_consumingClosureReducerDoesNotCopyA100kArray() {
        let reducer = Reducer<BigState, Int> { (state: consuming BigState, value) in
            state.items.append(value)
            return state
        }
        let store = Store(initialState: BigState(elements: 100_000), reducer: reducer)
        let before = store.state.itemsAddress
        #expect(addresses(store) { $0.itemsAddress } == [before])
    }

    @Test func rule8_noCopyThroughWithKeyAndCombineReducers() {
        let counter = Reducer<Int, Int>(mutating: { count, _ in count += 1 })
        let reducer = combineReducers(
            withKey(\AppState.counter, use: counter),
            withKey(\AppState.big, use: appendReducer),
            withKey(\AppState.other, use: Reducer(mutating: { _, _ in }))
        )
        let store = Store(initialState: AppState(big: BigState(elements: 100_000)), reducer: reducer)
        let before = store.state.big.itemsAddress
        #expect(addresses(store) { $0.big.itemsAddress } == [before])
        #expect(store.state.counter == 50)
    }

    @Test func rule8_noCopyThroughNestedWithKeyWithLocalActions() {
        struct Outer: Sendable { var app: AppState }
        let reducer = withKey(
            \Outer.app,
            action: { (value: Int) in value >= 0 ? value : nil },
            use: withKey(\AppState.big, use: appendReducer)
        )
        let store = Store(initialState: Outer(app: AppState(big: BigState(elements: 100_000))), reducer: reducer)
        let before = store.state.app.big.itemsAddress
        #expect(addresses(store) { $0.app.big.itemsAddress } == [before])
    }

    @Test func rule8_noCopyWithMiddlewareAndSubscribers() {
        let middleware = Middleware<BigState, Int> { api in
            { next in
                { action in
                    next(action)
                    _ = api.state.items.count  // a transient read does not force a copy later
                }
            }
        }
        let store = Store(initialState: BigState(elements: 100_000), reducer: appendReducer, middleware: [middleware])
        let counts = Locked<[Int]>([])
        let subscription = store.subscribe { state in counts.append(state.items.count) }
        let before = store.state.itemsAddress
        #expect(addresses(store) { $0.itemsAddress } == [before])
        #expect(counts.current.count == 50)
        subscription.cancel()
    }

    @Test func plainFunctionReducerWorksButCopies() {
        // Accepted for convenience; documented as paying a copy per action.
        @Sendable func reduce(_ state: BigState, _ value: Int) -> BigState {
            var state = state
            state.items.append(value)
            return state
        }
        let store = Store(initialState: BigState(elements: 1_000), reducer: Reducer(reduce))
        let seen = addresses(store, dispatches: 3) { $0.itemsAddress }
        #expect(store.state.items.suffix(3) == [0, 1, 2])
        // The same address check as above sees the copies here (a copy is allocated while the original is still
        // alive, so consecutive copies never share an address): the tests above would catch one.
        #expect(seen.count > 1)
    }
}

/// Readers and subscribers that leave a large collection uniquely referenced, so that the reducer's
/// in-place change never copies it. A dictionary with reserved capacity keeps its storage while entries are inserted;
/// any change of the storage's address is a copy-on-write copy of the whole dictionary.
@Suite struct LargeCollectionNoCopyTests {
    struct Catalog: Sendable, Equatable {
        var byID: [Int: String]
        var version = 0

        init(entries: Int) {
            byID = Dictionary(minimumCapacity: entries * 2)
            for id in 0..<entries {
                byID[id] = "item \(id)"
            }
        }
    }

    /// Inserts one new entry and bumps the version.
    let insert = Reducer<Catalog, Int>(mutating: { state, id in
        state.byID[id] = "item \(id)"
        state.version += 1
    })

    let entries = 20_000
    let inserts = 200

    /// The address of a native dictionary's storage (a `Dictionary` is one reference to it).
    static func storage(_ byID: borrowing [Int: String]) -> UInt {
        unsafeBitCast(copy byID, to: UInt.self)
    }

    private func makeStore() -> Store<Catalog, Int> {
        #expect(MemoryLayout<[Int: String]>.size == MemoryLayout<UInt>.size)
        return Store(initialState: Catalog(entries: entries), reducer: insert)
    }

    /// Dispatches `inserts` new entries and returns the storage addresses seen after each (read in place).
    private func insertAll(_ store: Store<Catalog, Int>) -> Set<UInt> {
        var seen = Set<UInt>()
        for id in entries..<(entries + inserts) {
            store.dispatch(id)
            seen.insert(store.read { Self.storage($0.byID) })
        }
        return seen
    }

    @Test func theAddressCheckSeesACopy() {
        // The control: a copy of the state held across a dispatch makes the reducer copy the dictionary.
        let store = makeStore()
        let before = store.read { Self.storage($0.byID) }
        let held = store.state
        store.dispatch(entries)
        #expect(store.read { Self.storage($0.byID) } != before)
        #expect(held.byID.count == entries)
    }

    @Test func anotherThreadReadingWithReadInALoopForcesNoCopy() async {
        let store = makeStore()
        let before = store.read { Self.storage($0.byID) }
        let done = Locked(false)
        let reads = Locked(0)
        let seen = Locked(Set<UInt>())
        await runOnThreads(2) { index in
            if index == 0 {
                seen.withValue { $0 = insertAll(store) }
                done.withValue { $0 = true }
            } else {
                var count = 0
                while !done.current || count == 0 {
                    _ = store.read { $0.byID[7] }
                    count += 1
                }
                reads.withValue { $0 = count }
            }
        }
        #expect(seen.current == [before])
        #expect(reads.current > 0)
        #expect(store.read { $0.byID.count } == entries + inserts)
    }

    @Test func aScopedReadInALoopForcesNoCopy() async {
        let store = makeStore()
        let byID = store.scope(\.byID)
        let before = store.read { Self.storage($0.byID) }
        let done = Locked(false)
        let seen = Locked(Set<UInt>())
        await runOnThreads(2) { index in
            if index == 0 {
                seen.withValue { $0 = insertAll(store) }
                done.withValue { $0 = true }
            } else {
                while !done.current {
                    _ = byID.read { $0[7] }
                }
            }
        }
        #expect(seen.current == [before])
    }

    @Test func aKeyedSubscriberForcesNoCopy() {
        let store = makeStore()
        let before = store.read { Self.storage($0.byID) }
        let counts = Locked<[Int]>([])
        let byCount = store.subscribe(to: \.byID, by: \.count) { byID in counts.append(byID.count) }
        let versions = Locked(0)
        let byVersion = store.subscribe(to: \.self, by: \.version) { _ in versions.withValue { $0 += 1 } }
        #expect(insertAll(store) == [before])
        #expect(counts.current == Array((entries + 1)...(entries + inserts)))
        #expect(versions.current == inserts)
        byCount.cancel()
        byVersion.cancel()
    }

    @Test func aKeyedScopeSubscriberForcesNoCopy() {
        let store = makeStore()
        let before = store.read { Self.storage($0.byID) }
        let counts = Locked<[Int]>([])
        let subscription = store.scope(\.byID).subscribe(by: \.count) { byID in counts.append(byID.count) }
        let nested = store.scope(\.self).subscribe(to: \.byID, by: \.count) { _ in }
        #expect(insertAll(store) == [before])
        #expect(counts.current.count == inserts)
        subscription.cancel()
        nested.cancel()
    }

    @Test func aKeyedSubscriberSkipsActionsThatLeaveTheKey() {
        let store = makeStore()
        let counts = Locked<[Int]>([])
        let subscription = store.subscribe(to: \.byID, by: \.count) { byID in counts.append(byID.count) }
        store.dispatch(3)  // replaces entry 3: same count, not notified (the documented limit of `\.count`)
        store.dispatch(entries)
        #expect(counts.current == [entries + 1])
        subscription.cancel()
    }

    /// How many of `inserts` dispatches moved the dictionary's storage (a copy allocates while the original is
    /// alive, so each copy has a different address than the storage before it).
    private func copies(_ store: Store<Catalog, Int>, from first: Int) -> Int {
        var moves = 0
        var last = store.read { Self.storage($0.byID) }
        for id in first..<(first + inserts) {
            store.dispatch(id)
            let address = store.read { Self.storage($0.byID) }
            if address != last { moves += 1 }
            last = address
        }
        return moves
    }

    @Test func wholeValueSubscribersCopyOnEveryChange() {
        // The documented cost of `subscribe(to:)` and of a scope's `subscribe(_:)` on a collection: they keep the
        // last value to compare with.
        let store = makeStore()
        let notified = Locked(0)
        let subscription = store.subscribe(to: \.byID) { _ in notified.withValue { $0 += 1 } }
        #expect(copies(store, from: entries) == inserts)
        subscription.cancel()
        let scoped = store.scope(\.byID).subscribe { _ in notified.withValue { $0 += 1 } }
        #expect(copies(store, from: entries + inserts) == inserts)
        scoped.cancel()
        #expect(notified.current == 2 * inserts)
    }
}

/// The "Large states" article's versioned collection, as written there.
@Suite struct LargeStatesArticleTests {
    struct Order: Sendable, Identifiable {
        let id: Int
        var isPending = true
    }

    enum OrderAction: Sendable {
        case place(Order)
        case cancel(Order.ID)
    }

    struct Orders: Sendable, Equatable {
        var byID: [Order.ID: Order] = [:]
        var version = 0

        static func == (lhs: Orders, rhs: Orders) -> Bool { lhs.version == rhs.version }
    }

    struct AppState: Sendable {
        var orders = Orders()
    }

    @Test func aVersionTheReducerBumpsIsAChangeKey() {
        let ordersReducer = Reducer<Orders, OrderAction>(mutating: { orders, action in
            switch action {
            case .place(let order): orders.byID[order.id] = order
            case .cancel(let id): orders.byID[id] = nil
            }
            orders.version += 1
        })
        let store = Store<AppState, OrderAction>(
            initialState: AppState(),
            reducer: withKey(\AppState.orders, use: ordersReducer)
        )
        let rendered = Locked<[Int]>([])
        let versioned = store.subscribe(to: \.orders, by: \.version) { orders in rendered.append(orders.byID.count) }
        let scoped = store.scope(\.orders).subscribe(by: \.version) { orders in rendered.append(-orders.byID.count) }
        store.dispatch(.place(Order(id: 1)))
        store.dispatch(.place(Order(id: 1)))  // replaces the entry: same count, new version
        store.dispatch(.cancel(1))
        #expect(rendered.current == [1, -1, 1, -1, 0, 0])
        #expect(store.read { $0.orders.byID.values.filter(\.isPending).count } == 0)
        versioned.cancel()
        scoped.cancel()
    }
}
