import Dispatch
import Foundation
import Sluice
public import SluiceJournal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `--data-dir`: the demo's action journal. Opened and recovered before the store exists, written by a group-commit
// writer while the demo runs, closed and checked by a fresh recovery at the end.

/// Why the demo cannot use its data directory; the description says what to do.
public struct DemoError: Error, Equatable, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

/// One acknowledgement of `--acknowledge`: a placed order that the journal holds durably.
public struct DemoAcknowledgement: Sendable, Equatable {
    /// The order's id.
    public var order: Int
    /// A journal sequence number at or after the one of the order's `placeOrder`, durable when acknowledged.
    public var sequence: UInt64

    public init(order: Int, sequence: UInt64) {
        self.order = order
        self.sequence = sequence
    }

    /// The line that `--acknowledge` prints: `ack ORDER SEQUENCE`.
    public var line: String {
        "ack \(order) \(sequence)"
    }

    /// Parses a line of `--acknowledge`; `nil` for any other line (or one cut short).
    public init?(line: some StringProtocol) {
        let fields = line.split(separator: " ")
        guard fields.count == 3, fields[0] == "ack", let order = Int(fields[1]), let sequence = UInt64(fields[2])
        else { return nil }
        self.init(order: order, sequence: sequence)
    }
}

/// Writes acknowledgements to standard output with `write(2)`, unbuffered, so that every line written before a
/// SIGKILL reaches the reader.
public func writeAcknowledgementsToStandardOutput(_ acknowledgements: [DemoAcknowledgement]) {
    var text = ""
    for acknowledgement in acknowledgements {
        text += acknowledgement.line + "\n"
    }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let result = bytes[written...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else { return }
        written += result
    }
}

/// What `--data-dir` found and did: the journal part of the summary.
public struct JournalSummary: Sendable {
    /// The data directory.
    public var directory: String
    /// What the start found in the journal (zeros for a new journal).
    public var recovery: JournalRecovery
    /// Orders that the recovered state already held.
    public var ordersAlreadyPlaced: Int
    /// Orders still pending in the recovered state, dispatched again as `resumeOrder`.
    public var resumedOrders: Int
    /// Whether the recovered state had a quote request without its result, requested again.
    public var resumedQuote: Bool
    /// The journal's last sequence number at the end of the run.
    public var lastSequence: UInt64
    /// The sequence number through which the journal was durable when it was closed.
    public var durableThrough: UInt64
    /// Orders acknowledged with `--acknowledge`.
    public var acknowledgedOrders: Int
    /// The first error that stopped the journal, if one did.
    public var error: JournalError?
    /// A fresh recovery of the directory after the run: what it found, or why it failed.
    public var verification: Result<JournalRecovery, JournalError>
    /// Whether the state of that fresh recovery equals the run's final state.
    public var verificationMatches: Bool

    /// The journal's lines of the summary.
    var lines: [String] {
        var lines = ["Journal (\(directory), \(DemoJournal.durabilityDescription))"]
        if recovery.lastSequence == 0 {
            lines.append("  recovered            0 actions (a new journal)")
        } else {
            let skipped =
                recovery.skippedSnapshots.isEmpty
                ? "" : ", snapshots \(recovery.skippedSnapshots.map(String.init)) skipped"
            lines.append(
                "  recovered            \(recovery.lastSequence) actions: snapshot at sequence "
                    + "\(recovery.snapshotSequence), then \(recovery.replayedActions) replayed\(skipped)"
            )
            lines.append(
                "  resumed              \(ordersAlreadyPlaced) orders already placed, \(resumedOrders) pending "
                    + "decided again, \(resumedQuote ? 1 : 0) quote in flight requested again"
            )
        }
        let new = lastSequence - min(lastSequence, recovery.lastSequence)
        let range = new > 0 ? ", sequences \(recovery.lastSequence + 1)...\(lastSequence)" : ""
        lines.append("  journaled            \(new) new actions\(range), durable through \(durableThrough)")
        if acknowledgedOrders > 0 {
            lines.append("  acknowledged         \(acknowledgedOrders) orders once durable")
        }
        return lines
    }
}

/// The journal of one run of the demo.
final class DemoJournal: Sendable {
    /// Group commit: producers never wait for the disk (see `DemoOptions.usage` for why).
    static let durability = JournalDurability.groupCommit(interval: .milliseconds(2))
    static let durabilityDescription = "group commit: batches of up to 2 ms, one fsync each"

    let directory: String
    let journal: Journal
    /// The state that the journal recorded (the initial state for a new journal).
    let recovered: ServiceState
    let recovery: JournalRecovery
    private let firstError: Guarded<JournalError?>
    private let writer = Guarded<Task<Void, Never>?>(nil)

    private init(
        directory: String,
        journal: Journal,
        recovered: ServiceState,
        recovery: JournalRecovery,
        firstError: Guarded<JournalError?>
    ) {
        self.directory = directory
        self.journal = journal
        self.recovered = recovered
        self.recovery = recovery
        self.firstError = firstError
    }

    /// Opens the journal in `directory` (created if missing) and recovers the state it records.
    ///
    /// - Throws: A ``DemoError`` that says why the directory cannot be used: it is not writable, another process
    ///   holds it, its journal is damaged, or it holds orders beyond 1...`orders`.
    static func open(_ directory: String, orders: Int) throws(DemoError) -> DemoJournal {
        // Intermediate folders too; a failure here is reported by the journal's own `mkdir`, with its errno.
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let firstError = Guarded<JournalError?>(nil)
        let journal: Journal
        do {
            journal = try Journal(directory: directory) { error in
                firstError.update { if $0 == nil { $0 = error } }
            }
        } catch .locked {
            throw DemoError(
                description: "cannot use the data directory \(directory): its journal is locked by another "
                    + "running sluice-demo (or another process that opened it); wait for it to end, or use another "
                    + "--data-dir"
            )
        } catch .io(let operation, let path, let errno) {
            let error = JournalError.io(operation: operation, path: path, errno: errno)
            throw DemoError(description: "cannot use the data directory \(directory): \(error)")
        } catch {
            // Opening reads the newest segment: damage there (other than a torn last record) stops it.
            throw damaged(directory, error)
        }
        let recovered: ServiceState
        let recovery: JournalRecovery
        do {
            (recovered, recovery) = try Store<ServiceState, ServiceAction>.recover(
                from: journal,
                initialState: ServiceState(stock: demoCatalogue),
                reducer: serviceReducer
            )
        } catch {
            journal.close()
            throw damaged(directory, error)
        }
        if recovered.metrics.lastOrderID > orders {
            journal.close()
            throw DemoError(
                description: "the journal in \(directory) holds orders up to #\(recovered.metrics.lastOrderID); "
                    + "pass --orders \(recovered.metrics.lastOrderID) or more to resume it, or use another --data-dir"
            )
        }
        return DemoJournal(
            directory: directory,
            journal: journal,
            recovered: recovered,
            recovery: recovery,
            firstError: firstError
        )
    }

    private static func damaged(_ directory: String, _ error: JournalError) -> DemoError {
        DemoError(
            description: "cannot resume from the journal in \(directory): \(error). The journal was left as it "
                + "is; move the directory away to start afresh"
        )
    }

    /// The journal middleware, last in the chain: it records exactly the actions that the reducer sees.
    var middleware: Middleware<ServiceState, ServiceAction> {
        Middlewares.journal(journal, durability: Self.durability)
    }

    /// Starts the group-commit writer; call it once the store has installed ``middleware``.
    func startWriter() {
        let journal = journal
        writer.update { $0 = Task.detached { try? await journal.run() } }
    }

    /// Saves the store's state as a journal snapshot (which also compacts the journal).
    func snapshot(_ store: Store<ServiceState, ServiceAction>) throws(JournalError) {
        try journal.snapshot(store)
    }

    /// Waits until everything journaled is durable, stops the writer, and closes the journal.
    ///
    /// Call it after the store's shutdown, so that no action arrives any more.
    func finish(acknowledger: Acknowledger?) -> (durableThrough: UInt64, error: JournalError?) {
        let journal = journal
        let last = journal.lastSequence
        blockingWait { try? await journal.durable(through: last) }
        acknowledger?.finish()
        if let task = writer.value {
            task.cancel()
            blockingWait { await task.value }
        }
        let durable = journal.durableThrough
        journal.close()
        return (durable, firstError.value)
    }

    /// Opens the closed journal again and recovers it, as the next run would.
    static func verify(
        _ directory: String,
        against final: ServiceState
    ) -> (Result<JournalRecovery, JournalError>, matches: Bool) {
        do {
            let journal = try Journal(directory: directory)
            defer { journal.close() }
            let (state, recovery) = try Store<ServiceState, ServiceAction>.recover(
                from: journal,
                initialState: ServiceState(stock: demoCatalogue),
                reducer: serviceReducer
            )
            return (.success(recovery), state == final)
        } catch {
            return (.failure(error), false)
        }
    }
}

/// Prints (through `sink`) the orders the producers placed, once the journal holds them durably.
final class Acknowledger: Sendable {
    private let pending = Guarded<(acknowledgements: [DemoAcknowledgement], finished: Bool)>(([], false))
    private let count = Counter()
    private let done = DispatchSemaphore(value: 0)
    /// Wakes the loop when an order is added or the run finishes; one buffered wake-up is enough, since the loop
    /// takes everything pending when it wakes.
    private let wake: AsyncStream<Void>.Continuation

    /// Starts the loop that waits for durability and acknowledges.
    init(journal: Journal, sink: @escaping @Sendable ([DemoAcknowledgement]) -> Void) {
        let (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        let pending = pending
        let count = count
        let done = done
        Task.detached {
            var wakeUp = wakeUps.makeAsyncIterator()
            while true {
                let (batch, finished) = pending.update { state in
                    defer { state.acknowledgements = [] }
                    return (state.acknowledgements, state.finished)
                }
                if batch.isEmpty {
                    if finished { break }
                    _ = await wakeUp.next()  // resumed by `add` or `finish`, not polled
                    continue
                }
                // A journal that stopped acknowledges nothing more.
                guard (try? await journal.durable(through: batch.map(\.sequence).max() ?? 0)) != nil else { break }
                sink(batch)
                for _ in batch { count.increment() }
            }
            done.signal()
        }
    }

    /// Records that `order` was placed; `sequence` is the journal's last sequence number after its dispatch.
    func add(order: Int, sequence: UInt64) {
        pending.update { $0.acknowledgements.append(DemoAcknowledgement(order: order, sequence: sequence)) }
        wake.yield()
    }

    /// Acknowledges what is left (once durable), then stops.
    func finish() {
        pending.update { $0.finished = true }
        wake.yield()
        done.wait()
    }

    /// How many orders were acknowledged.
    var acknowledged: Int {
        count.current
    }
}

/// The store for the debounced snapshot effect, which runs outside the store; weak, so that no cycle keeps the
/// store alive.
final class StoreReference: Sendable {
    private struct Weak: Sendable {
        weak var store: Store<ServiceState, ServiceAction>?
    }

    private let reference = Locked(Weak())

    func set(_ store: Store<ServiceState, ServiceAction>) {
        reference.withLock { $0.store = store }
    }

    var current: Store<ServiceState, ServiceAction>? {
        reference.withLock { $0.store }
    }
}

/// A value guarded by a lock.
final class Guarded<Value: Sendable>: Sendable {
    private let storage: Locked<Value>

    init(_ value: Value) {
        storage = Locked(value)
    }

    func update<Result>(_ body: (inout Value) -> Result) -> Result {
        storage.withLock { body(&$0) }
    }

    var value: Value {
        storage.withLock { $0 }
    }
}

/// Runs `operation` in a task and blocks this thread until it returns. Never call it from a task of the
/// cooperative pool: the demo runs on the main thread (or, in the tests, a thread of its own).
@discardableResult
func blockingWait<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
    let result = Guarded<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let value = await operation()
        result.update { $0 = value }
        done.signal()
    }
    done.wait()
    return result.value!
}
