import Foundation
import Sluice
import Testing

@testable import SluiceJournal

/// The decoding of a large dictionary of structs on several threads (`BinaryDecodingOptions.concurrently`): the same
/// values, the same errors with the same coding paths, and the same handling of a repeated key as the decoding on
/// one thread.
@Suite struct BinaryConcurrentDecodingTests {
    typealias Record = JournalCodingTests.Record
    typealias MaybeBroken = JournalCodingTests.MaybeBroken
    typealias NameKey = JournalCodingTests.NameKey

    /// Writes its entries, in order, into one keyed container: the written order is the order of `pairs`, where a
    /// dictionary's encoding has the dictionary's order.
    struct Ordered<Value: Encodable>: Encodable {
        var pairs: [(String, Value)]

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: NameKey.self)
            for (name, value) in pairs { try container.encode(value, forKey: NameKey(name)) }
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

    /// Options that take the concurrent path for a dictionary of 128 entries or more, in chunks of 64; without the
    /// caller's thread, so that the helpers decode every chunk, whatever the machine's load.
    private func options(helpers: Int, callerDecodes: Bool) -> BinaryDecodingOptions {
        var options = BinaryDecodingOptions()
        options.concurrently = true
        options.chunkEntries = 64
        options.concurrentEntries = 128
        options.helpers = helpers
        options.callerDecodes = callerDecodes
        return options
    }

    private func binary<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let bytes = try JournalCoder().encode(value)
        #expect(bytes.first == BinaryEncoder.version)
        return bytes
    }

    /// Decodes `bytes`; returns the value and the number of chunks that helper threads decoded.
    private func decode<Value: Decodable>(
        _ type: Value.Type,
        _ bytes: [UInt8],
        _ options: BinaryDecodingOptions
    ) throws -> (Value, Int) {
        var comparisons = 0
        var helperChunks = 0
        let value = try bytes.withUnsafeBytes { buffer in
            try BinaryDecoder.decode(
                type,
                from: buffer,
                options: options,
                keyComparisons: &comparisons,
                helperChunks: &helperChunks
            )
        }
        return (value, helperChunks)
    }

    @Test(arguments: [1, 3])
    func largeDictionariesOfStructsRoundTripThroughHelpers(helpers: Int) throws {
        // 2,000 entries: 32 chunks, the last one of 16.
        let records = Dictionary(uniqueKeysWithValues: (0..<2_000).map { ("r\($0)", record($0)) })
        let (decoded, helperChunks) = try decode(
            [String: Record].self,
            binary(records),
            options(helpers: helpers, callerDecodes: false)
        )
        #expect(decoded == records)
        #expect(helperChunks == 32)
        let numbered = Dictionary(uniqueKeysWithValues: (0..<1_000).map { ($0 * 7 - 3_000, record($0)) })
        let (decodedNumbers, numberChunks) = try decode(
            [Int: Record].self,
            binary(numbered),
            options(helpers: helpers, callerDecodes: false)
        )
        #expect(decodedNumbers == numbered)
        #expect(numberChunks == 16)
        // With the caller's thread decoding too: the same dictionary, whoever decoded which chunk.
        #expect(
            try decode([String: Record].self, binary(records), options(helpers: helpers, callerDecodes: true)).0
                == records
        )
    }

    /// A dictionary of dictionaries: the outer one's values decoded by the helpers, each inner one on the helper's
    /// thread alone (a helper starts no helpers of its own).
    @Test func nestedDictionariesRoundTripThroughHelpers() throws {
        let nested = Dictionary(
            uniqueKeysWithValues: (0..<200).map { outer in
                ("o\(outer)", Dictionary(uniqueKeysWithValues: (0..<150).map { ("i\($0)", record(outer + $0)) }))
            }
        )
        let (decoded, helperChunks) = try decode(
            [String: [String: Record]].self,
            binary(nested),
            options(helpers: 2, callerDecodes: false)
        )
        #expect(decoded == nested)
        #expect(helperChunks == 4)
    }

    /// A value that does not decode, in the first chunk, at the end of one, at the start of the next, in the middle
    /// and in the last: the error and its coding path are those of the decoding on one thread.
    @Test(arguments: [0, 63, 64, 1_000, 1_999])
    func aBadEntryInAnyChunkThrowsItsErrorWithItsPath(broken: Int) throws {
        let pairs = (0..<2_000).map { ("r\($0)", MaybeBroken(record: record($0), broken: $0 == broken)) }
        let bytes = try binary(Ordered(pairs: pairs))
        for options in [
            BinaryDecodingOptions(), options(helpers: 1, callerDecodes: false),
            options(helpers: 3, callerDecodes: false),
            options(helpers: 1, callerDecodes: true),
        ] {
            let error = #expect(throws: DecodingError.self) { try decode([String: Record].self, bytes, options) }
            guard case .typeMismatch(let type, let context) = error else {
                Issue.record("expected typeMismatch, got \(String(describing: error))")
                continue
            }
            #expect(ObjectIdentifier(type) == ObjectIdentifier(Double.self))
            #expect(context.codingPath.map(\.stringValue) == ["r\(broken)", "total"])
        }
    }

    /// Two bad values: the one written first is the one reported, although a helper may reach the other first.
    @Test func theFirstBadEntryInTheWrittenOrderIsReported() throws {
        // With several helpers, the chunk of r1900 may fail before the chunk of r1500 is decoded.
        let pairs = (0..<2_000).map { index in
            ("r\(index)", MaybeBroken(record: record(index), broken: index == 1_500 || index == 1_900))
        }
        let bytes = try binary(Ordered(pairs: pairs))
        for helpers in [1, 2, 4] {
            let error = #expect(throws: DecodingError.self) {
                try decode([String: Record].self, bytes, options(helpers: helpers, callerDecodes: false))
            }
            guard case .typeMismatch(_, let context) = error else {
                Issue.record("expected typeMismatch, got \(String(describing: error))")
                continue
            }
            #expect(context.codingPath.map(\.stringValue) == ["r1500", "total"])
        }
    }

    /// A key written twice, its second value undecodable and in a later chunk: read as `init(from:)` reads it, the
    /// first value, the second never read.
    @Test func aRepeatedKeyWithAnUndecodableValueInALaterChunkIsSkipped() throws {
        var pairs = (0..<1_000).map { ("r\($0)", MaybeBroken(record: record($0), broken: false)) }
        pairs.append(("r5", MaybeBroken(record: record(999), broken: true)))
        pairs.append(("r6", MaybeBroken(record: record(998), broken: false)))
        let bytes = try binary(Ordered(pairs: pairs))
        let expected = Dictionary(uniqueKeysWithValues: (0..<1_000).map { ("r\($0)", record($0)) })
        for callerDecodes in [false, true] {
            let (decoded, _) = try decode(
                [String: Record].self,
                bytes,
                options(helpers: 2, callerDecodes: callerDecodes)
            )
            #expect(decoded == expected)
        }
    }

    /// An `Int` key that does not parse, in a helper's chunk: the type mismatch of the decoding on one thread.
    @Test func aBadIntKeyInAHelpersChunkThrowsTheSameError() throws {
        var pairs = (0..<500).map { ("\($0 * 3)", MaybeBroken(record: record($0), broken: false)) }
        pairs[300] = ("three hundred", MaybeBroken(record: record(300), broken: false))
        let bytes = try binary(Ordered(pairs: pairs))
        for options in [BinaryDecodingOptions(), options(helpers: 2, callerDecodes: false)] {
            let error = #expect(throws: DecodingError.self) { try decode([Int: Record].self, bytes, options) }
            guard case .typeMismatch(let type, let context) = error else {
                Issue.record("expected typeMismatch, got \(String(describing: error))")
                continue
            }
            #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
            #expect(context.codingPath.map(\.stringValue) == ["three hundred"])
        }
    }

    /// A store's recovery takes the concurrent path for a large dictionary of structs in its state (the defaults:
    /// 16,384 entries or more), and restores it exactly.
    @Test func aStoreRecoversALargeDictionaryOfStructsFromItsSnapshot() throws {
        struct Inventory: Codable, Equatable, Sendable {
            var carts: [String: Record] = [:]
            var count = 0
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-concurrent-\(UUID())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reducer = Reducer<Inventory, Int>(mutating: { state, index in
            state.carts["c\(index)"] = Record(
                name: "customer \(index % 97)",
                items: [index, index % 7],
                total: Double(index) / 8,
                open: index.isMultiple(of: 3),
                note: nil
            )
            state.count += 1
        })
        let entries = 20_000
        let journal = try Journal(directory: directory)
        let store = try Store(recoveringFrom: journal, durability: .none, initialState: Inventory(), reducer: reducer)
        for index in 0..<entries { store.dispatch(index) }
        try journal.snapshot(store)
        let expected = store.state
        journal.close()

        let reopened = try Journal(directory: directory)
        defer { reopened.close() }
        let (state, recovery) = try Store<Inventory, Int>.recover(
            from: reopened,
            initialState: Inventory(),
            reducer: reducer
        )
        #expect(recovery.snapshotSequence == UInt64(entries))
        #expect(recovery.replayedActions == 0)
        #expect(state.carts.count == entries)
        #expect(state == expected)
    }
}
