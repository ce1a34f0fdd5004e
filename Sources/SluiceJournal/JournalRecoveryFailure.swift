#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why recovery (or the replay gate) cannot rebuild the state with this build's types and declared migrations:
/// what it met, each snapshot it skipped and why, and what to do.
///
/// Thrown as ``JournalError/notRecoverable(_:)``. Its ``description`` is written for the operator who reads it in
/// a log after a deploy:
///
/// ```
/// recovery with reducer version 2 cannot rebuild the state: records missing from the journal: sequence 1 is
/// not there (the journal ends at 3000); skipped: the snapshot at 3000 (reducer version 1): made by version 1,
/// and no migration from version 1 is declared, the records it covers are gone; ...
/// fix: declare `JournalMigrations().state(from: 1, as: <version 1's State>.self) { ... }` ...
/// ```
public struct JournalRecoveryFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What stopped recovery.
    public enum Cause: Sendable, Equatable {
        /// A record was missing where the replay needed it: the snapshots after it were skipped and compaction
        /// removed the records they covered.
        case recordsMissing(expected: UInt64, lastSequence: UInt64)
        /// A record does not decode as this build's `Action`, through the adapters declared for the version that
        /// wrote it.
        case recordUndecodable(sequence: UInt64, writtenBy: Int, decoding: JournalDecodingFailure)
        /// The declared migrations do not chain: a step produces another type than the next one reads.
        case migrationsDoNotChain(String)
    }

    /// What stopped recovery.
    public var cause: Cause
    /// The reducer version that recovered (this build's).
    public var reducerVersion: Int
    /// The snapshots that recovery did not use, newest first, each with why and whether its records exist.
    public var skipped: [JournalRecovery.SkippedSnapshot]
    /// What to do about it, in a sentence or two.
    public var remedy: String

    /// Creates a failure report.
    public init(cause: Cause, reducerVersion: Int, skipped: [JournalRecovery.SkippedSnapshot], remedy: String) {
        self.cause = cause
        self.reducerVersion = reducerVersion
        self.skipped = skipped
        self.remedy = remedy
    }

    public var description: String {
        var text = "recovery with reducer version \(reducerVersion) cannot rebuild the state: "
        switch cause {
        case .recordsMissing(let expected, let last):
            text += "records missing from the journal: sequence \(expected) is not there (the journal ends at \(last))"
        case .recordUndecodable(let sequence, let version, let decoding):
            text +=
                "the record at sequence \(sequence), written by reducer version \(version), does not decode: "
                + decoding.description
        case .migrationsDoNotChain(let mismatch):
            text += "the declared migrations do not chain: " + mismatch
        }
        if !skipped.isEmpty {
            text += "; skipped: " + skipped.map(\.description).joined(separator: "; ")
        }
        return text + "; fix: " + remedy
    }
}

/// Why a payload did not decode, in the decoder's terms: where (the coding path) and what it expected there.
public struct JournalDecodingFailure: Sendable, Equatable, CustomStringConvertible {
    /// The type that was decoded (`CounterV2`, say).
    public var type: String
    /// The coding path of the value that failed, dotted (`items.3.name`); empty for the top level.
    public var codingPath: String
    /// What the decoder expected there: a type (`Int`), or a key (`a value for key "max"`); `nil` for damage.
    public var expected: String?
    /// The decoder's own description.
    public var message: String

    /// Creates a description of a decoding failure.
    public init(type: String, codingPath: String, expected: String?, message: String) {
        self.type = type
        self.codingPath = codingPath
        self.expected = expected
        self.message = message
    }

    /// Describes `error` (a `DecodingError`, or any other error a `Decodable` threw) met while decoding `type`.
    init(_ error: any Error, decoding type: Any.Type) {
        let name = String(reflecting: type)
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case DecodingError.typeMismatch(let expected, let context),
            DecodingError.valueNotFound(let expected, let context):
            self.init(
                type: name,
                codingPath: path(context.codingPath),
                expected: String(reflecting: expected),
                message: context.debugDescription
            )
        case DecodingError.keyNotFound(let key, let context):
            self.init(
                type: name,
                codingPath: path(context.codingPath + [key]),
                expected: "a value for key \"\(key.stringValue)\"",
                message: context.debugDescription
            )
        case DecodingError.dataCorrupted(let context):
            self.init(
                type: name,
                codingPath: path(context.codingPath),
                expected: nil,
                message: context.debugDescription
            )
        default:
            self.init(type: name, codingPath: "", expected: nil, message: "\(error)")
        }
    }

    public var description: String {
        let place = codingPath.isEmpty ? "at the top level" : "at \(codingPath)"
        let wanted = expected.map { ", expected \($0)" } ?? ""
        return "\(type) does not decode \(place)\(wanted) (\(message))"
    }
}

extension JournalRecovery.SkippedSnapshot: CustomStringConvertible {
    public var description: String {
        let version = reducerVersion.map { "reducer version \($0)" } ?? "unreadable"
        let records = coveredRecordsExist ? "its records were replayed instead" : "the records it covers are gone"
        return "the snapshot at \(sequence) (\(version)): \(reason), \(records)"
    }

    /// Why the snapshot was skipped, in words.
    var reason: String {
        if let decodingFailure { return decodingFailure.description }
        if case .undecodable(_, let description) = error { return description }
        return "\(error)"
    }
}

/// Decodes payloads for recovery and the replay gate: the journal's coder, and the cause of a failure kept as a
/// ``JournalDecodingFailure`` (the coding path and the expected type), not only as text.
struct EvolutionDecoder {
    let coder = JournalCoder()
    var scratch = Data()
    /// The sequence number reported in errors.
    var sequence: UInt64 = 0
    /// Whether a binary payload's large dictionaries may be decoded on several threads (a `Sendable` state).
    var concurrently = false
    /// The cause of the last failure of ``decode(_:from:)``.
    var lastFailure: JournalDecodingFailure?

    /// Decodes `bytes` as `type`; on failure keeps its cause in ``lastFailure`` and throws
    /// ``JournalError/undecodable(sequence:description:)``.
    mutating func decode<Value: Decodable>(
        _ type: Value.Type,
        from bytes: UnsafeRawBufferPointer
    ) throws(JournalError) -> Value {
        do {
            return try coder.decodeReportingCause(type, from: bytes, scratch: &scratch, concurrently: concurrently)
        } catch {
            let failure = JournalDecodingFailure(error, decoding: type)
            lastFailure = failure
            throw .undecodable(sequence: sequence, description: failure.description)
        }
    }
}
