import Foundation
import Testing

@testable import Sluice

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
}
