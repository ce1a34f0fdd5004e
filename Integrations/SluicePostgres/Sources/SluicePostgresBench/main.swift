// Not a test: measures the PostgreSQL journal against the servers that `scripts/ci.sh --bench` starts (a primary
// and its synchronous standby on 127.0.0.1) and prints one line per figure.
//
//   bash Integrations/SluicePostgres/scripts/ci.sh --bench
//
// 1. Floor: one sender, one action per commit (each waits for its own commit).
// 2. Group commit: 64 concurrent senders, each waiting for its action's commit; acknowledgements per second and
//    the p50/p99 of the time from dispatch to acknowledgement.
// 3. Follower lag at 2,000 actions/s: the time from an action's dispatch on the writer to its application on a
//    follower reading the primary (an upper bound of commit-to-apply: it includes the commit itself).
// Each measure runs `SLUICE_BENCH_SECONDS` seconds (default 5) on a fresh store id.
import Foundation
import Sluice
import SluicePostgres

struct Ledger: Codable, Equatable, Sendable {
    var count = 0
    var sum = 0
}

enum LedgerAction: Codable, Sendable {
    case add(Int)
}

let ledgerReducer = Reducer<Ledger, LedgerAction>(mutating: { state, action in
    switch action {
    case .add(let value):
        state.count += 1
        state.sum += value
    }
})

final class Samples: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Duration] = []

    func add(_ value: Duration) {
        lock.withLock { values.append(value) }
    }

    var count: Int { lock.withLock { values.count } }

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

/// Runs `senders` senders for the configured time, each dispatching and waiting for its acknowledgement.
func measureAcknowledgements(senders: Int) async throws -> (perSecond: Double, samples: Samples, statements: Int) {
    let storage = PostgresJournalStorage(configuration: configuration("bench-ack"))
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
    return (perSecond, samples, storage.appendStatistics.statements)
}

/// A writer paced at `rate` actions per second and a follower reading the primary.
func measureFollowerLag(rate: Int) async throws -> Samples {
    let writerConfiguration = configuration("bench-follow")
    let journal = try Journal(storage: PostgresJournalStorage(configuration: writerConfiguration))
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
    let sentLock = NSLock()
    let samples = Samples()
    follower.onApply { sequence in
        let sent = sentLock.withLock { sentTimes[Int(sequence)] }
        samples.add(ContinuousClock.now - sent)
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
    return samples
}

let floor = try await measureAcknowledgements(senders: 1)
print(
    String(
        format: "floor, 1 sender:              %8.0f acks/s  p50 %.2f ms  p99 %.2f ms",
        floor.perSecond,
        floor.samples.percentile(0.5),
        floor.samples.percentile(0.99)
    )
)
let group = try await measureAcknowledgements(senders: 64)
print(
    String(
        format: "group commit, 64 senders:     %8.0f acks/s  p50 %.2f ms  p99 %.2f ms  (%d statements, %.1f x floor)",
        group.perSecond,
        group.samples.percentile(0.5),
        group.samples.percentile(0.99),
        group.statements,
        group.perSecond / floor.perSecond
    )
)
let lag = try await measureFollowerLag(rate: 2_000)
print(
    String(
        format:
            "follower lag at 2,000/s:      %d records  p50 %.2f ms  p99 %.2f ms (dispatch on the writer to applied)",
        lag.count,
        lag.percentile(0.5),
        lag.percentile(0.99)
    )
)
