import Sluice
import SluiceJournal

/// Why a PostgreSQL journal, its writer or a follower stopped: each case names the store and the place.
///
/// The writer's ``PostgresJournalStorage`` reports these through its `onError` callback and
/// ``PostgresJournalStorage/stopReason``; to the ``Journal`` (whose storage seam throws `JournalError`) it throws
/// the matching `JournalError` (see ``journalError``).
public enum PostgresJournalError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A record's checksum does not match its payload.
    case checksumMismatch(storeID: String, sequence: UInt64)
    /// The stream does not continue with the next sequence number.
    case sequenceGap(storeID: String, expected: UInt64, found: UInt64)
    /// No snapshot made by this reducer version covers the records that are gone.
    case foreignReducerVersion(storeID: String, snapshotSequence: UInt64, found: Int, expected: Int)
    /// Another writer holds the stream (its lease runs and its session is alive).
    case heldByAnotherWriter(storeID: String, epoch: UInt64, writer: String)
    /// A newer writer took the stream over: this writer's epoch no longer matches the head row.
    case fenced(storeID: String, epoch: UInt64, currentEpoch: UInt64)
    /// A snapshot's checksum does not match its payload.
    case corruptSnapshot(storeID: String, sequence: UInt64)
    /// A record or a snapshot did not decode.
    case undecodable(storeID: String, sequence: UInt64, description: String)
    /// No endpoint answered as a primary (or, for a follower, at all).
    case noServer(endpoints: [String], lastError: String)
    /// A statement failed.
    case database(operation: String, description: String)
    /// A follower is a read-only replica: it applies the writer's records and refuses dispatches.
    case readOnlyFollower(storeID: String)
    /// The store id is longer than ``PostgresJournalConfiguration/maxStoreIDBytes`` in UTF-8.
    case storeIDTooLong(bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case .checksumMismatch(let storeID, let sequence):
            "store \(storeID): record \(sequence) fails its checksum"
        case .sequenceGap(let storeID, let expected, let found):
            "store \(storeID): expected record \(expected), found \(found)"
        case .foreignReducerVersion(let storeID, let sequence, let found, let expected):
            "store \(storeID): the snapshot at \(sequence) was made by reducer version \(found), this reducer is "
                + "version \(expected), and the records it covers are gone"
        case .heldByAnotherWriter(let storeID, let epoch, let writer):
            "store \(storeID) is held by writer \(writer) (epoch \(epoch))"
        case .fenced(let storeID, let epoch, let currentEpoch):
            "store \(storeID): this writer (epoch \(epoch)) was fenced by a newer one (epoch \(currentEpoch))"
        case .corruptSnapshot(let storeID, let sequence):
            "store \(storeID): the snapshot at \(sequence) fails its checksum"
        case .undecodable(let storeID, let sequence, let description):
            "store \(storeID): cannot decode entry \(sequence): \(description)"
        case .noServer(let endpoints, let lastError):
            "no PostgreSQL primary among \(endpoints.joined(separator: ", ")): \(lastError)"
        case .database(let operation, let description):
            "\(operation) failed: \(description)"
        case .readOnlyFollower(let storeID):
            "store \(storeID): this is a read-only follower; dispatch to the writer"
        case .storeIDTooLong(let bytes, let limit):
            "a store id may have at most \(limit) bytes in UTF-8; this one has \(bytes)"
        }
    }

    /// The `JournalError` that the storage seam throws for this error.
    ///
    /// The seam's error type names files; a database backend names its stream there (`postgres:<store id>`) and
    /// uses the sequence number as the offset.
    public var journalError: JournalError {
        switch self {
        case .checksumMismatch(let storeID, let sequence):
            .corruptRecord(file: "postgres:\(storeID)", offset: Int(sequence))
        case .corruptSnapshot(let storeID, let sequence):
            .corruptRecord(file: "postgres:\(storeID) snapshot", offset: Int(sequence))
        case .sequenceGap(let storeID, let expected, let found):
            .unexpectedSequence(file: "postgres:\(storeID)", offset: Int(found), expected: expected, found: found)
        case .foreignReducerVersion(let storeID, let sequence, _, _):
            .missingRecords(expected: sequence, file: "postgres:\(storeID)")
        case .heldByAnotherWriter(let storeID, _, _), .fenced(let storeID, _, _):
            .locked(directory: "postgres:\(storeID)")
        case .undecodable(_, let sequence, let description):
            .undecodable(sequence: sequence, description: description)
        case .noServer, .database, .readOnlyFollower, .storeIDTooLong:
            .io(operation: description, path: "postgres", errno: 0)
        }
    }
}
