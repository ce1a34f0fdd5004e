// Not a test: measures the PostgreSQL journal against the servers that `scripts/ci.sh --bench` starts (a primary
// and its synchronous standby on 127.0.0.1) and prints one line per figure.
//
//   bash Integrations/SluicePostgres/scripts/ci.sh --bench
//
// 0. The server's floor, without Sluice: one PostgresNIO connection commits `BEGIN` / a one-row `INSERT` /
//    `COMMIT` in a loop (the shape of the journal's append); the time of each step and of the whole.
// 1. One sender, one action per commit (each waits for its own commit); also the time the writer spends in the
//    storage's `append` (from its call to `COMMIT`'s completion), so that the rest is the journal's own path.
// 2. Group commit: 64 concurrent senders, each waiting for its action's commit; acknowledgements per second and
//    the p50/p99 of the time from dispatch to acknowledgement.
// 3. Follower lag at 2,000 actions/s: the time from the writer's commit (its `append` returned) to the record's
//    application on a follower reading the primary, and from the dispatch on the writer (which includes the
//    commit).
// Each measure runs `SLUICE_BENCH_SECONDS` seconds (default 5) on a fresh store id.
import Foundation
import PostgresNIO
import Sluice
import SluiceJournal
import SluicePostgres
import SluicePostgresLedger

final class Samples: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Duration] = []

    func add(_ value: Duration) {
        lock.withLock { values.append(value) }
    }

    var count: Int { lock.withLock { values.count } }

    /// The `p` quantile in milliseconds.
    func percentile(_ p: Double) -> Double {
        let sorted = lock.withLock { values.sorted() }
        guard !sorted.isEmpty else { return .nan }
        let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        return Double(value.components.seconds) * 1e3 + Double(value.components.attoseconds) / 1e15
    }
}

let environment = ProcessInfo.processInfo.environment
let seconds = Int(environment["SLUICE_BENCH_SECONDS"] ?? "") ?? 5
let endpoints = [environment["SLUICE_PG_PRIMARY"], environment["SLUICE_PG_STANDBY"]].compactMap { value in
    value.map { value in
        let parts = value.split(separator: ":")
        return PostgresEndpoint(host: String(parts[0]), port: Int(parts[1]) ?? 5432)
    }
}
guard !endpoints.isEmpty else {
    print("set SLUICE_PG_PRIMARY (scripts/ci.sh --bench does)")
    exit(2)
}

func configuration(_ prefix: String) -> PostgresJournalConfiguration {
    PostgresJournalConfiguration(endpoints: endpoints, storeID: "\(prefix)-\(UUID().uuidString.prefix(8))")
}

/// The PostgreSQL storage, timing each `append` (the writer's call, up to `COMMIT`'s completion) and telling
/// `onCommitted` the sequences each one committed.
final class TimedStorage: JournalStorage, @unchecked Sendable {
    let inner: PostgresJournalStorage
    let appendTimes = Samples()
    private let lock = NSLock()
    private var onCommittedHandler: (@Sendable (UInt64, UInt64, ContinuousClock.Instant) -> Void)?

    init(_ inner: PostgresJournalStorage) {
        self.inner = inner
    }

    func onCommitted(_ body: @escaping @Sendable (UInt64, UInt64, ContinuousClock.Instant) -> Void) {
        lock.withLock { onCommittedHandler = body }
    }

    func acquire() throws(JournalError) { try inner.acquire() }
    func lastSequence() throws(JournalError) -> UInt64 { try inner.lastSequence() }
    func snapshotSequences() throws(JournalError) -> [UInt64] { try inner.snapshotSequences() }
    func readSnapshot(covering sequence: UInt64) throws(JournalError) -> JournalSnapshot {
        try inner.readSnapshot(covering: sequence)
    }
    func readRecords(
        after sequence: UInt64,
        _ body: (UInt64, UnsafeRawBufferPointer) throws(JournalError) -> Void
    ) throws(JournalError) {
        try inner.readRecords(after: sequence, body)
    }
    func append(_ records: [JournalRecord]) throws(JournalError) {
        let start = ContinuousClock.now
        try inner.append(records)
        let end = ContinuousClock.now
        appendTimes.add(end - start)
        if let first = records.first?.sequence, let last = records.last?.sequence {
            lock.withLock { onCommittedHandler }?(first, last, end)
        }
    }
    func sync() throws(JournalError) { try inner.sync() }
    func writeSnapshot(_ snapshot: JournalSnapshot) throws(JournalError) { try inner.writeSnapshot(snapshot) }
    func compact(keepingSnapshots keeping: Int) throws(JournalError) { try inner.compact(keepingSnapshots: keeping) }
    func close() { inner.close() }
}

/// One PostgresNIO connection to the primary commits `BEGIN` / `INSERT` / `COMMIT` in a loop, without Sluice.
func measureServerFloor() async throws -> (begin: Samples, insert: Samples, commit: Samples, total: Samples) {
    let logger = Logger(label: "bench")
    var connectionConfiguration = PostgresConnection.Configuration(
        host: endpoints[0].host,
        port: endpoints[0].port,
        username: "postgres",
        password: nil,
        database: "postgres",
        tls: .disable
    )
    connectionConfiguration.options.connectTimeout = .seconds(2)
    let connection = try await PostgresConnection.connect(configuration: connectionConfiguration, id: 1, logger: logger)
    _ = try await connection.query(
        "CREATE TABLE IF NOT EXISTS sluice_bench_floor (seq bigint NOT NULL, payload bytea NOT NULL)",
        logger: logger
    )
    let steps = (begin: Samples(), insert: Samples(), commit: Samples(), total: Samples())
    let end = ContinuousClock.now + .seconds(seconds)
    var sequence: Int64 = 0
    while ContinuousClock.now < end {
        sequence += 1
        let start = ContinuousClock.now
        _ = try await connection.query("BEGIN", logger: logger)
        let begun = ContinuousClock.now
        _ = try await connection.query(
            "INSERT INTO sluice_bench_floor (seq, payload) VALUES (\(sequence), \(ByteBuffer(bytes: [1, 2, 3, 4])))",
            logger: logger
        )
        let inserted = ContinuousClock.now
        _ = try await connection.query("COMMIT", logger: logger)
        let committed = ContinuousClock.now
        steps.begin.add(begun - start)
        steps.insert.add(inserted - begun)
        steps.commit.add(committed - inserted)
        steps.total.add(committed - start)
    }
    _ = try await connection.query("DROP TABLE sluice_bench_floor", logger: logger)
    try await connection.close()
    return steps
}

/// Runs `senders` senders for the configured time, each dispatching and waiting for its acknowledgement.
func measureAcknowledgements(
    senders: Int
) async throws -> (perSecond: Double, samples: Samples, statements: Int, appendTimes: Samples) {
    let storage = TimedStorage(try PostgresJournalStorage(configuration: configuration("bench-ack")))
    let journal = try Journal(storage: storage)
    let store = try Store<Ledger, LedgerAction>(
        recoveringFrom: journal,
        durability: .groupCommit(interval: .zero),
        initialState: Ledger(),
        reducer: ledgerReducer
    )
    let samples = Samples()
    let start = ContinuousClock.now
    let end = start + .seconds(seconds)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await journal.run() }
        try await withThrowingTaskGroup(of: Void.self) { senderGroup in
            for sender in 0..<senders {
                senderGroup.addTask {
                    while ContinuousClock.now < end {
                        let sent = ContinuousClock.now
                        try await store.dispatch(.add(sender), durableIn: journal)
                        samples.add(ContinuousClock.now - sent)
                    }
                }
            }
            try await senderGroup.waitForAll()
        }
        group.cancelAll()
    }
    let elapsed = ContinuousClock.now - start
    journal.close()
    let perSecond =
        Double(samples.count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    return (perSecond, samples, storage.inner.appendStatistics.statements, storage.appendTimes)
}

/// A writer paced at `rate` actions per second and a follower reading the primary.
func measureFollowerLag(rate: Int) async throws -> (fromCommit: Samples, fromDispatch: Samples) {
    let writerConfiguration = configuration("bench-follow")
    let storage = TimedStorage(try PostgresJournalStorage(configuration: writerConfiguration))
    let journal = try Journal(storage: storage)
    let store = try Store<Ledger, LedgerAction>(
        recoveringFrom: journal,
        durability: .groupCommit(interval: .zero),
        initialState: Ledger(),
        reducer: ledgerReducer
    )
    let follower = try await PostgresFollower<Ledger, LedgerAction>(
        configuration: writerConfiguration,
        initialState: Ledger(),
        reducer: ledgerReducer
    )
    let total = rate * seconds
    let sentAt = UnsafeMutableBufferPointer<ContinuousClock.Instant>.allocate(capacity: total + 1)
    sentAt.initialize(repeating: .now)
    nonisolated(unsafe) let sentTimes = sentAt
    let committedAt = UnsafeMutableBufferPointer<ContinuousClock.Instant?>.allocate(capacity: total + 1)
    committedAt.initialize(repeating: nil)
    nonisolated(unsafe) let commitTimes = committedAt
    let sentLock = NSLock()
    let samples = (fromCommit: Samples(), fromDispatch: Samples())
    storage.onCommitted { first, last, at in
        sentLock.withLock {
            for sequence in first...min(last, UInt64(total)) { commitTimes[Int(sequence)] = at }
        }
    }
    follower.onApply { sequence in
        let now = ContinuousClock.now
        let (sent, committed) = sentLock.withLock { (sentTimes[Int(sequence)], commitTimes[Int(sequence)]) }
        samples.fromDispatch.add(now - sent)
        // Applied before the writer's thread saw its COMMIT complete: no lag behind the writer.
        samples.fromCommit.add(committed.map { now > $0 ? now - $0 : .zero } ?? .zero)
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await journal.run() }
        group.addTask { try await follower.run() }
        let start = ContinuousClock.now
        for index in 1...total {
            let due = start + .microseconds(index * 1_000_000 / rate)
            let now = ContinuousClock.now
            if due > now { try await Task.sleep(until: due, clock: .continuous) }
            sentLock.withLock { sentTimes[index] = ContinuousClock.now }
            store.dispatch(.add(index))
        }
        try await journal.durable(through: journal.lastSequence)
        _ = await follower.waitUntilApplied(UInt64(total), timeout: .seconds(30))
        group.cancelAll()
    }
    journal.close()
    sentAt.deallocate()
    committedAt.deallocate()
    return samples
}

let server = try await measureServerFloor()
print(
    String(
        format:
            "server floor, PostgresNIO:    %8.0f commits/s  p50 %.2f ms  p99 %.2f ms  (BEGIN %.2f, INSERT %.2f, COMMIT %.2f ms p50)",
        Double(server.total.count) / Double(seconds),
        server.total.percentile(0.5),
        server.total.percentile(0.99),
        server.begin.percentile(0.5),
        server.insert.percentile(0.5),
        server.commit.percentile(0.5)
    )
)
let floor = try await measureAcknowledgements(senders: 1)
print(
    String(
        format: "floor, 1 sender:              %8.0f acks/s  p50 %.2f ms  p99 %.2f ms  (append p50 %.2f ms)",
        floor.perSecond,
        floor.samples.percentile(0.5),
        floor.samples.percentile(0.99),
        floor.appendTimes.percentile(0.5)
    )
)
let group = try await measureAcknowledgements(senders: 64)
print(
    String(
        format:
            "group commit, 64 senders:     %8.0f acks/s  p50 %.2f ms  p99 %.2f ms  (%d statements, append p50 %.2f p99 %.2f ms, %.1f x floor)",
        group.perSecond,
        group.samples.percentile(0.5),
        group.samples.percentile(0.99),
        group.statements,
        group.appendTimes.percentile(0.5),
        group.appendTimes.percentile(0.99),
        group.perSecond / floor.perSecond
    )
)
let lag = try await measureFollowerLag(rate: 2_000)
print(
    String(
        format:
            "follower lag at 2,000/s:      %d records  from commit p50 %.2f ms  p99 %.2f ms; from dispatch p50 %.2f ms  p99 %.2f ms",
        lag.fromCommit.count,
        lag.fromCommit.percentile(0.5),
        lag.fromCommit.percentile(0.99),
        lag.fromDispatch.percentile(0.5),
        lag.fromDispatch.percentile(0.99)
    )
)
