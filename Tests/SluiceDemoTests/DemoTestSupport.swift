import Foundation
import Sluice
import SluiceDemoKit

/// Runs the scenario on a thread of its own: it blocks its calling thread while it waits for the producers and the
/// trailing effects, and must not hold a thread of the cooperative pool that its `takeLatest` task needs
/// (`sluice-demo` runs it from the main thread).
///
/// - Parameter directory: Where the JSON snapshot goes without a data directory; by default a new temporary
///   folder, removed afterwards.
func runDemoOffThePool(
    _ options: DemoOptions,
    in directory: URL? = nil,
    dependencies: StoreDependencies = StoreDependencies(),
    acknowledge: @escaping @Sendable ([DemoAcknowledgement]) -> Void = { _ in }
) async throws -> DemoSummary {
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
