import Foundation
import Sluice
import SluiceJournal
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Kills a journaling process (`sluice-journal-crash`) with SIGKILL at seeded random moments, recovers, and checks
/// that nothing it acknowledged was lost and that the recovered state is the sequential replay of its actions.
@Suite(.serialized) struct JournalCrashTests {
    @Test(arguments: ["every", "group"])
    func everyAcknowledgedActionSurvivesSIGKILL(mode: String) async throws {
        let executable = try Self.crashExecutable()
        try await withTemporaryDirectory { directory in
            var random = SplitMix64(seed: mode == "every" ? 14 : 1414)
            var previousCount = 0
            for round in 0..<20 {
                let delay = UInt32(random.next() % 60_000)
                let run = try KilledRun(executable: executable, arguments: [directory + "/journal", mode])
                // It blocks while it waits: on a thread of its own, not one of the two of the cooperative pool.
                try await onThread { Result { try run.killAfterFirstAcknowledgement(plus: delay) } }.get()
                let acknowledged = run.acknowledgedSequences()
                #expect(!acknowledged.isEmpty, "round \(round): nothing acknowledged")
                // Each run resumes where the last recovery ended: its first acknowledgement continues the sequence.
                #expect(acknowledged.first.map { $0 > previousCount } ?? false, "round \(round)")
                #expect(acknowledged == Array(acknowledged.sorted()), "round \(round)")

                let recovered = try recoverLedger(from: directory + "/journal")
                let count = recovered.state.count
                #expect(
                    count >= acknowledged.last ?? 0,
                    "round \(round): acknowledged \(acknowledged.last ?? 0), recovered \(count)"
                )
                #expect(count >= previousCount, "round \(round)")
                #expect(recovered.state == ledger(after: (0..<count).map { ($0 + 1) % 997 }))
                #expect(recovered.recovery.lastSequence == UInt64(count))
                print("crash test \(mode) round \(round): acknowledged \(acknowledged.count), recovered \(count)")
                previousCount = count
            }
        }
    }

    /// The `sluice-journal-crash` executable in the build folder of the test bundle.
    ///
    /// On Linux the test process is the bundle (`CommandLine.arguments[0]`); on macOS a runner loads the
    /// `.xctest` bundle, which is one of `Bundle.allBundles` (or named in the runner's arguments).
    static func crashExecutable() throws -> String {
        let starts = CommandLine.arguments + Bundle.allBundles.map(\.bundlePath)
        for start in starts where start.hasPrefix("/") {
            var directory = URL(fileURLWithPath: start).resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("sluice-journal-crash").path
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                directory.deleteLastPathComponent()
            }
        }
        throw CrashTestError(description: "sluice-journal-crash not found near \(starts)")
    }
}

struct CrashTestError: Error, CustomStringConvertible {
    var description: String
}

/// One run of the crash process: its acknowledgements are read from its standard output by a thread.
final class KilledRun: Sendable {
    private let process: Process
    private let output = Locked<[UInt8]>([])
    private let finished = DispatchSemaphore(value: 0)
    /// Signalled when output arrives and when the process exits: ``killAfterFirstAcknowledgement(plus:)`` wakes on
    /// it, and looks again.
    private let changed = DispatchSemaphore(value: 0)

    init(executable: String, arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.terminationHandler = { [changed] _ in changed.signal() }
        try process.run()
        let reading = pipe.fileHandleForReading
        let output = output
        let finished = finished
        let changed = changed
        let thread = Thread {
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                output.withValue { $0 += data }
                changed.signal()
            }
            finished.signal()
        }
        thread.start()
    }

    /// Waits (at most the hang guard) until the process acknowledged an action, lets `microseconds` of real time
    /// pass (the moment of the kill is what the test varies), then kills it.
    func killAfterFirstAcknowledgement(plus microseconds: UInt32) throws {
        let deadline = DispatchTime.now() + hangGuardSeconds
        while !output.current.contains(UInt8(ascii: "\n")) {
            guard process.isRunning, changed.wait(timeout: deadline) == .success else {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                throw CrashTestError(
                    description: "the crash process acknowledged nothing (running: \(process.isRunning))"
                )
            }
        }
        usleep(microseconds)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        _ = finished.wait(timeout: .now() + 30)
    }

    /// The sequence numbers on the complete lines of the output (a line the kill cut short is not an
    /// acknowledgement).
    func acknowledgedSequences() -> [Int] {
        let text = String(decoding: output.current, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the last newline: empty or cut short
        return lines.compactMap { Int($0) }
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
