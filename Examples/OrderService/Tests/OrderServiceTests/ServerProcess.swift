import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `OrderService` executable, started as a process of its own.
///
/// `@unchecked Sendable`: `process` is configured before `run()` and afterwards only read (its pid, its status).
final class ServerProcess: @unchecked Sendable {
    private let process = Process()
    private let output = Pipe()
    private let exit: AsyncStream<Void>

    /// Starts `OrderService` with `arguments`.
    init(arguments: [String]) throws {
        process.executableURL = try Self.executable()
        process.arguments = arguments
        process.standardOutput = output
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        exit = stream
        process.terminationHandler = { _ in continuation.finish() }
        try process.run()
    }

    /// The executable, built beside the test bundle (the test target depends on it).
    static func executable() throws -> URL {
        let tests =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: tests).deletingLastPathComponent()
        // On Darwin the test binary is inside `<name>.xctest/Contents/MacOS`.
        while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
        let url = directory.appendingPathComponent("OrderService")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw ServerProcessError("no OrderService executable at \(url.path); run `swift build` first")
        }
        return url
    }

    /// The port from the line that the server prints once it listens, or an error if it exits first.
    func port() async throws -> Int {
        let handle = output.fileHandleForReading
        let line: String? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var text = ""
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty {
                        continuation.resume(returning: nil)
                        return
                    }
                    text += String(decoding: chunk, as: UTF8.self)
                    if let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }) {
                        continuation.resume(returning: String(line))
                        return
                    }
                }
            }
        }
        // "OrderService listening on 127.0.0.1:PORT backend=sluice"
        guard let line, let address = line.split(separator: " ").first(where: { $0.contains(":") }),
            let port = address.split(separator: ":").last.flatMap({ Int($0) })
        else {
            throw ServerProcessError("the server exited before it listened")
        }
        return port
    }

    /// Sends SIGTERM.
    func terminate() {
        kill(process.processIdentifier, SIGTERM)
    }

    /// Waits for the process to exit; returns its exit status, or `nil` if a signal ended it.
    func waitForExit() async -> Int32? {
        for await _ in exit {}
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

struct ServerProcessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A new empty directory, removed after `body`.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("order-service-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url.path)
}
