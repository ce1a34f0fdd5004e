import Foundation
import PostgresNIO
import Sluice
import SluiceJournal

/// A ``JournalStorage`` in PostgreSQL: one stream per store id, fenced by an epoch, for a writer that a standby
/// can replace.
///
/// ```swift
/// let storage = try PostgresJournalStorage(configuration: configuration, onError: { print("journal:", $0) })
/// let journal = try Journal(storage: storage)
/// let store = try Store<Counter, CounterAction>(
///     recoveringFrom: journal, durability: .groupCommit(interval: .zero),
///     initialState: Counter(), reducer: counterReducer)
/// ```
///
/// - **Records**: `sluice_records(store_id, seq, epoch, checksum, payload)`. The journal assigns the sequence
///   numbers; each append is one statement that moves the stream's head row from `first - 1` to `last` if the
///   row still carries this writer's epoch, inserts the records from arrays, and notifies the followers
///   (`pg_notify('sluice_journal', '<store id> <last>')`). A batch is acknowledged when that statement's
///   transaction committed and, with synchronous standbys, once they confirmed it (see "Failover"). A batch larger than
///   ``PostgresJournalConfiguration/maxBatchCount`` records or ``PostgresJournalConfiguration/maxBatchBytes``
///   bytes is split into several statements.
/// - **Fencing**: ``acquire()`` increments the epoch of the head row (the row lock makes it wait for an append in
///   flight); every later append of the older writer then matches no row, fails with
///   ``PostgresJournalError/fenced(storeID:epoch:currentEpoch:)`` and stops the journal.
/// - **Liveness**: the writer holds a session advisory lock on the store id on a second connection and renews a
///   lease there. A standby takes over when it gets the advisory lock (the writer's session ended: a crash) or
///   when the lease ran out (a hung writer). A new stream's lease runs from its creation, so that only the
///   holder of the advisory lock takes it.
/// - **Failover**: a lost connection is re-established to whichever endpoint is the primary; an append whose
///   commit was not confirmed (connection lost, or no answer within
///   ``PostgresJournalConfiguration/statementTimeout``) is resolved by reading the head row and the batch's records
///   under this writer's epoch: it is acknowledged if they are there, sent again with the same sequence numbers if
///   the head is just before it, and the writer stops otherwise. Each append is an explicit transaction, and a
///   batch is acknowledged only when its `COMMIT` completed and the synchronous standbys confirmed the WAL past
///   it, read from `pg_stat_replication` right after the commit: a `COMMIT` whose wait for the standby was
///   cancelled also completes, and a batch found after an unknown outcome may be on the primary alone. With `synchronous_standby_names` set, the writer's role must be a member of
///   `pg_read_all_stats` (or `pg_monitor`), or a superuser; ``acquire()`` refuses it otherwise.
///
/// The seam is synchronous: each call waits for its statement on the calling thread (never on one of
/// PostgresNIO's event loops), until the statement completes, its connection closes or
/// ``PostgresJournalConfiguration/statementTimeout`` passes: PostgresNIO never answers a statement sent on a
/// connection that has closed. An append whose connection closed is resolved as above; a snapshot, a compaction or a
/// read runs once more on a new connection to the primary. The lease keeper, on the second connection, connects
/// again on its next round.
public final class PostgresJournalStorage: JournalStorage, @unchecked Sendable {
    /// Where the stream lives.
    public let configuration: PostgresJournalConfiguration

    private let onError: @Sendable (PostgresJournalError) -> Void
    private let lock = NSLock()
    private let logger = PostgresLink.logger
    // Guarded by `lock`.
    private var connection: PostgresConnection?
    private var epochValue: UInt64 = 0
    private var head: UInt64 = 0
    private var failure: PostgresJournalError?
    private var isClosed = false
    private var keeper: Task<Void, Never>?
    private var statistics = AppendStatistics()

    /// Creates the storage; nothing is connected before ``acquire()``.
    ///
    /// - Parameters:
    ///   - configuration: The servers, the store id and the writer's limits.
    ///   - onError: Called once with the error that stopped this writer (fenced by a newer one, say), also when
    ///     it is found by the lease keeper between two appends.
    /// - Throws: ``PostgresJournalError/storeIDTooLong(bytes:limit:)`` when the store id has more than
    ///   ``PostgresJournalConfiguration/maxStoreIDBytes`` bytes in UTF-8.
    public init(
        configuration: PostgresJournalConfiguration,
        onError: @escaping @Sendable (PostgresJournalError) -> Void = { _ in }
    ) throws(PostgresJournalError) {
        try configuration.checkStoreID()
        self.configuration = configuration
        self.onError = onError
    }

    /// The epoch this writer holds the stream with (0 before ``acquire()``).
    public var epoch: UInt64 {
        lock.withLock { epochValue }
    }

    /// How many append statements this writer committed, with how many records.
    public var appendStatistics: AppendStatistics {
        lock.withLock { statistics }
    }

    /// The error that stopped this writer, if any.
    public var stopReason: PostgresJournalError? {
        lock.withLock { failure }
    }

    /// The connection that the appends use (internal for the tests, which close it under the writer).
    var appendConnection: PostgresConnection? {
        lock.withLock { connection }
    }

    /// Takes the stream over: increments its epoch once the current writer is gone (its session ended) or its
    /// lease ran out, waiting up to ``PostgresJournalConfiguration/acquireWait`` for that.
    ///
    /// Of several writers that start at once on a new stream, only the one that gets the advisory lock takes it: a
    /// new head row's lease runs from its creation.
    ///
    /// - Throws: `JournalError.locked` (``PostgresJournalError/heldByAnotherWriter(storeID:epoch:writer:)``)
    ///   when another writer still holds the stream after the wait; an I/O error naming `pg_read_all_stats` when
    ///   the primary waits for a synchronous standby and this role cannot read the standbys' positions.
    public func acquire() throws(JournalError) {
        do throws(PostgresJournalError) {
            try acquireStream()
        } catch {
            throw error.journalError
        }
    }

    private func acquireStream() throws(PostgresJournalError) {
        let deadline = ContinuousClock.now + configuration.acquireWait
        let writerConnection = try connectPrimary()
        // A connection must be closed before it is released: every way out below closes the ones it made.
        do {
            try PostgresSchema.create(on: writerConnection, timeout: configuration.statementTimeout, logger: logger)
        } catch {
            try? writerConnection.close().wait()
            throw .database(operation: "creating the sluice tables", description: String(reflecting: error))
        }
        let lockConnection: PostgresConnection
        do throws(PostgresJournalError) {
            try checkReplicationIsReadable(on: writerConnection)
            lockConnection = try connectPrimary()
        } catch {
            try? writerConnection.close().wait()
            throw error
        }
        let id = configuration.storeID
        while true {
            let gotLock: Bool
            let row: (Int64, Int64)?
            do {
                gotLock =
                    try wait(
                        for: lockConnection.query(
                            "SELECT pg_try_advisory_lock(hashtextextended(\(id), 0))",
                            logger: logger
                        ),
                        on: lockConnection
                    ).first?.decode(Bool.self) ?? false
                // A new stream's lease runs from its creation: only the writer that holds the advisory lock takes
                // it, and no other writer that finds the new row before that writer raised its epoch.
                _ = try wait(
                    for: writerConnection.query(
                        """
                        INSERT INTO sluice_streams (store_id, lease_until)
                        VALUES (\(id), clock_timestamp() + \(configuration.lease.milliseconds) * interval '1 millisecond')
                        ON CONFLICT DO NOTHING
                        """,
                        logger: logger
                    ),
                    on: writerConnection
                )
                row = try wait(
                    for: writerConnection.query(
                        """
                        UPDATE sluice_streams SET epoch = epoch + 1, writer = \(configuration.writerName),
                            lease_until = clock_timestamp()
                                + \(configuration.lease.milliseconds) * interval '1 millisecond'
                        WHERE store_id = \(id) AND (\(gotLock) OR lease_until < clock_timestamp())
                        RETURNING epoch, head
                        """,
                        logger: logger
                    ),
                    on: writerConnection
                ).first?.decode((Int64, Int64).self)
            } catch {
                try? lockConnection.close().wait()
                try? writerConnection.close().wait()
                throw .database(operation: "taking over store \(id)", description: String(reflecting: error))
            }
            if let row {
                lock.withLock {
                    connection = writerConnection
                    epochValue = UInt64(column: row.0)
                    head = UInt64(column: row.1)
                }
                startLeaseKeeper(lockConnection, holdsLock: gotLock)
                return
            }
            if ContinuousClock.now >= deadline {
                let holder = try? wait(
                    for: writerConnection.query(
                        "SELECT epoch, writer FROM sluice_streams WHERE store_id = \(id)",
                        logger: logger
                    ),
                    on: writerConnection
                ).first?.decode((Int64, String).self)
                try? lockConnection.close().wait()
                try? writerConnection.close().wait()
                throw .heldByAnotherWriter(
                    storeID: id,
                    epoch: UInt64(column: holder?.0 ?? 0),
                    writer: holder?.1 ?? "?"
                )
            }
            usleep(20_000)
        }
    }

    /// The sequence number of the last record, from the head row read at takeover.
    public func lastSequence() throws(JournalError) -> UInt64 {
        try checkHealthy()
        return lock.withLock { head }
    }

    /// The sequence numbers of the stored snapshots, newest first.
    public func snapshotSequences() throws(JournalError) -> [UInt64] {
        let rows = try run(
            "SELECT seq FROM sluice_snapshots WHERE store_id = \(configuration.storeID) ORDER BY seq DESC",
            operation: "listing snapshots"
        )
        do {
            return try rows.map { UInt64(column: try $0.decode(Int64.self)) }
        } catch {
            throw PostgresJournalError.database(operation: "listing snapshots", description: "\(error)").journalError
        }
    }

    /// Reads the snapshot that covers `sequence` and checks its checksum.
    public func readSnapshot(covering sequence: UInt64) throws(JournalError) -> JournalSnapshot {
        let id = configuration.storeID
        let rows = try run(
            """
            SELECT reducer_version, checksum, payload FROM sluice_snapshots
            WHERE store_id = \(id) AND seq = \(Int64(sequence))
            """,
            operation: "reading a snapshot"
        )
        guard let row = try? rows.first?.decode((Int64, Int64, ByteBuffer).self) else {
            throw PostgresJournalError.corruptSnapshot(storeID: id, sequence: sequence).journalError
        }
        let payload = Array(buffer: row.2)
        guard UInt32(truncatingIfNeeded: row.1) == JournalChecksum.crc32c(of: payload) else {
            throw PostgresJournalError.corruptSnapshot(storeID: id, sequence: sequence).journalError
        }
        return JournalSnapshot(sequence: sequence, reducerVersion: Int(row.0), payload: payload)
    }

    /// Calls `body` with each record after `sequence`, in pages, checking each one's sequence and checksum.
    public func readRecords(
        after sequence: UInt64,
        _ body: (UInt64, UnsafeRawBufferPointer) throws(JournalError) -> Void
    ) throws(JournalError) {
        let id = configuration.storeID
        var expected = sequence + 1
        while true {
            let rows = try run(
                """
                SELECT seq, checksum, payload FROM sluice_records
                WHERE store_id = \(id) AND seq > \(Int64(expected - 1)) ORDER BY seq LIMIT 10000
                """,
                operation: "reading records"
            )
            var count = 0
            for row in rows {
                count += 1
                let decoded: (Int64, Int64, ByteBuffer)
                do {
                    decoded = try row.decode((Int64, Int64, ByteBuffer).self)
                } catch {
                    throw PostgresJournalError.database(operation: "reading records", description: "\(error)")
                        .journalError
                }
                let found = UInt64(column: decoded.0)
                guard found == expected else {
                    throw PostgresJournalError.sequenceGap(storeID: id, expected: expected, found: found).journalError
                }
                let payload = Array(buffer: decoded.2)
                guard UInt32(truncatingIfNeeded: decoded.1) == JournalChecksum.crc32c(of: payload) else {
                    throw PostgresJournalError.checksumMismatch(storeID: id, sequence: found).journalError
                }
                var bodyError: JournalError?
                payload.withUnsafeBytes { bytes in
                    do throws(JournalError) {
                        try body(found, bytes)
                    } catch {
                        bodyError = error
                    }
                }
                if let bodyError { throw bodyError }
                expected += 1
            }
            if count < 10000 { break }
        }
        let last = lock.withLock { head }
        if expected <= last {
            // The head row says the stream goes further than its records.
            throw JournalError.missingRecords(expected: expected, file: "postgres:\(id)")
        }
    }

    /// Commits `records` (split by the configured caps), each statement compared-and-set on this writer's epoch
    /// and on the head; returns once they committed.
    public func append(_ records: [JournalRecord]) throws(JournalError) {
        do throws(PostgresJournalError) {
            var start = 0
            while start < records.count {
                var end = start
                var bytes = 0
                while end < records.count, end - start < configuration.maxBatchCount,
                    end == start || bytes + records[end].payload.count <= configuration.maxBatchBytes
                {
                    bytes += records[end].payload.count
                    end += 1
                }
                try appendBatch(records[start..<end])
                start = end
            }
        } catch {
            stop(error)
            throw error.journalError
        }
    }

    private func appendBatch(_ records: ArraySlice<JournalRecord>) throws(PostgresJournalError) {
        if let failure = lock.withLock({ failure }) { throw failure }
        guard let first = records.first?.sequence, let last = records.last?.sequence else { return }
        let id = configuration.storeID
        let (epoch, currentHead) = lock.withLock { (epochValue, head) }
        guard first == currentHead + 1 else {
            throw .sequenceGap(storeID: id, expected: currentHead + 1, found: first)
        }
        let sequences = records.map { Int64($0.sequence) }
        let checksums = records.map { Int64(JournalChecksum.crc32c(of: $0.payload)) }
        let payloads = records.map { ByteBuffer(bytes: $0.payload) }
        let statement: PostgresQuery = """
            WITH moved AS (
                UPDATE sluice_streams SET head = \(Int64(last)),
                    lease_until = clock_timestamp() + \(configuration.lease.milliseconds) * interval '1 millisecond'
                WHERE store_id = \(id) AND epoch = \(Int64(epoch)) AND head = \(Int64(first - 1))
                RETURNING store_id
            ), inserted AS (
                INSERT INTO sluice_records (store_id, seq, epoch, checksum, payload)
                SELECT moved.store_id, r.seq, \(Int64(epoch)), r.checksum, r.payload
                FROM moved, unnest(\(sequences)::bigint[], \(checksums)::bigint[], \(payloads)::bytea[])
                    AS r(seq, checksum, payload)
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM inserted), pg_notify(\(PostgresSchema.channel), \(id) || ' ' || \(Int64(last)))::text
            FROM moved
            """
        let checksumsByOffset = checksums
        var attemptDeadline: ContinuousClock.Instant?
        var attempts = 0
        while true {
            let current = lock.withLock { connection }
            attempts += 1
            do {
                guard let current else {
                    throw PostgresJournalError.database(operation: "append", description: "closed")
                }
                // An explicit transaction, pipelined: PostgresNIO completes a statement at its CommandComplete,
                // which the server sends BEFORE the implicit commit of an autocommit statement (and before the
                // synchronous standby confirmed it). Only COMMIT's completion says the batch is durable; acking
                // at the statement's completion let a failover lose an acknowledged batch.
                // One wait for the three, on a future combined on the connection's event loop: a wait per
                // statement woke this thread three times per append, and on a loaded machine each wake-up costs
                // a scheduling delay (0.8 ms of 1.2 ms per append when the commit itself was cheap). The combined
                // future fails with the first statement's error, as soon as it comes.
                // The replication check runs once the COMMIT has ended, in the same round trip: a COMMIT also
                // completes when its wait for the standby was cancelled (see `confirmReplication`).
                let begin = current.query("BEGIN", logger: logger)
                let result = current.query(statement, logger: logger)
                let commit = current.query("COMMIT", logger: logger)
                let check = current.query(SynchronousReplication.check(after: nil), logger: logger)
                let (((_, rows), _), checked) = try wait(for: begin.and(result).and(commit).and(check), on: current)
                if rows.first != nil {
                    let deadline = attemptDeadline ?? (ContinuousClock.now + configuration.reconnectTimeout)
                    attemptDeadline = deadline
                    try confirmReplication(
                        checked: checked,
                        epoch: epoch,
                        first: first,
                        last: last,
                        on: current,
                        until: deadline
                    )
                    lock.withLock {
                        head = last
                        statistics.statements += 1
                        statistics.records += records.count
                        statistics.largestStatement = max(statistics.largestStatement, records.count)
                    }
                    return
                }
                // Nothing matched: fenced, or the head moved under us.
                let deadline = attemptDeadline ?? (ContinuousClock.now + configuration.reconnectTimeout)
                try resolve(
                    epoch: epoch,
                    first: first,
                    last: last,
                    checksums: checksumsByOffset,
                    on: current,
                    until: deadline
                )
                return
            } catch let error as PostgresJournalError {
                throw error
            } catch {
                // The connection failed (or did not answer in time): the batch may or may not have committed.
                // Reconnect to the primary, then read the head row and the records under this writer's epoch
                // before sending it again, with the same sequence numbers (never renumbered).
                let deadline = attemptDeadline ?? (ContinuousClock.now + configuration.reconnectTimeout)
                attemptDeadline = deadline
                if attempts > Self.maxAttempts || ContinuousClock.now >= deadline {
                    throw PostgresJournalError.database(operation: "append", description: String(reflecting: error))
                }
                let fresh = try reconnect(until: deadline, after: error)
                do {
                    if try resolve(
                        epoch: epoch,
                        first: first,
                        last: last,
                        checksums: checksumsByOffset,
                        on: fresh,
                        until: deadline,
                        retryable: true
                    ) {
                        return
                    }
                } catch let error as PostgresJournalError {
                    throw error
                } catch {
                    continue
                }
            }
        }
    }

    /// How many times one batch is sent before its error stops the writer.
    private static let maxAttempts = 20

    /// Waits for `future`, a statement on `connection`: at most ``PostgresJournalConfiguration/statementTimeout``
    /// (then closes `connection` and throws ``StatementTimedOut``), and no longer than `connection` stays open
    /// (then throws `PostgresError.connectionClosed`). Either way the statement's outcome is unknown; PostgresNIO
    /// never completes a statement sent on a connection that has closed, and a writer waiting for one would hold its
    /// caller for ever.
    private func wait<Value: Sendable>(
        for future: EventLoopFuture<Value>,
        on connection: PostgresConnection
    ) throws -> Value {
        try connection.waitUnlessClosed(for: future, timeout: configuration.statementTimeout)
    }

    /// After an append matched nothing or its outcome is unknown, reads the head row and the batch's records:
    /// `true` when the batch is in (committed before the connection dropped: every record of `first...last`
    /// present under this writer's epoch with its checksum) and the synchronous standbys hold it, `false` when it
    /// is not in and may be sent again; throws when fenced, or when the stream does not hold what this writer had
    /// acknowledged.
    @discardableResult
    private func resolve(
        epoch: UInt64,
        first: UInt64,
        last: UInt64,
        checksums: [Int64],
        on connection: PostgresConnection,
        until deadline: ContinuousClock.Instant,
        retryable: Bool = false
    ) throws -> Bool {
        let id = configuration.storeID
        let row = try wait(
            for: connection.query("SELECT epoch, head FROM sluice_streams WHERE store_id = \(id)", logger: logger),
            on: connection
        ).first?.decode((Int64, Int64).self)
        guard let row else { throw PostgresJournalError.database(operation: "append", description: "no head row") }
        let currentEpoch = UInt64(column: row.0)
        let currentHead = UInt64(column: row.1)
        if currentEpoch != epoch {
            throw PostgresJournalError.fenced(storeID: id, epoch: epoch, currentEpoch: currentEpoch)
        }
        if currentHead == first - 1 {
            if retryable { return false }
            throw PostgresJournalError.sequenceGap(storeID: id, expected: currentHead + 1, found: first)
        }
        if currentHead < first - 1 {
            // The primary lost records this writer had acknowledged (a failover to a standby that did not
            // hold them): never renumber, stop.
            throw PostgresJournalError.sequenceGap(storeID: id, expected: currentHead + 1, found: first)
        }
        // The head moved past the batch under this epoch: only this writer moves it, so the batch committed;
        // check that its records are there as sent.
        let stored = try wait(
            for: connection.query(
                """
                SELECT seq, epoch, checksum FROM sluice_records
                WHERE store_id = \(id) AND seq BETWEEN \(Int64(first)) AND \(Int64(last)) ORDER BY seq
                """,
                logger: logger
            ),
            on: connection
        )
        var expected = first
        for row in stored {
            let (sequence, recordEpoch, checksum) = try row.decode((Int64, Int64, Int64).self)
            guard UInt64(column: sequence) == expected else {
                throw PostgresJournalError.sequenceGap(storeID: id, expected: expected, found: UInt64(column: sequence))
            }
            guard UInt64(column: recordEpoch) == epoch, checksum == checksums[Int(expected - first)] else {
                throw PostgresJournalError.checksumMismatch(storeID: id, sequence: expected)
            }
            expected += 1
        }
        guard expected == last + 1 else {
            throw PostgresJournalError.sequenceGap(storeID: id, expected: expected, found: last + 1)
        }
        // Found does not mean replicated: a primary that crashed, or whose session was cancelled or terminated,
        // while it waited for the standby shows the batch committed, as it wrote the commit to its own disk first.
        let checked = try wait(
            for: connection.query(SynchronousReplication.check(after: nil), logger: logger),
            on: connection
        )
        try confirmReplication(
            checked: checked,
            epoch: epoch,
            first: first,
            last: last,
            on: connection,
            until: deadline
        )
        lock.withLock {
            head = max(head, last)
            statistics.statements += 1
            statistics.records += Int(last - first + 1)
            statistics.largestStatement = max(statistics.largestStatement, Int(last - first + 1))
        }
        return true
    }

    /// Returns once the synchronous standbys hold the batch `first...last`, which committed on the primary
    /// before `checked` (the answer of `SynchronousReplication.check(after:)` that followed the commit) was read.
    ///
    /// A commit on the primary is not yet an acknowledgement. The primary writes the commit record to its own WAL
    /// and flushes it, and only then waits until the synchronous standbys confirm that position
    /// (`synchronous_commit`); a wait that ends otherwise leaves the transaction committed on the primary alone:
    /// a cancelled session (`pg_cancel_backend`, `statement_timeout`) gets its `COMMIT` completed with a mere
    /// warning, which PostgresNIO does not pass on; a terminated session, or a primary that crashed and recovered,
    /// shows the batch to the next reader. So the check compares the standbys' confirmed positions with a WAL
    /// position read after the commit, and when they are short of it, this commits a write of its own (the lease
    /// renewal) and checks again: a transaction that wrote WAL and has a transaction id waits at its `COMMIT`
    /// until the standbys confirm its own commit record, which lies after the batch's and after the position
    /// checked (the WAL is one sequence, and a primary restarted after a crash continues it after what it
    /// recovered). Until `deadline`; then the writer stops: it never acknowledges what the standby may lack.
    ///
    /// - Throws: ``PostgresJournalError/fenced(storeID:epoch:currentEpoch:)`` when the head row changed hands;
    ///   the connection's error (an unknown outcome, resolved again after a reconnect).
    private func confirmReplication(
        checked: PostgresQueryResult,
        epoch: UInt64,
        first: UInt64,
        last: UInt64,
        on connection: PostgresConnection,
        until deadline: ContinuousClock.Instant
    ) throws {
        let id = configuration.storeID
        let initial = try SynchronousReplication.Answer(checked)
        let position = initial.position
        var confirmed = initial.isConfirmed
        while !confirmed {
            guard ContinuousClock.now < deadline else {
                throw PostgresJournalError.database(
                    operation: "append",
                    description: "records \(first)...\(last) of store \(id) committed on the primary, but its "
                        + "synchronous standbys did not confirm WAL position \(position) within reconnectTimeout"
                )
            }
            let begin = connection.query("BEGIN", logger: logger)
            let renewal = connection.query(
                """
                UPDATE sluice_streams SET lease_until = clock_timestamp()
                    + \(configuration.lease.milliseconds) * interval '1 millisecond'
                WHERE store_id = \(id) AND epoch = \(Int64(epoch))
                RETURNING epoch
                """,
                logger: logger
            )
            let commit = connection.query("COMMIT", logger: logger)
            let check = connection.query(SynchronousReplication.check(after: position), logger: logger)
            let (((_, renewed), _), answer) = try wait(for: begin.and(renewal).and(commit).and(check), on: connection)
            guard renewed.first != nil else {
                let current = try wait(
                    for: connection.query("SELECT epoch FROM sluice_streams WHERE store_id = \(id)", logger: logger),
                    on: connection
                ).first?.decode(Int64.self)
                throw PostgresJournalError.fenced(storeID: id, epoch: epoch, currentEpoch: UInt64(column: current ?? 0))
            }
            confirmed = try SynchronousReplication.Answer(answer).isConfirmed
        }
    }

    /// Refuses a role that cannot read the standbys' positions while the primary waits for a synchronous standby:
    /// `pg_stat_replication` shows them only to members of `pg_read_all_stats` (and superusers).
    private func checkReplicationIsReadable(on connection: PostgresConnection) throws(PostgresJournalError) {
        let readable: Bool
        do {
            readable =
                try wait(
                    for: connection.query(
                        """
                        SELECT current_setting('synchronous_standby_names') = ''
                            OR pg_has_role('pg_read_all_stats', 'USAGE')
                        """,
                        logger: logger
                    ),
                    on: connection
                ).first?.decode(Bool.self) ?? false
        } catch {
            throw .database(operation: "checking replication", description: String(reflecting: error))
        }
        guard readable else {
            throw .database(
                operation: "checking replication",
                description: "the primary waits for a synchronous standby, and this role cannot read the standbys' "
                    + "positions in pg_stat_replication, which confirm each append: grant it pg_read_all_stats "
                    + "(or pg_monitor)"
            )
        }
    }

    private func reconnect(
        until deadline: ContinuousClock.Instant,
        after error: any Error
    ) throws(PostgresJournalError)
        -> PostgresConnection
    {
        var lastError: PostgresJournalError = .database(operation: "append", description: String(reflecting: error))
        while ContinuousClock.now < deadline {
            do throws(PostgresJournalError) {
                let fresh = try connectPrimary()
                let old = lock.withLock {
                    defer { connection = fresh }
                    return connection
                }
                try? old?.close().wait()
                return fresh
            } catch {
                lastError = error
                usleep(50_000)
            }
        }
        throw lastError
    }

    /// Nothing to do: an append returns once its statement committed.
    public func sync() throws(JournalError) {
        try checkHealthy()
    }

    /// Stores a snapshot if this writer still holds the stream.
    public func writeSnapshot(_ snapshot: JournalSnapshot) throws(JournalError) {
        let id = configuration.storeID
        let epoch = Int64(lock.withLock { epochValue })
        let checksum = Int64(JournalChecksum.crc32c(of: snapshot.payload))
        let rows = try run(
            """
            INSERT INTO sluice_snapshots (store_id, seq, reducer_version, checksum, payload)
            SELECT \(id), \(Int64(snapshot.sequence)), \(Int64(snapshot.reducerVersion)), \(checksum),
                \(ByteBuffer(bytes: snapshot.payload))
            FROM sluice_streams WHERE store_id = \(id) AND epoch = \(epoch)
            ON CONFLICT (store_id, seq) DO UPDATE SET reducer_version = excluded.reducer_version,
                checksum = excluded.checksum, payload = excluded.payload
            RETURNING seq
            """,
            operation: "writing a snapshot"
        )
        if rows.first == nil {
            let error = PostgresJournalError.fenced(storeID: id, epoch: UInt64(epoch), currentEpoch: 0)
            stop(error)
            throw error.journalError
        }
    }

    /// Removes snapshots older than the newest `keeping` and the records the oldest kept one covers.
    public func compact(keepingSnapshots keeping: Int) throws(JournalError) {
        let kept = try snapshotSequences().prefix(keeping)
        guard kept.count == keeping, let oldest = kept.last else { return }
        let id = configuration.storeID
        _ = try run(
            "DELETE FROM sluice_snapshots WHERE store_id = \(id) AND seq < \(Int64(oldest))",
            operation: "compacting"
        )
        _ = try run(
            "DELETE FROM sluice_records WHERE store_id = \(id) AND seq <= \(Int64(oldest))",
            operation: "compacting"
        )
    }

    /// Gives the stream up: stops renewing the lease, releases the advisory lock and closes the connections.
    /// The epoch stays: the next writer increments it.
    public func close() {
        let (connection, keeper) = lock.withLock {
            defer {
                isClosed = true
                self.connection = nil
                self.keeper = nil
            }
            return (self.connection, self.keeper)
        }
        keeper?.cancel()
        try? connection?.close().wait()
    }

    // MARK: - Helpers

    private func connectPrimary() throws(PostgresJournalError) -> PostgresConnection {
        let connection = try PostgresLink.connect(
            configuration.endpoints,
            username: configuration.username,
            password: configuration.password,
            database: configuration.database,
            primaryOnly: true,
            statementTimeout: configuration.statementTimeout
        )
        // A writer stopped between an append's BEGIN and COMMIT (SIGSTOP, a hung process) would hold the head
        // row's lock, and a standby's takeover would wait for it for ever: the server ends a transaction left idle
        // for a lease (the writer then reconnects and resolves the append's outcome, as after any lost connection).
        let timeout = "\(max(configuration.lease.milliseconds, 1))ms"
        _ = try? wait(
            for: connection.query("SET idle_in_transaction_session_timeout = '\(unescaped: timeout)'", logger: logger),
            on: connection
        )
        do {
            _ = try wait(for: connection.query(SynchronousReplication.prepare, logger: logger), on: connection)
        } catch {
            try? connection.close().wait()
            throw .database(operation: "preparing the replication check", description: String(reflecting: error))
        }
        return connection
    }

    private func checkHealthy() throws(JournalError) {
        if let failure = lock.withLock({ failure }) { throw failure.journalError }
    }

    /// Runs `query`, a read or a write that may be made twice (fenced on the epoch when it writes), on the
    /// writer's connection; when it fails for any reason (the connection closed or gave no answer in time, say a
    /// failover, or the server refused it), runs it once more on a new connection to whichever endpoint is the
    /// primary, reached within ``PostgresJournalConfiguration/reconnectTimeout``, and throws `.database` with both
    /// errors when that fails too.
    private func run(_ query: PostgresQuery, operation: String) throws(JournalError) -> PostgresQueryResult {
        try checkHealthy()
        guard let first = lock.withLock({ connection }) else {
            throw PostgresJournalError.database(operation: operation, description: "not acquired").journalError
        }
        do {
            return try wait(for: first.query(query, logger: logger), on: first)
        } catch {
            let description = String(reflecting: error)
            do {
                let fresh = try reconnect(until: ContinuousClock.now + configuration.reconnectTimeout, after: error)
                return try wait(for: fresh.query(query, logger: logger), on: fresh)
            } catch {
                throw PostgresJournalError.database(
                    operation: operation,
                    description: "\(description); again on a new connection: \(String(reflecting: error))"
                ).journalError
            }
        }
    }

    /// Stops this writer: remembers the first error and reports it once.
    private func stop(_ error: PostgresJournalError) {
        let isFirst = lock.withLock {
            guard failure == nil, !isClosed else { return false }
            failure = error
            return true
        }
        if isFirst { onError(error) }
    }

    /// Renews the lease every third of it on the lock connection (compared on the epoch), and takes the advisory
    /// lock when it was not free at takeover; finds a fencing between appends.
    private func startLeaseKeeper(_ lockConnection: PostgresConnection, holdsLock: Bool) {
        let configuration = configuration
        let epoch = Int64(lock.withLock { epochValue })
        let interval = configuration.lease / 3
        let task = Task { [weak self] in
            var connection: PostgresConnection? = lockConnection
            var holdsLock = holdsLock
            var isPrepared = false
            let id = configuration.storeID
            defer {
                if let toClose = connection { Task { try? await toClose.close() } }
            }
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { return }
                do {
                    if connection == nil {
                        connection = try await PostgresLink.connectAsync(
                            configuration.endpoints,
                            username: configuration.username,
                            password: configuration.password,
                            database: configuration.database,
                            primaryOnly: true
                        )
                        holdsLock = false
                        isPrepared = false
                    }
                    guard let current = connection else { continue }
                    // Each statement is abandoned when the connection closes: the keeper then connects again on its
                    // next round instead of waiting for ever (see `PostgresConnection+UnlessClosed.swift`).
                    let round = try await current.unlessClosed { [holdsLock, isPrepared] in
                        try await Self.keepLease(
                            on: current,
                            isPrepared: isPrepared,
                            holdsLock: holdsLock,
                            storeID: id,
                            epoch: epoch,
                            lease: configuration.lease
                        )
                    }
                    holdsLock = round.holdsLock
                    isPrepared = true
                    if let currentEpoch = round.fencedBy {
                        self?.stop(
                            .fenced(storeID: id, epoch: UInt64(epoch), currentEpoch: UInt64(column: currentEpoch))
                        )
                        return
                    }
                } catch {
                    // The primary is gone or failing over: try again on the next round.
                    if let old = connection { try? await old.close() }
                    connection = nil
                }
            }
        }
        lock.withLock { keeper = task }
    }

    /// One round of the lease keeper on `connection`: takes the advisory lock if it does not hold it, and renews
    /// the lease if the head row still carries `epoch`. Returns whether it holds the lock, and the current epoch
    /// when another writer has taken the stream (`nil` when the lease was renewed).
    ///
    /// The renewal does not wait for the synchronous standbys (`synchronous_commit = local`, set once per connection
    /// unless `isPrepared`): a commit that waits for them holds the head row's lock meanwhile, and during a standby
    /// outage the writer's own transaction, which confirms a batch by waiting for the standbys at its `COMMIT`, would
    /// wait for that lock instead. A renewal that a failover loses changes nothing: the advisory lock does not
    /// survive a failover either, and the epoch, not the lease, fences the old writer.
    private static func keepLease(
        on connection: PostgresConnection,
        isPrepared: Bool,
        holdsLock: Bool,
        storeID id: String,
        epoch: Int64,
        lease: Duration
    ) async throws -> (holdsLock: Bool, fencedBy: Int64?) {
        let logger = PostgresLink.logger
        if !isPrepared {
            try await connection.abandoningOnCancel {
                for try await _ in try await connection.query("SET synchronous_commit = local", logger: logger) {}
            }
        }
        var holdsLock = holdsLock
        if !holdsLock {
            holdsLock = try await connection.abandoningOnCancel {
                var holds = false
                for try await value in try await connection.query(
                    "SELECT pg_try_advisory_lock(hashtextextended(\(id), 0))",
                    logger: logger
                ).decode(Bool.self) {
                    holds = value
                }
                return holds
            }
        }
        let (current, currentEpoch) = try await connection.abandoningOnCancel {
            var current = false
            var currentEpoch: Int64 = 0
            for try await value in try await connection.query(
                "SELECT epoch = \(epoch), epoch FROM sluice_streams WHERE store_id = \(id)",
                logger: logger
            ).decode((Bool, Int64).self) {
                current = value.0
                currentEpoch = value.1
            }
            return (current, currentEpoch)
        }
        guard current else { return (holdsLock, currentEpoch) }
        try await connection.abandoningOnCancel {
            for try await _ in try await connection.query(
                """
                UPDATE sluice_streams SET lease_until = clock_timestamp()
                    + \(lease.milliseconds) * interval '1 millisecond'
                WHERE store_id = \(id) AND epoch = \(epoch)
                """,
                logger: logger
            ) {}
        }
        return (holdsLock, nil)
    }
}

/// What a writer's appends amounted to: a batch of the journal's group commit is one statement unless the caps
/// split it.
public struct AppendStatistics: Sendable, Equatable {
    /// Append statements committed.
    public var statements = 0
    /// Records they held.
    public var records = 0
    /// The most records one statement held.
    public var largestStatement = 0
}
