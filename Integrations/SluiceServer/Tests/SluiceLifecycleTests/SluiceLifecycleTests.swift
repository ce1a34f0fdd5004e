import Foundation
import Logging
import ServiceLifecycle
import Sluice
import SluiceJournal
import SluiceLifecycle
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps every log entry's level, message and metadata.
final class LogEntries: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    let entries = Mutex<[Entry]>([])

    var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(box: self) }
        logger.logLevel = .trace
        return logger
    }

    var recorded: [Entry] { entries.withLock { $0 } }

    struct Handler: LogHandler {
        let box: LogEntries
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let entry = Entry(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:])
            box.entries.withLock { $0.append(entry) }
        }
    }
}

/// The same types as the lifecycle process's, to read its journal back.
struct Tally: Codable, Sendable, Equatable {
    var total = 0
}

enum TallyAction: Codable, Sendable {
    case add(Int)
}

let tallyReducer = Reducer<Tally, TallyAction>(mutating: { state, action in
    switch action {
    case .add(let amount): state.total += amount
    }
})

/// A new empty directory, removed after `body`.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-server-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// Waits until `condition` holds, polling, for at most 5 seconds.
func eventually(_ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(2))
    }
}

@Suite struct StoreServiceTests {
    @Test func gracefulShutdownSnapshotsAndClosesTheJournal() async throws {
        try await withTemporaryDirectory { directory in
            let log = LogEntries()
            let journal = try Journal(directory: directory)
            let store = try Store<Tally, TallyAction>(
                recoveringFrom: journal,
                durability: .groupCommit(interval: .milliseconds(1)),
                initialState: Tally(),
                reducer: tallyReducer
            )
            let reports = Mutex<[StoreServiceReport]>([])
            let service = StoreService(store: store, journal: journal, label: "tally", logger: log.logger) { report in
                reports.withLock { $0.append(report) }
            }
            let group = ServiceGroup(services: [service], logger: log.logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                for _ in 0..<25 { store.dispatch(.add(2)) }
                // The service runs the writer: the actions become durable without anyone calling `run()`.
                try await journal.durable(through: 25)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            let report = try #require(reports.withLock { $0.first })
            #expect(report.snapshotSequence == 25)
            #expect(report.lastSequence == 25)
            #expect(report.unwrittenActions == 0)
            #expect(!report.abandonedWork)
            // Refused after shutdown: the journal is closed and the store stopped.
            store.dispatch(.add(1))
            #expect(store.state.total == 50)
            let stopped = try #require(log.recorded.first { $0.message == "store stopped" })
            #expect(stopped.level == .info)
            #expect(stopped.metadata["sluice.store"] == "tally")
            #expect(stopped.metadata["sluice.snapshot_sequence"]?.description == "25")
            #expect(stopped.metadata["sluice.cancelled_tasks"]?.description == "0")
            // The next start reads the snapshot and replays nothing.
            let reopened = try Journal(directory: directory)
            let recovered = try Store<Tally, TallyAction>(
                recoveringFrom: reopened,
                durability: .everyAction,
                initialState: Tally(),
                reducer: tallyReducer
            )
            #expect(recovered.state.total == 50)
            #expect(try reopened.storage.snapshotSequences().contains(25))
            reopened.close()
        }
    }

    @Test func aShutdownThatTimesOutSaysWhatItCancelled() async throws {
        let log = LogEntries()
        let store = Store<Tally, TallyAction>(initialState: Tally(), reducer: tallyReducer)
        let started = Atomic<Bool>(false)
        // An effect that does not finish within the timeout.
        _ = store.start { _ in
            started.store(true, ordering: .relaxed)
            try await Task.sleep(for: .seconds(30))
        }
        await eventually { started.load(ordering: .relaxed) }
        let reports = Mutex<[StoreServiceReport]>([])
        let service = StoreService(
            store: store,
            label: "slow",
            shutdownTimeout: .milliseconds(50),
            logger: log.logger
        ) { report in reports.withLock { $0.append(report) } }
        let group = ServiceGroup(services: [service], logger: log.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await Task.sleep(for: .milliseconds(20))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let report = try #require(reports.withLock { $0.first })
        #expect(report.shutdown.cancelledTasks == 1)
        #expect(report.abandonedWork)
        #expect(report.snapshotSequence == nil)
        let notice = try #require(log.recorded.first { $0.level == .notice })
        #expect(notice.message.contains("timed out after 0.05 seconds"))
        #expect(notice.message.contains("cancelled 1 running effect"))
        #expect(notice.metadata["sluice.store"] == "slow")
    }

    @Test func cancellationStopsTheStoreToo() async throws {
        let log = LogEntries()
        let store = Store<Tally, TallyAction>(initialState: Tally(), reducer: tallyReducer)
        let service = StoreService(store: store, logger: log.logger)
        let task = Task { try await service.run() }
        try await Task.sleep(for: .milliseconds(20))
        task.cancel()
        try await task.value
        store.dispatch(.add(1))
        #expect(store.state.total == 0)
        #expect(store.statistics.refusedDispatches == 1)
        #expect(log.recorded.contains { $0.message == "store stopped" })
    }

    @Test func aFailedJournalWriterStopsTheStoreAndThrows() async throws {
        try await withTemporaryDirectory { directory in
            let log = LogEntries()
            let storage = FailingStorage(directory: directory)
            let journal = try Journal(storage: storage)
            let store = try Store<Tally, TallyAction>(
                recoveringFrom: journal,
                durability: .groupCommit(interval: .milliseconds(1)),
                initialState: Tally(),
                reducer: tallyReducer
            )
            let reports = Mutex<[StoreServiceReport]>([])
            let service = StoreService(store: store, journal: journal, label: "tally", logger: log.logger) { report in
                reports.withLock { $0.append(report) }
            }
            let run = Task { try await service.run() }
            store.dispatch(.add(1))
            try await journal.durable(through: 1)
            storage.failing.store(true, ordering: .relaxed)
            store.dispatch(.add(1))
            await #expect(throws: JournalError.self) { try await run.value }
            let report = try #require(reports.withLock { $0.first })
            #expect(report.writerError != nil)
            #expect(report.snapshotError != nil)
            #expect(report.snapshotSequence == nil)
            #expect(report.durableThrough == 1)
            #expect(log.recorded.contains { $0.level == .error && $0.message.hasPrefix("journal writer failed") })
            #expect(log.recorded.contains { $0.level == .error && $0.message.hasPrefix("final snapshot failed") })
            #expect(log.recorded.contains { $0.message == "store stopped" })
        }
    }

    @Test func sigtermToAProcessLeavesAFinalSnapshot() async throws {
        try await withTemporaryDirectory { directory in
            let process = Process()
            process.executableURL = try lifecycleProcessExecutable()
            process.arguments = [directory, "40"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            let reader = LineReader(output.fileHandleForReading)
            let ready = await reader.line(startingWith: "ready")
            #expect(ready == "ready 40")
            kill(process.processIdentifier, SIGTERM)
            let stopped = await reader.line(startingWith: "stopped")
            process.waitUntilExit()
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 0)
            #expect(stopped == "stopped snapshot=40 unwritten=0 cancelled=0")
            let journal = try Journal(directory: directory)
            #expect(try journal.storage.snapshotSequences().max() == 40)
            let store = try Store<Tally, TallyAction>(
                recoveringFrom: journal,
                durability: .everyAction,
                initialState: Tally(),
                reducer: tallyReducer
            )
            #expect(store.state.total == 40)
            journal.close()
        }
    }
}

/// A file journal whose appends fail, once `failing` is set, like a full disk.
final class FailingStorage: JournalStorage {
    let file: FileJournalStorage
    let failing = Atomic<Bool>(false)

    init(directory: String) { file = FileJournalStorage(directory: directory) }

    func acquire() throws(JournalError) { try file.acquire() }
    func lastSequence() throws(JournalError) -> UInt64 { try file.lastSequence() }
    func snapshotSequences() throws(JournalError) -> [UInt64] { try file.snapshotSequences() }
    func readSnapshot(covering sequence: UInt64) throws(JournalError) -> JournalSnapshot {
        try file.readSnapshot(covering: sequence)
    }
    func readRecords(
        after sequence: UInt64,
        _ body: (UInt64, UnsafeRawBufferPointer) throws(JournalError) -> Void
    ) throws(JournalError) {
        try file.readRecords(after: sequence, body)
    }
    func append(_ records: [JournalRecord]) throws(JournalError) {
        if failing.load(ordering: .relaxed) { throw .io(operation: "write", path: "test", errno: 28) }
        try file.append(records)
    }
    func sync() throws(JournalError) { try file.sync() }
    func writeSnapshot(_ snapshot: JournalSnapshot) throws(JournalError) { try file.writeSnapshot(snapshot) }
    func compact(keepingSnapshots keeping: Int) throws(JournalError) { try file.compact(keepingSnapshots: keeping) }
    func close() { file.close() }
}

/// The `SluiceLifecycleProcess` executable, built beside the test binary (the test target depends on it).
func lifecycleProcessExecutable() throws -> URL {
    let tests =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: tests).deletingLastPathComponent()
    while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
    let url = directory.appendingPathComponent("SluiceLifecycleProcess")
    guard FileManager.default.isExecutableFile(atPath: url.path) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
    }
    return url
}

/// Reads lines from a pipe on a thread of its own, so that a test can wait for one without blocking its executor.
final class LineReader: Sendable {
    private let lines: AsyncStream<String>

    init(_ handle: FileHandle) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        lines = stream
        Thread.detachNewThread {
            var pending = ""
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending += String(decoding: chunk, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    continuation.yield(String(pending[..<newline]))
                    pending = String(pending[pending.index(after: newline)...])
                }
            }
            continuation.finish()
        }
    }

    /// The next line that starts with `prefix`, or `nil` if the pipe closes first.
    func line(startingWith prefix: String) async -> String? {
        for await line in lines where line.hasPrefix(prefix) { return line }
        return nil
    }
}
