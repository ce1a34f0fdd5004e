import Foundation
import Sluice
import SluiceDemoKit
import SluiceJournal
import Testing

/// `--data-dir`: the demo journals its actions, resumes from its journal, and refuses a directory it cannot use
/// with a clear error.
@Suite struct DemoJournalTests {
    /// One producer and no quote lookups make the demo deterministic: each order is placed, then decided by the
    /// fulfilment effect (and restocked by the reorder effect) inside its own dispatch.
    private func deterministic(orders: Int, in directory: String?) -> DemoOptions {
        DemoOptions(orders: orders, producers: 1, quoteEvery: 10_000_000, quiet: true, dataDirectory: directory)
    }

    /// A run of 600 orders, then a run of 1,000 on the same data directory: the second recovers the first's
    /// actions, places only orders 601...1000, and ends in exactly the state of one uninterrupted run of 1,000.
    @Test func resumedRunEqualsOneUninterruptedRun() async throws {
        try await withDataDirectory { directory in
            let first = try await runDemoOffThePool(deterministic(orders: 600, in: directory))
            #expect(first.passed, "\(first.report)")
            #expect(first.journal?.recovery.lastSequence == 0)
            #expect(first.journal?.lastSequence == UInt64(first.finalState.metrics.actions))
            #expect(first.report.contains("recovered            0 actions (a new journal)"))

            let second = try await runDemoOffThePool(deterministic(orders: 1_000, in: directory))
            #expect(second.passed, "\(second.report)")
            let journal = try #require(second.journal)
            let recovery = journal.recovery
            #expect(recovery.lastSequence == UInt64(first.finalState.metrics.actions))
            #expect(recovery.snapshotSequence + UInt64(recovery.replayedActions) == recovery.lastSequence)
            #expect(journal.ordersAlreadyPlaced == 600)
            #expect(journal.resumedOrders == 0)
            #expect(!journal.resumedQuote)
            #expect(second.dispatches == 400)
            #expect(
                second.report.contains(
                    "recovered            \(recovery.lastSequence) actions: snapshot at sequence "
                        + "\(recovery.snapshotSequence), then \(recovery.replayedActions) replayed"
                ),
                "\(second.report)"
            )

            let uninterrupted = try await runDemoOffThePool(deterministic(orders: 1_000, in: nil))
            #expect(uninterrupted.passed, "\(uninterrupted.report)")
            #expect(second.finalState == uninterrupted.finalState)
            #expect(second.finalState.orders.byID.count == 1_000)
        }
    }

    /// With four producers, the quote lookups and every effect on, a resumed run still passes every check, and
    /// the journal's own check (a fresh recovery equals the final state) is among them.
    @Test func resumedRunWithEveryModulePassesEveryCheck() async throws {
        try await withDataDirectory { directory in
            let options = DemoOptions(orders: 2_000, producers: 4, quoteEvery: 20, quiet: true)
            var first = options
            first.dataDirectory = directory
            let firstRun = try await runDemoOffThePool(first)
            #expect(firstRun.passed, "\(firstRun.report)")
            var second = first
            second.orders = 4_000
            let secondRun = try await runDemoOffThePool(second)
            #expect(secondRun.passed, "\(secondRun.report)")
            #expect(secondRun.checks.map(\.name).contains("journal recovers the final state"))
            #expect(secondRun.checks.count == 6)
            #expect(secondRun.journal?.recovery.lastSequence == UInt64(firstRun.finalState.metrics.actions))
            #expect(secondRun.finalState.orders.placed == 4_000)
        }
    }

    /// A journal that already holds every order: the run recovers, places nothing, and keeps the state.
    @Test func finishedJournalLeavesNothingToPlace() async throws {
        try await withDataDirectory { directory in
            let first = try await runDemoOffThePool(deterministic(orders: 300, in: directory))
            let again = try await runDemoOffThePool(deterministic(orders: 300, in: directory))
            #expect(again.passed, "\(again.report)")
            #expect(again.dispatches == 0)
            #expect(again.finalState == first.finalState)
            #expect(again.report.contains("throughput           no orders left to place"))
            #expect(again.journal?.lastSequence == again.journal?.recovery.lastSequence)
        }
    }

    /// `--acknowledge` acknowledges every placed order once, with a sequence number the journal made durable.
    @Test func acknowledgesEveryPlacedOrderOnce() async throws {
        try await withDataDirectory { directory in
            let acknowledged = Collected<DemoAcknowledgement>()
            var options = DemoOptions(orders: 1_000, producers: 4, quiet: true, dataDirectory: directory)
            options.acknowledge = true
            let summary = try await runDemoOffThePool(options) { batch in
                acknowledged.append(contentsOf: batch)
            }
            #expect(summary.passed, "\(summary.report)")
            let acknowledgements = acknowledged.values
            #expect(acknowledgements.map(\.order).sorted() == Array(1...1_000))
            let last = try #require(summary.journal?.lastSequence)
            #expect(acknowledgements.allSatisfy { $0.sequence >= 1 && $0.sequence <= last })
            #expect(summary.journal?.acknowledgedOrders == 1_000)
            #expect(DemoAcknowledgement(line: "ack 12 345") == DemoAcknowledgement(order: 12, sequence: 345))
            #expect(DemoAcknowledgement(line: "ack 12 34") != DemoAcknowledgement(order: 12, sequence: 345))
            #expect(DemoAcknowledgement(line: "ack 12") == nil)
        }
    }

    @Test func unwritableDirectoryIsAClearError() async throws {
        try await withDataDirectory { directory in
            // A directory inside a regular file: mkdir fails with ENOTDIR, also for root.
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let file = directory + "/plain-file"
            try Data("x".utf8).write(to: URL(fileURLWithPath: file))
            let error = await #expect(throws: DemoError.self) {
                try await runDemoOffThePool(deterministic(orders: 10, in: file + "/data"))
            }
            let message = error?.description ?? ""
            #expect(message.hasPrefix("cannot use the data directory \(file)/data: mkdir failed"), "\(message)")
            #expect(message.contains("Not a directory"), "\(message)")
        }
    }

    /// A directory whose journal another journal holds (here one in this process; another running demo in
    /// `DemoCrashTests`) is refused, and usable again once that journal is closed.
    @Test func lockedDirectoryIsAClearError() async throws {
        try await withDataDirectory { directory in
            let holder = try Journal(directory: directory)
            let error = await #expect(throws: DemoError.self) {
                try await runDemoOffThePool(deterministic(orders: 10, in: directory))
            }
            #expect(
                error?.description
                    == "cannot use the data directory \(directory): its journal is locked by another running "
                    + "sluice-demo (or another process that opened it); wait for it to end, or use another --data-dir"
            )
            holder.close()
            let summary = try await runDemoOffThePool(deterministic(orders: 10, in: directory))
            #expect(summary.passed, "\(summary.report)")
        }
    }

    /// A damaged record in the middle of the journal stops the run with the file and offset, and leaves the
    /// journal as it was.
    @Test func corruptJournalIsAClearError() async throws {
        try await withDataDirectory { directory in
            let (segment, bytes) = try corruptJournal(in: directory)
            let error = await #expect(throws: DemoError.self) {
                try await runDemoOffThePool(deterministic(orders: 100, in: directory))
            }
            let message = error?.description ?? ""
            #expect(message.hasPrefix("cannot resume from the journal in \(directory): "), "\(message)")
            #expect(message.contains(segment), "\(message)")
            #expect(message.contains("The journal was left as it is"), "\(message)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + segment)) == bytes)
        }
    }

    /// A journal with more orders than `--orders` asks for a larger `--orders` instead of reporting a failed check.
    @Test func journalWithMoreOrdersThanRequestedIsAClearError() async throws {
        try await withDataDirectory { directory in
            _ = try await runDemoOffThePool(deterministic(orders: 50, in: directory))
            let error = await #expect(throws: DemoError.self) {
                try await runDemoOffThePool(deterministic(orders: 20, in: directory))
            }
            #expect(
                error?.description
                    == "the journal in \(directory) holds orders up to #50; pass --orders 50 or more to resume it, "
                    + "or use another --data-dir"
            )
        }
    }
}
