import Sluice
import Testing

/// `Middlewares.logging(diffing:)`: the diff of the parts of the state that a projection picks out, which neither
/// holds the state while the reducer runs nor reads more of it than the projection returns; and the bound of
/// `diff: true` on a large collection that an action left alone.
@Suite struct LoggingDiffingTests {
    /// A reference that the reducer probes for uniqueness: shared when a dictionary holding it was copied.
    final class Probe: Sendable {}

    /// An entry of a large dictionary that counts its comparisons.
    struct Entry: Sendable, Equatable {
        var quantity: Int
        var probe = Probe()
        let comparisons: Locked<Int>

        static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.comparisons.withValue { $0 += 1 }
            return lhs.quantity == rhs.quantity && lhs.probe === rhs.probe
        }
    }

    struct Inventory: Sendable, Equatable {
        var entries: [Int: Entry] = [:]
        var ticks = 0
    }

    enum InventoryAction: Sendable {
        case set(id: Int, quantity: Int)
        case tick
    }

    static let entryCount = 10_000
    /// The key of an entry that no action changes and no diff reads.
    static let sentinel = entryCount - 1

    static func makeInventory(comparisons: Locked<Int>) -> Inventory {
        var inventory = Inventory()
        for id in 0..<entryCount {
            inventory.entries[id] = Entry(quantity: 1, comparisons: comparisons)
        }
        return inventory
    }

    /// Runs `actions` through a store of `entryCount` entries with `logging` first; returns the lines, how many
    /// times entries were compared, and whether the reducer found the dictionary's storage unshared each time
    /// (so that it was not copied).
    static func run(
        _ actions: [InventoryAction],
        logging: (@escaping @Sendable (String) -> Void) -> Middleware<Inventory, InventoryAction>
    ) -> (lines: [String], comparisons: Int, unshared: Bool) {
        let comparisons = Locked(0)
        let unshared = Locked(true)
        let lines = Locked<[String]>([])
        let store = Store<Inventory, InventoryAction>(
            // Made in an expression, so that the store holds the only copy of the dictionary.
            initialState: makeInventory(comparisons: comparisons),
            reducer: Reducer(mutating: { state, action in
                switch action {
                case .set(let id, let quantity):
                    state.entries[id]!.quantity = quantity
                    // An in-place change copies the dictionary if anything else holds its storage; every entry's
                    // probe is then held by both copies, the sentinel's too, which no diff reads.
                    let isUnique = isKnownUniquelyReferenced(&state.entries[sentinel]!.probe)
                    if !isUnique { unshared.withValue { $0 = false } }
                case .tick:
                    state.ticks += 1
                }
            }),
            middleware: [logging({ lines.append($0) })]
        )
        comparisons.withValue { $0 = 0 }
        for action in actions {
            store.dispatch(action)
        }
        return (lines.current, comparisons.current, unshared.current)
    }

    @Test func diffingAnEntryNeitherCopiesNorComparesTheDictionary() {
        let (lines, comparisons, unshared) = Self.run([.set(id: 7, quantity: 5), .set(id: 8, quantity: 1)]) { sink in
            Middlewares.logging(
                diffing: { (state: Inventory, action: InventoryAction) -> (entries: Int, entry: Int?) in
                    switch action {
                    case .set(let id, _): (entries: state.entries.count, entry: state.entries[id]?.quantity)
                    case .tick: (entries: state.entries.count, entry: nil)
                    }
                },
                sink: sink,
                clock: { 0 }
            )
        }
        #expect(
            lines == ["set(id: 7, quantity: 5) in 0ns | entry: 1 -> 5", "set(id: 8, quantity: 1) in 0ns | no change"]
        )
        #expect(unshared)
        #expect(comparisons == 0)
    }

    @Test func diffingAnEntryThatIsEquatableComparesOnlyThatEntry() {
        let (lines, comparisons, unshared) = Self.run([.set(id: 7, quantity: 5)]) { sink in
            Middlewares.logging(
                diffing: { (state: Inventory, action: InventoryAction) -> Entry? in
                    if case .set(let id, _) = action { state.entries[id] } else { nil }
                },
                sink: sink,
                clock: { 0 }
            )
        }
        #expect(lines == ["set(id: 7, quantity: 5) in 0ns | quantity: 1 -> 5"])
        #expect(unshared)
        // The entry's own `==`, once for the optional and once for the entry it holds; never the other entries.
        #expect(comparisons <= 2)
    }

    @Test func diffOfTheWholeStateCopiesAChangedDictionary() {
        // The cost that `diffing:` avoids: the state from before the action is held while the reducer runs.
        let (lines, _, unshared) = Self.run([.set(id: 7, quantity: 5)]) { sink in
            Middlewares.logging(diff: true, sink: sink, clock: { 0 })
        }
        #expect(lines == ["set(id: 7, quantity: 5) in 0ns | entries[7].quantity: 1 -> 5"])
        #expect(!unshared)
    }

    @Test func diffOfTheWholeStateSkipsADictionaryThatTheActionLeftAlone() {
        let (lines, comparisons, unshared) = Self.run([.tick, .tick]) { sink in
            Middlewares.logging(diff: true, sink: sink, clock: { 0 })
        }
        #expect(lines == ["tick in 0ns | ticks: 0 -> 1", "tick in 0ns | ticks: 1 -> 2"])
        #expect(unshared)
        #expect(comparisons == 0)
    }

    @Test func diffingDoesNotHoldTheStateWhileTheReducerRuns() {
        let lines = Locked<[String]>([])
        #expect(
            LoggingTests.reducerSeesUniqueState(middleware: [
                Middlewares.logging(
                    diffing: { (state: LoggingTests.ProbedState, _: TestAction) in state.count },
                    sink: { lines.append($0) },
                    clock: { 0 }
                )
            ])
        )
        #expect(lines.current == ["increment in 0ns | value: 0 -> 1"])
    }

    @Test func diffingIsCalledTwicePerLoggedActionAndNeverForTheOthers() {
        let calls = Locked(0)
        let lines = Locked<[String]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middlewares.logging(
                    diffing: { (state: TestState, _: TestAction) in
                        calls.withValue { $0 += 1 }
                        return (count: state.count, entries: state.log.count)
                    },
                    sampling: .every(3),
                    sink: { lines.append($0) },
                    clock: { 0 }
                )
            ]
        )
        for amount in 1...7 {
            store.dispatch(.add(amount))
        }
        #expect(calls.current == 6)
        #expect(
            lines.current == [
                "add(1) in 0ns | count: 0 -> 1", "add(4) in 0ns | count: 6 -> 10", "add(7) in 0ns | count: 21 -> 28",
            ]
        )
    }

    @Test func recordsCarryTheChangesOfWhatDiffingReturns() {
        let records = Locked<[[String]]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middlewares.logging(
                    level: .debug,
                    diffing: { (state: TestState, _: TestAction) in (count: state.count, last: state.log.last) },
                    records: { record in records.append(record.changes?.map(\.description) ?? ["nil"]) }
                )
            ]
        )
        store.dispatch(.record("a"))
        store.dispatch(.increment)
        store.dispatch(.noop)
        #expect(records.current == [[#"last: nil -> "a""#], ["count: 0 -> 1"], []])
    }

    @Test func whatIsLearnedAboutATypeHoldsForEveryValueOfIt() {
        // A text in an optional, then none. `Character?` appears in no other test, so the first value of it that
        // the process describes is this `"b"`: facts learned from that value would not hold for `nil`.
        enum Noted: Sendable {
            case note(String?, Character?)
        }
        struct Notes: Sendable {
            var last: String?
        }
        let lines = Locked<[String]>([])
        let store = Store<Notes, Noted>(
            initialState: Notes(),
            reducer: Reducer(mutating: { state, action in
                if case .note(let text, _) = action { state.last = text }
            }),
            middleware: [Middlewares.logging(diff: true, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(.note("a", "b"))
        store.dispatch(.note(nil, nil))
        #expect(
            lines.current == [
                #"note("a", "b") in 0ns | last: nil -> "a""#,
                #"note(nil, nil) in 0ns | last: "a" -> nil"#,
            ]
        )
    }
}
