import Foundation
import Sluice
import SluiceDemoKit
import SluiceJournal

/// How long a demo test waits for the demo (a run, a process, a lookup) before it fails: a hang guard, not a pause.
///
/// The waits end as soon as what they wait for happens. Much longer than the library's tests' guard: a demo run is
/// thousands of orders through a journal, and its last quote lookup is a task that needs a thread of the
/// cooperative pool, which it shares with every other suite on a 2-core machine. Under the thread sanitizer, with
/// the whole suite running at once, that task waited more than 180 s for a thread of the pool (the result came, late):
/// so ten minutes in both modes.
let demoHangGuard: Duration = .seconds(600)

/// ``demoHangGuard`` in seconds, for `DispatchSemaphore.wait(timeout:)`.
let demoHangGuardSeconds = Double(demoHangGuard.components.seconds)

/// Runs the scenario on a thread of its own: it blocks its calling thread while it waits for the producers and the
/// trailing effects, and must not hold a thread of the cooperative pool that its `takeLatest` task needs
/// (`sluice-demo` runs it from the main thread).
///
/// The run waits up to ``demoHangGuard`` for the last quote lookup: its task needs a thread of the test process's
/// cooperative pool, two threads on two cores shared with every other suite. It returns as soon as the result is
/// in.
///
/// - Parameter directory: Where the JSON snapshot goes without a data directory; by default a new temporary
///   folder, removed afterwards.
func runDemoOffThePool(
    _ options: DemoOptions,
    in directory: URL? = nil,
    dependencies: StoreDependencies = StoreDependencies(),
    acknowledge: @escaping @Sendable ([DemoAcknowledgement]) -> Void = { _ in }
) async throws -> DemoSummary {
    var patient = options
    patient.settleTimeout = demoHangGuard
    let options = patient
    let snapshots =
        directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("sluice-demo-test-\(UUID())")
    defer {
        if directory == nil { try? FileManager.default.removeItem(at: snapshots) }
    }
    return try await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(
                returning: Result { () throws(DemoError) in
                    try runDemo(
                        options,
                        snapshotDirectory: snapshots,
                        dependencies: dependencies,
                        acknowledge: acknowledge
                    )
                }
            )
        }
    }.get()
}

/// Runs `body`, which blocks its thread (polling a process, waiting for it), on a thread of its own instead of a
/// thread of the cooperative pool.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
        Thread.detachNewThread {
            continuation.resume(returning: Result { try body() })
        }
    }.get()
}

/// Calls `body` with the path of a new temporary directory, removed afterwards.
func withDataDirectory<T>(_ body: (String) async throws -> T) async rethrows -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-demo-data-\(UUID())").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try await body(directory)
}

/// Values appended from any thread.
final class Collected<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `storage` is guarded by `lock`.
    private let lock = NSLock()
    private var storage: [Value] = []

    func append(contentsOf values: [Value]) {
        lock.withLock { storage += values }
    }

    var values: [Value] {
        lock.withLock { storage }
    }
}

/// Journals 50 orders in `directory` (no snapshot: every record is in one segment, the largest file), then flips a
/// byte in the middle of that segment.
///
/// - Returns: The segment's file name and its damaged contents.
func corruptJournal(in directory: String) throws -> (segment: String, bytes: Data) {
    do {
        let journal = try Journal(directory: directory)
        let store = try Store<ServiceState, ServiceAction>(
            recoveringFrom: journal,
            durability: .everyAction,
            initialState: ServiceState(stock: demoCatalogue),
            reducer: serviceReducer
        )
        for id in 1...50 {
            store.dispatch(.placeOrder(demoOrder(id: id)))
        }
        journal.close()
    }
    let files = try FileManager.default.contentsOfDirectory(atPath: directory)
    let sizes = try files.map { name in
        (name, try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int ?? 0)
    }
    guard let (segment, size) = sizes.max(by: { $0.1 < $1.1 }), size > 1_000 else {
        throw DemoTestError(description: "no journal segment in \(directory): \(sizes)")
    }
    let url = URL(fileURLWithPath: directory + "/" + segment)
    var bytes = try Data(contentsOf: url)
    bytes[size / 2] ^= 0x5A
    try bytes.write(to: url)
    return (segment, bytes)
}

/// Recovers the state that the journal in `directory` records, as the next run of the demo would, and closes it.
func recoverDemoJournal(_ directory: String) throws -> (state: ServiceState, recovery: JournalRecovery) {
    let journal = try Journal(directory: directory)
    defer { journal.close() }
    return try Store<ServiceState, ServiceAction>.recover(
        from: journal,
        initialState: ServiceState(stock: demoCatalogue),
        reducer: serviceReducer
    )
}

struct DemoTestError: Error, CustomStringConvertible {
    var description: String
}
