// Not a benchmark of the suite: the large-dictionary recoveries of the `Journal` area (`Snapshot-1M-*`,
// `Replay-1M-*`), one process per measure and one phase at a time, for `perf` and callgrind.
//
//     swift build -c release --package-path Benchmarks --product SnapshotProfile
//     Benchmarks/.build/release/SnapshotProfile write DIR [entries]      # the four journals, 1,000,000 entries
//     Benchmarks/.build/release/SnapshotProfile MODE DIR [iterations]
//
// MODE: `snapshot-int`, `replay-int`, `snapshot-cart`, `replay-cart` (open, recover, close: wall time, the CPU
// time of the calling thread and of the process), `decode-int`, `decode-cart` (the snapshot's payload decoded from
// memory, on the calling thread only), `floor-cart` (the same `[String: Cart]` made in memory and inserted into a
// dictionary: what every recovery of it costs at least).

import Dispatch
import Foundation
import Sluice
import SluiceJournal

struct Cart: Codable, Sendable {
    var owner: String
    var items: [Int]
    var total: Double
    var isOpen: Bool
}

@inline(__always)
func numberEntry(_ index: Int) -> (key: Int, value: Int) { (index &* 7919, index) }

func cartEntry(_ index: Int) -> (key: String, value: Cart) {
    (
        "cart-\(index)",
        Cart(owner: "customer \(index % 5_000)", items: [index, 7], total: Double(index) / 4, isOpen: true)
    )
}

let numberTable = Reducer<[Int: Int], Int>(mutating: { state, index in
    let (key, value) = numberEntry(index)
    state[key] = value
})

let cartTable = Reducer<[String: Cart], Int>(mutating: { state, index in
    let (key, value) = cartEntry(index)
    state[key] = value
})

func seconds(since start: UInt64) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// The CPU time of this thread, in seconds.
func cpu() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The CPU time of this process (all its threads), in seconds.
func processCPU() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func write<State: Codable & Sendable>(
    _ directory: String,
    _ reducer: Reducer<State, Int>,
    initialState: State,
    entries: Int,
    snapshot: Bool
) throws {
    try? FileManager.default.removeItem(atPath: directory)
    let journal = try Journal(directory: directory)
    let store = try Store<State, Int>(
        recoveringFrom: journal,
        durability: .none,
        initialState: initialState,
        reducer: reducer
    )
    for index in 0..<entries { store.dispatch(index) }
    if snapshot { try journal.snapshot(store) }
    journal.close()
}

func recover<State: Codable & Sendable>(
    _ directory: String,
    _ reducer: Reducer<State, Int>,
    initialState: State,
    iterations: Int
) throws {
    for _ in 0..<iterations {
        let cpuStart = cpu()
        let processStart = processCPU()
        var start = DispatchTime.now().uptimeNanoseconds
        let journal = try Journal(directory: directory)
        let open = seconds(since: start)
        start = DispatchTime.now().uptimeNanoseconds
        let (state, report) = try Store<State, Int>.recover(from: journal, initialState: initialState, reducer: reducer)
        let recovery = seconds(since: start)
        start = DispatchTime.now().uptimeNanoseconds
        journal.close()
        let close = seconds(since: start)
        print(
            String(
                format: "open %.3f s, recover %.3f s, close %.3f s, total %.3f s, CPU %.3f s, process CPU %.3f s",
                open,
                recovery,
                close,
                open + recovery + close,
                cpu() - cpuStart,
                processCPU() - processStart
            ),
            "(snapshot \(report.snapshotSequence), replayed \(report.replayedActions))"
        )
        withExtendedLifetime(state) {}
    }
}

/// Decodes the payload of the newest snapshot in `directory` from memory.
func decode<State: Codable>(_ type: State.Type, _ directory: String, iterations: Int) throws {
    let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".snap") }.sorted()
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + files.last!)))
    let payload = Array(bytes[32..<bytes.count - 4])
    var coder = JournalPayloadCoder()
    for _ in 0..<iterations {
        let cpuStart = cpu()
        let start = DispatchTime.now().uptimeNanoseconds
        let state = try payload.withUnsafeBytes { try coder.decode(State.self, from: $0) }
        print(
            String(format: "decode %.3f s, CPU %.3f s", seconds(since: start), cpu() - cpuStart),
            "\(payload.count) bytes"
        )
        withExtendedLifetime(state) {}
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let mode = arguments[0]
let directory = arguments[1]
let number = arguments.count > 2 ? Int(arguments[2])! : nil

switch mode {
case "write":
    let entries = number ?? 1_000_000
    try write(directory + "/snapshot-int", numberTable, initialState: [:], entries: entries, snapshot: true)
    try write(directory + "/replay-int", numberTable, initialState: [:], entries: entries, snapshot: false)
    try write(directory + "/snapshot-cart", cartTable, initialState: [:], entries: entries, snapshot: true)
    try write(directory + "/replay-cart", cartTable, initialState: [:], entries: entries, snapshot: false)
case "snapshot-int", "replay-int":
    try recover(directory + "/" + mode, numberTable, initialState: [:], iterations: number ?? 3)
case "snapshot-cart", "replay-cart":
    try recover(directory + "/" + mode, cartTable, initialState: [:], iterations: number ?? 3)
case "decode-int":
    try decode([Int: Int].self, directory + "/snapshot-int", iterations: number ?? 3)
case "floor-cart":
    // The floor of a [String: Cart] recovery: its keys and carts made in memory, then the dictionary built.
    let entries = number ?? 1_000_000
    var start = cpu()
    var keys: [String] = []
    var carts: [Cart] = []
    keys.reserveCapacity(entries)
    carts.reserveCapacity(entries)
    for index in 0..<entries {
        let (key, cart) = cartEntry(index)
        keys.append(key)
        carts.append(cart)
    }
    print(String(format: "make keys and carts: CPU %.3f s", cpu() - start))
    start = cpu()
    var table = [String: Cart](minimumCapacity: entries)
    for index in 0..<entries { table[keys[index]] = carts[index] }
    print(String(format: "insert into a reserved dictionary: CPU %.3f s", cpu() - start))
    start = cpu()
    var grown = [String: Cart]()
    for index in 0..<entries { grown[keys[index]] = carts[index] }
    print(String(format: "insert into a growing dictionary: CPU %.3f s", cpu() - start))
    start = cpu()
    withExtendedLifetime((table, grown)) {}
    table = [:]
    print(String(format: "free the dictionary: CPU %.3f s", cpu() - start))
case "decode-cart":
    try decode([String: Cart].self, directory + "/snapshot-cart", iterations: number ?? 3)
default:
    print("unknown mode \(mode)")
}
