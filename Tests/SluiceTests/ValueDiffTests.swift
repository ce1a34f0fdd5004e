import Foundation
import Sluice
import SluiceJournal
import SluiceReplay
import SluiceTesting
import Testing

/// The one diff behind the log line, the replay's step and command, and the test store's failures: paths down to
/// the field inside dictionaries, arrays, sets, optionals and enums; its bounds; and the same path in each place.
@Suite struct ValueDiffTests {
    // MARK: Fixtures

    struct Auction: Codable, Equatable, Sendable {
        var title: String
        var price: Int
        var leader: String?
        var closesAt: Int
    }

    struct AuctionHouse: Codable, Equatable, Sendable {
        var auctions: [Int: Auction] = Dictionary(
            uniqueKeysWithValues: (0..<50).map { id in
                (id, Auction(title: "lot \(id)", price: 1_000, leader: nil, closesAt: 100 + id))
            }
        )
        var bids = 0
    }

    enum AuctionAction: Codable, Equatable, Sendable {
        case reprice(auction: Int, price: Int)
    }

    static let auctionReducer = Reducer<AuctionHouse, AuctionAction>(mutating: { state, action in
        switch action {
        case .reprice(let id, let price): state.auctions[id]?.price = price
        }
    })

    /// The changes from `old` to `new`, as the log line lists them.
    static func changes(_ old: Any, _ new: Any, maxChanges: Int = 20) -> [String] {
        ValueDiff(old, new, bounds: .logLine(maxChanges: maxChanges)).changes.map(\.description)
    }

    // MARK: The same path in every place

    @Test func oneFieldOfOneOfFiftyEntriesIsNamedByTheLogLine() {
        let lines = Locked<[String]>([])
        let store = Store<AuctionHouse, AuctionAction>(
            initialState: AuctionHouse(),
            reducer: Self.auctionReducer,
            middleware: [Middlewares.logging(diff: true, maxLineLength: nil, sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(.reprice(auction: 35, price: 1_015))
        #expect(lines.current == ["reprice(auction: 35, price: 1015) in 0ns | auctions[35].price: 1000 -> 1015"])
    }

    @Test func oneFieldOfOneOfFiftyEntriesIsNamedByTheReplayStepAndCommand() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(storage: FileJournalStorage(directory: directory))
            let store = try Store<AuctionHouse, AuctionAction>(
                recoveringFrom: journal,
                durability: .everyAction,
                initialState: AuctionHouse(),
                reducer: Self.auctionReducer
            )
            store.dispatch(.reprice(auction: 35, price: 1_015))
            journal.close()

            let replay = try JournalReplay(
                directory: directory,
                initialState: AuctionHouse(),
                reducer: Self.auctionReducer
            )
            let step = try replay.step(at: 1)
            #expect(step.changes.map(\.description) == ["auctions[35].price: 1000 -> 1015"])
            #expect(step.omittedChanges == 0)

            let output = Locked<[String]>([])
            let errors = Locked<[String]>([])
            let status = SluiceReplay.run(
                arguments: [directory, "--diff", "--to", "1"],
                initialState: AuctionHouse(),
                reducer: Self.auctionReducer,
                output: { output.append($0) },
                errorOutput: { errors.append($0) }
            )
            #expect(status == 0)
            #expect(errors.current == [])
            #expect(output.current == ["1 reprice(auction: 35, price: 1015)", "    auctions[35].price: 1000 -> 1015"])
        }
    }

    @Test func oneFieldOfOneOfFiftyEntriesIsNamedByTheTestStoreFailure() async {
        let recorded = Locked<[TestStoreIssueRecorder.Issue]>([])
        let record: @Sendable (TestStoreIssueRecorder.Issue) -> Void = { recorded.append($0) }
        await TestStoreIssueRecorder.$current.withValue(record) {
            let store = TestStore(initialState: AuctionHouse(), reducer: Self.auctionReducer)
            store.send(.reprice(auction: 35, price: 1_015)) { $0.auctions[35]?.price = 1_020 }
            await store.finish()
        }
        #expect(
            recorded.current.map(\.message) == [
                """
                The state after send(reprice(auction: 35, price: 1015)) does not match the expected changes:
                  auctions[35].price: expected 1020, actual 1015
                """
            ]
        )
    }

    // MARK: Collections

    @Test func dictionariesAreComparedByKeyInTheOrderOfTheKeys() {
        let old: [Int: String] = [2: "b", 10: "j", 1: "a", 7: "g"]
        var new = old
        new[10] = "J"
        new[1] = nil
        new[3] = "c"
        #expect(
            Self.changes(old, new) == [
                #"state[1]: "a" -> (none)"#, #"state[3]: (none) -> "c""#, #"state[10]: "j" -> "J""#,
            ]
        )
    }

    @Test func keysThatAreNotComparableAreOrderedByTheirDescriptions() {
        enum Region: Hashable { case west, east, north }
        struct Map { var sizes: [Region: Int] }
        let old = Map(sizes: [.west: 1, .east: 1, .north: 1])
        let new = Map(sizes: [.west: 2, .east: 2, .north: 2])
        #expect(Self.changes(old, new) == ["sizes[.east]: 1 -> 2", "sizes[.north]: 1 -> 2", "sizes[.west]: 1 -> 2"])
    }

    @Test func nestedArraysAreComparedByIndexAtEachLevel() {
        struct Grid { var cells: [[Int]] }
        let old = Grid(cells: [[0, 0, 0], [0, 0, 0], [0, 0, 0]])
        var new = old
        new.cells[2][1] = 5
        new.cells[0].append(9)
        #expect(
            Self.changes(old, new) == ["cells[0].count: 3 -> 4", "cells[0][3]: (none) -> 9", "cells[2][1]: 0 -> 5"]
        )
    }

    @Test func aChangedCountListsTheElementsOnOneSide() {
        struct Line: Equatable { var sku: String }
        struct Order: Equatable { var lines: [Line] }
        let old = Order(lines: [Line(sku: "a"), Line(sku: "b"), Line(sku: "c")])
        #expect(
            Self.changes(old, Order(lines: [Line(sku: "a")])) == [
                "lines.count: 3 -> 1", #"lines[1]: Line(sku: "b") -> (none)"#, #"lines[2]: Line(sku: "c") -> (none)"#,
            ]
        )
        #expect(
            Self.changes(Order(lines: []), Order(lines: [Line(sku: "x")])) == [
                "lines.count: 0 -> 1", #"lines[0]: (none) -> Line(sku: "x")"#,
            ]
        )
        // An element inserted at the front shifts the others: each index names what is there now.
        #expect(
            Self.changes([1, 2], [0, 1, 2]) == [
                "state.count: 2 -> 3", "state[0]: 1 -> 0", "state[1]: 2 -> 1", "state[2]: (none) -> 2",
            ]
        )
    }

    @Test func setsListTheElementsRemovedThenThoseInserted() {
        struct Tags { var tags: Set<String> }
        let changes = ValueDiff(
            Tags(tags: ["b", "a", "c"]),
            Tags(tags: ["d", "a", "e"]),
            bounds: .logLine(maxChanges: 8)
        ).changes
        #expect(
            changes.map(\.description) == [
                #"tags: removed "b""#, #"tags: removed "c""#, #"tags: inserted "d""#, #"tags: inserted "e""#,
            ]
        )
        #expect(changes.map(\.before) == [#""b""#, #""c""#, "(none)", "(none)"])
        #expect(changes.map(\.after) == ["(none)", "(none)", #""d""#, #""e""#])
    }

    // MARK: Optionals and enums

    @Test func optionalsAreComparedThroughTheirValues() {
        struct Place: Equatable { var city: String }
        struct Profile: Equatable { var place: Place? }
        #expect(
            Self.changes(Profile(place: nil), Profile(place: Place(city: "Oslo"))) == [
                #"place: nil -> Place(city: "Oslo")"#
            ]
        )
        #expect(
            Self.changes(Profile(place: Place(city: "Oslo")), Profile(place: Place(city: "Bergen"))) == [
                #"place.city: "Oslo" -> "Bergen""#
            ]
        )
        #expect(
            Self.changes(Profile(place: Place(city: "Oslo")), Profile(place: nil)) == [
                #"place: Place(city: "Oslo") -> nil"#
            ]
        )
    }

    @Test func enumsOfTheSameCaseAreComparedThroughThePayloadNamedByTheCase() {
        struct Bid: Equatable {
            var amount: Int
            var bidder: String
        }
        enum Phase: Equatable {
            case open(Bid)
            case closed(at: Int, winner: String)
            case cancelled
        }
        struct Lot: Equatable { var phase: Phase }
        let open = Lot(phase: .open(Bid(amount: 10, bidder: "ann")))
        #expect(
            Self.changes(open, Lot(phase: .open(Bid(amount: 12, bidder: "ann")))) == ["phase.open.amount: 10 -> 12"]
        )
        #expect(
            Self.changes(Lot(phase: .closed(at: 3, winner: "ann")), Lot(phase: .closed(at: 3, winner: "bo")))
                == [#"phase.closed.winner: "ann" -> "bo""#]
        )
        // Another case: the whole values.
        #expect(
            Self.changes(open, Lot(phase: .cancelled)) == [
                #"phase: .open(Bid(amount: 10, bidder: "ann")) -> .cancelled"#
            ]
        )
    }

    // MARK: Equatable, not Equatable, Sendable

    @Test func valuesThatAreNotEquatableAreComparedPartByPart() {
        final class Box {
            var value: Int
            init(_ value: Int) { self.value = value }
        }
        struct Loose {
            var boxes: [Box]
            var names: [String: [Int]]
        }
        let old = Loose(boxes: [Box(1), Box(2)], names: ["a": [1]])
        // Rebuilt: new instances and new storage, equal parts.
        #expect(Self.changes(old, Loose(boxes: [Box(1), Box(2)], names: ["a": [1]])) == [])
        #expect(
            Self.changes(old, Loose(boxes: [Box(1), Box(3)], names: ["a": [1, 2]])) == [
                "boxes[1].value: 2 -> 3", #"names["a"].count: 1 -> 2"#, #"names["a"][1]: (none) -> 2"#,
            ]
        )
    }

    @Test func anEquatableValueThatDiffersWithoutADifferingPartIsListedWhole() {
        /// Equal only when `revision` is: its parts can all be equal while the values are not.
        struct Versioned: Equatable, CustomReflectable {
            var revision: Int
            var text: String
            var customMirror: Mirror { Mirror(self, children: ["text": text]) }
            static func == (lhs: Versioned, rhs: Versioned) -> Bool { lhs.revision == rhs.revision }
        }
        struct Document: Equatable { var body: Versioned }
        let old = Document(body: Versioned(revision: 1, text: "a"))
        let new = Document(body: Versioned(revision: 2, text: "a"))
        #expect(Self.changes(old, new) == [#"body: Versioned(text: "a") -> Versioned(text: "a")"#])
        // The root too, which is asked `==` only once its walk found nothing.
        #expect(Self.changes(old.body, new.body) == [#"state: Versioned(text: "a") -> Versioned(text: "a")"#])
    }

    @Test func sendableAndEquatableStatesGiveTheSamePathsAsPlainOnes() {
        // The auction house is Sendable, Equatable and Codable; a plain copy of its shape gives the same paths.
        struct PlainAuction {
            var title: String
            var price: Int
        }
        struct PlainHouse { var auctions: [Int: PlainAuction] }
        var house = AuctionHouse()
        var plain = PlainHouse(auctions: house.auctions.mapValues { PlainAuction(title: $0.title, price: $0.price) })
        let (oldHouse, oldPlain) = (house, plain)
        house.auctions[35]?.price = 1_015
        plain.auctions[35]?.price = 1_015
        #expect(Self.changes(oldHouse, house) == ["auctions[35].price: 1000 -> 1015"])
        #expect(Self.changes(oldPlain, plain) == ["auctions[35].price: 1000 -> 1015"])
    }

    // MARK: Bounds

    @Test func manyChangesAreListedUpToTheLimitAndCountedBeyond() {
        let old = Array(repeating: 0, count: 100)
        let new = Array(repeating: 1, count: 100)
        let diff = ValueDiff(old, new, bounds: .logLine(maxChanges: 3))
        #expect(diff.changes.map(\.description) == ["state[0]: 0 -> 1", "state[1]: 0 -> 1", "state[2]: 0 -> 1"])
        #expect(diff.omitted == 97)
        let grown = ValueDiff([Int](), Array(0..<10_000), bounds: .logLine(maxChanges: 2))
        #expect(grown.changes.map(\.description) == ["state.count: 0 -> 10000", "state[0]: (none) -> 0"])
        #expect(grown.omitted == 9_999)
    }

    @Test func keysAndValuesAreDescribedInBoundedLength() {
        let key = String(repeating: "k", count: 100)
        let diff = ValueDiff([key: 1], [key: 2], bounds: .logLine(maxChanges: 8))
        let shown = "\"" + String(repeating: "k", count: 58) + "…"
        #expect(diff.changes.map(\.description) == ["state[\(shown)]: 1 -> 2"])
        let long = ValueDiff(["a"], [String(repeating: "x", count: 100)], bounds: .logLine(maxChanges: 8))
        #expect(long.changes.first?.after.count == 60)
    }

    @Test func partsNestedDeeperThanTheLimitAreComparedAsAWhole() {
        indirect enum Chain: Equatable {
            case end(Int)
            case link(Chain)
        }
        func chain(_ depth: Int, end: Int) -> Chain {
            (0..<depth).reduce(Chain.end(end)) { chain, _ in .link(chain) }
        }
        let diff = ValueDiff(chain(30, end: 1), chain(30, end: 2), bounds: .logLine(maxChanges: 8))
        // Named 16 levels deep; what differs below is shown whole, cut at 60 characters.
        let path = Array(repeating: "link", count: 16).joined(separator: ".")
        #expect(diff.changes.map(\.path) == [path])
        #expect(diff.changes.first?.isComparedInFull == true)
    }

    @Test func aWalkPastItsVisitsListsWhatItDidNotCompare() {
        struct Part { var name: String }
        struct Parts {
            var list: [Part]
            var count: Int
        }
        let names = (0..<5_000).map { "part number \($0) of many" }
        let old = Parts(list: names.map { Part(name: $0) }, count: 0)
        // Equal names in new strings: each part must be reflected to tell.
        let new = Parts(list: names.map { Part(name: String($0.utf8.map { Character(UnicodeScalar($0)) })) }, count: 1)
        let changes = ValueDiff(old, new, bounds: .logLine(maxChanges: 8)).changes
        #expect(changes.map(\.path) == ["list", "count"])
        #expect(changes.map(\.isComparedInFull) == [false, true])
        // A replay may look further: the same walk there finds that the list did not change.
        #expect(ValueDiff(old, new, bounds: .replay(maxChanges: 8)).changes.map(\.description) == ["count: 0 -> 1"])
    }

    @Test func onlyTheAcceptedPathsAreListedAndCounted() {
        struct Pair: Equatable {
            var left: [Int]
            var right: Int
        }
        let diff = ValueDiff(
            Pair(left: [1, 2], right: 1),
            Pair(left: [3, 4], right: 2),
            bounds: .logLine(maxChanges: 1),
            only: { $0.hasPrefix("left") }
        )
        #expect(diff.changes.map(\.description) == ["left[0]: 1 -> 3"])
        #expect(diff.omitted == 1)
    }
}
