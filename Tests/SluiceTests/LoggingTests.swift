import Foundation
import Sluice
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `Middlewares.logging`: the line format, the duration, the state diff, filtering, truncation, sampling, and
/// concurrent use. The clock is injected, so every line is asserted exactly.
@Suite struct LoggingTests {
    // MARK: Fixtures

    /// A clock that moves only when told to.
    final class FakeClock: Sendable {
        private let time = Locked<UInt64>(1_000_000)

        var now: UInt64 { time.current }

        func advance(by nanoseconds: UInt64) {
            time.withValue { $0 += nanoseconds }
        }
    }

    /// A middleware that makes each action take `nanoseconds` of fake time in the rest of the chain.
    static func costs(
        _ nanoseconds: UInt64,
        on clock: FakeClock
    ) -> Middleware<TestState, TestAction> {
        tap { _, _ in
            clock.advance(by: nanoseconds)
            return true
        }
    }

    /// A store with the logging middleware first and an action cost of `cost` after it; returns the store and
    /// the lines written.
    static func makeStore(
        cost: UInt64 = 1_000,
        _ makeLogging: (@escaping @Sendable (String) -> Void, @escaping @Sendable () -> UInt64) ->
            Middleware<TestState, TestAction>
    ) -> (Store<TestState, TestAction>, Locked<[String]>) {
        let lines = Locked<[String]>([])
        let clock = FakeClock()
        let logging = makeLogging({ line in lines.append(line) }, { clock.now })
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [logging, costs(cost, on: clock)]
        )
        return (store, lines)
    }

    struct Item: Sendable, Equatable {
        var sku: String
        var quantity: Int
    }

    enum Status: Sendable, Equatable {
        case open
        case shipped(at: Int)
        case cancelled(reason: String, refund: Int)
    }

    struct Address: Sendable, Equatable {
        var city: String
    }

    struct Orders: Sendable, Equatable {
        var pending = 3
        var items = [Item(sku: "A", quantity: 1), Item(sku: "B", quantity: 2), Item(sku: "C", quantity: 1)]
        var status = Status.open
        var discount: Int?
        var address: Address?
    }

    struct Shop: Sendable, Equatable {
        var orders = Orders()
        var revenue = 0
        var tags: Set<String> = []
        var stock: [String: Int] = ["A": 5]
    }

    enum ShopAction: Sendable, Equatable {
        case place(Item)
        case restock(String)
        case ship(at: Int)
        case cancel(String)
        case setDiscount(Int?)
        case setCity(String?)
        case tag(String)
        case noop
    }

    static let shopReducer = Reducer<Shop, ShopAction>(mutating: { state, action in
        switch action {
        case .place(let item):
            state.orders.pending += 1
            state.orders.items.append(item)
            state.revenue += 10 * item.quantity
        case .restock(let sku):
            state.orders.items[0].quantity += 1
            state.stock[sku] = 5
        case .ship(let time):
            state.orders.status = .shipped(at: time)
            state.orders.pending -= 1
        case .cancel(let reason):
            state.orders.status = .cancelled(reason: reason, refund: 3)
        case .setDiscount(let discount):
            state.orders.discount = discount
        case .setCity(let city):
            state.orders.address = city.map(Address.init(city:))
        case .tag(let tag):
            state.tags.insert(tag)
        case .noop:
            break
        }
    })

    /// Dispatches `actions` on a shop store with `Middlewares.logging(diff: true, ...)`; each action takes 1µs.
    static func diffLines(
        maxChanges: Int = 8,
        maxLineLength: Int? = nil,
        _ actions: [ShopAction]
    ) -> [String] {
        let lines = Locked<[String]>([])
        let clock = FakeClock()
        let store = Store<Shop, ShopAction>(
            initialState: Shop(),
            reducer: shopReducer,
            middleware: [
                Middlewares.logging(
                    diff: true,
                    maxChanges: maxChanges,
                    maxLineLength: maxLineLength,
                    sink: { lines.append($0) },
                    clock: { clock.now }
                ),
                Middleware { _ in
                    { next in
                        { action in
                            clock.advance(by: 1_000)
                            next(action)
                        }
                    }
                },
            ]
        )
        for action in actions {
            store.dispatch(action)
        }
        return lines.current
    }

    // MARK: Line and duration

    @Test func oneLinePerActionWithActionAndDuration() {
        let (store, lines) = Self.makeStore(cost: 1_500) { sink, clock in
            Middlewares.logging(sink: sink, clock: clock)
        }
        store.dispatch(.increment)
        store.dispatch(.add(41))
        store.dispatch(.record("x"))
        #expect(lines.current == ["increment in 1.5µs", "add(41) in 1.5µs", #"record("x") in 1.5µs"#])
        #expect(store.state.count == 42)
    }

    @Test func durationIsTheTimeOfTheRestOfTheChainOnly() {
        let lines = Locked<[String]>([])
        let clock = FakeClock()
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Self.costs(5_000, on: clock),  // before the logger: not counted
                Middlewares.logging(sink: { lines.append($0) }, clock: { clock.now }),
                Self.costs(2_000_000, on: clock),  // after the logger: counted
            ]
        )
        store.dispatch(.increment)
        #expect(lines.current == ["increment in 2ms"])
    }

    @Test(
        arguments: [
            (0, "0ns"), (850, "850ns"), (999, "999ns"), (1_000, "1µs"), (1_500, "1.5µs"), (12_345, "12.3µs"),
            (999_940, "999.9µs"), (999_960, "1ms"), (3_240_000, "3.2ms"), (1_400_000_000, "1.4s"),
            (61_000_000_000, "61s"),
        ] as [(UInt64, String)]
    )
    func durationIsFormattedForPeople(nanoseconds: UInt64, expected: String) {
        let (store, lines) = Self.makeStore(cost: nanoseconds) { sink, clock in
            Middlewares.logging(sink: sink, clock: clock)
        }
        store.dispatch(.noop)
        #expect(lines.current == ["noop in \(expected)"])
    }

    @Test func actionsDispatchedWhileLoggingGetTheirOwnLinesAfterwards() {
        let lines = Locked<[String]>([])
        let clock = FakeClock()
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middlewares.logging(sink: { lines.append($0) }, clock: { clock.now }),
                tap { action, api in
                    clock.advance(by: 1_000)
                    if action == .increment { api.dispatch(.add(2)) }
                    return true
                },
            ]
        )
        store.dispatch(.increment)
        // The queued add(2) is not part of increment's duration.
        #expect(lines.current == ["increment in 1µs", "add(2) in 1µs"])
        #expect(store.state.count == 3)
    }

    @Test func actionsAreDescribedCompactly() {
        enum Inner: Sendable {
            case place(id: Int, quantity: Int)
            case cancel
            case note(String)
        }
        enum Outer: Sendable {
            case orders(Inner)
            case tick
            case batch([Int])
            case maybe(Int?)
        }
        struct Described: Sendable, CustomStringConvertible {
            var description: String { "custom!" }
        }
        let lines = Locked<[String]>([])
        let outer = Store<Int, Outer>(
            initialState: 0,
            reducer: .identity,
            middleware: [Middlewares.logging(sink: { lines.append($0) }, clock: { 7 })]
        )
        outer.dispatch(.orders(.place(id: 1, quantity: 2)))
        outer.dispatch(.orders(.cancel))
        outer.dispatch(.orders(.note("rush")))
        outer.dispatch(.tick)
        outer.dispatch(.batch([1, 2, 3]))
        outer.dispatch(.maybe(nil))
        outer.dispatch(.maybe(4))
        let described = Store<Int, Described>(
            initialState: 0,
            reducer: .identity,
            middleware: [Middlewares.logging(sink: { lines.append($0) }, clock: { 7 })]
        )
        described.dispatch(Described())
        #expect(
            lines.current == [
                "orders(.place(id: 1, quantity: 2)) in 0ns",
                "orders(.cancel) in 0ns",
                #"orders(.note("rush")) in 0ns"#,
                "tick in 0ns",
                "batch([1, 2, 3]) in 0ns",
                "maybe(nil) in 0ns",
                "maybe(4) in 0ns",
                "custom! in 0ns",
            ]
        )
    }

    // MARK: Diff

    @Test func diffListsChangedFieldsOfNestedStructsWithDottedPaths() {
        let lines = Self.diffLines([.place(Item(sku: "D", quantity: 2))])
        #expect(
            lines == [
                #"place(Item(sku: "D", quantity: 2)) in 1µs | orders.pending: 3 -> 4; orders.items.count: 3 -> 4; "#
                    + #"orders.items[3]: (none) -> Item(sku: "D", quantity: 2); revenue: 0 -> 20"#
            ]
        )
    }

    @Test func diffNamesTheChangedElementsOfCollections() {
        let lines = Self.diffLines([.restock("B"), .tag("new"), .tag("new")])
        #expect(
            lines == [
                #"restock("B") in 1µs | orders.items[0].quantity: 1 -> 2; stock["B"]: (none) -> 5"#,
                #"tag("new") in 1µs | tags: inserted "new""#,
                #"tag("new") in 1µs | no change"#,
            ]
        )
    }

    @Test func diffComparesEnumsAsWholeValues() {
        let lines = Self.diffLines([.ship(at: 12), .cancel("late")])
        #expect(
            lines == [
                "ship(at: 12) in 1µs | orders.pending: 3 -> 2; orders.status: .open -> .shipped(at: 12)",
                #"cancel("late") in 1µs | orders.status: .shipped(at: 12) -> .cancelled(reason: "late", refund: 3)"#,
            ]
        )
    }

    @Test func diffLooksThroughOptionals() {
        let lines = Self.diffLines([
            .setDiscount(5), .setDiscount(7), .setDiscount(nil), .setCity("Oslo"), .setCity("Bergen"), .setCity(nil),
        ])
        #expect(
            lines == [
                "setDiscount(5) in 1µs | orders.discount: nil -> 5",
                "setDiscount(7) in 1µs | orders.discount: 5 -> 7",
                "setDiscount(nil) in 1µs | orders.discount: 7 -> nil",
                #"setCity("Oslo") in 1µs | orders.address: nil -> Address(city: "Oslo")"#,
                #"setCity("Bergen") in 1µs | orders.address.city: "Oslo" -> "Bergen""#,
                #"setCity(nil) in 1µs | orders.address: Address(city: "Bergen") -> nil"#,
            ]
        )
    }

    @Test func diffOfAnActionThatChangedNothingSaysSo() {
        #expect(Self.diffLines([.noop]) == ["noop in 1µs | no change"])
    }

    @Test func diffListsAtMostMaxChangesAndCountsTheRest() {
        let lines = Self.diffLines(maxChanges: 1, [.place(Item(sku: "D", quantity: 1))])
        #expect(lines == [#"place(Item(sku: "D", quantity: 1)) in 1µs | orders.pending: 3 -> 4; +3 more"#])
    }

    @Test func diffCutsLongValues() {
        let long = String(repeating: "x", count: 100)
        let lines = Self.diffLines([.setCity(long)])
        let shown = "Address(city: \"" + String(repeating: "x", count: 44) + "…"
        #expect(lines.count == 1)
        #expect(lines.first?.hasSuffix("| orders.address: nil -> \(shown)") == true)
    }

    @Test func diffWorksOnStatesThatAreNotEquatable() {
        final class Box: Sendable {
            let value: Int
            init(_ value: Int) { self.value = value }
        }
        struct Loose: Sendable {
            var count = 0
            var name = "a"
            var boxes: [Box] = [Box(1)]
            var tuple = (x: 1, 2)
        }
        enum LooseAction: Sendable { case bump, rename, addBox, replaceBox, moveTuple }
        let lines = Locked<[String]>([])
        let store = Store<Loose, LooseAction>(
            initialState: Loose(),
            reducer: Reducer(mutating: { state, action in
                switch action {
                case .bump: state.count += 1
                case .rename: state.name = "b"
                case .addBox: state.boxes.append(Box(2))
                case .replaceBox: state.boxes[0] = Box(9)
                case .moveTuple: state.tuple.1 = 3
                }
            }),
            middleware: [Middlewares.logging(diff: true, sink: { lines.append($0) }, clock: { 0 })]
        )
        for action in [LooseAction.bump, .rename, .addBox, .replaceBox, .moveTuple] {
            store.dispatch(action)
        }
        #expect(
            lines.current == [
                "bump in 0ns | count: 0 -> 1",
                #"rename in 0ns | name: "a" -> "b""#,
                "addBox in 0ns | boxes.count: 1 -> 2; boxes[1]: (none) -> Box(value: 2)",
                // Elements that are not Equatable are compared by their fields.
                "replaceBox in 0ns | boxes[0].value: 1 -> 9",
                "moveTuple in 0ns | tuple.1: 2 -> 3",
            ]
        )
    }

    @Test func diffOfAStateThatIsOneValueNamesItState() {
        let lines = Locked<[String]>([])
        let store = Store<Int, TestAction>(
            initialState: 0,
            reducer: Reducer(mutating: { count, _ in count += 1 }),
            middleware: [Middlewares.logging(diff: true, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(.increment)
        #expect(lines.current == ["increment in 0ns | state: 0 -> 1"])
    }

    /// A reference whose uniqueness the reducer checks: if the logger held a copy of the state, it is not unique.
    final class Probe: Sendable {}

    struct ProbedState: Sendable {
        var probe = Probe()
        var count = 0
    }

    /// Runs one action through a store with `middleware` and returns whether the reducer found the state's
    /// storage unshared, i.e. whether nothing else held a copy of the state while it ran.
    static func reducerSeesUniqueState(middleware: [Middleware<ProbedState, TestAction>]) -> Bool {
        let unique = Locked<Bool?>(nil)
        let store = Store<ProbedState, TestAction>(
            initialState: ProbedState(),
            reducer: Reducer(mutating: { state, _ in
                let isUnique = isKnownUniquelyReferenced(&state.probe)
                unique.withValue { $0 = isUnique }
                state.count += 1
            }),
            middleware: middleware
        )
        store.dispatch(.increment)
        #expect(store.state.count == 1)
        return unique.current == true
    }

    @Test func withoutDiffTheStateIsNotHeldWhileTheReducerRuns() {
        let lines = Locked<[String]>([])
        // Control: without middleware the reducer sees the only reference; with the diff on, the logger holds the
        // state from before the action, so the reducer does not.
        #expect(Self.reducerSeesUniqueState(middleware: []))
        #expect(
            !Self.reducerSeesUniqueState(middleware: [
                Middlewares.logging(diff: true, sink: { lines.append($0) }, clock: { 0 })
            ])
        )
        #expect(
            Self.reducerSeesUniqueState(middleware: [
                Middlewares.logging(diff: false, sink: { lines.append($0) }, clock: { 0 })
            ])
        )
        #expect(lines.current == ["increment in 0ns | count: 0 -> 1", "increment in 0ns"])
    }

    /// A value that counts how often it is reflected.
    struct Watched: Sendable, CustomReflectable {
        let reflections: Locked<Int>
        var value = 0

        var customMirror: Mirror {
            reflections.withValue { $0 += 1 }
            return Mirror(self, children: ["value": value])
        }
    }

    struct WatchedState: Sendable {
        var watched: Watched
    }

    /// How many times one logged action reflected the state, with the diff on or off.
    static func reflections(diff: Bool) -> Int {
        let reflections = Locked(0)
        let lines = Locked<[String]>([])
        let store = Store<WatchedState, TestAction>(
            initialState: WatchedState(watched: Watched(reflections: reflections)),
            reducer: Reducer(mutating: { state, _ in state.watched.value += 1 }),
            middleware: [Middlewares.logging(diff: diff, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(.increment)
        #expect(lines.current == [diff ? "increment in 0ns | watched.value: 0 -> 1" : "increment in 0ns"])
        return reflections.current
    }

    @Test func withoutDiffTheStateIsNotReflected() {
        #expect(Self.reflections(diff: true) > 0)
        #expect(Self.reflections(diff: false) == 0)
    }

    /// An element that is not `Equatable`, and counts how often it is reflected.
    struct Part: Sendable, CustomReflectable {
        var name: String
        let reflections: Locked<Int>

        var customMirror: Mirror {
            reflections.withValue { $0 += 1 }
            return Mirror(self, children: ["name": name])
        }
    }

    enum Parts: Sendable {
        case list([Part])
    }

    @Test func comparingAChangedValueLooksAtABoundedNumberOfParts() {
        let reflections = Locked(0)
        // Equal names in new storage each time: only a walk through every part could tell that nothing changed.
        let makeParts = { @Sendable in
            Parts.list((0..<5_000).map { Part(name: "part number \($0) of many", reflections: reflections) })
        }
        let lines = Locked<[String]>([])
        let store = Store<Parts, Int>(
            initialState: makeParts(),
            reducer: Reducer(mutating: { state, _ in state = makeParts() }),
            middleware: [Middlewares.logging(diff: true, maxLineLength: nil, sink: { lines.append($0) }, clock: { 0 })]
        )
        reflections.withValue { $0 = 0 }
        store.dispatch(1)
        let value = #"[Part(name: "part number 0 of many"), Part(name: "part numb…"#
        #expect(lines.current == ["1 in 0ns | list: \(value) -> \(value) (not compared in full)"])
        // At most 1,024 values looked at, two mirrors each; and the two descriptions, cut at 60 characters.
        #expect(reflections.current > 0)
        #expect(reflections.current <= 2 * 1_024 + 2 * 2)
    }

    // MARK: Options

    @Test func includeSelectsTheLoggedActionsAndTheOthersStillPass() {
        let (store, lines) = Self.makeStore { sink, clock in
            Middlewares.logging(include: { $0 != .noop }, sink: sink, clock: clock)
        }
        for action in [TestAction.increment, .noop, .add(2), .noop] {
            store.dispatch(action)
        }
        #expect(lines.current == ["increment in 1µs", "add(2) in 1µs"])
        #expect(store.state.count == 3)
    }

    @Test func longLinesAreCutWithAnEllipsisKeepingTheDuration() {
        let (store, lines) = Self.makeStore { sink, clock in
            Middlewares.logging(maxLineLength: 24, sink: sink, clock: clock)
        }
        store.dispatch(.record(String(repeating: "a", count: 50)))
        store.dispatch(.add(1))
        #expect(lines.current == [#"record("aaaaaaaa… in 1µs"#, "add(1) in 1µs"])
        #expect(lines.current.map(\.count) == [24, 13])
    }

    @Test func anActionsOwnDescriptionIsCutToo() {
        struct Long: Sendable, CustomStringConvertible {
            var description: String { String(repeating: "z", count: 100) }
        }
        let lines = Locked<[String]>([])
        let store = Store<Int, Long>(
            initialState: 0,
            reducer: .identity,
            middleware: [Middlewares.logging(maxLineLength: 20, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(Long())
        #expect(lines.current == ["zzzzzzzzzzzz… in 0ns"])
        #expect(lines.current.first?.count == 20)
    }

    // A line that is too long is made to fit in this order: the action is cut down to its first 16 characters, the
    // changes that do not fit are left out from the end and counted, the action is cut further, and only then
    // the line is cut at its end.

    @Test func aLongActionIsCutSoThatTheDurationAndTheChangesStay() {
        let sku = String(repeating: "x", count: 100)
        let lines = Self.diffLines(maxLineLength: 200, [.place(Item(sku: sku, quantity: 2))])
        let item = #"Item(sku: ""# + String(repeating: "x", count: 48) + "…"
        let changes =
            "orders.pending: 3 -> 4; orders.items.count: 3 -> 4; orders.items[3]: (none) -> \(item); revenue: 0 -> 20"
        let action = #"place(Item(sku: ""# + String(repeating: "x", count: 15) + "…"
        #expect(lines == ["\(action) in 1µs | \(changes)"])
        #expect(lines.first?.count == 200)
    }

    @Test func changesThatDoNotFitAreLeftOutFromTheEndAndCounted() {
        let sku = String(repeating: "x", count: 100)
        let lines = Self.diffLines(maxLineLength: 60, [.place(Item(sku: sku, quantity: 2))])
        #expect(lines == [#"place(Item(sku: "x… in 1µs | orders.pending: 3 -> 4; +3 more"#])
        #expect(lines.first?.count == 60)
        // The action is short: it stays whole, the changes make room.
        #expect(Self.diffLines(maxLineLength: 40, [.ship(at: 12)]) == ["ship(at: 12) in 1µs | +2 more"])
    }

    @Test func whenOnlyTheCountOfChangesFitsTheActionIsCutFurther() {
        let sku = String(repeating: "x", count: 100)
        let lines = Self.diffLines(maxLineLength: 30, [.place(Item(sku: sku, quantity: 2))])
        #expect(lines == ["place(Item(s… in 1µs | +4 more"])
        #expect(lines.first?.count == 30)
    }

    @Test func aLimitTooShortForTheDurationCutsTheLineAtItsEnd() {
        let lines = Self.diffLines(maxLineLength: 12, [.place(Item(sku: "x", quantity: 2))])
        #expect(lines == ["plac… in 1µ…"])
        #expect(lines.first?.count == 12)
    }

    @Test func withoutALimitLinesAreWhole() {
        let long = String(repeating: "b", count: 500)
        let (store, lines) = Self.makeStore { sink, clock in
            Middlewares.logging(maxLineLength: nil, sink: sink, clock: clock)
        }
        store.dispatch(.record(long))
        #expect(lines.current == ["record(\"\(long)\") in 1µs"])
    }

    // MARK: One line per action

    /// A description with line breaks and a terminal escape in it.
    struct Multiline: Sendable, CustomStringConvertible {
        var description: String { "one\ntwo\r\u{1B}[31m" }
    }

    @Test func textOfEveryKindIsEscapedSoThatEachActionWritesOneLine() {
        enum Note: Sendable {
            case text(String)
            case slice(Substring)
            case character(Character)
            case scalar(Unicode.Scalar)
            case described(Multiline)
            case labeled(Labeled)
        }
        let lines = Locked<[String]>([])
        let store = Store<Int, Note>(
            initialState: 0,
            reducer: .identity,
            middleware: [Middlewares.logging(maxLineLength: nil, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(.text("a\nb\t\"c\"\\\u{0}\u{7F}\u{85}\u{2028}\u{2029}"))
        store.dispatch(.slice("a\nb"[...]))
        store.dispatch(.character("\r\n"))
        store.dispatch(.scalar("\u{1B}"))
        store.dispatch(.described(Multiline()))
        store.dispatch(.labeled(Labeled()))
        #expect(
            lines.current == [
                #"text("a\nb\t\"c\"\\\0\u{7F}\u{85}\u{2028}\u{2029}") in 0ns"#,
                #"slice("a\nb") in 0ns"#,
                #"character("\r\n") in 0ns"#,
                #"scalar("\u{1B}") in 0ns"#,
                #"described(one\ntwo\r\u{1B}[31m) in 0ns"#,
                #"labeled(Labeled(odd\nlabel: 0)) in 0ns"#,
            ]
        )
        #expect(lines.current.allSatisfy { line in !line.unicodeScalars.contains { $0.value < 0x20 } })
    }

    /// A value whose mirror names its part with a line break.
    struct Labeled: Sendable, CustomReflectable {
        var value = 0
        var customMirror: Mirror { Mirror(self, children: ["odd\nlabel": value], displayStyle: .struct) }
    }

    @Test func anActionsOwnDescriptionIsEscapedToo() {
        let lines = Locked<[String]>([])
        let store = Store<Int, Multiline>(
            initialState: 0,
            reducer: .identity,
            middleware: [Middlewares.logging(maxLineLength: 20, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(Multiline())
        #expect(lines.current == [#"one\ntwo\r\u… in 0ns"#])
    }

    @Test func changedTextInTheStateIsEscaped() {
        struct Texts: Sendable {
            var slice: Substring = ""
            var character: Character = "a"
            var labeled = Labeled()
            var described = Multiline()
        }
        let lines = Locked<[String]>([])
        let store = Store<Texts, Int>(
            initialState: Texts(),
            reducer: Reducer(mutating: { state, _ in
                state.slice = "a\nb"[...]
                state.character = "\n"
                state.labeled.value = 1
            }),
            middleware: [Middlewares.logging(diff: true, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(1)
        #expect(
            lines.current == [
                #"1 in 0ns | slice: "" -> "a\nb"; character: "a" -> "\n"; labeled.odd\nlabel: 0 -> 1"#
            ]
        )
    }

    // MARK: Bounded work

    indirect enum Chain: Sendable {
        case end
        case link(Chain)

        static func depth(_ depth: Int) -> Chain {
            var chain = Chain.end
            for _ in 0..<depth {
                chain = .link(chain)
            }
            return chain
        }
    }

    struct Deep: Sendable {
        var count = 0
        var chain: Chain
    }

    enum DeepAction: Sendable {
        case bump
        case push
        case replace(Chain)
    }

    static let deepReducer = Reducer<Deep, DeepAction>(mutating: { state, action in
        switch action {
        case .bump: state.count += 1
        case .push: state.chain = .link(state.chain)
        case .replace(let chain): state.chain = chain
        }
    })

    /// An exit test, so that a stack overflow fails this test instead of ending the whole test run.
    @Test func aTenThousandDeepValueInTheStateAndTheActionDoesNotCrash() async {
        await #expect(processExitsWith: .success) {
            let lines = Locked<[String]>([])
            let store = Store<Deep, DeepAction>(
                initialState: Deep(chain: .depth(10_000)),
                reducer: LoggingTests.deepReducer,
                middleware: [
                    Middlewares.logging(diff: true, maxLineLength: nil, sink: { lines.append($0) }, clock: { 0 })
                ]
            )
            store.dispatch(.bump)
            store.dispatch(.push)
            store.dispatch(.replace(.depth(10_000)))
            store.dispatch(.replace(.depth(10_001)))
            if lines.current.count != 4 || lines.current.first != "bump in 0ns | count: 0 -> 1" {
                exit(1)
            }
        }
    }

    @Test func deepActionsAreDescribedToABoundedDepth() {
        let lines = Locked<[String]>([])
        let store = Store<Deep, DeepAction>(
            initialState: Deep(chain: .end),
            reducer: .identity,
            middleware: [Middlewares.logging(maxLineLength: nil, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(.replace(.depth(100)))
        let nested = String(repeating: ".link(", count: 15) + "…" + String(repeating: ")", count: 15)
        #expect(lines.current == ["replace(\(nested)) in 0ns"])
    }

    @Test func deepValuesInTheStateAreComparedWithoutDescribingThem() {
        let lines = Locked<[String]>([])
        let store = Store<Deep, DeepAction>(
            initialState: Deep(chain: .depth(2)),
            reducer: Self.deepReducer,
            middleware: [Middlewares.logging(diff: true, maxLineLength: nil, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(.bump)
        store.dispatch(.push)
        store.dispatch(.replace(.depth(3)))  // rebuilt, equal
        store.dispatch(.replace(.depth(100)))  // differs 3 levels down
        store.dispatch(.replace(.depth(100)))  // rebuilt, deeper than the comparison goes
        // Values in a change are cut at 60 characters, the action (no line limit here) at 16 levels; the diff names
        // parts through the enum's case 16 levels deep and compares what is below as a whole.
        let long = String(String(repeating: ".link(", count: 10).prefix(59)) + "…"
        let action = "replace(" + String(repeating: ".link(", count: 15) + "…" + String(repeating: ")", count: 16)
        let deepest = "chain" + String(repeating: ".link", count: 15)
        #expect(
            lines.current == [
                "bump in 0ns | count: 0 -> 1",
                "push in 0ns | chain.link.link: .end -> .link(.end)",
                "replace(.link(.link(.link(.end)))) in 0ns | no change",
                "\(action) in 0ns | chain.link.link.link: .end -> \(long)",
                "\(action) in 0ns | \(deepest): \(long) -> \(long) (not compared in full)",
            ]
        )
    }

    /// A large leaf that is not `Equatable`, and counts how often it is described or reflected.
    enum Bulk: Sendable, CustomStringConvertible {
        case values([Int], uses: Locked<Int>)

        var description: String {
            guard case .values(let values, let uses) = self else { return "" }
            uses.withValue { $0 += 1 }
            return "Bulk(\(values.count) values)"
        }
    }

    /// A part that is not `Equatable`, and counts how often it is reflected.
    struct Reflected: Sendable, CustomReflectable {
        var values: [Int]
        let uses: Locked<Int>

        var customMirror: Mirror {
            uses.withValue { $0 += 1 }
            return Mirror(self, children: ["count": values.count], displayStyle: .enum)
        }
    }

    struct Warehouse: Sendable {
        var count = 0
        var bulk: Bulk
        var reflected: Reflected
    }

    @Test func aLargeUntouchedLeafIsNeitherDescribedNorReflected() {
        let uses = Locked(0)
        let lines = Locked<[String]>([])
        let store = Store<Warehouse, Int>(
            initialState: Warehouse(
                bulk: .values(Array(repeating: 7, count: 2_000_000), uses: uses),
                reflected: Reflected(values: Array(repeating: 7, count: 1_000), uses: uses)
            ),
            reducer: Reducer(mutating: { state, amount in
                if amount == 0 {
                    state.bulk = .values([1, 2, 3], uses: uses)
                } else {
                    state.count += amount
                }
            }),
            middleware: [Middlewares.logging(diff: true, sink: { lines.append($0) }, clock: { 0 })]
        )
        for amount in 1...5 {
            store.dispatch(amount)
        }
        #expect(uses.current == 0)
        // A changed leaf is compared up to its first difference and described once on each side.
        store.dispatch(0)
        #expect(uses.current == 2)
        #expect(
            lines.current == (1...5).map { "\($0) in 0ns | count: \(($0 - 1) * $0 / 2) -> \($0 * ($0 + 1) / 2)" } + [
                "0 in 0ns | bulk: Bulk(2000000 values) -> Bulk(3 values)"
            ]
        )
    }

    @Test func samplingEveryNLogsTheFirstAndEveryNthAction() {
        let (store, lines) = Self.makeStore { sink, clock in
            Middlewares.logging(sampling: .every(3), sink: sink, clock: clock)
        }
        for amount in 1...10 {
            store.dispatch(.add(amount))
        }
        #expect(lines.current == ["add(1) in 1µs", "add(4) in 1µs", "add(7) in 1µs", "add(10) in 1µs"])
        #expect(store.state.count == 55)
    }

    @Test func samplingAtARateSpreadsTheLoggedActionsEvenly() {
        let (store, lines) = Self.makeStore { sink, clock in
            Middlewares.logging(sampling: .rate(0.3), sink: sink, clock: clock)
        }
        for amount in 1...20 {
            store.dispatch(.add(amount))
        }
        // Indices 0, 4, 7, 10, 14, 17: where floor(k * 0.3) steps up.
        #expect(lines.current == [1, 5, 8, 11, 15, 18].map { "add(\($0)) in 1µs" })
    }

    @Test func samplingCountsOnlyIncludedActionsAndEachStoreCountsItsOwn() {
        let lines = Locked<[String]>([])
        let logging: Middleware<TestState, TestAction> = Middlewares.logging(
            sampling: .every(2),
            include: { $0 != .noop },
            sink: { lines.append($0) },
            clock: { 0 }
        )
        let first = Store(initialState: TestState(), reducer: testReducer, middleware: [logging])
        let second = Store(initialState: TestState(), reducer: testReducer, middleware: [logging])
        for action in [TestAction.add(1), .noop, .add(2), .noop, .add(3)] {
            first.dispatch(action)
        }
        second.dispatch(.add(100))
        #expect(lines.current == ["add(1) in 0ns", "add(3) in 0ns", "add(100) in 0ns"])
    }

    @Test func samplingValuesThatMeanEverything() {
        #expect(Middlewares.LogSampling.every(1) == .all)
        #expect(Middlewares.LogSampling.rate(1) == .all)
        #expect(Middlewares.LogSampling.every(2) != .all)
    }

    // MARK: Where the line is written

    /// The line is made and handed to the sink once the store's pipeline is free again, before `dispatch` returns:
    /// a dispatch from the sink is processed at once, not queued behind the action being logged.
    @Test func theSinkRunsOnceTheStoreGaveThePipelineUp() {
        let seen = Locked<[Int]>([])
        let store = storeWritingLines(
            include: { $0 == .add(1) },
            sink: { _, store in
                store.dispatch(.add(100))
                seen.append(store.state.count)
            }
        )
        store.dispatch(.add(1))
        #expect(seen.current == [101])
        #expect(store.state.count == 101)
    }

    /// The lines of an action and of the follow-ups its work dispatched come in the order of the actions, each once
    /// the whole turn is done (the state the sink reads holds the follow-up), before `dispatch` or `send` returns.
    @Test func linesOfFollowUpsComeInOrderAfterTheWholeTurn() async {
        let lines = Locked<[String]>([])
        let followUp = SideEffect<TestState, TestAction> { action, api in
            if case .add(let amount) = action, amount < 10 { api.dispatch(.add(amount * 10)) }
        }
        let store = storeWritingLines(after: [Middleware(followUp)]) { line, store in
            lines.append("\(line.prefix { $0 != " " }) seeing \(store.state.count)")
        }
        store.dispatch(.add(1))
        #expect(lines.current == ["add(1) seeing 11", "add(10) seeing 11"])
        await store.send(.add(2))
        #expect(lines.current.suffix(2) == ["add(2) seeing 33", "add(20) seeing 33"])
    }

    /// A sink that takes long holds no other dispatch: while it waits, a dispatch from another thread runs to its
    /// end. (Written in the pipeline, the line would hold that dispatch until the sink gave up waiting.)
    @Test func aSlowSinkHoldsNoOtherDispatch() async {
        let sinkEntered = AsyncGate()
        let otherDispatchReturned = Locked(false)
        let sinkSawIt = Locked(false)
        let store = storeWritingLines(
            include: { $0 == .add(1) },
            sink: { _, _ in
                sinkEntered.open()
                let returned = otherDispatchReturned.waitBlocking { $0 }
                sinkSawIt.withValue { $0 = returned }
            }
        )
        async let logged: Void = onThread { store.dispatch(.add(1)) }
        await sinkEntered.wait()
        await onThread { store.dispatch(.add(2)) }
        otherDispatchReturned.withValue { $0 = true }
        await logged
        #expect(sinkSawIt.current)
        #expect(store.state.count == 3)
    }

    /// A task that waited in line has its action run by the thread that owns the pipeline; its line comes back with
    /// it and is written before its `send` returns, not after the owner's own lines.
    @Test func aSendServedByTheOwnerWritesItsLineBeforeItReturns() async throws {
        let sendReturned = Locked(false)
        let lines = Locked<[String]>([])
        let blocked = BlockedStore(
            middleware: Middlewares.logging(
                sink: { line in
                    if line.hasPrefix("record(\"block\")") {
                        // The owner's own line waits until the send returned: a line handed back to the owner would
                        // come after it.
                        _ = sendReturned.waitBlocking { $0 }
                    }
                    lines.append(line)
                },
                clock: { 0 }
            )
        )
        blocked.blockOnAnotherThread()
        let sent = try await blocked.sendInATaskAndWaitInLine("sent")
        blocked.unblock()
        let accepted = await sent.value.isAccepted
        let linesWhenSendReturned = lines.current
        sendReturned.withValue { $0 = true }
        #expect(accepted)
        #expect(linesWhenSendReturned.map { $0.prefix { $0 != " " } } == ["record(\"sent\")"])
        #expect(await blocked.blockerReturns())
        #expect(lines.current.count == 2)
    }

    // MARK: Concurrency

    @Test func concurrentDispatchesLogExactlyOneLinePerAction() async {
        let threads = 8
        let perThread = 250
        let lines = Locked<[String]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [Middlewares.logging(diff: true, sink: { lines.append($0) }, clock: { 0 })]
        )
        await runOnThreads(threads) { thread in
            for index in 0..<perThread {
                store.dispatch(.add(thread * 1_000 + index))
            }
        }
        let logged = lines.current
        #expect(logged.count == threads * perThread)
        // Every action once, and each diff is consistent with its action: count grew by the amount added.
        var seen = Set<Int>()
        for line in logged {
            let scanner = Scanner(string: line)
            _ = scanner.scanString("add(")
            let amount = scanner.scanInt() ?? -1
            _ = scanner.scanUpToString("count: ")
            _ = scanner.scanString("count: ")
            let before = scanner.scanInt() ?? -1
            _ = scanner.scanString("->")
            let after = scanner.scanInt() ?? -1
            #expect(after - before == amount, "\(line)")
            seen.insert(amount)
        }
        let expected = Set((0..<threads).flatMap { thread in (0..<perThread).map { thread * 1_000 + $0 } })
        #expect(seen == expected)
    }

    @Test func concurrentSamplingLogsAnExactShare() async {
        let threads = 4
        let perThread = 1_000
        let lines = Locked<[String]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [Middlewares.logging(sampling: .every(4), sink: { lines.append($0) }, clock: { 0 })]
        )
        await runOnThreads(threads) { _ in
            for _ in 0..<perThread {
                store.dispatch(.increment)
            }
        }
        #expect(lines.current.count == threads * perThread / 4)
        #expect(store.state.count == threads * perThread)
    }

    @Test func writeLineWritesWholeLinesFromManyThreads() async throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("sluice-logging-\(UUID().uuidString).log").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        let threads = 4
        let perThread = 500
        await runOnThreads(threads) { thread in
            for index in 0..<perThread {
                let filler = String(repeating: Character(UnicodeScalar(UInt8(97 + thread))), count: 100)
                Middlewares.writeLine("thread \(thread) line \(index) \(filler)", toFileDescriptor: descriptor)
            }
        }
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.hasSuffix("\n"))
        let lines = written.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == threads * perThread)
        var expected = Set<String>()
        for thread in 0..<threads {
            let filler = String(repeating: Character(UnicodeScalar(UInt8(97 + thread))), count: 100)
            for index in 0..<perThread {
                expected.insert("thread \(thread) line \(index) \(filler)")
            }
        }
        #expect(Set(lines.map(String.init)) == expected)
    }
}
