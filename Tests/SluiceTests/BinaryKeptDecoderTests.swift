import Foundation
import Testing

@testable import SluiceJournal

/// A `Decodable` may keep its decoder or its containers and use them after the decoding, as `JSONDecoder` allows:
/// they read the same values, from a payload whose bytes are gone.
@Suite struct BinaryKeptDecoderTests {
    enum Keys: String, CodingKey {
        case name, numbers, inner, large
    }

    /// What a `Keeper` kept. Written by the decoding thread, read by the test after the decoding returned.
    final class Kept: @unchecked Sendable {
        var decoders: [any Decoder] = []
        var keyed: [KeyedDecodingContainer<Keys>] = []
        var unkeyed: [any UnkeyedDecodingContainer] = []
        var nested: [KeyedDecodingContainer<Keys>] = []
    }

    @TaskLocal static var kept: Kept?

    /// Keeps its decoder and containers in ``kept``.
    struct Keeper: Decodable, Sendable {
        var name: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            name = try container.decode(String.self, forKey: .name)
            if let kept = BinaryKeptDecoderTests.kept {
                kept.decoders.append(decoder)
                kept.keyed.append(container)
                kept.unkeyed.append(try container.nestedUnkeyedContainer(forKey: .numbers))
                kept.nested.append(try container.nestedContainer(keyedBy: Keys.self, forKey: .inner))
            }
        }
    }

    struct Written: Encodable {
        var name: String
        var numbers: [Int]
        var inner: Inner
        struct Inner: Encodable { var name: String }
    }

    static func written(_ index: Int) -> Written {
        Written(name: "keeper \(index)", numbers: [index, 2, 3], inner: .init(name: "inner \(index)"))
    }

    /// Decodes `bytes` from a buffer that is overwritten and freed before this returns.
    static func decodeFromFreedBuffer<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8]) throws -> Value {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer {
            buffer.initializeMemory(as: UInt8.self, repeating: 0xEE)
            buffer.deallocate()
        }
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return try BinaryDecoder.decode(type, from: UnsafeRawBufferPointer(buffer))
    }

    /// Reads everything through what the `slot`th keeper kept: that of ``written(_:)`` of `index`, at the coding
    /// path `path`.
    static func expectKept(_ kept: Kept, _ slot: Int, index: Int, path: [String]) throws {
        let decoder = kept.decoders[slot]
        #expect(decoder.codingPath.map(\.stringValue) == path)
        let again = try decoder.container(keyedBy: Keys.self)
        #expect(try again.decode(String.self, forKey: .name) == "keeper \(index)")
        #expect(Set(again.allKeys.map(\.stringValue)) == ["name", "numbers", "inner"])
        #expect(again.contains(.inner))
        #expect(try again.decode([Int].self, forKey: .numbers) == [index, 2, 3])
        #expect(throws: DecodingError.self) { try decoder.singleValueContainer().decode(String.self) }
        let keyed = kept.keyed[slot]
        #expect(keyed.codingPath.map(\.stringValue) == path)
        #expect(try keyed.decode(String.self, forKey: .name) == "keeper \(index)")
        #expect(try keyed.decodeIfPresent(Int.self, forKey: .large) == nil)
        #expect(
            try keyed.superDecoder(forKey: .inner).container(keyedBy: Keys.self).decode(String.self, forKey: .name)
                == "inner \(index)"
        )
        var unkeyed = kept.unkeyed[slot]
        #expect(unkeyed.codingPath.map(\.stringValue) == path + ["numbers"])
        var numbers: [Int] = []
        while !unkeyed.isAtEnd { numbers.append(try unkeyed.decode(Int.self)) }
        #expect(numbers == [index, 2, 3])
        #expect(throws: DecodingError.self) { try unkeyed.decode(Int.self) }
        #expect(try kept.nested[slot].decode(String.self, forKey: .name) == "inner \(index)")
        #expect(kept.nested[slot].codingPath.map(\.stringValue) == path + ["inner"])
    }

    @Test func aKeptDecoderReadsAfterTheDecoding() throws {
        let bytes = try JournalCoder().encode(Self.written(0))
        #expect(bytes.first == BinaryEncoder.version)
        let kept = Kept()
        let keeper = try Self.$kept.withValue(kept) { try Self.decodeFromFreedBuffer(Keeper.self, bytes) }
        #expect(keeper.name == "keeper 0")
        try Self.expectKept(kept, 0, index: 0, path: [])
    }

    /// The entries of a large dictionary share one path node, which a kept decoder must not share: each keeps its
    /// own key.
    @Test(arguments: [3, 200])
    func keptDecodersOfADictionaryKeepTheirKeys(count: Int) throws {
        let bytes = try JournalCoder().encode(
            Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", Self.written($0)) })
        )
        let kept = Kept()
        let keepers = try Self.$kept.withValue(kept) { try Self.decodeFromFreedBuffer([String: Keeper].self, bytes) }
        #expect(keepers.count == count)
        #expect(kept.decoders.count == count)
        for slot in 0..<count {
            let name = try kept.keyed[slot].decode(String.self, forKey: .name)
            let index = Int(name.dropFirst("keeper ".count))!
            try Self.expectKept(kept, slot, index: index, path: ["k\(index)"])
        }
    }

    /// Values decoded on helper threads keep decoders whose state the helper owns; they read after the decoding
    /// too.
    @Test func keptDecodersOfAConcurrentlyDecodedDictionaryRead() throws {
        let count = 300
        let bytes = try JournalCoder().encode(
            Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", Self.written($0)) })
        )
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        var options = BinaryDecodingOptions()
        options.concurrently = true
        options.chunkEntries = 50
        options.concurrentEntries = 100
        options.helpers = 2
        options.callerDecodes = false
        var counters = BinaryDecodingCounters()
        let keepers = try BinaryDecoder.decode(
            [String: SharedKeeper].self,
            from: UnsafeRawBufferPointer(buffer),
            options: options,
            counters: &counters
        )
        buffer.initializeMemory(as: UInt8.self, repeating: 0xEE)
        buffer.deallocate()
        #expect(counters.helperChunks == 6)
        #expect(keepers.count == count)
        let kept = SharedKeeper.kept.take()
        #expect(kept.decoders.count == count)
        for slot in 0..<count {
            let name = try kept.keyed[slot].decode(String.self, forKey: .name)
            let index = Int(name.dropFirst("keeper ".count))!
            try Self.expectKept(kept, slot, index: index, path: ["k\(index)"])
        }
    }

    /// A ``Keeper`` for values decoded on helper threads, which do not see the test's task-local value: it keeps in
    /// one place under a lock, for the one test that uses it.
    struct SharedKeeper: Decodable, Sendable {
        static let kept = SharedKept()

        final class SharedKept: @unchecked Sendable {
            private let lock = NSLock()
            private var value = Kept()

            func add(_ body: (Kept) -> Void) {
                lock.lock()
                defer { lock.unlock() }
                body(value)
            }

            func take() -> Kept {
                lock.lock()
                defer { lock.unlock() }
                return value
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            _ = try container.decode(String.self, forKey: .name)
            let unkeyed = try container.nestedUnkeyedContainer(forKey: .numbers)
            let nested = try container.nestedContainer(keyedBy: Keys.self, forKey: .inner)
            Self.kept.add { kept in
                kept.decoders.append(decoder)
                kept.keyed.append(container)
                kept.unkeyed.append(unkeyed)
                kept.nested.append(nested)
            }
        }
    }
}
