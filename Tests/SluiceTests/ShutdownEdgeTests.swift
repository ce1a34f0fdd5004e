import Dispatch
import Foundation
import SluiceJournal
import SluiceTesting
import Testing

@testable import Sluice

/// The edges of `shutdown(timeout:)` that attacks found: a timeout too long for a sleep, and modifiers whose interval
/// never passes, whose owed runs only shutdown can run.
@Suite struct ShutdownEdgeTests {
    /// A timeout as long as `.seconds(Int64.max)` (or longer than a 64-bit count of nanoseconds holds) waits for
    /// the running task and returns when it ends.
    @Test(arguments: [Duration.seconds(Int64.max), .seconds(Int64.max / 1_000_000_000 + 1), .seconds(86_400 * 365)])
    func aTimeoutTooLongForASleepWaitsForTheTask(timeout: Duration) async {
        let store = Store<TestState, TestAction>(initialState: TestState(), reducer: testReducer)
        let release = AsyncGate()
        let finished = Locked(0)
        store.start { _ in
            await release.wait()
            finished.withValue { $0 += 1 }
        }
        async let shutdown = store.shutdown(timeout: timeout)
        #expect(await waitUntil { store.core.isRefusingDispatches })
        release.open()
        let report = await shutdown
        #expect(finished.current == 1)
        #expect(report == ShutdownReport(flushedRuns: 0, finishedTasks: 1, cancelledTasks: 0, refusedDispatches: 0))
    }

    // MARK: Intervals that never pass

    /// A debounce whose quiet time never passes holds the last action's run until shutdown, which runs it.
    @Test(arguments: [nil, Duration.seconds(Int64.max)], [RunPlacement.onScheduler, .inDispatch])
    func aDebounceThatNeverPassesRunsAtShutdown(maxWait: Duration?, placement: RunPlacement) async {
        let harness = EffectHarness {
            Middlewares.debounce(.seconds(Int64.max), maxWait: maxWait, runs: placement, on: $0, $1)
        }
        harness.play([0, 10, 20], flush: 0)
        harness.scheduler.advance(by: .seconds(86_400 * 365))
        #expect(harness.recorded.isEmpty)
        let report = await harness.store.shutdown(timeout: hangGuard)
        #expect(harness.recorded.map(\.value) == [20])
        #expect(report.flushedRuns == 1)
    }

    /// A delay that never passes queues its runs until shutdown, which runs them in order.
    @Test(arguments: [RunPlacement.onScheduler, .inDispatch])
    func aDelayThatNeverPassesRunsAtShutdown(placement: RunPlacement) async {
        let harness = EffectHarness { Middlewares.delay(.seconds(Int64.max), runs: placement, on: $0, $1) }
        harness.play([0, 10, 20, 30, 40], flush: 0)
        harness.scheduler.advance(by: .seconds(86_400 * 365))
        #expect(harness.recorded.isEmpty)
        #expect(harness.scheduler.pendingWorkCount == 0)
        let report = await harness.store.shutdown(timeout: hangGuard)
        #expect(harness.recorded.map(\.value) == [0, 10, 20, 30, 40])
        #expect(report.flushedRuns == 5)
    }

    /// A delay whose deadlines pass the end of `DispatchTime` partway through: the earlier runs run on time, the
    /// later ones at shutdown, all in order.
    @Test func aDelayThatStopsPassingKeepsItsOrder() async {
        // 2⁶³ ns: the deadline of an action at 0 is before `distantFuture`, of one a few seconds later past it.
        let interval = Duration.nanoseconds(Int64.max) - .seconds(1)
        let harness = EffectHarness { Middlewares.delay(interval, on: $0, $1) }
        harness.play([0], flush: 0)
        harness.scheduler.advance(by: .seconds(5))
        harness.play([5000], flush: 0)
        let report = await harness.store.shutdown(timeout: hangGuard)
        #expect(harness.recorded.map(\.value) == [0, 5000])
        #expect(report.flushedRuns == 2)
    }

    /// `Middlewares.snapshot` with a debounce that never passes writes the final snapshot at shutdown.
    @Test func aSnapshotThatNeverPassesIsWrittenAtShutdown() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try Store<LedgerState, LedgerAction>(
                recoveringFrom: journal,
                durability: .everyAction,
                initialState: LedgerState(),
                reducer: ledgerReducer,
                middleware: [Middleware(Middlewares.snapshot(to: journal, debounce: .seconds(Int64.max)))]
            )
            store.dispatch(.add(1))
            store.dispatch(.add(2))
            #expect(try journal.storage.snapshotSequences().isEmpty)
            let report = await store.shutdown(timeout: hangGuard)
            #expect(report.flushedRuns == 1)
            #expect(try journal.storage.snapshotSequences() == [2])
            journal.close()
        }
    }
}
