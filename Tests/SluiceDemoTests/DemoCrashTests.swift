import Foundation
import Sluice
import SluiceDemoKit
import SluiceJournal
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `sluice-demo` with `--data-dir`, killed for real: SIGKILL after a seeded number of acknowledged orders,
/// three times in a row on one data directory, each run resuming from the last; then a run to the end. Every order
/// the demo acknowledged must be in the recovered state. Also the exit status and message of a data directory that
/// the demo cannot use.
@Suite(.serialized) struct DemoCrashTests {
    static let orders = 6_000

    private static func arguments(_ directory: String, orders: Int = orders) -> [String] {
        ["--data-dir", directory, "--orders", "\(orders)", "--producers", "2", "--quote-every", "50", "--quiet"]
    }

    @Test func everyAcknowledgedOrderSurvivesSIGKILL() async throws {
        let demo = try DemoProcess.executable()
        try await withDataDirectory { directory in
            var random = SeededRandom(seed: 0x5EED_0014)
            var previous: UInt64 = 0
            var kills = 0
            for round in 0..<3 {
                // Kill after 50...449 acknowledged orders (and what the demo did meanwhile; a group commit can
                // acknowledge a few hundred at once): three rounds leave orders to place for the run to the end.
                // A debug build of the demo places a few hundred orders a second on a loaded 2-core machine, so
                // that the whole test stays within a minute or two there.
                let killAfter = 50 + Int(random.next() % 400)
                let run = try DemoProcess(demo, arguments: Self.arguments(directory) + ["--acknowledge"])
                // A group commit can acknowledge thousands at once on a loaded machine, so a run may finish every
                // order before the count is seen: then it exited 0 on its own and is checked the same way.
                let reached = try await run.waitForAcknowledgements(killAfter, thenKill: true)
                if reached {
                    kills += 1
                    #expect(run.wasKilled, "round \(round): the demo was not killed: \(run.output)")
                }
                let acknowledged = run.acknowledgements

                let (state, recovery) = try recoverDemoJournal(directory)
                let lost = acknowledged.filter { state.orders.byID[$0.order] == nil }.map(\.order)
                #expect(
                    lost.count == 0,
                    "round \(round): \(lost.count) acknowledged orders missing after recovery: \(lost.prefix(20))"
                )
                let lastAcknowledged = acknowledged.map(\.sequence).max() ?? 0
                #expect(recovery.lastSequence >= lastAcknowledged, "round \(round)")
                #expect(recovery.lastSequence >= previous, "round \(round)")
                // One journal record per reduced action, and an order book that agrees with the counters.
                #expect(UInt64(state.metrics.actions) == recovery.lastSequence, "round \(round)")
                #expect(state.orders.byID.count == state.orders.placed, "round \(round)")
                print(
                    "demo crash round \(round): \(reached ? "killed" : "finished") after \(acknowledged.count) "
                        + "acknowledged orders; recovered \(recovery.lastSequence) actions, \(state.orders.placed) orders"
                )
                previous = recovery.lastSequence
                if state.orders.placed == Self.orders { break }  // nothing left for another run to do
            }
            #expect(kills >= 1, "no run was killed: each finished every order before its count")

            // A run to the end resumes from the last kill and completes every order.
            let last = try DemoProcess(demo, arguments: Self.arguments(directory))
            #expect(try await last.waitForExit() == 0, "\(last.output)\(last.errorOutput)")
            #expect(last.output.contains("  recovered            \(previous) actions: snapshot at sequence "))
            #expect(last.output.contains("All checks passed."), "\(last.output)")
            let (state, _) = try recoverDemoJournal(directory)
            #expect(state.orders.placed == Self.orders)
            #expect(state.orders.byID.count == Self.orders)
            #expect(state.orders.pending == 0)
        }
    }

    @Test func dataDirectoryOfARunningDemoIsRefused() async throws {
        let demo = try DemoProcess.executable()
        try await withDataDirectory { directory in
            // Ten million orders: still running when the second demo starts.
            let running = try DemoProcess(
                demo,
                arguments: Self.arguments(directory, orders: 10_000_000) + ["--acknowledge"]
            )
            defer { running.killNow() }
            try await running.waitForAcknowledgements(1)
            let second = try DemoProcess(demo, arguments: Self.arguments(directory, orders: 10_000_000))
            #expect(try await second.waitForExit() == 3)
            #expect(
                second.errorOutput.contains("its journal is locked by another running sluice-demo"),
                "\(second.errorOutput)"
            )
            #expect(second.output.isEmpty)
        }
    }

    @Test func unusableDataDirectoryExitsWithStatus3() async throws {
        let demo = try DemoProcess.executable()
        try await withDataDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let file = directory + "/plain-file"
            try Data("x".utf8).write(to: URL(fileURLWithPath: file))
            let unwritable = try DemoProcess(demo, arguments: Self.arguments(file + "/data"))
            #expect(try await unwritable.waitForExit() == 3)
            #expect(
                unwritable.errorOutput.hasPrefix("sluice-demo: cannot use the data directory \(file)/data: mkdir"),
                "\(unwritable.errorOutput)"
            )

            let damaged = directory + "/damaged"
            let (segment, _) = try corruptJournal(in: damaged)
            let corrupt = try DemoProcess(demo, arguments: Self.arguments(damaged))
            #expect(try await corrupt.waitForExit() == 3)
            #expect(
                corrupt.errorOutput.hasPrefix("sluice-demo: cannot resume from the journal in \(damaged): "),
                "\(corrupt.errorOutput)"
            )
            #expect(corrupt.errorOutput.contains(segment), "\(corrupt.errorOutput)")
        }
    }
}

/// A run of the built `sluice-demo`: its standard output is read by a thread as it comes.
final class DemoProcess: Sendable {
    private let process = Process()
    private let outputBytes = Collected<UInt8>()
    private let errorBytes = Collected<UInt8>()
    /// The complete lines on standard output so far (one per acknowledgement while the demo runs with `--quiet`).
    private let outputLines = Collected<Int>()
    private let drained = DispatchGroup()
    /// Signalled when output arrives and when the demo exits: the waits below wake on it, and look again.
    private let changed = DispatchSemaphore(value: 0)

    /// The `sluice-demo` executable in the build folder of the test bundle (the test target depends on it).
    static func executable() throws -> String {
        let starts = CommandLine.arguments.prefix(1) + Bundle.allBundles.map(\.bundlePath)
        for start in starts where start.hasPrefix("/") {
            var folder = URL(fileURLWithPath: start).resolvingSymlinksInPath()
            for _ in 0..<4 {
                folder.deleteLastPathComponent()
                let candidate = folder.appendingPathComponent("sluice-demo").path
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        throw DemoTestError(description: "sluice-demo not found near \(Array(starts))")
    }

    init(_ executable: String, arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.terminationHandler = { [changed] _ in changed.signal() }
        try process.run()
        for (pipe, bytes, lines) in [(output, outputBytes, outputLines), (errors, errorBytes, nil)] {
            let reading = pipe.fileHandleForReading
            drained.enter()
            Thread.detachNewThread { [drained, changed] in
                while true {
                    let data = reading.availableData
                    if data.isEmpty { break }
                    bytes.append(contentsOf: Array(data))
                    lines?.append(contentsOf: [data.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }])
                    changed.signal()
                }
                drained.leave()
            }
        }
    }

    /// Waits (at most ``demoHangGuard``) until the demo printed `count` acknowledgements, then kills it with SIGKILL
    /// when `thenKill` is set (from the waiting thread, so that the kill follows the count closely); the demo is
    /// killed too if the time runs out first. Returns whether the count was reached; `false` when the demo exited 0
    /// before (it had finished its orders).
    ///
    /// Waits on a thread of its own, woken by each read of output and by the demo's exit: a blocked thread of the
    /// cooperative pool (two on two cores) would starve the other suites' async tests, and a task on a busy pool
    /// wakes too late to kill the demo close to the count.
    @discardableResult
    func waitForAcknowledgements(_ count: Int, thenKill: Bool = false) async throws -> Bool {
        try await offThePool { [self] in
            let deadline = DispatchTime.now() + demoHangGuardSeconds
            // Counted as they arrive, so that the kill follows the count closely.
            while outputLines.values.reduce(0, +) < count {
                guard process.isRunning else {
                    process.waitUntilExit()
                    _ = drained.wait(timeout: .now() + 30)
                    // Finished every order before the count: only a failed run is an error.
                    if process.terminationReason == .exit && process.terminationStatus == 0 { return false }
                    throw DemoTestError(
                        description: "the demo exited (\(process.terminationStatus)) after \(acknowledgements.count) "
                            + "of \(count) acknowledgements; \(errorOutput)"
                    )
                }
                guard changed.wait(timeout: deadline) == .success else {
                    killNow()
                    throw DemoTestError(
                        description:
                            "the demo acknowledged \(acknowledgements.count) of \(count) orders; \(errorOutput)"
                    )
                }
            }
            if thenKill { killNow() }
            return true
        }
    }

    /// Kills the demo with SIGKILL (if it still runs) and waits for it and its output.
    func killNow() {
        if process.isRunning {
            sendSIGKILL(to: process.processIdentifier)
        }
        process.waitUntilExit()
        _ = drained.wait(timeout: .now() + 30)
    }

    /// Waits (at most ``demoHangGuard``) for the demo to exit, and returns its exit status; on a thread of its own,
    /// woken as ``waitForAcknowledgements(_:thenKill:)`` is.
    func waitForExit() async throws -> Int32 {
        try await offThePool { [self] in
            let deadline = DispatchTime.now() + demoHangGuardSeconds
            while process.isRunning {
                guard changed.wait(timeout: deadline) == .success else {
                    killNow()
                    throw DemoTestError(description: "the demo did not exit within \(demoHangGuard)")
                }
            }
            process.waitUntilExit()
            _ = drained.wait(timeout: .now() + 30)
            return process.terminationStatus
        }
    }

    /// Whether SIGKILL ended the demo.
    var wasKilled: Bool {
        !process.isRunning && process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }

    /// The acknowledgements on the complete lines of the output so far (a line cut short by the kill is none).
    var acknowledgements: [DemoAcknowledgement] {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return lines.compactMap { DemoAcknowledgement(line: $0) }
    }

    var output: String {
        String(decoding: outputBytes.values, as: UTF8.self)
    }

    var errorOutput: String {
        String(decoding: errorBytes.values, as: UTF8.self)
    }
}

private func sendSIGKILL(to process: Int32) {
    kill(process, SIGKILL)
}

/// xorshift64*: seeded, so that the kill moments are the same in every run of the test.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed == 0 ? 1 : seed
    }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
