#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes actions and states for the journal: the compact binary encoding of ``BinaryEncoder`` (version 1),
/// or JSON for a value that it cannot write in one pass.
///
/// A payload whose first byte is `0x01` is binary; any other payload is JSON (`JSONEncoder` never writes `0x01`
/// first), which is also how journals written before the binary encoding are read.
///
/// Why binary: the journal encodes every action (with `.groupCommit`, on its writer, whose speed bounds the
/// steady-state dispatch rate), and recovery decodes the newest snapshot and every action after it. The binary
/// encoding is faster than `JSONEncoder` and `JSONDecoder` both ways, for small actions and for large snapshots,
/// and its payloads are smaller: `JournalRecoveryTime` and the `Journal` benchmarks in the benchmarks package
/// measure it (their figures are in its README).
struct JournalCoder {
    private let binary = BinaryEncoder()
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    func encode<Value: Encodable>(_ value: Value) throws(JournalError) -> [UInt8] {
        let bytes: [UInt8]?
        do {
            bytes = try binary.encode(value)
        } catch {
            // Too deep to read back, in either format.
            throw .unencodable(description: "\(error)")
        }
        if let bytes {
            return bytes
        }
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw .unencodable(description: "\(error)")
        }
    }

    /// Decodes `bytes`: a binary payload in place; a JSON one copied into `scratch` (reusing one `Data` for every
    /// record of a replay saves the allocation per record that `Data(bytesNoCopy:)` makes).
    ///
    /// `concurrently` lets a binary payload's large dictionaries of structs be decoded on several threads: only for
    /// a `Sendable` value (see ``BinaryDecodingOptions/concurrently``).
    func decode<Value: Decodable>(
        _ type: Value.Type,
        from bytes: UnsafeRawBufferPointer,
        scratch: inout Data,
        sequence: UInt64,
        concurrently: Bool = false
    ) throws(JournalError) -> Value {
        do {
            return try decodeReportingCause(type, from: bytes, scratch: &scratch, concurrently: concurrently)
        } catch {
            throw .undecodable(sequence: sequence, description: "\(error)")
        }
    }

    /// ``decode(_:from:scratch:sequence:concurrently:)`` throwing the decoder's own error, for a caller that
    /// reports where and why the payload did not decode (recovery's ``JournalDecodingFailure``).
    func decodeReportingCause<Value: Decodable>(
        _ type: Value.Type,
        from bytes: UnsafeRawBufferPointer,
        scratch: inout Data,
        concurrently: Bool
    ) throws -> Value {
        if bytes.first == BinaryEncoder.version {
            return try BinaryDecoder.decode(type, from: bytes, concurrently: concurrently)
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: bytes)
        return try decoder.decode(type, from: scratch)
    }
}

/// The encoding of the journal's payloads (actions and snapshot states), for tools that read or write records
/// themselves: another ``JournalStorage``'s tests, a journal inspector, a benchmark.
///
/// A payload is the compact binary encoding (version 1: its first byte is `0x01`) described in <doc:Durability>,
/// or JSON for a value whose `encode(to:)` writes its containers out of order; ``decode(_:from:)`` reads both,
/// and so reads journals written before the binary encoding. Not thread-safe: one coder per thread.
///
/// Limits (see <doc:Durability>): a value is nested at most 64 containers deep, so that decoding it is safe on a
/// thread with a small stack: ``encode(_:)`` throws for a deeper value, ``decode(_:from:)`` for a deeper payload.
/// Keys must be valid UTF-8. A `Decodable` may keep its decoder or a container and use it after decoding.
public struct JournalPayloadCoder {
    private let coder = JournalCoder()
    private var scratch = Data()

    /// Creates a coder.
    public init() {}

    /// The payload that the journal writes for `value`.
    public func encode<Value: Encodable>(_ value: Value) throws(JournalError) -> [UInt8] {
        try coder.encode(value)
    }

    /// Decodes a payload; throws ``JournalError/undecodable(sequence:description:)`` (with sequence 0) when it is
    /// damaged or holds another type.
    public mutating func decode<Value: Decodable>(
        _ type: Value.Type,
        from bytes: UnsafeRawBufferPointer
    ) throws(JournalError) -> Value {
        try coder.decode(type, from: bytes, scratch: &scratch, sequence: 0)
    }
}
