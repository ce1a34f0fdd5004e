import Foundation
import Testing

@testable import SluiceJournal

@Suite struct JournalCodingTests {
    enum Shape: Codable, Equatable {
        case point
        case circle(radius: Double)
        case label(String, size: Int8)
        case group([Shape])
    }

    struct Everything: Codable, Equatable {
        var flag = true
        var off = false
        var int = Int.min
        var int8 = Int8.min
        var int16 = Int16.max
        var int32 = Int32.min
        var int64 = Int64.max
        var uint = UInt.max
        var uint8 = UInt8.max
        var uint16 = UInt16.max
        var uint32 = UInt32.max
        var uint64 = UInt64.max
        var float: Float = -1.5
        var double = Double.greatestFiniteMagnitude
        var text = "héllo, 世界 🌊"
        var empty = ""
        var missing: Int? = nil
        var present: String? = "here"
        var list = [1, -2, 300_000]
        var nested = [[1], [], [2, 3]]
        var optionals: [Int?] = [nil, 4, nil]
        var table = ["b": 2, "a": 1]
        var shapes: [Shape] = [.point, .circle(radius: 2.5), .label("x", size: -3), .group([.point, .group([])])]
        var date = Date(timeIntervalSince1970: 1_000_000)
        var data = Data([0, 1, 255])
    }

    /// A value that writes to its outer container after its inner one: not writable in one pass.
    struct Interleaved: Codable, Equatable {
        var first: Int
        var inner: Int

        enum CodingKeys: String, CodingKey { case first, nested }
        enum NestedKeys: String, CodingKey { case inner }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var nested = container.nestedContainer(keyedBy: NestedKeys.self, forKey: .nested)
            try container.encode(first, forKey: .first)
            try nested.encode(inner, forKey: .inner)
        }

        init(first: Int, inner: Int) {
            self.first = first
            self.inner = inner
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            first = try container.decode(Int.self, forKey: .first)
            inner = try container.nestedContainer(keyedBy: NestedKeys.self, forKey: .nested)
                .decode(Int.self, forKey: .inner)
        }
    }

    /// A value that encodes nothing.
    struct Nothing: Codable, Equatable {
        func encode(to encoder: any Encoder) throws {}
        init() {}
        init(from decoder: any Decoder) throws {}
    }

    private func roundTrip<Value: Codable & Equatable>(_ value: Value) throws -> [UInt8] {
        let coder = JournalCoder()
        let bytes = try coder.encode(value)
        var scratch = Data()
        let decoded = try bytes.withUnsafeBytes { buffer in
            try coder.decode(Value.self, from: buffer, scratch: &scratch, sequence: 1)
        }
        #expect(decoded == value)
        return bytes
    }

    @Test func everyKindOfValueRoundTripsInBinary() throws {
        let bytes = try roundTrip(Everything())
        #expect(bytes.first == BinaryEncoder.version)
        for value in [0, 1, -1, 63, -64, 64, 1 << 40, Int.max, Int.min] {
            #expect(try roundTrip(value).first == BinaryEncoder.version)
        }
        #expect(try roundTrip(LedgerAction.add(7)).first == BinaryEncoder.version)
        #expect(try roundTrip(Nothing()) == [BinaryEncoder.version, 0x08, 0x00])
        #expect(try roundTrip([String: [Int]]()).first == BinaryEncoder.version)
    }

    @Test func aSmallActionIsSmallerInBinaryThanInJSON() throws {
        let binary = try JournalCoder().encode(LedgerAction.add(5))
        let json = try JSONEncoder().encode(LedgerAction.add(5))
        // 0x01, keyed, "add", keyed, "_0", int 5, two ends.
        #expect(binary == [0x01, 0x08, 4, 0x61, 0x64, 0x64, 0x08, 3, 0x5F, 0x30, 0x03, 10, 0x00, 0x00])
        #expect(binary.count < json.count)
    }

    @Test func interleavedWritesFallBackToJSON() throws {
        let bytes = try roundTrip(Interleaved(first: 1, inner: 2))
        #expect(bytes.first == UInt8(ascii: "{"))
        // A binary value around it falls back as a whole.
        #expect(try roundTrip([Interleaved(first: 3, inner: 4)]).first == UInt8(ascii: "["))
    }

    @Test func jsonPayloadsOfEarlierJournalsStillDecode() throws {
        let coder = JournalCoder()
        var scratch = Data()
        let json = try JSONEncoder().encode(LedgerAction.add(42))
        let action = try [UInt8](json).withUnsafeBytes { buffer in
            try coder.decode(LedgerAction.self, from: buffer, scratch: &scratch, sequence: 9)
        }
        #expect(action == .add(42))
    }

    @Test func everyTruncationAndByteChangeOfABinaryPayloadThrowsOrDecodes() throws {
        let coder = JournalCoder()
        let bytes = try coder.encode(Everything())
        var scratch = Data()
        func decode(_ payload: [UInt8]) throws(JournalError) -> Everything {
            try withBytes(payload) { buffer throws(JournalError) in
                try coder.decode(Everything.self, from: buffer, scratch: &scratch, sequence: 5)
            }
        }
        for length in 1..<bytes.count {
            #expect(throws: JournalError.self) { try decode(Array(bytes[..<length])) }
        }
        var thrown = 0
        for index in 1..<bytes.count {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var changed = bytes
                changed[index] ^= flip
                // Never a crash or an out-of-bounds read: either an error or some value.
                do { _ = try decode(changed) } catch { thrown += 1 }
            }
        }
        #expect(thrown > 0)
        // A byte after the value.
        #expect(throws: JournalError.self) { try decode(bytes + [0x00]) }
    }

    @Test func aTypeMismatchNamesTheSequence() throws {
        let coder = JournalCoder()
        let bytes = try coder.encode("text")
        var scratch = Data()
        do {
            _ = try bytes.withUnsafeBytes { buffer in
                try coder.decode(Int.self, from: buffer, scratch: &scratch, sequence: 12)
            }
            Issue.record("decoded a string as an Int")
        } catch let error as JournalError {
            guard case .undecodable(let sequence, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(sequence == 12)
        }
    }

    // MARK: Keyed containers of any size

    /// A key of any name, for containers written and read by the tests below.
    struct NameKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Writes its entries, in order, into one keyed container: a name may come more than once.
    struct Entries: Encodable {
        var entries: [(String, Int)]

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: NameKey.self)
            for (name, value) in entries {
                try container.encode(value, forKey: NameKey(name))
            }
        }
    }

    /// Entries, and the names that ``Lookups`` reads from them.
    struct Probe: Encodable {
        var names: [String]
        var entries: Entries
    }

    /// Reads a ``Probe``: the value of each of its names in its entries, in the order of the names (`nil` for a
    /// missing one).
    struct Lookups: Decodable {
        var values: [Int?]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: NameKey.self)
            let names = try container.decode([String].self, forKey: NameKey("names"))
            let entries = try container.nestedContainer(keyedBy: NameKey.self, forKey: NameKey("entries"))
            values = try names.map { try entries.decodeIfPresent(Int.self, forKey: NameKey($0)) }
        }
    }

    struct Item: Codable, Equatable {
        var id: Int
        var name: String
        var tags: [String]
        var price: Double?
    }

    private func binary<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let bytes = try JournalCoder().encode(value)
        #expect(bytes.first == BinaryEncoder.version)
        return bytes
    }

    /// Decodes a binary payload; returns the value and the keys compared on the way.
    private func decodeCounting<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8]) throws -> (Value, Int) {
        var comparisons = 0
        let value = try bytes.withUnsafeBytes { buffer in
            try BinaryDecoder.decode(type, from: buffer, keyComparisons: &comparisons)
        }
        return (value, comparisons)
    }

    /// Looking each key up by a scan from the start of its container compares about n * n / 2 keys for a
    /// dictionary of n entries; the decoder compares each key a bounded number of times.
    @Test func decodingADictionaryComparesEachKeyABoundedNumberOfTimes() throws {
        let count = 20_000
        let numbers = Dictionary(uniqueKeysWithValues: (0..<count).map { ($0 &* 7919, $0) })
        let (decodedNumbers, numberComparisons) = try decodeCounting([Int: Int].self, binary(numbers))
        #expect(decodedNumbers == numbers)
        #expect(numberComparisons <= 2 * count)

        let items = Dictionary(
            uniqueKeysWithValues: (0..<count).map {
                ("item-\($0)", Item(id: $0, name: "n\($0)", tags: ["a"], price: $0.isMultiple(of: 3) ? nil : 1.5))
            }
        )
        let (decodedItems, itemComparisons) = try decodeCounting([String: Item].self, binary(items))
        #expect(decodedItems == items)
        // The dictionary's keys, then the four keys of each item, each found by a scan of its few entries
        // (`decodeIfPresent` looks its key up three times).
        #expect(itemComparisons <= 2 * count + 20 * count)
    }

    @Test func lookupsInAnyOrderCompareEachKeyABoundedNumberOfTimes() throws {
        let count = 5_000
        let entries = (0..<count).map { ("key\($0)", $0) }
        let names = entries.map(\.0).reversed() + ["absent", "key17", "key18", "key4999"]
        let (lookups, comparisons) = try decodeCounting(
            Lookups.self,
            binary(Probe(names: names, entries: Entries(entries: entries)))
        )
        #expect(lookups.values == (0..<count).reversed().map { $0 } + [nil, 17, 18, 4999])
        // `decodeIfPresent` looks its key up three times, each time one comparison by bytes and one by hash.
        #expect(comparisons <= 8 * count)
    }

    @Test func aStructWithALargeFieldBeforeItsOthersRoundTrips() throws {
        struct Wide: Codable, Equatable {
            var large: [Int: Int]
            var a = 1
            var b = "b"
            var c: [Int] = [3]
            var d: Double? = 4
            var e = true
        }
        let wide = Wide(large: Dictionary(uniqueKeysWithValues: (0..<10_000).map { ($0, $0) }))
        let (decoded, comparisons) = try decodeCounting(Wide.self, binary(wide))
        #expect(decoded == wide)
        #expect(comparisons <= 2 * 10_000 + 20)
    }

    /// Two large containers at the same depth, read one key from each in turn: each lookup that goes back to the
    /// other container scans at most a few entries before its index.
    @Test func twoLargeContainersReadInTurnStayLinear() throws {
        struct Pair: Encodable {
            var left: [String: Int]
            var right: [String: Int]
        }
        struct Alternating: Decodable {
            var left: [Int] = []
            var right: [Int] = []

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: NameKey.self)
                let leftEntries = try container.nestedContainer(keyedBy: NameKey.self, forKey: NameKey("left"))
                let rightEntries = try container.nestedContainer(keyedBy: NameKey.self, forKey: NameKey("right"))
                for index in 0..<1_000 {
                    left.append(try leftEntries.decode(Int.self, forKey: NameKey("l\(999 - index)")))
                    right.append(try rightEntries.decode(Int.self, forKey: NameKey("r\(index)")))
                }
            }
        }
        let pair = Pair(
            left: Dictionary(uniqueKeysWithValues: (0..<1_000).map { ("l\($0)", $0) }),
            right: Dictionary(uniqueKeysWithValues: (0..<1_000).map { ("r\($0)", -$0) })
        )
        let (decoded, comparisons) = try decodeCounting(Alternating.self, binary(pair))
        #expect(decoded.left == (0..<1_000).reversed().map { $0 })
        #expect(decoded.right == (0..<1_000).map { -$0 })
        // A scan from the start of the container for every key would compare about 1,000,000 keys.
        #expect(comparisons <= 20 * 2_000)
    }

    @Test func largeDictionariesOfBothKindsRoundTrip() throws {
        // `[Int: V]` and `[String: V]` are keyed containers; other key types, unkeyed ones.
        _ = try roundTrip(Dictionary(uniqueKeysWithValues: (0..<50_000).map { ($0 * 3 - 70_000, String($0)) }))
        _ = try roundTrip(Dictionary(uniqueKeysWithValues: (0..<50_000).map { ("name \($0) é", [$0, -$0]) }))
        _ = try roundTrip(
            Dictionary(
                uniqueKeysWithValues: (0..<300).map { outer in
                    ("o\(outer)", Dictionary(uniqueKeysWithValues: (0..<100).map { ($0, Double(outer * $0)) }))
                }
            )
        )
        _ = try roundTrip(Dictionary(uniqueKeysWithValues: (0..<10_000).map { (Double($0) / 2, $0) }))
        _ = try roundTrip([String: Int]())
        _ = try roundTrip(["": 1, "a": 2])
    }

    /// A key written twice: every lookup reads its first value, whether a scan or an index finds it.
    @Test(arguments: [2, 15, 16, 17, 40, 2_000])
    func aKeyWrittenTwiceReadsItsFirstValue(count: Int) throws {
        var entries = (0..<count).map { ("k\($0)", $0) }
        entries += [("k0", -1), ("k\(count - 1)", -2), ("k\(count / 2)", -3)]
        let (dictionary, _) = try decodeCounting([String: Int].self, binary(Entries(entries: entries)))
        #expect(dictionary == Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", $0) }))
        let names = ["k\(count - 1)", "k0", "k\(count / 2)", "k0", "k\(count - 1)"]
        let (lookups, _) = try decodeCounting(
            Lookups.self,
            binary(Probe(names: names, entries: Entries(entries: entries)))
        )
        #expect(lookups.values == [count - 1, 0, count / 2, 0, count - 1])
    }

    /// An `[Int: V]` reads its keys as `Int(_:)` parses them, from a small payload (through `init(from:)`) and
    /// from a large one (entry after entry) alike; a key that does not parse is a type mismatch.
    @Test(arguments: [3, 1_000])
    func intKeysParseAsIntDoes(count: Int) throws {
        let numbers = (0..<count).map { ("\($0 + 10)", $0) }
        let written = try binary(
            Entries(entries: [("+5", -5), ("007", -7), ("-0", -1), ("-9223372036854775808", -9)] + numbers)
        )
        let (decoded, _) = try decodeCounting([Int: Int].self, written)
        #expect(
            decoded
                == Dictionary(
                    uniqueKeysWithValues: [(5, -5), (7, -7), (0, -1), (Int.min, -9)]
                        + numbers.map { (Int($0.0)!, $0.1) }
                )
        )
        for notANumber in ["twelve", "9223372036854775808", "", "-", "1 "] {
            let written = try binary(Entries(entries: numbers + [(notANumber, 12)]))
            let error = #expect(throws: DecodingError.self) { try decodeCounting([Int: Int].self, written) }
            guard case .typeMismatch = error else {
                Issue.record("expected typeMismatch for \(notANumber), got \(String(describing: error))")
                continue
            }
        }
    }

    @Test(arguments: [3, 16, 17, 1_000])
    func aMissingKeyIsNotFound(count: Int) throws {
        struct Needs: Decodable {
            var needed: Int
        }
        let entries = Entries(entries: (0..<count).map { ("k\($0)", $0) })
        let error = #expect(throws: DecodingError.self) { try decodeCounting(Needs.self, binary(entries)) }
        guard case .keyNotFound(let key, _) = error else {
            Issue.record("expected keyNotFound, got \(String(describing: error))")
            return
        }
        #expect(key.stringValue == "needed")
        let names = ["needed", "k\(count - 1)", "k\(count)", ""]
        let (lookups, _) = try decodeCounting(Lookups.self, binary(Probe(names: names, entries: entries)))
        #expect(lookups.values == [nil, count - 1, nil, nil])
    }

    @Test func largeJSONPayloadsOfEarlierJournalsStillDecode() throws {
        let coder = JournalCoder()
        var scratch = Data()
        let numbers = Dictionary(uniqueKeysWithValues: (0..<10_000).map { ($0, -$0) })
        let items = Dictionary(
            uniqueKeysWithValues: (0..<10_000).map { ("i\($0)", Item(id: $0, name: "", tags: [], price: nil)) }
        )
        let decodedNumbers = try [UInt8](JSONEncoder().encode(numbers)).withUnsafeBytes { buffer in
            try coder.decode([Int: Int].self, from: buffer, scratch: &scratch, sequence: 1)
        }
        let decodedItems = try [UInt8](JSONEncoder().encode(items)).withUnsafeBytes { buffer in
            try coder.decode([String: Item].self, from: buffer, scratch: &scratch, sequence: 2)
        }
        #expect(decodedNumbers == numbers)
        #expect(decodedItems == items)
    }

    // MARK: Large payloads: dictionaries of structs, arrays of leaves, lookups in written order

    /// A struct that writes its fields in one order and may write a wrong type for one of them, for errors.
    struct Record: Codable, Equatable {
        var name: String
        var items: [Int]
        var total: Double
        var open: Bool
        var note: String?
    }

    /// Writes a `Record`'s keys with a string for `total` when `broken`.
    struct MaybeBroken: Encodable {
        var record: Record
        var broken: Bool

        enum CodingKeys: String, CodingKey { case name, items, total, open, note }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(record.name, forKey: .name)
            try container.encode(record.items, forKey: .items)
            if broken {
                try container.encode("not a number", forKey: .total)
            } else {
                try container.encode(record.total, forKey: .total)
            }
            try container.encode(record.open, forKey: .open)
            try container.encodeIfPresent(record.note, forKey: .note)
        }
    }

    private func record(_ index: Int) -> Record {
        Record(
            name: "customer \(index) é",
            items: Array(0..<(index % 12)),
            total: Double(index) / 4,
            open: index.isMultiple(of: 2),
            note: index.isMultiple(of: 3) ? nil : "n\(index)"
        )
    }

    @Test func largeDictionariesOfStructsRoundTrip() throws {
        // More than 64 entries: the first walk keeps the entries' offsets. Arrays of up to 11 elements: some read on
        // the stack, some counted.
        let records = Dictionary(uniqueKeysWithValues: (0..<500).map { ("r\($0)", record($0)) })
        let (decoded, _) = try decodeCounting([String: Record].self, binary(records))
        #expect(decoded == records)
        let numbered = Dictionary(uniqueKeysWithValues: (0..<500).map { ($0 * 7 - 1_000, record($0)) })
        #expect(try decodeCounting([Int: Record].self, binary(numbered)).0 == numbered)
        // Nested: the inner dictionaries' values read through the same paths.
        let nested = Dictionary(
            uniqueKeysWithValues: (0..<70).map { outer in
                ("o\(outer)", Dictionary(uniqueKeysWithValues: (0..<70).map { ("i\($0)", record(outer + $0)) }))
            }
        )
        #expect(try decodeCounting([String: [String: Record]].self, binary(nested)).0 == nested)
        let arrays = (0..<300).map { index in (0..<(index % 20)).map { "s\($0 * index)" } }
        #expect(try decodeCounting([[String]].self, binary(arrays)).0 == arrays)
        let doubles = (0..<300).map { Double($0) * 1.5 }
        #expect(try decodeCounting([Double].self, binary(doubles)).0 == doubles)
    }

    /// A value that does not decode, deep in a large dictionary: the error's coding path names the entry and the
    /// property, as `init(from:)`'s would.
    @Test func anErrorInALargeDictionaryNamesTheEntryAndTheProperty() throws {
        let broken = Dictionary(
            uniqueKeysWithValues: (0..<200).map { ("r\($0)", MaybeBroken(record: record($0), broken: $0 == 117)) }
        )
        let error = #expect(throws: DecodingError.self) { try decodeCounting([String: Record].self, binary(broken)) }
        guard case .typeMismatch(_, let context) = error else {
            Issue.record("expected typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["r117", "total"])
    }

    /// A key written twice in a large dictionary of structs, its second value undecodable: read as `init(from:)`
    /// reads it, the first value, the second never read.
    @Test func aRepeatedKeyWithAnUndecodableValueIsSkippedInALargeDictionary() throws {
        struct Pairs: Encodable {
            var pairs: [(String, MaybeBroken)]
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: NameKey.self)
                for (name, value) in pairs { try container.encode(value, forKey: NameKey(name)) }
            }
        }
        var pairs = (0..<100).map { ("r\($0)", MaybeBroken(record: record($0), broken: false)) }
        pairs.append(("r5", MaybeBroken(record: record(999), broken: true)))
        pairs.append(("r6", MaybeBroken(record: record(998), broken: false)))
        let (decoded, _) = try decodeCounting([String: Record].self, binary(Pairs(pairs: pairs)))
        #expect(decoded == Dictionary(uniqueKeysWithValues: (0..<100).map { ("r\($0)", record($0)) }))
    }

    /// Containers of a decoder that `superDecoder` made, used after the call that made it; nested containers;
    /// single values: every path through the decoder's containers, in a large payload.
    @Test func superDecodersAndNestedContainersDecode() throws {
        class Base: Codable {
            var id: Int
            init(id: Int) { self.id = id }
        }
        final class Derived: Base, Equatable {
            var label: String
            init(id: Int, label: String) {
                self.label = label
                super.init(id: id)
            }
            enum CodingKeys: String, CodingKey { case label }
            required init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                label = try container.decode(String.self, forKey: .label)
                try super.init(from: container.superDecoder())
            }
            override func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(label, forKey: .label)
                try super.encode(to: container.superEncoder())
            }
            static func == (left: Derived, right: Derived) -> Bool { left.id == right.id && left.label == right.label }
        }
        // `superEncoder` writes out of order: the JSON fallback. The decoding paths are those of a binary payload
        // written by hand in the same shape.
        struct Shape: Encodable {
            var label: String
            var id: Int
            enum Keys: String, CodingKey { case label, `super` }
            enum SuperKeys: String, CodingKey { case id }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(label, forKey: .label)
                var nested = container.nestedContainer(keyedBy: SuperKeys.self, forKey: .super)
                try nested.encode(id, forKey: .id)
            }
        }
        let shapes = (0..<100).map { Shape(label: "l\($0)", id: $0) }
        let (decoded, _) = try decodeCounting([Derived].self, binary(shapes))
        #expect(decoded == (0..<100).map { Derived(id: $0, label: "l\($0)") })
        // `superEncoder()` with keys that have no "super": the JSON fallback, as `JSONEncoder` writes it.
        #expect(try roundTrip([Derived(id: 1, label: "a")]).first == UInt8(ascii: "["))

        struct Wrapped: Decodable, Equatable {
            var values: [Int]
            var pair: (Int, String)
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: NameKey.self)
                var unkeyed = try container.nestedUnkeyedContainer(forKey: NameKey("values"))
                var values: [Int] = []
                while !unkeyed.isAtEnd { values.append(try unkeyed.decode(Int.self)) }
                self.values = values
                let inner = try container.nestedContainer(keyedBy: NameKey.self, forKey: NameKey("pair"))
                let single = try inner.superDecoder(forKey: NameKey("first")).singleValueContainer()
                pair = (try single.decode(Int.self), try inner.decode(String.self, forKey: NameKey("second")))
            }
            static func == (left: Wrapped, right: Wrapped) -> Bool {
                left.values == right.values && left.pair == right.pair
            }
        }
        struct WrappedShape: Encodable {
            var values: [Int]
            var first: Int
            var second: String
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: NameKey.self)
                try container.encode(values, forKey: NameKey("values"))
                var inner = container.nestedContainer(keyedBy: NameKey.self, forKey: NameKey("pair"))
                try inner.encode(first, forKey: NameKey("first"))
                try inner.encode(second, forKey: NameKey("second"))
            }
        }
        let wrapped = (0..<100).map { WrappedShape(values: [$0, -$0], first: $0, second: "s\($0)") }
        let (decodedWrapped, _) = try decodeCounting([Wrapped].self, binary(wrapped))
        #expect(decodedWrapped.map(\.values) == (0..<100).map { [$0, -$0] })
        #expect(decodedWrapped.map(\.pair.0) == Array(0..<100))
        #expect(decodedWrapped.map(\.pair.1) == (0..<100).map { "s\($0)" })
    }

    /// A keyed container of `Int` values under keys written as raw bytes, which need not be valid UTF-8.
    private func rawKeys(_ keys: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = [BinaryEncoder.version, 0x08]
        for (index, key) in keys.enumerated() {
            bytes.append(UInt8(key.count + 1))
            bytes += key
            bytes += [0x04, UInt8(index % 100)]
        }
        return bytes + [0x00]
    }

    /// Two keys that are not valid UTF-8 would read as one "\u{FFFD}" key: every payload with such a key throws, as
    /// `JSONDecoder` does, whether the dictionary is read entry after entry (1 KiB or more) or through its
    /// `init(from:)`, and whatever reads the container.
    @Test(arguments: [2, 300])
    func aKeyThatIsNotValidUTF8Throws(count: Int) throws {
        let valid = (0..<count).map { Array("key \($0)".utf8) }
        #expect(try decodeCounting([String: UInt8].self, rawKeys(valid)).0.count == count)
        for invalid in [[0xFF], [0x61, 0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] as [[UInt8]] {
            let bytes = rawKeys(valid + [invalid, invalid.map { $0 ^ 0x01 }])
            #expect((bytes.count >= 1024) == (count == 300))
            for read in [
                { _ = try decodeCounting([String: UInt8].self, bytes) },
                { _ = try decodeCounting([String: Int].self, bytes) },
                { _ = try decodeCounting(Lookups.self, bytes) },
            ] as [() throws -> Void] {
                let error = #expect(throws: DecodingError.self) { try read() }
                guard case .dataCorrupted(let context) = error else {
                    Issue.record("expected dataCorrupted for \(invalid), got \(String(describing: error))")
                    continue
                }
                #expect(context.debugDescription.hasPrefix("a key is not valid UTF-8"))
            }
        }
    }

    /// Truncations and byte changes of a large payload (dictionaries of structs read entry after entry, arrays on
    /// the stack, lookups by the entry after the one found last): an error or a value, never a crash.
    /// Async and yielding, like the fuzz test: it decodes thousands of payloads in a row.
    @Test func everyTruncationAndByteChangeOfALargePayloadThrowsOrDecodes() async throws {
        struct State: Codable, Equatable {
            var records: [String: Record]
            var numbers: [Int: Int]
            var names: [String]
        }
        let state = State(
            records: Dictionary(uniqueKeysWithValues: (0..<70).map { ("r\($0)", record($0)) }),
            numbers: Dictionary(uniqueKeysWithValues: (0..<70).map { ($0 * 3, $0) }),
            names: (0..<20).map { "name \($0)" }
        )
        let bytes = try binary(state)
        #expect(bytes.count > 1024)
        #expect(try decodeCounting(State.self, bytes).0 == state)
        var thrown = 0
        for length in stride(from: 1, to: bytes.count, by: 7) {
            do { _ = try decodeCounting(State.self, Array(bytes[..<length])) } catch { thrown += 1 }
        }
        #expect(thrown == (bytes.count - 1 + 6) / 7)
        for index in 1..<bytes.count {
            if index % 32 == 0 { await Task.yield() }
            var changed = bytes
            changed[index] ^= [0x01, 0x80, 0xFF][index % 3]
            do { _ = try decodeCounting(State.self, changed) } catch { thrown += 1 }
        }
        #expect(thrown > (bytes.count - 1 + 6) / 7)
    }
}
