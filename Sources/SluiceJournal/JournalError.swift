#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a journal could not be opened, written, read or recovered.
///
/// Each case names the file (and, for a record, the byte offset in it) so that an operator can look at the
/// damage. Recovery never skips a damaged record silently: it stops with one of these.
public enum JournalError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Another writer holds the log: another open journal (in this process or another) holds the directory's
    /// lock file, or, for a database storage, another writer holds the stream (`directory` then names it).
    case locked(directory: String)
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// A record that is not the last one in the log fails its checksum or its length is impossible.
    case corruptRecord(file: String, offset: Int)
    /// A record carries another sequence number than the one that must come next.
    case unexpectedSequence(file: String, offset: Int, expected: UInt64, found: UInt64)
    /// Records are missing: the log continues at `file` (or ends) where `expected` was due.
    case missingRecords(expected: UInt64, file: String)
    /// A file in the journal directory is not a journal file of this format.
    case badHeader(file: String)
    /// A file in the journal's directory is named like a segment or a snapshot, but for a sequence number the
    /// journal never writes (0 for a segment, or one past the largest): a crafted or misplaced file, which the
    /// journal refuses to open rather than guess about. Move it out of the directory.
    case badFileName(file: String)
    /// The recorded action with this sequence number (or the snapshot covering it) could not be decoded.
    case undecodable(sequence: UInt64, description: String)
    /// Recovery (or the replay gate) cannot rebuild the state with this build's types and declared migrations:
    /// the failure names the cause, each skipped snapshot and why, and what to do.
    indirect case notRecoverable(JournalRecoveryFailure)
    /// An action or a state could not be encoded.
    case unencodable(description: String)
    /// The journal was closed (``Journal/close()``): it records no more actions, and it cannot confirm the
    /// durability of an action it did not hold on stable storage when it closed.
    case closed
    /// The store refused the action: it was shut down (`Store.shutdown(timeout:)`), so the action was neither
    /// reduced nor recorded.
    case refused
    /// The action did not reach the journal while it was dispatched: a middleware dropped it, or will pass it on
    /// later or from another thread, so there is no recorded action whose durability could be confirmed.
    case notRecorded
    /// The task that waited for durability was cancelled before the action was on stable storage.
    case cancelled

    public var description: String {
        switch self {
        case .locked(let directory):
            "the journal at \(directory) is held by another writer (another process or journal holds its lock)"
        case .io(let operation, let path, let errno):
            "\(operation) failed for \(path): \(String(cString: strerror(errno))) (errno \(errno))"
        case .corruptRecord(let file, let offset):
            "corrupt record in \(file) at offset \(offset): checksum or length does not match"
        case .unexpectedSequence(let file, let offset, let expected, let found):
            "record in \(file) at offset \(offset) has sequence \(found), expected \(expected)"
        case .missingRecords(let expected, let file):
            "records missing from the journal: sequence \(expected) is not in \(file)"
        case .badHeader(let file):
            "\(file) is not a Sluice journal file (bad header)"
        case .badFileName(let file):
            "\(file) is named for a sequence number the journal never writes; move it out of the journal's directory"
        case .undecodable(let sequence, let description):
            "cannot decode the journal entry at sequence \(sequence): \(description)"
        case .notRecoverable(let failure):
            failure.description
        case .unencodable(let description):
            "cannot encode for the journal: \(description)"
        case .closed:
            "the journal is closed"
        case .refused:
            "the store refused the action: it is shut down"
        case .notRecorded:
            "the action did not reach the journal: a middleware dropped it or did not pass it on while it was dispatched"
        case .cancelled:
            "the wait for durability was cancelled"
        }
    }
}
