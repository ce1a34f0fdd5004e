import Foundation
import Sluice
import SluiceDemoKit
import SluiceJournal

// Measures the replay against recovery on a journal of the demo's domain, in one process:
// `swift run -c release sluice-replay-bench DIR [ACTIONS] [SNAPSHOT-EVERY]` writes ACTIONS (1,000,000 by default)
// demo actions to the new directory DIR with the demo's reducer and no snapshot (the demo itself snapshots and
// compacts every half second, so its directory keeps only the last actions), then times a full replay, a recovery,
// and the bisection of an invariant that first fails at a random order; with SNAPSHOT-EVERY, again after writing a
// snapshot every SNAPSHOT-EVERY actions.

/// Prints a line at once, also into a file or a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

let arguments = CommandLine.arguments.dropFirst()
guard let directory = arguments.first, !FileManager.default.fileExists(atPath: directory) else {
    FileHandle.standardError.write(Data("usage: sluice-replay-bench NEW-DIR [ACTIONS]\n".utf8))
    exit(2)
}
let target = arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000_000
let snapshotEvery = arguments.dropFirst(2).first.flatMap { UInt64($0) } ?? 0
let clock = ContinuousClock()

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = clock.now
    let value = try body()
    return (value, seconds(start.duration(to: clock.now)))
}

let initialState = ServiceState(stock: demoCatalogue)

// Write: each order is placed, then fulfilled when the stock allows, else rejected and its SKU restocked.
var written = 0
var placed = 0
do {
    let journal = try Journal(directory: directory)
    let store = try Store<ServiceState, ServiceAction>(
        recoveringFrom: journal,
        durability: .none,
        initialState: initialState,
        reducer: serviceReducer
    )
    var order = 0
    while written < target {
        order += 1
        let next = demoOrder(id: order)
        store.dispatch(.placeOrder(next))
        written += 1
        if store.state.inventory.stock[next.sku, default: 0] >= next.quantity {
            store.dispatch(.fulfill(next))
            written += 1
        } else {
            store.dispatch(.reject(next, .outOfStock))
            store.dispatch(.restock(next.sku, quantity: 50))
            written += 2
        }
    }
    placed = order
    try await journal.durable(through: journal.lastSequence)
    journal.close()
}
say("wrote \(written) actions (\(placed) orders) to \(directory)")

let (replay, openTime) = try timed {
    try JournalReplay(directory: directory, initialState: initialState, reducer: serviceReducer)
}
let (replayed, reduceTime) = try timed { try replay.state(at: replay.lastSequence, usingSnapshots: false) }
let replayTime = openTime + reduceTime
say(
    String(
        format: "replay: read+decode %.2f s, reduce %.2f s, total %.2f s = %.0f actions/s",
        openTime,
        reduceTime,
        replayTime,
        Double(replay.lastSequence) / replayTime
    )
)
let ((recovered, _), recoveryTime) = try timed {
    let journal = try Journal(directory: directory)
    defer { journal.close() }
    return try Store<ServiceState, ServiceAction>.recover(
        from: journal,
        initialState: initialState,
        reducer: serviceReducer
    )
}
say(
    String(
        format: "recovery: %.2f s = %.0f actions/s; same state: %@",
        recoveryTime,
        Double(replay.lastSequence) / recoveryTime,
        recovered == replayed ? "yes" : "NO"
    )
)

var generator = SystemRandomNumberGenerator()
let failingOrder = Int.random(in: 1...placed, using: &generator)
func bisect(_ replay: JournalReplay<ServiceState, ServiceAction>, label: String) {
    let (found, time) = timed { replay.bisect { $0.orders.placed < failingOrder } }
    let step = found.failingStep
    say(
        String(
            format: "bisect %@: invariant \"fewer than %d orders placed\" first fails after action %@; "
                + "%d checks, %d reductions, %.3f s",
            label,
            failingOrder,
            step.map { String($0.sequence) } ?? "none",
            found.evaluations,
            found.reductions,
            time
        )
    )
}
bisect(replay, label: "without snapshots")

// Snapshots every `snapshotEvery` actions, written beside the records (no compaction), then the same bisection.
guard snapshotEvery > 0 else { exit(0) }
let storage = FileJournalStorage(directory: directory)
let coder = JournalPayloadCoder()
var sequence = snapshotEvery
while sequence < replay.lastSequence {
    let state = try replay.state(at: sequence)
    try storage.writeSnapshot(JournalSnapshot(sequence: sequence, reducerVersion: 0, payload: coder.encode(state)))
    sequence += snapshotEvery
}
let (snapshotted, snapshotOpenTime) = try timed {
    try JournalReplay(directory: directory, initialState: initialState, reducer: serviceReducer)
}
say(
    String(
        format: "opened with %d snapshots in %.2f s",
        snapshotted.checkpointSequences.count - 1,
        snapshotOpenTime
    )
)
bisect(snapshotted, label: "with a snapshot every \(snapshotEvery) actions")
