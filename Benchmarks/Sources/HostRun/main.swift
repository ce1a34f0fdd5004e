// Times a store host outside the benchmark harness, for the figures of Benchmarks/README.md ("Store host"):
//
//   swift run -c release HostRun churn [ids] [activeLimit] [threads]
//       `ids` distinct ids (1,000,000 by default), each sent one action, from `threads` threads (2), with at most
//       `activeLimit` stores alive (10,000); each request is followed by one to a hot id of 1,000, which stay
//       active. Journals to a discarding storage (HostSupport): the memory is the host's and its stores'. Prints
//       the resident memory every 100,000 ids, the most stores alive, and the time per request.
//   swift run -c release HostRun activation [count] [tail] [directory]
//       Writes `count` journals (2,000) to `directory` (a new folder under the temporary directory), each a snapshot
//       of 100 actions followed by `tail` actions (10), then activates each store once through a host (a read,
//       which opens the journal, loads the snapshot and replays the tail) and prints the percentiles of that
//       activation; then of the first dispatch to each (which starts a segment file), of a later dispatch, and of
//       the activation of ids without a journal (from the initial state).

import Foundation
import HostSupport
import Sluice
import SluiceHost
import SluiceJournal
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The resident set size of this process, in MiB, from /proc/self/statm.
func residentMiB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

/// The peak resident set size of this process, in MiB.
func peakResidentMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func microseconds(_ duration: Duration) -> Double {
    milliseconds(duration) * 1000
}

/// Runs `body(thread)` on `count` threads of their own and waits for them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for thread in 0..<count {
        group.enter()
        let worker = Thread {
            body(thread)
            group.leave()
        }
        worker.stackSize = 1 << 20
        worker.start()
    }
    group.wait()
}

func churn(ids: Int, activeLimit: Int, threads: Int) async {
    let host = makeDiscardingHost(activeLimit: activeLimit)
    let progress = Mutex(0)
    let mostAlive = Mutex(0)
    print("churn: \(ids) ids, active limit \(activeLimit), \(threads) threads, 1,000 hot ids")
    print("resident before: \(String(format: "%.1f", residentMiB())) MiB")
    let start = ContinuousClock.now
    onThreads(threads) { thread in
        var id = thread
        while id < ids {
            try! host.dispatch(1, to: 1_000_000_000 + id)
            try! host.dispatch(1, to: id % 1000)
            let done = progress.withLock { done in
                done += 1
                return done
            }
            if done % 100_000 == 0 {
                let alive = host.statistics.liveStores
                mostAlive.withLock { $0 = max($0, alive) }
                print(
                    "  \(done) ids: resident \(String(format: "%.1f", residentMiB())) MiB, alive \(alive), "
                        + "\(String(format: "%.1f", milliseconds(ContinuousClock.now - start) / 1000)) s"
                )
            }
            id += threads
        }
    }
    let elapsed = ContinuousClock.now - start
    let statistics = host.statistics
    print(
        "done: \(String(format: "%.1f", milliseconds(elapsed) / 1000)) s for \(2 * ids) requests, "
            + "\(String(format: "%.2f", microseconds(elapsed) / Double(2 * ids))) µs per request (all threads)"
    )
    print(
        "activations \(statistics.activations), passivations for the limit \(statistics.limitPassivations), "
            + "most alive at a sample \(mostAlive.withLock { $0 }), alive now \(statistics.liveStores)"
    )
    let resident = String(format: "%.1f", residentMiB())
    print("resident now \(resident) MiB, peak \(String(format: "%.1f", peakResidentMiB())) MiB")
    await host.shutdown()
    print("after shutdown: alive \(host.statistics.liveStores), resident \(String(format: "%.1f", residentMiB())) MiB")
}

func percentiles(_ name: String, _ samples: [Duration]) {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> String {
        String(format: "%.1f", microseconds(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]))
    }
    let mean = microseconds(sorted.reduce(.zero, +)) / Double(sorted.count)
    print(
        "\(name) (\(sorted.count)): p50 \(at(0.5)) µs, p90 \(at(0.9)) µs, p99 \(at(0.99)) µs, "
            + "max \(at(1)) µs, mean \(String(format: "%.1f", mean)) µs"
    )
}

func activation(count: Int, tail: Int, directory: String) async throws {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    print("activation: \(count) journals in \(directory), a snapshot of 100 actions and a tail of \(tail)")
    let prepareStart = ContinuousClock.now
    for id in 0..<count {
        let journal = try Journal(directory: directory + "/\(id)")
        let store = try Store<HostTally, Int>(
            recoveringFrom: journal,
            durability: .none,
            initialState: HostTally(),
            reducer: hostTallyReducer
        )
        for _ in 0..<100 { store.dispatch(1) }
        try journal.snapshot(store)
        for _ in 0..<tail { store.dispatch(1) }
        journal.close()
    }
    print("prepared in \(String(format: "%.1f", milliseconds(ContinuousClock.now - prepareStart) / 1000)) s")
    let host = StoreHost<String, HostTally, Int>(
        directory: directory,
        durability: .none,
        activeLimit: 3 * count,
        idleTimeout: nil,
        initialState: { _ in HostTally() },
        reducer: hostTallyReducer
    )
    let clock = ContinuousClock()
    var fromSnapshot: [Duration] = []
    for id in 0..<count {
        let start = clock.now
        let value = try await host.read("\(id)") { $0.count }
        fromSnapshot.append(clock.now - start)
        precondition(value == 100 + tail, "recovered \(value), expected \(100 + tail)")
    }
    var firstDispatch: [Duration] = []
    for id in 0..<count {
        firstDispatch.append(try clock.measure { try host.dispatch(1, to: "\(id)") })
    }
    var active: [Duration] = []
    for id in 0..<count {
        active.append(try clock.measure { try host.dispatch(1, to: "\(id)") })
    }
    var fresh: [Duration] = []
    for id in 0..<count {
        let start = clock.now
        _ = try await host.read("new-\(id)") { $0.count }
        fresh.append(clock.now - start)
    }
    percentiles("activation from a snapshot and a tail of \(tail) (a read that activates)", fromSnapshot)
    percentiles("then the first dispatch (starts a new segment file)", firstDispatch)
    percentiles("then a dispatch to the active store", active)
    percentiles("activation from the initial state (an empty journal: mkdir and a lock file)", fresh)
    await host.shutdown()
    try FileManager.default.removeItem(atPath: directory)
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "churn":
    let values = arguments.dropFirst().compactMap { Int($0) }
    await churn(
        ids: values.count > 0 ? values[0] : 1_000_000,
        activeLimit: values.count > 1 ? values[1] : 10_000,
        threads: values.count > 2 ? values[2] : 2
    )
case "activation":
    let rest = Array(arguments.dropFirst())
    let directory =
        rest.count > 2 ? rest[2] : NSTemporaryDirectory() + "sluice-host-activation-\(getpid())"
    try await activation(
        count: rest.count > 0 ? Int(rest[0]) ?? 2000 : 2000,
        tail: rest.count > 1 ? Int(rest[1]) ?? 10 : 10,
        directory: directory
    )
default:
    print("usage: HostRun churn [ids] [activeLimit] [threads] | activation [count] [tail] [directory]")
}
