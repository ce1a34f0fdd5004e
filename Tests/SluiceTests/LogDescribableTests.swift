import Sluice
import Testing

/// `LogDescribable`: an action (or a value inside one) that writes its own description gets the line that
/// reflection would write, without being reflected.
@Suite struct LogDescribableTests {
    struct Item: Sendable {
        var sku: String
        var quantity: Int
    }

    enum Reflected: Sendable {
        case place(id: Int, quantity: Int)
        case rename(id: Int, String)
        case add(Int)
        case item(Item)
        case nested(Inner)
        case flags(on: Bool, ratio: Double, note: String?)
        case clear
    }

    enum Inner: Sendable {
        case ship(at: Int)
        case hold
    }

    /// The same cases as `Reflected`, describing themselves.
    enum Described: Sendable, LogDescribable {
        case place(id: Int, quantity: Int)
        case rename(id: Int, String)
        case add(Int)
        case item(Item)
        case nested(DescribedInner)
        case flags(on: Bool, ratio: Double, note: String?)
        case clear

        func describe(into description: inout LogDescription) {
            switch self {
            case .place(let id, let quantity):
                description.enumCase("place")
                description.field("id", id)
                description.field("quantity", quantity)
            case .rename(let id, let name):
                description.enumCase("rename")
                description.field("id", id)
                description.field(name)
            case .add(let value):
                description.enumCase("add")
                description.field(value)
            case .item(let item):
                description.enumCase("item")
                description.field(DescribedItem(item))
            case .nested(let inner):
                description.enumCase("nested")
                description.field(inner)
            case .flags(let on, let ratio, let note):
                description.enumCase("flags")
                description.field("on", on)
                description.field("ratio", ratio)
                description.field("note", note)
            case .clear:
                description.enumCase("clear")
            }
        }
    }

    enum DescribedInner: Sendable, LogDescribable {
        case ship(at: Int)
        case hold

        func describe(into description: inout LogDescription) {
            switch self {
            case .ship(let time):
                description.enumCase("ship")
                description.field("at", time)
            case .hold:
                description.enumCase("hold")
            }
        }
    }

    /// `Item`, described as a structure.
    struct DescribedItem: Sendable, LogDescribable {
        var item: Item
        init(_ item: Item) { self.item = item }

        func describe(into description: inout LogDescription) {
            description.structure("Item")
            description.field("sku", item.sku)
            description.field("quantity", item.quantity)
        }
    }

    static func lines<Action: Sendable>(_ actions: [Action], maxLineLength: Int? = 200) -> [String] {
        let lines = Locked<[String]>([])
        let store = Store<Int, Action>(
            initialState: 0,
            reducer: .identity,
            middleware: [Middlewares.logging(maxLineLength: maxLineLength, sink: { lines.append($0) }, clock: { 0 })]
        )
        for action in actions {
            store.dispatch(action)
        }
        return lines.current
    }

    static let reflected: [Reflected] = [
        .place(id: 7, quantity: -2),
        .rename(id: 7, "tea \"green\"\n"),
        .add(Int.min),
        .item(Item(sku: "A", quantity: 2)),
        .nested(.ship(at: 12)),
        .nested(.hold),
        .flags(on: true, ratio: 0.25, note: nil),
        .flags(on: false, ratio: 3, note: "é"),
        .clear,
    ]

    static let described: [Described] = [
        .place(id: 7, quantity: -2),
        .rename(id: 7, "tea \"green\"\n"),
        .add(Int.min),
        .item(Item(sku: "A", quantity: 2)),
        .nested(.ship(at: 12)),
        .nested(.hold),
        .flags(on: true, ratio: 0.25, note: nil),
        .flags(on: false, ratio: 3, note: "é"),
        .clear,
    ]

    @Test func aDescribedActionGetsTheLineThatReflectionWrites() {
        let lines = Self.lines(Self.described)
        #expect(lines == Self.lines(Self.reflected))
        #expect(
            lines == [
                "place(id: 7, quantity: -2) in 0ns",
                #"rename(id: 7, "tea \"green\"\n") in 0ns"#,
                "add(-9223372036854775808) in 0ns",
                #"item(Item(sku: "A", quantity: 2)) in 0ns"#,
                "nested(.ship(at: 12)) in 0ns",
                "nested(.hold) in 0ns",
                "flags(on: true, ratio: 0.25, note: nil) in 0ns",
                #"flags(on: false, ratio: 3.0, note: "é") in 0ns"#,
                "clear in 0ns",
            ]
        )
    }

    @Test func aDescribedActionIsCutAtTheSameCharacterAsAReflectedOne() {
        for limit in [1, 2, 5, 9, 12, 16, 20, 24, 30, 40] {
            #expect(
                Self.lines(Self.described, maxLineLength: limit) == Self.lines(Self.reflected, maxLineLength: limit)
            )
        }
    }

    /// An action that counts the times it is reflected.
    struct Counted: Sendable, CustomReflectable, LogDescribable {
        static let reflections = Locked(0)
        var value = 3

        var customMirror: Mirror {
            Self.reflections.withValue { $0 += 1 }
            return Mirror(self, children: ["value": value])
        }

        func describe(into description: inout LogDescription) {
            description.structure("Counted")
            description.field("value", value)
        }
    }

    enum Holder: Sendable {
        case counted(Counted)
    }

    @Test func aDescribedValueIsNotReflectedEvenInsideAReflectedAction() {
        Counted.reflections.withValue { $0 = 0 }
        #expect(Self.lines([Counted()]) == ["Counted(value: 3) in 0ns"])
        #expect(Self.lines([Holder.counted(Counted())]) == ["counted(Counted(value: 3)) in 0ns"])
        #expect(Counted.reflections.current == 0)
    }

    /// A value with both descriptions: its `LogDescribable` one is used.
    struct Both: Sendable, CustomStringConvertible, LogDescribable {
        var description: String { "the description" }

        func describe(into description: inout LogDescription) {
            description.enumCase("line\nbreak")
            description.write("\u{1B}")
        }
    }

    @Test func aLogDescriptionComesBeforeTheTypesOwnDescriptionAndIsEscaped() {
        #expect(Self.lines([Both()]) == [#"line\nbreak\u{1B} in 0ns"#])
    }

    @Test func aRecordDescribesItsActionThroughTheConformance() {
        let records = Locked<[String]>([])
        let store = Store<Int, Described>(
            initialState: 0,
            reducer: .identity,
            middleware: [Middlewares.logging(maxLineLength: 12, records: { records.append($0.actionDescription) })]
        )
        store.dispatch(.place(id: 1, quantity: 2))
        #expect(records.current == ["place(id: 1…"])
    }
}
