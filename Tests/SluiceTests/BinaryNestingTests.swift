import Foundation
import Testing

@testable import SluiceJournal

/// The journal's binary encoding nests containers at most `BinaryEncoder.maximumDepth` deep: the encoder throws past
/// it, the decoder throws for a deeper payload (never overflows its stack), decoding at the limit fits in the stack
/// of a small thread, and skipping a value costs the same at any depth.
@Suite struct BinaryNestingTests {
    static let limit = BinaryEncoder.maximumDepth

    /// A linked list: each node is two containers (the case's, and its associated values'), `.end` two more.
    indirect enum List: Codable, Equatable, Sendable {
        case end
        case node(String, List)

        /// A list nested exactly `depth` containers deep (`depth` even), its nodes' strings `text`.
        static func nested(_ depth: Int, text: String = "n") -> List {
            var list = List.end
            for _ in 0..<(depth - 2) / 2 {
                list = .node(text, list)
            }
            return list
        }
    }

    /// Arrays in arrays, `depth` of them.
    struct Nest: Codable, Equatable {
        var depth: Int

        init(depth: Int) {
            self.depth = depth
        }

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            depth = container.isAtEnd ? 1 : try container.decode(Nest.self).depth + 1
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            if depth > 1 { try container.encode(Nest(depth: depth - 1)) }
        }
    }

    /// A binary payload of `depth` arrays in arrays, written by hand.
    static func nestedArrays(_ depth: Int) -> [UInt8] {
        [BinaryEncoder.version] + [UInt8](repeating: 0x09, count: depth) + [UInt8](repeating: 0xFF, count: depth)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8]) throws -> Value {
        try bytes.withUnsafeBytes { buffer in try BinaryDecoder.decode(type, from: buffer) }
    }

    /// The outcome of `body`, run on a new thread with a 512 KiB stack: the size of a Dispatch worker's or a Swift
    /// concurrency thread's stack, the smallest that the library decodes on. Four times as much under
    /// AddressSanitizer, whose frames are that much larger.
    static func onSmallStack<T: Sendable>(
        _ body: @escaping @Sendable () throws -> T
    ) async -> Result<T, any Error> {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: Result { try body() })
            }
            thread.stackSize = (underAddressSanitizer ? 4 : 1) * 512 * 1024
            thread.start()
        }
    }

    /// Whether the process runs under AddressSanitizer.
    static let underAddressSanitizer: Bool = {
        guard let process = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(process) }
        return dlsym(process, "__asan_init") != nil
    }()

    @Test func theLimitIsTheOneThatDurabilityDocuments() throws {
        let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/SluiceJournal/SluiceJournal.docc/Durability.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        #expect(text.contains("nested at most \(Self.limit) containers deep"))
    }

    /// A crafted payload of 100,000 arrays in arrays (200 KB) overflowed the stack of the reader's recursive skip.
    @Test func aPayloadNestedFarPastTheLimitThrowsOnASmallStack() async throws {
        let bytes = Self.nestedArrays(100_000)
        let outcome = await Self.onSmallStack { try Self.decode(Nest.self, bytes) }
        guard case .failure(DecodingError.dataCorrupted(let context)) = outcome else {
            Issue.record("expected dataCorrupted, got \(outcome)")
            return
        }
        #expect(context.debugDescription.contains("more than \(Self.limit) deep"))
        #expect(context.debugDescription.contains("(payload byte \(Self.limit + 1))"))
    }

    @Test func valuesNestedToTheLimitRoundTripOnASmallStack() async throws {
        let list = List.nested(Self.limit)
        let listBytes = try JournalCoder().encode(list)
        let nestBytes = try JournalCoder().encode(Nest(depth: Self.limit))
        let outcome = await Self.onSmallStack {
            let coder = JournalCoder()
            var scratch = Data()
            let decodedList = try listBytes.withUnsafeBytes { buffer in
                try coder.decode(List.self, from: buffer, scratch: &scratch, sequence: 1)
            }
            let decodedNest = try nestBytes.withUnsafeBytes { buffer in
                try coder.decode(Nest.self, from: buffer, scratch: &scratch, sequence: 2)
            }
            return [listBytes[0], nestBytes[0], decodedList == list ? 1 : 0, UInt8(decodedNest.depth)]
        }
        #expect(try outcome.get() == [BinaryEncoder.version, BinaryEncoder.version, 1, UInt8(Self.limit)])
    }

    @Test func aPayloadOneContainerPastTheLimitThrows() throws {
        #expect(try Self.decode(Nest.self, Self.nestedArrays(Self.limit)) == Nest(depth: Self.limit))
        let error = #expect(throws: DecodingError.self) {
            try Self.decode(Nest.self, Self.nestedArrays(Self.limit + 1))
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription.contains("more than \(Self.limit) deep"))
        // Through the journal's coder, with the sequence of the record.
        var scratch = Data()
        let journalError = #expect(throws: JournalError.self) {
            try Self.nestedArrays(Self.limit + 1).withUnsafeBytes { buffer in
                try JournalCoder().decode(Nest.self, from: buffer, scratch: &scratch, sequence: 7)
            }
        }
        guard case .undecodable(let sequence, let description) = journalError else {
            Issue.record("expected undecodable, got \(String(describing: journalError))")
            return
        }
        #expect(sequence == 7)
        #expect(description.contains("more than \(Self.limit) deep"))
    }

    /// The encoder throws at the write, when the caller can still act, for a value that it would write but the
    /// decoder would not read; the error names the limit and where in the value it was passed.
    @Test func theEncoderThrowsPastTheLimit() throws {
        let encoder = BinaryEncoder()
        #expect(try encoder.encode(List.nested(Self.limit)) != nil)
        #expect(try encoder.encode(Nest(depth: Self.limit)) != nil)
        for value in [List.nested(Self.limit + 2), List.nested(8_000)] {
            let error = #expect(throws: EncodingError.self) { try encoder.encode(value) }
            guard case .invalidValue(_, let context) = error else {
                Issue.record("expected invalidValue, got \(String(describing: error))")
                continue
            }
            #expect(context.debugDescription.contains("more than \(Self.limit) deep"))
            // The path of the 65th container: the `.end` of a list of 31 nodes, whose path has 2 keys per node.
            #expect(context.codingPath.count == Self.limit)
            #expect(context.codingPath.prefix(4).map(\.stringValue) == ["node", "_1", "node", "_1"])
        }
        let arrays = #expect(throws: EncodingError.self) { try encoder.encode(Nest(depth: Self.limit + 1)) }
        guard case .invalidValue(_, let context) = arrays else {
            Issue.record("expected invalidValue, got \(String(describing: arrays))")
            return
        }
        #expect(context.codingPath.isEmpty)
        // Not the JSON fallback either: the journal's coder throws, naming the limit.
        let journalError = #expect(throws: JournalError.self) { try JournalCoder().encode(List.nested(Self.limit + 2)) }
        guard case .unencodable(let description) = journalError else {
            Issue.record("expected unencodable, got \(String(describing: journalError))")
            return
        }
        #expect(description.contains("more than \(Self.limit) deep"))
        // The encoder is usable after the error.
        #expect(try encoder.encode(List.nested(4)) == JournalCoder().encode(List.nested(4)))
    }

    /// Each level of a list skips the rest of the list when it reads its keys (`allKeys`, then the lookup of its
    /// case); a skip of a large container takes the end that the first walk noted, so the values skipped grow with
    /// the length of the list, not with its square.
    @Test func skippingIsLinearInTheDepth() throws {
        let text = String(repeating: "x", count: 300)
        func skipSteps(_ depth: Int) throws -> Int {
            let bytes = try BinaryEncoder().encode(List.nested(depth, text: text))!
            var counters = BinaryDecodingCounters()
            let list = try bytes.withUnsafeBytes { buffer in
                try BinaryDecoder.decode(List.self, from: buffer, options: BinaryDecodingOptions(), counters: &counters)
            }
            #expect(list == List.nested(depth, text: text))
            return counters.skipSteps
        }
        let half = try skipSteps(Self.limit / 2)
        let full = try skipSteps(Self.limit)
        // Twice the nodes: about twice the steps (a skip from each node to the end would take four times as many).
        #expect(full > half)
        #expect(full <= 2 * half + 20)
    }
}
