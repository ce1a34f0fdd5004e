/// Where a ``Journal`` keeps its records and snapshots: the seam between the journal and a storage backend.
///
/// ``FileJournalStorage`` keeps them in a local directory. Another backend (a database table per store id, say)
/// implements the same requirements; the journal calls them from one thread at a time, never concurrently.
///
/// The contract:
/// - ``acquire()`` makes this instance the only writer of the log, or throws. A local backend takes a lock file;
///   a shared one raises an epoch that every later append compares, so that a writer that lost the log (fenced
///   by a newer one) fails its next ``append(_:)`` instead of interleaving records.
/// - Sequence numbers are per log, from 1, without gaps; the journal assigns them, the storage checks and keeps
///   them. ``lastSequence()`` repairs a torn last record (a write that a crash cut short) and reports the last
///   complete one.
/// - ``append(_:)`` may keep records in a cache; ``sync()`` makes every appended record durable.
/// - Snapshots carry the sequence they cover and the version of the reducer that made them.
/// - Damage is reported, never skipped: a read that meets a bad record throws a ``JournalError`` naming where.
public protocol JournalStorage: AnyObject, Sendable {
    /// Makes this instance the log's only writer, or throws (``JournalError/locked(directory:)`` for a local
    /// directory).
    func acquire() throws(JournalError)

    /// The sequence number of the last complete record, 0 for an empty log, after removing a torn last record.
    func lastSequence() throws(JournalError) -> UInt64

    /// The sequence numbers that stored snapshots cover, newest first.
    func snapshotSequences() throws(JournalError) -> [UInt64]

    /// Reads and checks the snapshot that covers `sequence`; throws if it fails its checksum.
    func readSnapshot(covering sequence: UInt64) throws(JournalError) -> JournalSnapshot

    /// Calls `body` with each record after `sequence`, in order, checking each one's checksum and sequence.
    ///
    /// The bytes passed to `body` are valid only during the call.
    func readRecords(
        after sequence: UInt64,
        _ body: (_ sequence: UInt64, _ payload: UnsafeRawBufferPointer) throws(JournalError) -> Void
    ) throws(JournalError)

    /// Appends records whose sequence numbers continue the log; not yet durable.
    func append(_ records: [JournalRecord]) throws(JournalError)

    /// Makes every appended record durable.
    func sync() throws(JournalError)

    /// Stores a snapshot durably and atomically: after a crash, either the whole snapshot is there or none.
    func writeSnapshot(_ snapshot: JournalSnapshot) throws(JournalError)

    /// Removes snapshots older than the newest `keeping` and records that none of those needs any more.
    ///
    /// The journal calls it after each snapshot, and recovery writes a migrated snapshot back before the next one:
    /// the newest `keeping` snapshots are then of the current reducer version, and nothing older is needed.
    func compact(keepingSnapshots keeping: Int) throws(JournalError)

    /// The reducer versions that wrote the log, oldest first: each says that the records from its
    /// ``JournalWriterVersion/firstSequence`` on were written by its ``JournalWriterVersion/reducerVersion``.
    ///
    /// Recovery reads old records through the action adapters declared for the version that wrote them. A storage
    /// that keeps no versions returns `[]` (the default implementation): each record then counts as written by
    /// the version of the nearest snapshot before it.
    func writerVersions() throws(JournalError) -> [JournalWriterVersion]

    /// Keeps durably that the records from `version.firstSequence` on are written by `version.reducerVersion`,
    /// replacing any kept version that starts at or after it. Called by the writer, after recovery, when the
    /// store's reducer version differs from the one that wrote the last record.
    func recordWriterVersion(_ version: JournalWriterVersion) throws(JournalError)

    /// Gives up the log: releases the lock (or the epoch); the instance may not be used afterwards.
    func close()
}
