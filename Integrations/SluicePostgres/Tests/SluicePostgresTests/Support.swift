import Foundation
import PostgresNIO
import Sluice
import SluiceJournal
import SluicePostgres
import SluicePostgresLedger
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The servers that `scripts/ci.sh` started: the tests run only when its variables are set.
enum TestDatabase {
    static let environment = ProcessInfo.processInfo.environment

    static var available: Bool { environment["SLUICE_PG_PRIMARY"] != nil }

    static func endpoint(_ name: String) -> PostgresEndpoint {
        let value = environment[name] ?? "127.0.0.1:5432"
        let parts = value.split(separator: ":")
        return PostgresEndpoint(host: String(parts[0]), port: Int(parts[1]) ?? 5432)
    }

    static var primary: PostgresEndpoint { endpoint("SLUICE_PG_PRIMARY") }
    static var standby: PostgresEndpoint { endpoint("SLUICE_PG_STANDBY") }

    /// Both servers, primary first: the client finds whichever is the primary.
    static var endpoints: [PostgresEndpoint] { [primary, standby] }

    static func uniqueStoreID(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8))"
    }

    static func configuration(
        _ storeID: String,
        writer: String = "test",
        lease: Duration = .seconds(2),
        acquireWait: Duration = .zero,
        reconnectTimeout: Duration = .seconds(20),
        statementTimeout: Duration = .seconds(10),
        maxBatchCount: Int = 2_000
    ) -> PostgresJournalConfiguration {
        PostgresJournalConfiguration(
            endpoints: endpoints,
            storeID: storeID,
            writerName: writer,
            lease: lease,
            acquireWait: acquireWait,
            reconnectTimeout: reconnectTimeout,
            statementTimeout: statementTimeout,
            maxBatchCount: maxBatchCount
        )
    }

    /// A new connection to `endpoint` (the primary unless told); the caller closes it.
    static func connect(to endpoint: PostgresEndpoint = primary) async throws -> PostgresConnection {
        var configuration = PostgresConnection.Configuration(
            host: endpoint.host,
            port: endpoint.port,
            username: "postgres",
            password: nil,
            database: "postgres",
            tls: .disable
        )
        configuration.options.connectTimeout = .seconds(5)
        return try await PostgresConnection.connect(
            configuration: configuration,
            id: 9_999,
            logger: Logger(label: "sluice.tests")
        )
    }

    /// Runs `body` with a connection to `endpoint` (the primary unless told).
    static func withConnection<T>(
        to endpoint: PostgresEndpoint = primary,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let connection = try await connect(to: endpoint)
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The records of a store (on `endpoint`, the primary unless told): sequence, epoch, payload value (`add(n)`
    /// decoded), in sequence order.
    static func records(
        of storeID: String,
        at endpoint: PostgresEndpoint = primary
    ) async throws -> [(sequence: Int64, epoch: Int64, value: Int)] {
        try await withConnection(to: endpoint) { connection in
            var result: [(Int64, Int64, Int)] = []
            let rows = try await connection.query(
                "SELECT seq, epoch, payload FROM sluice_records WHERE store_id = \(storeID) ORDER BY seq",
                logger: Logger(label: "sluice.tests")
            )
            for try await (sequence, epoch, payload) in rows.decode((Int64, Int64, ByteBuffer).self) {
                var coder = JournalPayloadCoder()
                let bytes = Array(buffer: payload)
                let action = try bytes.withUnsafeBytes { try coder.decode(LedgerAction.self, from: $0) }
                guard case .add(let value) = action else { continue }
                result.append((sequence, epoch, value))
            }
            return result
        }
    }

    /// Runs a PostgreSQL program as the `postgres` user (the servers refuse root).
    @discardableResult
    static func runAsPostgres(_ program: String, _ arguments: [String]) throws -> Int32 {
        let bin = environment["SLUICE_PG_BIN"] ?? "/usr/lib/postgresql/15/bin"
        let process = Process()
        if getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/sbin/runuser")
            process.arguments = ["-u", "postgres", "--", "\(bin)/\(program)"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "\(bin)/\(program)")
            process.arguments = arguments
        }
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The data directory of the server that `SLUICE_PG_PRIMARY` (`primary`) or `SLUICE_PG_STANDBY` names.
    static func directory(_ server: Server) -> String {
        environment[server == .primary ? "SLUICE_PG_PRIMARY_DIR" : "SLUICE_PG_STANDBY_DIR"] ?? ""
    }

    enum Server {
        case primary, standby
    }

    /// Stops a server with `pg_ctl stop -m <mode>` (`fast` ends the sessions, `immediate` is a crash).
    static func stop(_ server: Server, mode: String) throws {
        let status = try runAsPostgres("pg_ctl", ["-D", directory(server), "-m", mode, "-w", "stop"])
        guard status == 0 else { throw HarnessError(description: "pg_ctl stop \(server): exit status \(status)") }
    }

    /// Starts a stopped server and waits until it accepts connections (a primary after its crash recovery).
    ///
    /// Through a shell that closes every descriptor above the standard three first: the server would inherit the
    /// one through which `Process` learns that its child exited, and `waitUntilExit()` would wait for the server.
    static func start(_ server: Server) throws {
        let directory = directory(server)
        let bin = environment["SLUICE_PG_BIN"] ?? "/usr/lib/postgresql/15/bin"
        let command = ["\(bin)/pg_ctl", "-D", directory, "-l", directory + ".log", "-w", "start"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let closeDescriptors = """
            for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done 2>/dev/null
            """
        let run = getuid() == 0 ? "exec runuser -u postgres -- \"$@\"" : "exec \"$@\""
        process.arguments = ["-c", closeDescriptors + "; " + run, "start"] + command
        try process.run()
        process.waitUntilExit()
        let status = process.terminationStatus
        guard status == 0 else { throw HarnessError(description: "pg_ctl start \(server): exit status \(status)") }
    }

    /// Promotes the standby to a primary and waits until it is one.
    static func promoteStandby() throws {
        let status = try runAsPostgres("pg_ctl", ["-D", directory(.standby), "-w", "promote"])
        guard status == 0 else { throw HarnessError(description: "pg_ctl promote: exit status \(status)") }
    }

    /// The sessions on the primary whose `COMMIT` waits for the synchronous standby: process id and transaction id.
    static func commitsWaitingForStandby() async throws -> [(pid: Int32, xid: String)] {
        try await withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT pid, backend_xid::text FROM pg_stat_activity
                WHERE wait_event = 'SyncRep' AND query = 'COMMIT' AND backend_xid IS NOT NULL
                """,
                logger: Logger(label: "sluice.tests")
            )
            var result: [(Int32, String)] = []
            for try await row in rows.decode((Int32, String).self) { result.append(row) }
            return result
        }
    }

    /// Whether the standby streams to the primary as its synchronous standby.
    static func standbyIsSynchronous() async -> Bool {
        let state = try? await withConnection { connection in
            let rows = try await connection.query(
                "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'",
                logger: Logger(label: "sluice.tests")
            )
            var states: [String] = []
            for try await state in rows.decode(String.self) { states.append(state) }
            return states
        }
        return state == ["sync"]
    }
}

/// Polls `condition` (a server's state) until it holds; throws after `timeout`.
func waitUntil(
    _ what: String,
    timeout: Duration = .seconds(30),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if (try? await condition()) == true { return }
        guard ContinuousClock.now < deadline else { throw HarnessError(description: "timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// The outcome of `operation`, or `nil` when it has not ended within `timeout`. For an operation that may never
/// end, even when cancelled: it runs in a task of its own that is left behind rather than awaited, so that such an
/// operation fails the test instead of holding it.
func outcome<Value: Sendable>(
    within timeout: Duration,
    of operation: @escaping @Sendable () async throws -> Value
) async -> Result<Value, any Error>? {
    let result = Locked<Result<Value, any Error>?>(nil)
    let task = Task {
        do {
            let value = try await operation()
            result.withValue { $0 = .success(value) }
        } catch {
            result.withValue { $0 = .failure(error) }
        }
    }
    let deadline = ContinuousClock.now + timeout
    while result.current == nil && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
    task.cancel()
    return result.current
}

/// The outcome of `operation`, a call that blocks its thread, or `nil` when it has not ended within `timeout`. It
/// runs on a thread of its own that is left behind rather than waited for, so that a call that never returns fails
/// the test instead of holding it (or one of the threads that run the tasks).
func blockingOutcome<Value: Sendable>(
    within timeout: Duration,
    of operation: @escaping @Sendable () throws -> Value
) async -> Result<Value, any Error>? {
    let result = Locked<Result<Value, any Error>?>(nil)
    Thread {
        let outcome = Result { try operation() }
        result.withValue { $0 = outcome }
    }.start()
    let deadline = ContinuousClock.now + timeout
    while result.current == nil && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
    return result.current
}

/// A ledger store recovered from `journal`, which journals with `durability`.
func ledgerStore(recoveringFrom journal: Journal, durability: JournalDurability) throws -> Store<Ledger, LedgerAction> {
    try Store<Ledger, LedgerAction>(
        recoveringFrom: journal,
        durability: durability,
        initialState: Ledger(),
        reducer: ledgerReducer
    )
}

/// The state after `add(sequence % 997)` for each sequence 1...count, as the writer process dispatches them.
func sequentialLedger(count: Int) -> Ledger {
    var ledger = Ledger()
    for sequence in stride(from: 1, through: count, by: 1) {
        ledgerReducer.reduce(into: &ledger, .add(sequence % 997))
    }
    return ledger
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
}

/// A thread-safe box.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    var current: Value {
        lock.withLock { value }
    }

    func withValue<T>(_ body: (inout Value) -> T) -> T {
        lock.withLock { body(&value) }
    }
}

/// One run of the writer process (`SluicePostgresWriter`); its output is read by a thread.
final class WriterProcess: Sendable {
    let process: Process
    private let output = Locked<[UInt8]>([])
    private let finished = DispatchSemaphore(value: 0)

    init(storeID: String, name: String, lease: Int, acquireWait: Int, actions: Int = 1_000_000) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.executable())
        let endpoints = TestDatabase.endpoints.map(\.description).joined(separator: ",")
        process.arguments = [endpoints, storeID, name, "\(lease)", "\(acquireWait)", "\(actions)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let reading = pipe.fileHandleForReading
        let output = output
        let finished = finished
        Thread {
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                output.withValue { $0 += data }
            }
            finished.signal()
        }.start()
    }

    /// The complete lines printed so far.
    var lines: [Substring] {
        let text = String(decoding: output.current, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return lines
    }

    /// The acknowledged sequence numbers printed so far.
    var acknowledged: [Int] { lines.compactMap { Int($0) } }

    /// The value of a `key <value>` line.
    func value(of key: String) -> String? {
        lines.first { $0.hasPrefix(key + " ") }.map { String($0.dropFirst(key.count + 1)) }
    }

    /// Waits (bounded) until `condition` holds on this process's output.
    func wait(
        for what: String,
        timeout: Duration = .seconds(30),
        _ condition: (WriterProcess) -> Bool
    ) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(self) {
            guard ContinuousClock.now < deadline else {
                throw HarnessError(description: "timed out waiting for \(what); output: \(lines.suffix(5))")
            }
            usleep(500)
        }
    }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Kills the process and waits until its output is read to the end.
    func killAndWait() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        _ = finished.wait(timeout: .now() + 30)
    }

    /// Waits (bounded) for the process to exit; kills it if it does not.
    func waitForExit(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { usleep(1_000) }
        if process.isRunning {
            killAndWait()
            return nil
        }
        _ = finished.wait(timeout: .now() + 30)
        return process.terminationStatus
    }

    /// The `SluicePostgresWriter` executable next to the test bundle.
    static func executable() throws -> String {
        let starts = CommandLine.arguments + Bundle.allBundles.map(\.bundlePath)
        for start in starts where start.hasPrefix("/") {
            var directory = URL(fileURLWithPath: start).resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("SluicePostgresWriter").path
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                directory.deleteLastPathComponent()
            }
        }
        throw HarnessError(description: "SluicePostgresWriter not found near \(starts)")
    }
}

/// A small seeded generator, so that the kill moments are the same in every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Checks the stream of a store: sequences 1...N without a gap, epochs never decreasing along it.
func checkStream(_ storeID: String) async throws -> [(sequence: Int64, epoch: Int64, value: Int)] {
    let records = try await TestDatabase.records(of: storeID)
    #expect(records.map(\.sequence) == Array(stride(from: Int64(1), through: Int64(records.count), by: 1)))
    for (previous, next) in zip(records, records.dropFirst()) {
        #expect(previous.epoch <= next.epoch, "epoch decreases at \(next.sequence)")
    }
    for record in records {
        #expect(record.value == Int(record.sequence % 997), "record \(record.sequence)")
    }
    return records
}
