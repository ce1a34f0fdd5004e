import Foundation
import Testing

@testable import Sluice

/// `await send(_:)` on `Store`, `ScopedStore` and `MiddlewareAPI`: the dispatch contract without blocking a thread,
/// one first-in, first-out line with blocked dispatchers, cancellation while waiting, the `StoreTask` it returns,
/// and the store's statistics.
@Suite struct SendTests {
    // MARK: The contract

    @Test func sendReturnsAfterItsActionAndWhatItsWorkDispatchedWereProcessed() async {
        let notified = Locked(0)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                afterNext { action, api in
                    if action == .add(1) { api.dispatch(.add(10)) }
                }
            ]
        )
        let subscription = store.subscribe { _ in notified.withValue { $0 += 1 } }
        let task = await store.send(.add(1))
        #expect(task.isAccepted)
        #expect(store.state.count == 11)
        #expect(notified.current == 2)
        _ = subscription
    }

    @Test func scopedStoreAndMiddlewareAPISendThroughTheWholeChain() async {
        let seen = Locked<[TestAction]>([])
        let apiSent = AsyncGate()
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware { _ in
                    { next in
                        { action in
                            seen.append(action)
                            next(action)
                        }
                    }
                },
                Middleware(
                    SideEffect { (action: TestAction, api: MiddlewareAPI<TestState, TestAction>) async in
                        if action == .increment {
                            let task = await api.send(.add(5))
                            #expect(task.isAccepted)
                            apiSent.open()
                        }
                    }
                ),
            ]
        )
        let scope = store.scope(\.count)
        #expect(await scope.send(.increment).isAccepted)
        await apiSent.wait()
        #expect(store.state.count == 6)
        #expect(seen.current == [.increment, .add(5)])
    }

    @Test func aSendToAStoreThatIsGoneIsDropped() async {
        var store: Store<TestState, TestAction>? = Store(initialState: TestState(), reducer: testReducer)
        let scope = store!.scope(\.count)
        store = nil
        #expect(await scope.send(.increment).isAccepted == false)
    }

    // MARK: One line with blocked dispatchers

    @Test func blockedDispatchersAreServedInArrivalOrder() async throws {
        let blocked = BlockedStore()
        blocked.blockOnAnotherThread()
        for name in ["T1", "T2", "T3", "T4"] {
            try await blocked.dispatchOnAnotherThreadAndWaitInLine(name)
        }
        blocked.unblock()
        try await blocked.waitUntilLogged(5)
        #expect(blocked.store.state.log == ["block", "T1", "T2", "T3", "T4"])
    }

    @Test func sendsAndBlockedDispatchersAreServedInOneLineInArrivalOrder() async throws {
        let blocked = BlockedStore()
        blocked.blockOnAnotherThread()
        try await blocked.dispatchOnAnotherThreadAndWaitInLine("T1")
        let s1 = try await blocked.sendInATaskAndWaitInLine("S1")
        try await blocked.dispatchOnAnotherThreadAndWaitInLine("T2")
        let s2 = try await blocked.sendInATaskAndWaitInLine("S2")
        try await blocked.dispatchOnAnotherThreadAndWaitInLine("T3")
        blocked.unblock()
        #expect(await s1.value.isAccepted)
        #expect(await s2.value.isAccepted)
        try await blocked.waitUntilLogged(6)
        #expect(blocked.store.state.log == ["block", "T1", "S1", "T2", "S2", "T3"])
    }

    @Test func waitingSendsDoNotBlockThreadsOfTheCooperativePool() async throws {
        let blocked = BlockedStore()
        blocked.blockOnAnotherThread()
        let senders = (0..<64).map { index in
            Task { await blocked.store.send(.record("S\(index)")) }
        }
        // 64 waiting sends on a pool of a few threads: each one suspended rather than blocked its thread.
        try await poll("64 sends in line") { blocked.waiterCount == 64 }
        // And the pool still runs other work.
        let probe = Task { 42 }
        #expect(await probe.value == 42)
        blocked.unblock()
        for sender in senders {
            #expect(await sender.value.isAccepted)
        }
        #expect(blocked.store.state.log.count == 65)
        #expect(blocked.store.statistics.waits == 64)
        #expect(blocked.store.statistics.blockedWaits == 0)
    }

    // MARK: Cancellation while waiting

    @Test func aSendCancelledWhileItWaitsLeavesTheLineAndIsNotProcessed() async throws {
        let blocked = BlockedStore()
        blocked.blockOnAnotherThread()
        let cancelled = try await blocked.sendInATaskAndWaitInLine("cancelled")
        let kept = try await blocked.sendInATaskAndWaitInLine("kept")
        cancelled.cancel()
        #expect(await cancelled.value.isAccepted == false)
        #expect(blocked.waiterCount == 1)
        blocked.unblock()
        #expect(await kept.value.isAccepted)
        #expect(blocked.store.state.log == ["block", "kept"])
    }

    @Test func sendsCancelledWhileWaitingUnderManyThreadsAreExactlyTheOnesNotProcessed() async {
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [Middleware { _ in { next in { action in next(action) } } }]
        )
        let accepted = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await onThread {
                    runOnThreadsBlocking(8) { _ in
                        for _ in 0..<2_000 { store.dispatch(.add(1)) }
                    }
                }
            }
            for round in 0..<20 {
                let senders = (0..<16).map { _ in
                    Task { await store.send(.add(1_000)) }
                }
                // Cancel every other sender, at whatever point it is: waiting (then it must not be processed),
                // not yet in line or already served (then cancellation does not stop it).
                for (index, sender) in senders.enumerated() where (index + round) % 2 == 0 {
                    sender.cancel()
                }
                for sender in senders where await sender.value.isAccepted {
                    accepted.withValue { $0 += 1 }
                }
            }
        }
        #expect(store.state.count == 16_000 + 1_000 * accepted.current)
        #expect(accepted.current >= 160)
        #expect(store.core.lock.withLock { store.core.waiters } == 0)
    }

    // MARK: Exact totals

    @Test func eightThreadsAndEightTasksDispatchingAndSendingAddUpExactly() async {
        let notified = Locked(0)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                afterNext { action, api in
                    // Every action of 2 queues one more: re-entrant dispatches mixed into the line.
                    if action == .add(2) { api.dispatch(.increment) }
                }
            ]
        )
        let subscription = store.subscribe { _ in notified.withValue { $0 += 1 } }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await onThread {
                    runOnThreadsBlocking(8) { _ in
                        for _ in 0..<1_000 { store.dispatch(.add(2)) }
                    }
                }
            }
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<1_000 {
                        let task = await store.send(.add(2))
                        #expect(task.isAccepted)
                    }
                }
            }
        }
        // 16,000 actions of 2, each followed by an increment.
        #expect(store.state.count == 48_000)
        #expect(notified.current == 32_000)
        _ = subscription
    }

    // MARK: StoreTask

    @Test func finishWaitsForTheSideEffectsOfTheActionAndOfTheActionsItCaused() async {
        let gate = AsyncGate()
        let finished = Locked<[TestAction]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                afterNext { action, api in
                    if action == .add(1) { api.dispatch(.add(2)) }
                },
                Middleware(
                    SideEffect { (action: TestAction, _: MiddlewareAPI<TestState, TestAction>) async in
                        await gate.wait()
                        finished.append(action)
                    }
                ),
            ]
        )
        let task = await store.send(.add(1))
        #expect(finished.current.isEmpty)
        gate.open()
        await task.finish()
        #expect(finished.current.count == 2)
        #expect(finished.current.contains(.add(1)) && finished.current.contains(.add(2)))
    }

    @Test func finishWaitsForEffectsStartedWhileTheActionWasProcessed() async {
        let gate = AsyncGate()
        let finished = Locked(false)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                afterNext { _, api in
                    api.start { _ in
                        await gate.wait()
                        finished.withValue { $0 = true }
                    }
                }
            ]
        )
        let task = await store.send(.increment)
        #expect(!finished.current)
        gate.open()
        await task.finish()
        #expect(finished.current)
    }

    @Test func cancelCancelsTheWorkTheActionStarted() async {
        let cancelled = Locked(false)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    SideEffect { (_: TestAction, _: MiddlewareAPI<TestState, TestAction>) async in
                        await waitUntilCancelled()
                        cancelled.withValue { $0 = true }
                    }
                )
            ]
        )
        let task = await store.send(.increment)
        #expect(!task.isCancelled)
        task.cancel()
        await task.finish()
        #expect(task.isCancelled)
        #expect(cancelled.current)
    }

    @Test func aSendThatStartsNoWorkFinishesAtOnce() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let task = await store.send(.increment)
        await task.finish()
        #expect(task.work == nil)
        #expect(store.state.count == 1)
    }

    @Test func workStartedByAnotherDispatchIsNotTracked() async {
        let gate = AsyncGate()
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    SideEffect { (action: TestAction, _: MiddlewareAPI<TestState, TestAction>) async in
                        if action == .noop { await gate.wait() }
                    }
                )
            ]
        )
        store.dispatch(.noop)  // its effect waits for `gate`
        let task = await store.send(.increment)
        await task.finish()  // returns although the `.noop` effect still waits
        gate.open()
    }

    // MARK: Statistics

    @Test func uncontendedDispatchesAndSendsCountNoWait() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        store.dispatch(.increment)
        await store.send(.increment)
        #expect(store.statistics == StoreStatistics())
    }

    @Test func waitsQueuesAndTheWaitOfTheCurrentActionAreRecorded() async throws {
        let waitsSeen = Locked<[String: Duration]>([:])
        let blocked = BlockedStore(
            middleware: Middleware { api in
                { next in
                    { action in
                        if case .record(let name) = action {
                            waitsSeen.withValue { $0[name] = api.pipelineWaitOfCurrentAction }
                        }
                        next(action)
                    }
                }
            }
        )
        blocked.blockOnAnotherThread()
        try await blocked.dispatchOnAnotherThreadAndWaitInLine("T1")
        let s1 = try await blocked.sendInATaskAndWaitInLine("S1")
        blocked.unblock()
        _ = await s1.value
        try await blocked.waitUntilLogged(3)
        let statistics = blocked.store.statistics
        #expect(statistics.waits == 2)
        #expect(statistics.blockedWaits == 1)
        #expect(statistics.deepestQueue == 2)
        #expect(statistics.longestWait > .zero)
        #expect(statistics.totalWait >= statistics.longestWait)
        let seen = waitsSeen.current
        #expect(seen["block"] == .zero)
        #expect(seen["T1"]! > .zero)
        #expect(seen["S1"]! > .zero)
    }

    // MARK: send(_:reading:)

    @Test func sendReadingReturnsTheStateRightAfterItsAction() async {
        let plain = Store(initialState: TestState(), reducer: testReducer)
        #expect(await plain.send(.add(2), reading: { $0.count }) == 2)
        let blocked = BlockedStore()
        #expect(await blocked.store.send(.add(3), reading: { $0.count }) == 3)
        let swallowing = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [tap { action, _ in action != .noop }]
        )
        #expect(await swallowing.send(.noop, reading: { $0.count }) == nil)
    }

    /// A task that waits in line gets the state right after its own action: not the actions before it, not a
    /// dispatch that lined up behind it.
    @Test func aWaitingSendReadsBeforeTheActionsThatLinedUpBehindIt() async throws {
        let blocked = BlockedStore()
        blocked.blockOnAnotherThread()
        let store = blocked.store
        let before = blocked.waiterCount
        let reading = Task { await store.send(.add(5), reading: { ($0.count, $0.log) }) }
        try await poll("the reading send in line") { blocked.waiterCount == before + 1 }
        try await blocked.dispatchOnAnotherThreadAndWaitInLine("after")
        blocked.unblock()
        let value = await reading.value
        #expect(value?.0 == 5)
        #expect(value?.1 == ["block"])
        try await blocked.waitUntilLogged(2)
        #expect(store.state.log == ["block", "after"])
    }

    @Test func aReadingSendCancelledWhileWaitingIsNotProcessed() async throws {
        let blocked = BlockedStore()
        blocked.blockOnAnotherThread()
        let store = blocked.store
        let reading = Task { await store.send(.add(5), reading: { $0.count }) }
        try await poll("the reading send in line") { blocked.waiterCount == 1 }
        reading.cancel()
        #expect(await reading.value == nil)
        blocked.unblock()
        #expect(await blocked.blockerReturns())  // the owner processed its queue and gave up the pipeline
        #expect(blocked.waiterCount == 0)
        #expect(store.state.log == ["block"])
        #expect(store.state.count == 0)
    }

    @Test func aReadingSendAfterShutdownIsRefused() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        _ = await store.shutdown(timeout: hangGuard)
        #expect(await store.send(.add(1), reading: { $0.count }) == nil)
        #expect(store.state.count == 0)
    }

    /// The ways a reading send is processed when the pipeline is free: through middleware (the fast pipeline),
    /// without (reduced and read in one critical section), and without middleware but with a subscriber to notify
    /// (through the state machine).
    enum ReadingStoreShape: CaseIterable, Sendable {
        case middleware, bare, subscribed
    }

    /// Eight tasks send, eight threads dispatch; every reading is the count right after its own action, so the
    /// readings are all different, and each is one of the counts the store went through.
    @Test(arguments: ReadingStoreShape.allCases)
    func readingsOfManyTasksAreEachTheirOwnActionsResult(shape: ReadingStoreShape) async {
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: shape == .middleware ? [Middleware { _ in { next in { action in next(action) } } }] : []
        )
        let notified = Locked(0)
        let subscription = shape == .subscribed ? store.subscribe { _ in notified.withValue { $0 += 1 } } : nil
        defer { subscription?.cancel() }
        let readings = Locked<[Int]>([])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await onThread {
                    runOnThreadsBlocking(8) { _ in
                        for _ in 0..<500 { store.dispatch(.add(10_000)) }
                    }
                }
            }
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<200 {
                        if let count = await store.send(.add(1), reading: { $0.count }) {
                            readings.append(count)
                        }
                    }
                }
            }
        }
        let all = readings.current
        #expect(all.count == 8 * 200)
        #expect(Set(all).count == all.count)
        #expect(store.state.count == 8 * 500 * 10_000 + 8 * 200)
        // Below 10,000 a reading counts the sends reduced so far, its own included: exactly 1 to 1,600, each once.
        #expect(all.map { $0 % 10_000 }.sorted() == Array(1...1_600))
        if shape == .subscribed {
            #expect(notified.current >= 1)
        }
    }
}
