import Foundation
import PostgresNIO
import Sluice
import SluiceJournal

/// How far a follower is behind the writer.
public struct FollowerLag: Sendable, Equatable {
    /// Records committed (as the last notification or query saw them) and not applied yet.
    public var records: UInt64
    /// How long the oldest unapplied notification has waited (zero when caught up).
    public var time: Duration
    /// The time from the last notification to the moment its records were applied.
    public var lastCatchUp: Duration
}

/// A read-only replica of a store whose writer journals to PostgreSQL.
///
/// It loads the newest snapshot that its reducer version accepts, then tails the stream: a notification from the
/// writer's append (`LISTEN sluice_journal`), a reconnect and a fallback poll each start a range query from the
/// last applied sequence. Each record must be exactly the next sequence and pass its checksum; it is applied
/// through the reducer alone (no middleware, no effects), as a ``FollowerRecord`` dispatched to the replica's
/// ``store``: read, scope and observe it like any store (its subscribers, `states` and `values(of:)` see each
/// applied record); only the follower can dispatch to it. A damaged stream stops ``run()`` with a named
/// ``PostgresJournalError``; nothing is skipped.
///
/// ```swift
/// let follower = try await PostgresFollower<Counter, CounterAction>(
///     configuration: configuration, initialState: Counter(), reducer: counterReducer)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await follower.run() }
///     print(follower.state, follower.lag)
///     group.cancelAll()
/// }
/// ```
///
/// `@unchecked Sendable`: the mutable properties are guarded by `lock`.
public final class PostgresFollower<State: Sendable & Decodable, Action: Sendable & Decodable>: @unchecked Sendable {
    /// The servers and the store id (the writer's limits are not used).
    public let configuration: PostgresJournalConfiguration
    /// Read from a standby instead of the primary (lag then includes replication).
    public let primaryOnly: Bool
    /// The fallback poll, for a notification lost with a dropped connection.
    public let pollInterval: Duration

    /// The replica: a store that only this follower dispatches to (``FollowerRecord`` has no public
    /// initializer). Read it, scope it, subscribe to it or iterate its `states` like any store; an
    /// `instrumentation` given to the follower measures each applied record.
    public let store: Store<State, FollowerRecord<State, Action>>
    private let reducerVersion: Int
    private let lock = NSLock()
    /// Held while records are dispatched to ``store`` and handed to `onApply`: ``catchUp()`` and ``run()`` read at
    /// once, and apply one after the other.
    private let applying = NSLock()
    // Guarded by `lock`.
    private var applied: UInt64
    private var committedHead: UInt64
    private var waitingSince: ContinuousClock.Instant?
    private var lastCatchUpDuration: Duration = .zero
    private var reconnectCount = 0
    private var activeConnection: PostgresConnection?
    private var onApplyHandler: (@Sendable (UInt64) -> Void)?

    /// Loads the newest acceptable snapshot (or starts from `initialState`) and applies the records after it.
    ///
    /// `instrumentation` measures each record (and the snapshot) applied to ``store``: the writer's action is the
    /// record's ``FollowerRecord/action``.
    ///
    /// - Throws: ``PostgresJournalError/foreignReducerVersion(storeID:snapshotSequence:found:expected:)`` when the
    ///   records before the oldest available one are gone and no snapshot of this reducer version covers them;
    ///   a checksum, gap or decoding error of the records read.
    public init(
        configuration: PostgresJournalConfiguration,
        reducerVersion: Int = 0,
        primaryOnly: Bool = true,
        pollInterval: Duration = .milliseconds(500),
        initialState: State,
        reducer: Reducer<State, Action>,
        instrumentation: StoreInstrumentation<FollowerRecord<State, Action>>? = nil
    ) async throws(PostgresJournalError) {
        try configuration.checkStoreID()
        self.configuration = configuration
        self.reducerVersion = reducerVersion
        self.primaryOnly = primaryOnly
        self.pollInterval = pollInterval
        store = Store(
            initialState: initialState,
            reducer: FollowerRecord.replicaReducer(reducer),
            instrumentation: instrumentation
        )
        applied = 0
        committedHead = 0
        try await withNewConnection(reading: "the snapshot and records of \(configuration.storeID)") { connection in
            try await self.loadSnapshot(on: connection)
            try await self.catchUp(on: connection)
        }
    }

    /// The replica's state (``store``'s).
    public var state: State {
        store.state
    }

    /// The sequence number of the last applied record.
    public var appliedSequence: UInt64 {
        lock.withLock { applied }
    }

    /// How far behind the writer this replica is.
    public var lag: FollowerLag {
        lock.withLock {
            FollowerLag(
                records: committedHead > applied ? committedHead - applied : 0,
                time: waitingSince.map { ContinuousClock.now - $0 } ?? .zero,
                lastCatchUp: lastCatchUpDuration
            )
        }
    }

    /// How many times ``run()`` lost its connection and connected again.
    public var reconnects: Int {
        lock.withLock { reconnectCount }
    }

    /// Calls `body` with the sequence number of each applied record, after the state holds it.
    public func onApply(_ body: @escaping @Sendable (UInt64) -> Void) {
        lock.withLock { onApplyHandler = body }
    }

    /// Refuses: a follower is read-only. Dispatch to the writer's store instead.
    ///
    /// - Throws: Always ``PostgresJournalError/readOnlyFollower(storeID:)``.
    public func dispatch(_ action: Action) throws(PostgresJournalError) {
        throw .readOnlyFollower(storeID: configuration.storeID)
    }

    /// Tails the stream until the task is cancelled, reconnecting after a lost connection.
    ///
    /// - Throws: A named ``PostgresJournalError`` when the stream is damaged (checksum, gap, undecodable record).
    public func run() async throws(PostgresJournalError) {
        var first = true
        while !Task.isCancelled {
            if !first {
                lock.withLock { reconnectCount += 1 }
                try? await Task.sleep(for: .milliseconds(20))
            }
            first = false
            let connection: PostgresConnection
            do {
                connection = try await connect()
            } catch {
                continue
            }
            lock.withLock { activeConnection = connection }
            do {
                try await tail(on: connection)
            } catch let error as PostgresJournalError where error.isDamage {
                lock.withLock { activeConnection = nil }
                try? await connection.close()
                throw error
            } catch {
                // A lost connection or a cancellation: close and go round.
            }
            lock.withLock { activeConnection = nil }
            try? await connection.close()
        }
    }

    /// Applies every committed record now (one range query); for tests and for a reader that needs the latest
    /// state.
    ///
    /// Safe beside a running ``run()`` and other calls of this: each record is applied once, in sequence order.
    public func catchUp() async throws(PostgresJournalError) {
        try await withNewConnection(reading: "records of \(configuration.storeID)") { connection in
            try await self.catchUp(on: connection)
        }
    }

    /// Waits until the replica applied `sequence`, or `timeout` passed; returns whether it did.
    public func waitUntilApplied(_ sequence: UInt64, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while appliedSequence < sequence {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    // MARK: - Tailing

    /// Follows the stream on `connection` until it closes or fails, or the task is cancelled.
    ///
    /// A notification, a tick of the poll and the start of listening each wake one task that reads the records
    /// after the last applied one: a notification only wakes, so one that is lost delays its records by at most
    /// `pollInterval`, and none is skipped. The session ends as soon as the connection closes, which a task of its
    /// own waits for; the listen is not awaited and each statement is abandoned on cancellation (see
    /// `PostgresConnection+UnlessClosed.swift`), so that nothing holds the reconnect: neither a statement sent as
    /// the connection closed, which PostgresNIO never answers, nor a listen that does not end with its connection.
    private func tail(on connection: PostgresConnection) async throws {
        let storeID = configuration.storeID
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let pollInterval = pollInterval
        // Listening only notes the head and wakes the reader, so it is not awaited: a listen that outlives its
        // connection cannot hold the session. When it ends, the connection is of no more use: closing it ends the
        // session below.
        let listening = Task { [weak self] in
            do {
                try await connection.listen(on: PostgresSchema.channel) { notifications in
                    // Records committed before LISTEN took effect are read now; each later one is notified.
                    wake.yield()
                    for try await notification in notifications {
                        guard let head = Self.committedHead(in: notification.payload, of: storeID) else { continue }
                        self?.noteCommitted(head)
                        wake.yield()
                    }
                }
            } catch {
                // Lost connection, failed LISTEN or cancellation: the same end.
            }
            try? await connection.close()
        }
        defer { listening.cancel() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await connection.waitUntilClosed()
                throw PostgresJournalError.database(operation: "following", description: "connection closed")
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: pollInterval)
                    wake.yield()
                }
            }
            group.addTask { [weak self] in
                for await _ in wakes {
                    guard let self else { return }
                    try await self.catchUp(on: connection)
                }
            }
            defer { group.cancelAll() }
            _ = try await group.next()
        }
    }

    /// The head in a notification of the writer's append, `<store id> <head>`, if it is for `storeID`: the id is
    /// everything before the last space, so that any id (with spaces, or empty) is read back whole.
    static func committedHead(in payload: String, of storeID: String) -> UInt64? {
        guard let space = payload.lastIndex(of: " "), payload[..<space] == storeID else { return nil }
        return UInt64(payload[payload.index(after: space)...])
    }

    private func noteCommitted(_ head: UInt64) {
        lock.withLock {
            if head > committedHead { committedHead = head }
            if committedHead > applied, waitingSince == nil { waitingSince = .now }
        }
    }

    private func connect() async throws(PostgresJournalError) -> PostgresConnection {
        do {
            return try await PostgresLink.connectAsync(
                configuration.endpoints,
                username: configuration.username,
                password: configuration.password,
                database: configuration.database,
                primaryOnly: primaryOnly
            )
        } catch let error as PostgresJournalError {
            throw error
        } catch {
            throw .noServer(endpoints: configuration.endpoints.map(\.description), lastError: "\(error)")
        }
    }

    /// Runs `body` on a new connection, closed afterwards; a connection that closes under `body` ends it with
    /// ``PostgresJournalError/database(operation:description:)`` for `operation`.
    private func withNewConnection(
        reading operation: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Void
    ) async throws(PostgresJournalError) {
        let connection = try await connect()
        defer { Task { try? await connection.close() } }
        do {
            try await connection.unlessClosed { try await body(connection) }
        } catch let error as PostgresJournalError {
            throw error
        } catch {
            throw .database(operation: "reading \(operation)", description: String(reflecting: error))
        }
    }

    private func loadSnapshot(on connection: PostgresConnection) async throws(PostgresJournalError) {
        let id = configuration.storeID
        var foreign: (sequence: UInt64, version: Int)?
        let snapshots: [(Int64, Int64, Int64, ByteBuffer)]
        let oldestRecord: Int64?
        do {
            snapshots = try await connection.abandoningOnCancel {
                try await collect(
                    connection.query(
                        """
                        SELECT seq, reducer_version, checksum, payload FROM sluice_snapshots
                        WHERE store_id = \(id) ORDER BY seq DESC
                        """,
                        logger: PostgresLink.logger
                    ).decode((Int64, Int64, Int64, ByteBuffer).self)
                )
            }
            oldestRecord = try await connection.abandoningOnCancel {
                try await collect(
                    connection.query(
                        "SELECT min(seq) FROM sluice_records WHERE store_id = \(id)",
                        logger: PostgresLink.logger
                    ).decode(Int64?.self)
                ).first ?? nil
            }
        } catch {
            throw .database(operation: "loading a snapshot of \(id)", description: String(reflecting: error))
        }
        for (rawSequence, version, checksum, payload) in snapshots {
            let sequence = UInt64(column: rawSequence)
            guard Int(version) == reducerVersion else {
                if foreign == nil { foreign = (sequence, Int(version)) }
                continue
            }
            let bytes = Array(buffer: payload)
            guard UInt32(truncatingIfNeeded: checksum) == JournalChecksum.crc32c(of: bytes) else { continue }
            do {
                let state = try decodePayload(State.self, bytes)
                store.dispatch(FollowerRecord(.snapshot(state), sequence: sequence))
                lock.withLock { applied = sequence }
                return
            } catch {
                continue
            }
        }
        // No acceptable snapshot: the records must start at 1.
        if let oldestRecord, oldestRecord > 1 {
            if let foreign {
                throw .foreignReducerVersion(
                    storeID: id,
                    snapshotSequence: foreign.sequence,
                    found: foreign.version,
                    expected: reducerVersion
                )
            }
            throw .sequenceGap(storeID: id, expected: 1, found: UInt64(column: oldestRecord))
        }
    }

    /// Applies the records after the last applied one, read on `connection` (internal for the tests); a connection
    /// that has closed fails it at once (see `PostgresConnection+UnlessClosed.swift`).
    func catchUp(on connection: PostgresConnection) async throws(PostgresJournalError) {
        let id = configuration.storeID
        // Marks the statement, so that an operator (or a test) can find the follower's session.
        let marker = String(id.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || $0 == "-" })
        while true {
            let from = appliedSequence
            let rows: [(Int64, Int64, ByteBuffer)]
            do {
                rows = try await connection.abandoningOnCancel {
                    try await collect(
                        connection.query(
                            """
                            SELECT seq, checksum, payload FROM sluice_records /* sluice-follower:\(unescaped: marker) */
                            WHERE store_id = \(id) AND seq > \(Int64(from)) ORDER BY seq LIMIT 5000
                            """,
                            logger: PostgresLink.logger
                        ).decode((Int64, Int64, ByteBuffer).self)
                    )
                }
            } catch {
                throw .database(operation: "reading records of \(id)", description: String(reflecting: error))
            }
            var expected = from + 1
            var actions: [Action] = []
            actions.reserveCapacity(rows.count)
            for (sequence, checksum, payload) in rows {
                let found = UInt64(column: sequence)
                guard found == expected else {
                    throw .sequenceGap(storeID: id, expected: expected, found: found)
                }
                let crc = payload.withUnsafeReadableBytes { JournalChecksum.crc32c($0) }
                guard UInt32(truncatingIfNeeded: checksum) == crc else {
                    throw .checksumMismatch(storeID: id, sequence: found)
                }
                do {
                    actions.append(try decodePayload(Action.self, Array(buffer: payload)))
                } catch {
                    throw .undecodable(storeID: id, sequence: found, description: "\(error)")
                }
                expected += 1
            }
            if !actions.isEmpty { apply(actions, from: from) }
            if rows.count < 5000 { break }
        }
    }

    /// Applies `actions`, the records after `from`, through the replica store, skipping those that another read
    /// applied since this one began (``catchUp()`` beside ``run()``, each reading from the last applied sequence):
    /// each record is applied once, and the reads that overlap apply one at a time.
    private func apply(_ actions: [Action], from: UInt64) {
        applying.withLock {
            let already = lock.withLock { applied }
            let skipped = already > from ? Int(min(already - from, UInt64(actions.count))) : 0
            guard skipped < actions.count else { return }
            let start = from + UInt64(skipped)
            for (offset, action) in actions.dropFirst(skipped).enumerated() {
                store.dispatch(FollowerRecord(.action(action), sequence: start + UInt64(offset) + 1))
            }
            let (handler, last) = lock.withLock {
                applied = from + UInt64(actions.count)
                if applied > committedHead { committedHead = applied }
                if applied >= committedHead, let since = waitingSince {
                    lastCatchUpDuration = ContinuousClock.now - since
                    waitingSince = nil
                }
                return (onApplyHandler, applied)
            }
            if let handler {
                for sequence in (start + 1)...last { handler(sequence) }
            }
        }
    }
}

extension PostgresJournalError {
    /// The stream itself is damaged (reading again does not help), as opposed to a lost connection.
    var isDamage: Bool {
        switch self {
        case .checksumMismatch, .sequenceGap, .foreignReducerVersion, .undecodable, .corruptSnapshot: true
        default: false
        }
    }
}

private func collect<S: AsyncSequence>(_ sequence: S) async throws -> [S.Element] {
    var result: [S.Element] = []
    for try await element in sequence { result.append(element) }
    return result
}

/// Decodes a payload as the journal wrote it (its binary encoding, or JSON).
func decodePayload<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8]) throws -> Value {
    var coder = JournalPayloadCoder()
    return try bytes.withUnsafeBytes { try coder.decode(type, from: $0) }
}
