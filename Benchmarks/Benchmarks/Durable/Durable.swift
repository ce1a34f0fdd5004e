// Durable acknowledgements: `send(_:durableIn:)` to a store that journals with `.groupCommit`, from 1, 8 and 64
// tasks at once (and from 64 with a 1 ms interval), each task sending its next action once the last one is
// acknowledged (an HTTP handler that answers after the action is on disk), against the floor a service developer
// would write by hand: a write-ahead log whose producers append to a buffer under a `Mutex` and wait, and whose
// writer thread writes the buffer and `fdatasync`s it once per batch, then resumes every producer of the batch
// (`HandWrittenLog.swift`). Beside them, the machine's `fdatasync` of a small append: the physical limit of both
// (one sync per batch, so at most `tasks / fdatasync` acknowledgements a second).
//
// Each iteration runs four rounds of each side in alternation, and sixteen `fdatasync`s. A round opens a new journal
// (or log) in a directory of its own under the temporary directory, runs the tasks, and removes the directory; only
// the sending is timed. The metrics: each side's acknowledgements per second over the iteration's rounds, the ratio
// of the two within the iteration, the latency of each acknowledgement (from the call to its return) in
// microseconds, whose percentiles are over every acknowledgement of the run, and the time of each `fdatasync`.

import Benchmark
import Foundation
import Sluice
import SluiceJournal
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The metrics of the area. Each iteration runs both sides and syncs a file, so that the ratio is taken between
/// rounds that met the same disk: on a shared machine the time of an `fdatasync` moves by an order of magnitude
/// within seconds.
enum DurableMetric {
    /// Acknowledgements per second over an iteration's rounds, all tasks together.
    static let sluiceRate = BenchmarkMetric.custom(
        "Sluice-acks-per-s",
        polarity: .prefersLarger,
        useScalingFactor: false
    )
    static let floorRate = BenchmarkMetric.custom("WAL-acks-per-s", polarity: .prefersLarger, useScalingFactor: false)
    /// Sluice's rate over the floor's in the same iteration, in percent.
    static let ratio = BenchmarkMetric.custom("Sluice/WAL-%", polarity: .prefersLarger, useScalingFactor: false)
    /// The latency of one acknowledgement, from the call to its return, in microseconds.
    static let sluiceLatency = BenchmarkMetric.custom(
        "Sluice-ack-us",
        polarity: .prefersSmaller,
        useScalingFactor: false
    )
    static let floorLatency = BenchmarkMetric.custom("WAL-ack-us", polarity: .prefersSmaller, useScalingFactor: false)
    /// One `fdatasync` of a small append to a file of its own, in microseconds.
    static let sync = BenchmarkMetric.custom("fdatasync-us", polarity: .prefersSmaller, useScalingFactor: false)
}

/// The actions each task sends in one round: enough batches for a steady rate, few enough for a round of a fraction
/// of a second at a few milliseconds per `fdatasync`.
func actionsPerTask(_ tasks: Int) -> Int {
    switch tasks {
    case 1: 40
    case 8: 25
    default: 20
    }
}

/// A new empty directory under the temporary directory.
func makeDirectory(_ name: String) -> String {
    let path = NSTemporaryDirectory() + "sluice-durable-\(name)-\(getpid())"
    removeDirectory(path)
    mkdir(path, 0o755)
    return path
}

/// Removes `path` and what it holds.
func removeDirectory(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// What the rounds of one side measured.
struct Rounds {
    var elapsed = Duration.zero
    var latencies: [Duration] = []

    /// Acknowledgements per second over all the rounds.
    var rate: Double { Double(latencies.count) / elapsed.seconds }

    mutating func add(_ round: Rounds) {
        elapsed += round.elapsed
        latencies += round.latencies
    }
}

/// Runs `tasks` tasks that each call `acknowledge` `actionsPerTask(tasks)` times in a row; returns the time they
/// took and the latency of every call.
func measureAcknowledgements(
    tasks: Int,
    _ acknowledge: @escaping @Sendable () async throws -> Void
) async throws -> Rounds {
    let perTask = actionsPerTask(tasks)
    let clock = ContinuousClock()
    let start = clock.now
    let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
        for _ in 0..<tasks {
            group.addTask {
                var latencies: [Duration] = []
                latencies.reserveCapacity(perTask)
                for _ in 0..<perTask {
                    let sent = clock.now
                    try await acknowledge()
                    latencies.append(sent.duration(to: clock.now))
                }
                return latencies
            }
        }
        return try await group.reduce(into: []) { $0 += $1 }
    }
    return Rounds(elapsed: start.duration(to: clock.now), latencies: latencies)
}

/// One round of `send(_:durableIn:)` from `tasks` tasks, on a new journal.
func sluiceRound(tasks: Int, interval: Duration) async throws -> Rounds {
    let directory = makeDirectory("journal")
    defer { removeDirectory(directory) }
    let journal = try Journal(directory: directory)
    let store = try Store(
        recoveringFrom: journal,
        durability: .groupCommit(interval: interval),
        initialState: Tally(),
        reducer: tallyReducer
    )
    let writer = Task.detached { try await journal.run() }
    defer {
        writer.cancel()
        journal.close()
    }
    return try await measureAcknowledgements(tasks: tasks) {
        try await store.send(1, durableIn: journal)
    }
}

/// One round of the hand-written log from `tasks` tasks, on a new file.
func floorRound(tasks: Int) async throws -> Rounds {
    let directory = makeDirectory("wal")
    defer { removeDirectory(directory) }
    let log = try HandWrittenLog(path: directory + "/log")
    defer { log.stop() }
    return try await measureAcknowledgements(tasks: tasks) {
        try await log.append(1)
    }
}

/// The time of `count` `fdatasync`s, each after a 64-byte append, on a new file.
func syncTimes(_ count: Int) throws -> [Duration] {
    let directory = makeDirectory("fdatasync")
    defer { removeDirectory(directory) }
    let file = open(directory + "/log", O_WRONLY | O_CREAT | O_APPEND, 0o644)
    guard file >= 0 else { throw POSIXError(.EIO) }
    defer { close(file) }
    let record = [UInt8](repeating: 1, count: 64)
    let clock = ContinuousClock()
    return (0..<count).map { _ in
        _ = record.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        let start = clock.now
        fdatasync(file)
        return start.duration(to: clock.now)
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    var microseconds: Int {
        Int((seconds * 1e6).rounded())
    }
}

/// A counter, the state of both sides.
struct Tally: Codable, Sendable {
    var count = 0
}

let tallyReducer = Reducer<Tally, Int>(mutating: { state, action in state.count &+= action })

/// The rounds of each side in one iteration, taking turns: the speed of the disk drifts within a second, so short
/// rounds in alternation meet it alike.
let roundPairs = 4

/// Counts the iterations of a benchmark, so that the two sides take turns going first.
final class Turns: Sendable {
    private let count = Mutex(0)

    func next() -> Int {
        count.withLock { count in
            defer { count += 1 }
            return count
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [
            DurableMetric.ratio, DurableMetric.sluiceRate, DurableMetric.floorRate, DurableMetric.sluiceLatency,
            DurableMetric.floorLatency, DurableMetric.sync,
        ],
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 30
    )

    // `interval`: the group-commit interval of the Sluice side; the floor has none (it writes what arrived while it
    // synced, as `.zero` does).
    for (tasks, interval) in [(1, Duration.zero), (8, .zero), (64, .zero), (64, .milliseconds(1))] {
        let name = "\(tasks)-task\(tasks == 1 ? "" : "s")" + (interval == .zero ? "" : "-interval-1ms")
        let turns = Turns()
        Benchmark(name, configuration: configuration) { benchmark in
            let turn = turns.next()
            var sluice = Rounds()
            var floor = Rounds()
            for pair in 0..<roundPairs {
                if (turn + pair) % 2 == 0 {
                    sluice.add(try await sluiceRound(tasks: tasks, interval: interval))
                    floor.add(try await floorRound(tasks: tasks))
                } else {
                    floor.add(try await floorRound(tasks: tasks))
                    sluice.add(try await sluiceRound(tasks: tasks, interval: interval))
                }
            }
            benchmark.measurement(DurableMetric.sluiceRate, Int(sluice.rate))
            benchmark.measurement(DurableMetric.floorRate, Int(floor.rate))
            benchmark.measurement(DurableMetric.ratio, Int((100 * sluice.rate / floor.rate).rounded()))
            for latency in sluice.latencies {
                benchmark.measurement(DurableMetric.sluiceLatency, latency.microseconds)
            }
            for latency in floor.latencies {
                benchmark.measurement(DurableMetric.floorLatency, latency.microseconds)
            }
            for time in try syncTimes(16) {
                benchmark.measurement(DurableMetric.sync, time.microseconds)
            }
        }
    }
}
