import Foundation
import Testing

@testable import SluiceJournal

/// Mutations of real payloads (the test suite's states and actions): bit flips, changed bytes, truncations,
/// insertions, deletions, corrupted lengths and structure bytes, from a fixed seed. Each decoding throws or returns a
/// value that encodes and decodes again; never a crash, an out-of-bounds read or a hang. Run under AddressSanitizer
/// too: `swift test --sanitize=address --filter BinaryDecoderFuzzTests`.
@Suite struct BinaryDecoderFuzzTests {
    struct Order: Codable, Equatable, Sendable {
        enum Status: Codable, Equatable, Sendable {
            case open
            case paid(amount: Int, note: String?)
            case cancelled(reason: String)
        }
        var id: Int
        var customer: String?
        var lines: [String: Int]
        var status: Status
        var tags: Set<String>
        var history: [Status]
    }

    struct Shop: Codable, Equatable, Sendable {
        var orders: [String: Order]
        var ledger: LedgerState
        var names: [String]
        var list: BinaryNestingTests.List
        var matrix: [[Int?]]
    }

    static func order(_ index: Int) -> Order {
        Order(
            id: index,
            customer: index.isMultiple(of: 4) ? nil : "customer é \(index)",
            lines: Dictionary(uniqueKeysWithValues: (0..<(index % 5)).map { ("sku-\($0)", $0 * index) }),
            status: [
                .open, .paid(amount: index * 100, note: index.isMultiple(of: 3) ? nil : "ok"),
                .cancelled(reason: "r\(index)"),
            ][index % 3],
            tags: Set((0..<(index % 3)).map { "t\($0)" }),
            history: index.isMultiple(of: 2) ? [.open, .paid(amount: 1, note: nil)] : []
        )
    }

    /// A payload and a decoding of it that returns whether it decoded, and whether the value encodes and decodes
    /// again to an equal value.
    struct Target {
        var name: String
        var bytes: [UInt8]
        var decode: ([UInt8]) throws -> Bool
    }

    static func target<Value: Codable & Equatable>(
        _ name: String,
        _ value: Value,
        concurrently: Bool = false
    ) throws -> Target {
        let bytes = try JournalCoder().encode(value)
        #expect(bytes.first == BinaryEncoder.version, "\(name) is not binary")
        var options = BinaryDecodingOptions()
        if concurrently {
            options.concurrently = true
            options.chunkEntries = 16
            options.concurrentEntries = 32
            options.helpers = 1
        }
        let decode = { (bytes: [UInt8]) throws -> Value in
            var counters = BinaryDecodingCounters()
            return try bytes.withUnsafeBytes { buffer in
                try BinaryDecoder.decode(Value.self, from: buffer, options: options, counters: &counters)
            }
        }
        #expect(try decode(bytes) == value, "\(name) does not round-trip")
        return Target(name: name, bytes: bytes) { mutated in
            let value = try decode(mutated)
            // A value the decoder accepted is one the encoder writes and the decoder reads back.
            let again = try JournalCoder().encode(value)
            return try decode(again) == value
        }
    }

    static func targets() throws -> [Target] {
        [
            try target("Everything", JournalCodingTests.Everything()),
            try target("LedgerAction", LedgerAction.add(-12_345)),
            try target("LedgerState", LedgerState(count: 3, sum: 99, digest: 0xDEAD_BEEF)),
            try target("Order", order(5)),
            try target("List", BinaryNestingTests.List.nested(BinaryNestingTests.limit, text: "é")),
            try target(
                "Shop",
                Shop(
                    orders: Dictionary(uniqueKeysWithValues: (0..<70).map { ("o\($0)", order($0)) }),
                    ledger: ledger(after: 1...5),
                    names: (0..<10).map { "name \($0)" },
                    list: .nested(12),
                    matrix: [[1, nil], [], [nil, 3, 4]]
                )
            ),
            try target(
                "Orders, concurrently",
                Dictionary(uniqueKeysWithValues: (0..<80).map { ("o\($0)", order($0)) }),
                concurrently: true
            ),
        ]
    }

    /// `bytes` changed once, in one of the ways that damage or a bug changes a payload.
    static func mutate(_ bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var changed = bytes
        // Never the version byte: another first byte is a JSON payload, which another decoder reads.
        let position = Int.random(in: 1..<bytes.count, using: &random)
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            changed[position] ^= 1 << UInt8.random(in: 0..<8, using: &random)
        case 1:
            changed[position] = UInt8.random(in: 0...255, using: &random)
        case 2:
            changed.removeSubrange(position...)
        case 3:
            changed.insert(
                contentsOf: (0..<Int.random(in: 1...4, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                },
                at: position
            )
        case 4:
            changed.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...4, using: &random)))
        case 5:
            // A length or count: a varint, small or huge, in place of a byte.
            let lengths: [[UInt8]] = [
                [0x00], [0x01], [0x7F], [0x80, 0x01], [0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
                [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
                [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
            ]
            changed.replaceSubrange(position...position, with: lengths.randomElement(using: &random)!)
        case 6:
            // A structure byte: a container's start or end, nil.
            changed[position] = [0x00, 0x08, 0x09, 0xFF, 0x07].randomElement(using: &random)!
        default:
            // A piece of the payload copied elsewhere in it.
            let start = Int.random(in: 1..<bytes.count, using: &random)
            let piece = bytes[start..<min(bytes.count, start + Int.random(in: 1...32, using: &random))]
            changed.insert(contentsOf: piece, at: position)
        }
        return changed
    }

    /// Async, and yielding every few dozen payloads: thousands of decodings in a row would otherwise hold one of the
    /// cooperative pool's threads (two, on the project's machines) for the whole test, and hold up the other suites'
    /// tasks meanwhile. The limit is for a build under the thread sanitizer on a loaded machine.
    @Test(.timeLimit(.minutes(10)))
    func mutatedPayloadsThrowOrDecodeToValuesThatRoundTrip() async throws {
        // SplitMix64 (JournalCrashTests.swift): the same mutations on every run and platform.
        var random = SplitMix64(seed: 0x5EED_0040)
        let targets = try Self.targets()
        var decoded = 0
        var thrown = 0
        var mutations = 0
        for target in targets {
            for _ in 0..<1_500 {
                let mutated = Self.mutate(target.bytes, &random)
                mutations += 1
                if mutations % 32 == 0 { await Task.yield() }
                do {
                    let roundTrips = try target.decode(mutated)
                    decoded += 1
                    // Floating-point values may decode as NaN, which is not equal to itself.
                    if !roundTrips && !["Everything"].contains(target.name) {
                        Issue.record("\(target.name): a decoded value does not round-trip: \(mutated)")
                    }
                } catch is DecodingError {
                    thrown += 1
                } catch {
                    Issue.record("\(target.name): not a DecodingError: \(error)")
                }
            }
            // Truncations (about 400 of each payload, each one of a small payload) and a trailing byte throw: the
            // value must fill the payload exactly.
            for length in stride(from: 1, to: target.bytes.count, by: max(1, target.bytes.count / 400)) {
                mutations += 1
                if mutations % 32 == 0 { await Task.yield() }
                #expect(throws: DecodingError.self, "\(target.name) cut at \(length)") {
                    try target.decode(Array(target.bytes[..<length]))
                }
            }
            mutations += 1
            #expect(throws: DecodingError.self) { try target.decode(target.bytes + [0x00]) }
        }
        #expect(mutations >= 10_000)
        #expect(decoded + thrown == 1_500 * targets.count)
        #expect(thrown > decoded)
        #expect(decoded > 0)
    }
}
