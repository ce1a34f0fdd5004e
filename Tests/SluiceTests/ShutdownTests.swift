import Dispatch
import Foundation
import SluiceTesting
import Testing

@testable import Sluice

/// `store.shutdown(timeout:)`: refuses new actions, runs owed runs now, awaits running tasks up to the timeout,
/// then cancels what is left. The rules on virtual time where time matters to the modifiers; the waiting on real
/// tasks, with bounded waits.
@Suite struct ShutdownTests {
    private func store(
        _ middleware: [Middleware<TestState, TestAction>] = []
    ) -> Store<TestState, TestAction> {
        Store(initialState: TestState(), reducer: testReducer, middleware: middleware)
    }

    // MARK: Refusing

    /// Shutdown returns after the last logged line: a line is written after the pipeline is free again, and
    /// shutdown waits for it as it waits for a dispatch in progress.
    @Test func shutdownWaitsForALineBeingWritten() async throws {
        let sinkEntered = AsyncGate()
        let shutdownWaits = Locked(false)
        let events = Locked<[String]>([])
        let store = storeWritingLines { _, _ in
            sinkEntered.open()
            _ = shutdownWaits.waitBlocking { $0 }
            events.append("line written")
        }
        async let dispatched: Void = onThread { store.dispatch(.increment) }
        await sinkEntered.wait()
        let shutdown = Task {
            let report = await store.shutdown(timeout: hangGuard)
            events.append("shutdown returned")
            return report
        }
        try await poll("shutdown waiting for the pipeline") { store.core.work.isWaitingForPipelineIdle }
        shutdownWaits.withValue { $0 = true }
        await dispatched
        _ = await shutdown.value
        #expect(events.current == ["line written", "shutdown returned"])
    }

    /// A middleware before the logger may call `next` later, from another thread (rule 5): the line of that action
    /// is written by that thread, which no longer owns the pipeline when the logger gets it back.
    @Test func aLineWhoseActionWentOnFromAnotherThreadIsWritten() async {
        let lines = Locked<[String]>([])
        let later = DispatchQueue(label: "later")
        let deferring = Middleware<TestState, TestAction> { _ in
            { next in
                { action in
                    if action == .add(1) {
                        later.async { next(action) }
                    } else {
                        next(action)
                    }
                }
            }
        }
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [deferring, Middlewares.logging(sink: { lines.append($0) }, clock: { 0 })]
        )
        store.dispatch(.add(1))
        #expect(await lines.wait { $0.count == 1 })
        store.dispatch(.add(2))
        #expect(lines.current.map { $0.prefix { $0 != " " } } == ["add(1)", "add(2)"])
        #expect(store.state.count == 3)
    }

    @Test func dispatchesAfterShutdownAreRefusedAndCounted() async {
        let apiBox = Locked<MiddlewareAPI<TestState, TestAction>?>(nil)
        let store = store([
            savingAPI(into: apiBox)
        ])
        store.dispatch(.increment)
        let report = await store.shutdown(timeout: hangGuard)
        store.dispatch(.increment)
        #expect(apiBox.current?.dispatch(.increment) == false)
        #expect(store.state.count == 1)
        #expect(report.refusedDispatches == 0)
        #expect(store.statistics.refusedDispatches == 2)
        #expect(apiBox.current?.isCancelled == true)
    }

    @Test func sendsAfterShutdownAreRefusedAndCounted() async {
        let apiBox = Locked<MiddlewareAPI<TestState, TestAction>?>(nil)
        let withMiddleware = store([
            savingAPI(into: apiBox)
        ])
        let plain = store()
        await withMiddleware.send(.increment)
        await plain.send(.increment)
        _ = await withMiddleware.shutdown(timeout: hangGuard)
        _ = await plain.shutdown(timeout: hangGuard)
        #expect(await withMiddleware.send(.increment).isAccepted == false)
        #expect(await apiBox.current?.send(.increment).isAccepted == false)
        #expect(await withMiddleware.scope(\.count).send(.increment).isAccepted == false)
        #expect(await plain.send(.increment).isAccepted == false)  // the no-middleware fast path too
        #expect(withMiddleware.state.count == 1)
        #expect(plain.state.count == 1)
        #expect(withMiddleware.statistics.refusedDispatches == 3)
        #expect(plain.statistics.refusedDispatches == 1)
        #expect(withMiddleware.statistics.refusedDispatches == 3)
        #expect(plain.statistics.refusedDispatches == 1)
    }

    @Test func dispatchesOfAwaitedWorkAreRefusedToo() async {
        let gate = AsyncGate()
        let answers = Locked<[Bool]>([])
        let store = store()
        store.start { api in
            await gate.wait()
            answers.append(api.dispatch(.increment))
        }
        async let report = store.shutdown(timeout: hangGuard)
        #expect(await refusing(store))
        #expect(store.dispatch(.noop) == false)
        gate.open()
        let finished = await report
        #expect(answers.current == [false])
        #expect(finished.refusedDispatches == 2)
        #expect(finished.finishedTasks == 1)
        #expect(store.state.count == 0)
    }

    @Test func concurrentDispatchesAreEitherAcceptedOrRefusedNeverLost() async {
        for _ in 0..<10 {
            let apiBox = Locked<MiddlewareAPI<TestState, TestAction>?>(nil)
            let store = store([
                savingAPI(into: apiBox)
            ])
            let api = apiBox.current!
            let accepted = Locked(0)
            let started = AsyncGate()
            let finished = AsyncGate()
            // Threads of their own, so that no thread of the task pool blocks while they dispatch.
            Thread.detachNewThread {
                runOnThreadsBlocking(4) { _ in
                    started.open()
                    for _ in 0..<500 where api.dispatch(.increment) {
                        accepted.withValue { $0 += 1 }
                    }
                }
                finished.open()
            }
            await started.wait()
            let report = await store.shutdown(timeout: hangGuard)
            await finished.wait()
            #expect(store.state.count == accepted.current)
            #expect(accepted.current + store.statistics.refusedDispatches == 4 * 500)
            #expect(report.refusedDispatches <= store.statistics.refusedDispatches)
        }
    }

    // MARK: Owed runs (virtual time: the scheduler never advances, so only shutdown can run them)

    @Test func theOwedTrailingThrottleRunRunsNowWithTheLastAction() async {
        let harness = EffectHarness { Middlewares.throttle(.seconds(1), latest: true, runs: .inDispatch, on: $0, $1) }
        for value in 1...5 {
            harness.store.dispatch(.add(value))
        }
        #expect(harness.recorded == runs([(1, 0)]))
        let report = await harness.store.shutdown(timeout: hangGuard)
        #expect(harness.recorded == runs([(1, 0), (5, 0)]))
        #expect(report.flushedRuns == 1)
        #expect(harness.scheduler.pendingWorkCount == 0)
        harness.scheduler.advance(by: .seconds(10))
        #expect(harness.recorded == runs([(1, 0), (5, 0)]))
    }

    @Test func thePendingDebounceRunRunsNow() async {
        let harness = EffectHarness { Middlewares.debounce(.seconds(1), maxWait: .seconds(5), on: $0, $1) }
        harness.play([0, 10, 20], flush: 0)
        let report = await harness.store.shutdown(timeout: hangGuard)
        #expect(harness.recorded == runs([(20, 20)]))
        #expect(report.flushedRuns == 1)
    }

    @Test func pendingDelayRunsRunNowInOrder() async {
        let harness = EffectHarness { Middlewares.delay(.seconds(1), on: $0, $1) }
        harness.play([0, 10, 20], flush: 0)
        let report = await harness.store.shutdown(timeout: hangGuard)
        #expect(harness.recorded == runs([(0, 20), (10, 20), (20, 20)]))
        #expect(report.flushedRuns == 3)
    }

    @Test func aRunHandedToTheSchedulerRunsNow() async {
        let harness = EffectHarness { Middlewares.throttle(.seconds(1), runs: .onScheduler, on: $0, $1) }
        harness.store.dispatch(.add(1))
        #expect(harness.recorded.isEmpty)
        _ = await harness.store.shutdown(timeout: hangGuard)
        #expect(harness.recorded == runs([(1, 0)]))
        harness.scheduler.advance(by: .seconds(1))  // the handed-off drain finds nothing left
        #expect(harness.recorded == runs([(1, 0)]))
    }

    /// The timeout passes while another thread performs a `delay`'s first run (store-wide, or of one key): the two
    /// runs queued behind it cannot run in order before shutdown returns, so they are dropped with the modifier, and
    /// the report says so.
    @Test(arguments: [false, true])
    func runsQueuedBehindABlockedRunAreDroppedAtTheTimeoutAndCounted(perKey: Bool) async {
        let scheduler = TestScheduler()
        let firstRunEntered = AsyncGate()
        let released = Locked(false)
        let ran = Locked<[Int]>([])
        let effect = SideEffect<TestState, TestAction> { action, _ in
            guard case .add(let value) = action else { return }
            if value == 1 {
                firstRunEntered.open()
                _ = released.waitBlocking { $0 }
            }
            ran.append(value)
        }
        let store = store([
            Middleware(
                perKey
                    ? Middlewares.delay(.seconds(1), on: scheduler, by: { _ in 0 }, effect)
                    : Middlewares.delay(.seconds(1), on: scheduler, effect)
            )
        ])
        for value in 1...3 {
            store.dispatch(.add(value))
        }
        // The timer fires on this thread, which performs run 1 and blocks in it, runs 2 and 3 queued behind it.
        async let advanced: Void = onThread { scheduler.advance(by: .seconds(1)) }
        await firstRunEntered.wait()
        let report = await store.shutdown(timeout: .milliseconds(50))
        released.withValue { $0 = true }
        await advanced
        #expect(ran.current == [1])
        #expect(report.droppedRuns == 2)
        #expect(report.flushedRuns == 0)
    }

    /// The same on a real queue: the delay's timer fires on a `DispatchQueueScheduler`, whose thread performs run 1
    /// and blocks in it, runs 2 and 3 owed or queued behind it.
    @Test(arguments: [false, true])
    func runsBehindABlockedRunOnARealQueueAreDroppedAtTheTimeoutAndCounted(perKey: Bool) async {
        let scheduler = DispatchQueueScheduler(queue: DispatchQueue(label: "blocked-delay"))
        let firstRunEntered = AsyncGate()
        let released = Locked(false)
        let ran = Locked<[Int]>([])
        let effect = SideEffect<TestState, TestAction> { action, _ in
            guard case .add(let value) = action else { return }
            if value == 1 {
                firstRunEntered.open()
                _ = released.waitBlocking { $0 }
            }
            ran.append(value)
        }
        let store = store([
            Middleware(
                perKey
                    ? Middlewares.delay(.milliseconds(1), on: scheduler, by: { _ in 0 }, effect)
                    : Middlewares.delay(.milliseconds(1), on: scheduler, effect)
            )
        ])
        for value in 1...3 {
            store.dispatch(.add(value))
        }
        await firstRunEntered.wait()
        let report = await store.shutdown(timeout: .milliseconds(50))
        released.withValue { $0 = true }
        #expect(report.droppedRuns == 2)
        // The queue's thread finds nothing more to perform once its run returns.
        #expect(await ran.wait { $0 == [1] })
        scheduler.queue.sync {}
        #expect(ran.current == [1])
    }

    /// A shutdown that does not time out drops nothing.
    @Test func aShutdownInTimeDropsNoRun() async {
        let harness = EffectHarness { Middlewares.delay(.seconds(1), on: $0, $1) }
        harness.play([0, 10, 20], flush: 0)
        let report = await harness.store.shutdown(timeout: hangGuard)
        #expect(report.flushedRuns == 3)
        #expect(report.droppedRuns == 0)
    }

    @Test func freeingAStoreWithoutShutdownDropsOwedRuns() {
        let scheduler = TestScheduler()
        let ran = Locked<[Int]>([])
        var store: Store<TestState, TestAction>? = store([
            Middleware(
                Middlewares.throttle(.seconds(1), latest: true, runs: .inDispatch, on: scheduler) { action, _ in
                    if case .add(let value) = action { ran.append(value) }
                }
            )
        ])
        store?.dispatch(.add(1))
        store?.dispatch(.add(2))
        store = nil
        scheduler.advance(by: .seconds(5))
        #expect(ran.current == [1])
    }

    @Test func anOwedRunOnARealQueueRunsBeforeShutdownReturns() async {
        let written = Locked<[Int]>([])
        let store = store([
            Middleware(
                Middlewares.debounce(.seconds(30), maxWait: .seconds(60)) { action, _ in
                    if case .add(let value) = action { written.append(value) }
                }
            )
        ])
        for value in 1...100 {
            store.dispatch(.add(value))
        }
        let report = await store.shutdown(timeout: hangGuard)
        #expect(written.current == [100])
        #expect(report.flushedRuns == 1)
    }

    @Test func anAsyncEffectStartedByAnOwedRunIsAwaited() async {
        let finished = Locked(0)
        let started = AsyncGate()
        let release = AsyncGate()
        let harness = EffectHarness { scheduler, _ in
            Middlewares.debounce(
                .seconds(1),
                on: scheduler,
                SideEffect<TestState, TestAction> { _, _ in
                    started.open()
                    await release.wait()
                    finished.withValue { $0 += 1 }
                }
            )
        }
        harness.store.dispatch(.increment)
        async let shutdown = harness.store.shutdown(timeout: hangGuard)
        await started.wait()  // the owed run started the effect, and shutdown waits for it
        release.open()
        let report = await shutdown
        #expect(finished.current == 1)
        #expect(report.flushedRuns == 1)
        #expect(report.finishedTasks == 1)
        #expect(report.cancelledTasks == 0)
    }

    // MARK: Running tasks (real tasks, bounded waits)

    @Test func effectsThatFinishInTimeAreAwaited() async {
        let finished = Locked(0)
        let release = AsyncGate()
        let store = store([
            Middleware(
                SideEffect<TestState, TestAction> { _, _ in
                    await release.wait()
                    finished.withValue { $0 += 1 }
                }
            )
        ])
        store.dispatch(.increment)
        store.dispatch(.increment)
        store.start { _ in
            await release.wait()
            finished.withValue { $0 += 1 }
        }
        let clock = ContinuousClock()
        let start = clock.now
        let timeout = hangGuard * 2
        async let shutdown = store.shutdown(timeout: timeout)
        #expect(await refusing(store))
        release.open()  // the work ends while shutdown waits for it
        let report = await shutdown
        // Returned when the work was done: a shutdown that waited for its timeout returns after it.
        #expect(clock.now - start < timeout)
        #expect(finished.current == 3)
        #expect(report == ShutdownReport(flushedRuns: 0, finishedTasks: 3, cancelledTasks: 0, refusedDispatches: 0))
    }

    @Test func effectsThatIgnoreCancellationAreCancelledAtTheTimeout() async throws {
        let release = AsyncGate()
        let sawCancellation = Locked<[Bool]>([])
        let store = store([
            Middleware(
                SideEffect<TestState, TestAction> { _, _ in
                    await release.wait()  // ignores cancellation
                    sawCancellation.append(Task.isCancelled)
                }
            )
        ])
        store.dispatch(.increment)
        let effect = store.start { api in
            await release.wait()
            sawCancellation.append(Task.isCancelled)
            return api.isCancelled
        }
        let report = await store.shutdown(timeout: .milliseconds(50))
        #expect(report.cancelledTasks == 2)
        #expect(report.finishedTasks == 0)
        release.open()
        #expect(try await effect.value == true)
        #expect(await sawCancellation.wait { $0.count == 2 })
        #expect(sawCancellation.current == [true, true])
    }

    @Test func cancellingTheTaskThatCallsShutdownStopsTheWait() async {
        let release = AsyncGate()
        let store = store()
        store.start { _ in await release.wait() }  // ignores cancellation
        let caller = Task { await store.shutdown(timeout: hangGuard * 2) }
        #expect(await refusing(store))
        caller.cancel()
        let clock = ContinuousClock()
        let start = clock.now
        let report = await caller.value
        #expect(clock.now - start < hangGuard)
        #expect(report.cancelledTasks == 1)
        release.open()
    }

    @Test func effectsStartedAfterShutdownStartCancelled() async {
        let store = store()
        _ = await store.shutdown(timeout: .zero)
        let task = store.start { _ in try await Task.sleep(for: hangGuard) }  // returns, not throws, if not cancelled
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func stateStreamsEnd() async {
        let store = store()
        let stream = store.states
        let reader = Task {
            var seen = 0
            for await _ in stream { seen += 1 }
            return seen
        }
        store.dispatch(.increment)
        _ = await store.shutdown(timeout: hangGuard)
        let seen = await reader.value  // returns only because the stream ended
        #expect(seen <= 1)
        #expect(store.state.count == 1)  // the state stays readable
    }

    // MARK: Calling it twice, concurrently, from inside

    @Test func shutdownTwiceReturnsTheSameReportAndDoesTheWorkOnce() async {
        let harness = EffectHarness { Middlewares.throttle(.seconds(1), latest: true, on: $0, $1) }
        harness.store.dispatch(.add(1))
        harness.store.dispatch(.add(2))
        let first = await harness.store.shutdown(timeout: hangGuard)
        let second = await harness.store.shutdown(timeout: hangGuard)
        #expect(first == second)
        #expect(harness.recorded == runs([(1, 0), (2, 0)]))
    }

    @Test func shutdownFromManyTasksAtOnceDoesTheWorkOnce() async {
        for _ in 0..<20 {
            let harness = EffectHarness { Middlewares.throttle(.seconds(1), latest: true, on: $0, $1) }
            harness.store.dispatch(.add(1))
            harness.store.dispatch(.add(2))
            let reports = await withTaskGroup(of: ShutdownReport.self) { group in
                for _ in 0..<8 {
                    group.addTask { await harness.store.shutdown(timeout: hangGuard) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(reports.count == 8)
            #expect(Set(reports).count == 1)
            #expect(reports.first?.flushedRuns == 1)
            #expect(harness.recorded == runs([(1, 0), (2, 0)]))
        }
    }

    @Test func shutdownFromInsideAnEffectDoesNotWaitForItsCaller() async {
        let store = store()
        let other = AsyncGate()
        store.start { _ in await other.wait() }
        let clock = ContinuousClock()
        let start = clock.now
        let inside = store.start { _ in
            Task {
                _ = await refusing(store)
                other.open()  // the other effect ends while shutdown waits for it
            }
            return await store.shutdown(timeout: hangGuard * 2)
        }
        let report = try? await inside.value
        #expect(clock.now - start < hangGuard * 2)  // a shutdown that waited for its caller returns after its timeout
        #expect(report == ShutdownReport(flushedRuns: 0, finishedTasks: 1, cancelledTasks: 0, refusedDispatches: 0))
    }

    @Test func shutdownFromATaskStartedByTheDispatchingThread() async {
        let reportBox = Locked<ShutdownReport?>(nil)
        let harness = EffectHarness { Middlewares.throttle(.seconds(1), latest: true, on: $0, $1) }
        let store = harness.store
        let trigger = store.subscribe { state in
            if state.count == 3 {
                // The dispatch of `.add(2)` is still in progress (its throttle run comes after the subscribers):
                // shutdown waits for it, so the owed run of 2 is not lost.
                Task {
                    let report = await store.shutdown(timeout: hangGuard)
                    reportBox.withValue { $0 = report }
                }
            }
        }
        // Holds the dispatching thread after the first subscriber until the shutdown task began, so that it surely
        // begins while the dispatch of `.add(2)` is in progress. No event announces that shutdown began: the
        // thread (not a task of the pool) checks every 0.1 ms, for at most the hang guard.
        let slow = store.subscribe { state in
            guard state.count == 3 else { return }
            let deadline = ContinuousClock.now + hangGuard
            while !store.core.isRefusingDispatches && ContinuousClock.now < deadline { usleep(100) }
        }
        // On a thread of its own, so that the task pool is free to run the shutdown task meanwhile.
        await onThread {
            store.dispatch(.add(1))
            store.dispatch(.add(2))
        }
        #expect(await reportBox.wait { $0 != nil })
        trigger.cancel()
        slow.cancel()
        #expect(harness.recorded == runs([(1, 0), (2, 0)]))
        #expect(reportBox.current?.flushedRuns == 1)
    }
}

/// Waits until `store`'s shutdown began refusing actions; `false` after the hang guard. No event announces it, so
/// this polls; it holds a moment after the call to `shutdown` that the test just started.
private func refusing(_ store: Store<TestState, TestAction>) async -> Bool {
    await waitUntil { store.core.isRefusingDispatches }
}
