import Sluice
import Testing

/// Effects (thunks): `run`, `start`, ids, cancellation, lifetime.
@Suite(.timeLimit(suiteTimeLimit)) struct EffectTests {
    private struct Failure: Error, Equatable {
        let code: Int
    }

    /// A store whose middleware records every action it sees.
    private func recordingStore(_ seen: Locked<[TestAction]>) -> Store<TestState, TestAction> {
        Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, _ in
                    seen.append(action)
                    return true
                }
            ]
        )
    }

    /// Expects that no effect is registered any more. If one is (a cancel was missed), cancels `tasks` so that the
    /// test fails instead of waiting forever for them.
    private func expectNothingRunning<T>(
        _ store: Store<TestState, TestAction>,
        _ tasks: [Task<T, any Error>],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let running = store.runningEffectCount
        #expect(running == 0, "a cancel was missed", sourceLocation: sourceLocation)
        if running != 0 {
            for task in tasks {
                task.cancel()
            }
        }
    }

    // MARK: Running

    @Test func syncRunReturnsItsResultAndItsDispatchesAreDone() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let result = store.run { api in
            api.dispatch(.add(2))
            api.dispatch(.increment)
            return api.state.count * 10
        }
        #expect(result == 30)
        #expect(store.state.count == 3)
    }

    @Test func syncRunRethrowsWhatItsWorkThrows() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        #expect(throws: Failure(code: 7)) {
            try store.run { (api) throws(Failure) -> Int in
                api.dispatch(.increment)
                throw Failure(code: 7)
            }
        }
        #expect(store.state.count == 1)
    }

    @Test func aClosureThatDoesNotAwaitRunsSynchronouslyEvenInAnAsyncContext() async {
        let store = Store(initialState: TestState(count: 4), reducer: testReducer)
        // No `await`: this compiles only if the synchronous overload is chosen here.
        let count = store.run { api in api.state.count }
        #expect(count == 4)
    }

    @Test func asyncRunReturnsItsValueToTheCaller() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let value = try await store.run { api in
            api.dispatch(.add(5))
            await Task.yield()
            return "count \(api.state.count)"
        }
        #expect(value == "count 5")
        #expect(store.state.count == 5)
        #expect(store.runningEffectCount == 0)
    }

    @Test func asyncRunThrowsWhatItsWorkThrows() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        await #expect(throws: Failure(code: 3)) {
            try await store.run { api -> Int in
                await Task.yield()
                throw Failure(code: 3)
            }
        }
        #expect(store.runningEffectCount == 0)
    }

    @Test func effectsBypassTheMiddlewareAndTheReducerButTheirDispatchesDoNot() async throws {
        let seen = Locked<[TestAction]>([])
        let store = recordingStore(seen)
        store.run { api in _ = api.state }
        _ = try await store.run { api in
            await Task.yield()
            return api.state.count
        }
        #expect(seen.current.isEmpty)
        #expect(store.state == TestState())

        store.run { api in api.dispatch(.record("sync")) }
        try await store.run { api in
            await Task.yield()
            api.dispatch(.record("async"))
        }
        #expect(seen.current == [.record("sync"), .record("async")])
        #expect(store.state.log == ["sync", "async"])
    }

    @Test func anEffectStartsOtherEffectsAndUsesTheirResults() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let total = try await store.run { api in
            let first = try await api.run { api in
                await Task.yield()
                api.dispatch(.add(1))
                return 1
            }
            let second = api.run { api in
                api.dispatch(.add(10))
                return 10
            }
            let third = try await api.start { api in
                api.dispatch(.add(100))
                return 100
            }.value
            return first + second + third
        }
        #expect(total == 111)
        #expect(store.state.count == 111)
    }

    @Test func startReturnsTheTaskAndItsValue() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let task = store.start { api in
            api.dispatch(.increment)
            return api.state.count
        }
        #expect(try await task.value == 1)
    }

    /// The forms of Effects.md's table together: a synchronous `run`, an asynchronous one that returns its value,
    /// `start` with `cancelInFlight`, and `cancel(id:)`.
    @Test func runStartAndCancelTogether() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        @Sendable func fetchCount() async throws -> Int {
            await Task.yield()
            return 5
        }

        store.run { api in
            if api.state.count == 0 { api.dispatch(.add(10)) }  // synchronous, on this thread
        }

        let total = try await store.run { api in  // asynchronous, returns its value
            api.dispatch(.add(try await fetchCount()))
            return api.state.count
        }

        store.start(id: "poll", cancelInFlight: true) { api in  // returns its Task at once
            while !Task.isCancelled { api.dispatch(.add(try await fetchCount())) }
        }
        store.cancel(id: "poll")

        #expect(total == 15)
        #expect(store.runningEffectCount == 0)
    }

    // MARK: Cancellation

    @Test func cancelByIDCancelsTheTaskAndMakesDispatchANoOp() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let started = AsyncGate()
        let task = store.start(id: "load") { api in
            api.dispatch(.increment)
            #expect(!api.isCancelled)
            started.open()
            await waitUntilCancelled()
            api.dispatch(.add(100))
            return (Task.isCancelled, api.isCancelled)
        }
        await started.wait()
        #expect(store.runningEffectCount == 1)
        store.cancel(id: "load")
        expectNothingRunning(store, [task])
        let (taskCancelled, apiCancelled) = try await task.value
        #expect(taskCancelled)
        #expect(apiCancelled)
        #expect(store.state.count == 1)
        #expect(store.runningEffectCount == 0)
        #expect(store.runningEffectIDCount == 0)
    }

    @Test func cancelOfAnUnknownIDDoesNothing() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let started = AsyncGate()
        let task = store.start(id: 1) { api in
            started.open()
            await waitUntilCancelled()
            return api.isCancelled
        }
        await started.wait()
        store.cancel(id: 2)
        store.cancel(id: "1")
        #expect(store.runningEffectCount == 1)
        store.cancel(id: 1)
        expectNothingRunning(store, [task])
        #expect(try await task.value)
    }

    @Test func runWithIDIsCancelledByID() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let started = AsyncGate()
        async let result = store.run(id: "search") { api in
            started.open()
            await waitUntilCancelled()
            api.dispatch(.increment)
            return api.isCancelled
        }
        await started.wait()
        store.cancel(id: "search")
        #expect(try await result)
        #expect(store.state.count == 0)
    }

    @Test func cancellingTheAwaitingTaskCancelsTheEffect() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let started = AsyncGate()
        let caller = Task {
            try await store.run { api in
                started.open()
                await waitUntilCancelled()
                api.dispatch(.increment)
                return api.isCancelled
            }
        }
        await started.wait()
        caller.cancel()
        #expect(try await caller.value)
        #expect(store.state.count == 0)
        #expect(store.runningEffectCount == 0)
    }

    @Test func cancellingTheStartedTaskMakesItsDispatchesNoOps() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let started = AsyncGate()
        let task = store.start(id: "poll") { api in
            started.open()
            await waitUntilCancelled()
            api.dispatch(.increment)
            return api.isCancelled
        }
        await started.wait()
        task.cancel()
        #expect(try await task.value)
        #expect(store.state.count == 0)
        #expect(store.runningEffectCount == 0)
    }

    @Test func cancelInFlightCancelsTheRunningEffectWithTheSameIDFirst() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let firstStarted = AsyncGate()
        let first = store.start(id: "search") { api in
            firstStarted.open()
            await waitUntilCancelled()
            api.dispatch(.record("first"))
            return api.isCancelled
        }
        await firstStarted.wait()
        let secondStarted = AsyncGate()
        let second = store.start(id: "search", cancelInFlight: true) { api in
            secondStarted.open()
            await waitUntilCancelled()
            return api.isCancelled
        }
        // The first one was cancelled before `start` returned.
        #expect(try await first.value)
        await secondStarted.wait()
        #expect(store.runningEffectCount == 1)
        store.cancel(id: "search")
        expectNothingRunning(store, [second])
        #expect(try await second.value)
        #expect(store.state.log.isEmpty)
    }

    @Test func withoutCancelInFlightEffectsShareTheirIDAndAreCancelledTogether() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let tasks = (0..<3).map { _ in
            store.start(id: "sync") { api in
                await waitUntilCancelled()
                return api.isCancelled
            }
        }
        #expect(store.runningEffectCount == 3)
        #expect(store.runningEffectIDCount == 1)
        store.cancel(id: "sync")
        expectNothingRunning(store, tasks)
        for task in tasks {
            #expect(try await task.value)
        }
        #expect(store.runningEffectCount == 0)
    }

    @Test func aFinishedOlderEffectDoesNotUnregisterTheNewerOneWithTheSameID() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let older = store.start(id: "refresh") { api in
            await waitUntilCancelled()
            return api.isCancelled
        }
        let newer = store.start(id: "refresh", cancelInFlight: true) { api in
            await waitUntilCancelled()
            return api.isCancelled
        }
        // The older effect has finished (and given its registration back) once its value is available.
        #expect(try await older.value)
        #expect(store.runningEffectCount == 1)
        #expect(store.runningEffectIDCount == 1)
        store.cancel(id: "refresh")
        expectNothingRunning(store, [newer])
        #expect(try await newer.value)
        #expect(store.runningEffectIDCount == 0)
    }

    @Test func anEffectThatFinishesLeavesTheRegistry() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        for index in 0..<100 {
            _ = try await store.run(id: index % 3) { api in
                await Task.yield()
                return api.state.count
            }
        }
        #expect(store.runningEffectCount == 0)
        #expect(store.runningEffectIDCount == 0)
        // Nor a handler on the store's lifetime.
        #expect(store.teardownHandlerCount == 0)
    }

    @Test func cancellingAnEffectCancelsTheEffectsItStarted() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let childStarted = AsyncGate()
        let parent = store.start(id: "parent") { api in
            let child = api.start { api in
                childStarted.open()
                await waitUntilCancelled()
                api.dispatch(.increment)
                return api.isCancelled
            }
            await waitUntilCancelled()
            return try await child.value
        }
        await childStarted.wait()
        store.cancel(id: "parent")
        #expect(try await parent.value)
        #expect(store.state.count == 0)
        #expect(store.runningEffectCount == 0)
    }

    @Test func anEffectStartedByATakeLatestRunIsCancelledWhenTheRunIsSuperseded() async throws {
        let tasks = Locked<[Task<Bool, any Error>]>([])
        let startEffect = Middlewares.takeLatest { (action: TestAction, api: MiddlewareAPI<TestState, TestAction>) in
            guard action == .increment else { return }
            tasks.append(
                api.start { api in
                    await waitUntilCancelled()
                    return api.isCancelled
                }
            )
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(startEffect)])
        store.dispatch(.increment)
        store.dispatch(.increment)
        // The first run was superseded by the second, and its effect with it.
        #expect(try await tasks.current[0].value)
        #expect(store.runningEffectCount == 1)
        tasks.current[1].cancel()
        #expect(try await tasks.current[1].value)
    }

    @Test func finishedChildrenDoNotPileUpHandlersInTheirParent() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let handlers = try await store.run { api in
            for _ in 0..<50 {
                _ = try await api.run { api in
                    await Task.yield()
                    return api.state.count
                }
            }
            return api.cancellationHandlerCount
        }
        // Only the parent's own handler (which cancels its task) is left.
        #expect(handlers == 1)
    }

    // MARK: Races

    @Test func aCancelRightAfterAStartIsNeverMissed() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let tasks = Locked<[Task<Bool, any Error>]>([])
        await runOnThreads(4) { thread in
            for index in 0..<250 {
                let id = "\(thread)-\(index)"
                let task = store.start(id: id) { api in
                    await waitUntilCancelled()
                    api.dispatch(.increment)
                    return api.isCancelled && Task.isCancelled
                }
                store.cancel(id: id)
                tasks.append(task)
            }
        }
        #expect(tasks.current.count == 1000)
        expectNothingRunning(store, tasks.current)
        for task in tasks.current {
            #expect(try await task.value)
        }
        #expect(store.state.count == 0)
        #expect(store.runningEffectIDCount == 0)
    }

    @Test func restartsAndCancelsOfOneIDFromManyThreadsLeaveNothingRunning() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let tasks = Locked<[Task<Bool, any Error>]>([])
        await runOnThreads(4) { thread in
            for index in 0..<250 {
                let task = store.start(id: "shared", cancelInFlight: true) { api in
                    await waitUntilCancelled()
                    api.dispatch(.increment)
                    return api.isCancelled
                }
                tasks.append(task)
                if (thread + index) % 5 == 0 {
                    store.cancel(id: "shared")
                }
            }
        }
        // At most the last effect started is still running: every other one was superseded or cancelled.
        #expect(store.runningEffectCount <= 1)
        store.cancel(id: "shared")
        expectNothingRunning(store, tasks.current)
        for task in tasks.current {
            #expect(try await task.value)
        }
        #expect(tasks.current.count == 1000)
        #expect(store.state.count == 0)
        #expect(store.runningEffectIDCount == 0)
    }

    @Test func cancelInFlightFromManyThreadsLeavesExactlyOneRunning() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let tasks = Locked<[Task<Bool, any Error>]>([])
        await runOnThreads(4) { _ in
            for _ in 0..<250 {
                tasks.append(
                    store.start(id: "latest", cancelInFlight: true) { api in
                        await waitUntilCancelled()
                        return api.isCancelled
                    }
                )
            }
        }
        #expect(store.runningEffectCount == 1)
        store.cancel(id: "latest")
        expectNothingRunning(store, tasks.current)
        for task in tasks.current {
            #expect(try await task.value)
        }
    }

    @Test func manyRunsUnderOneIDFromManyThreadsAreCountedFinishedAndCancelledExactly() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let finishing = Locked<[Task<Bool, any Error>]>([])
        let waiting = Locked<[Task<Bool, any Error>]>([])
        // Half of the runs finish at once, on the task pool, while the threads keep registering runs under the id.
        await runOnThreads(4) { _ in
            for index in 0..<500 {
                if index.isMultiple(of: 2) {
                    finishing.append(
                        store.start(id: "shared") { api in
                            api.dispatch(.increment)
                            return api.isCancelled
                        }
                    )
                } else {
                    waiting.append(
                        store.start(id: "shared") { api in
                            await waitUntilCancelled()
                            api.dispatch(.add(1_000_000))
                            return api.isCancelled
                        }
                    )
                }
            }
        }
        for task in finishing.current {
            #expect(try await task.value == false)
        }
        // The finished runs are gone; every other one is still registered under the id.
        #expect(store.state.count == 1_000)
        #expect(store.runningEffectCount == 1_000)
        #expect(store.runningEffectCount(id: "shared") == 1_000)
        #expect(store.runningEffectIDCount == 1)

        store.cancel(id: "shared")
        expectNothingRunning(store, waiting.current)
        #expect(store.runningEffectCount(id: "shared") == 0)
        #expect(store.runningEffectIDCount == 0)
        // A newer run under the id is not unregistered by the cancelled runs, which finish after it started.
        let newer = store.start(id: "shared") { api in
            await waitUntilCancelled()
            return api.isCancelled
        }
        for task in waiting.current {
            #expect(try await task.value)
        }
        #expect(waiting.current.count == 1_000)
        #expect(store.state.count == 1_000)
        #expect(store.runningEffectCount == 1)
        #expect(store.runningEffectCount(id: "shared") == 1)
        store.cancel(id: "shared")
        expectNothingRunning(store, [newer])
        #expect(try await newer.value)
    }

    /// Many runs under one id: finishing one must not search (or copy) the id's list of every run, which would make
    /// this test quadratic in `runs` and too slow for the suite's time limit under the thread sanitizer. It checks
    /// the behaviour; `Benchmarks` has no wall-clock gate.
    @Test func fortyThousandRunsUnderOneIDAllFinishAndLeaveTheRegistry() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let release = AsyncGate()
        let runs = 40_000
        let tasks = (0..<runs).map { _ in
            store.start(id: "bulk") { api in
                await release.wait()
                api.dispatch(.increment)
                return api.isCancelled
            }
        }
        // All of them are registered before any finishes.
        #expect(store.runningEffectCount == runs)
        #expect(store.runningEffectCount(id: "bulk") == runs)
        release.open()
        var cancelled = 0
        for task in tasks where try await task.value {
            cancelled += 1
        }
        #expect(cancelled == 0)
        #expect(store.state.count == runs)
        #expect(store.runningEffectCount == 0)
        #expect(store.runningEffectIDCount == 0)
        #expect(store.teardownHandlerCount == 0)
    }

    // MARK: Lifetime

    @Test func freeingTheStoreCancelsEveryEffect() async throws {
        var store: Store<TestState, TestAction>? = Store(initialState: TestState(), reducer: testReducer)
        weak let weakStore = store
        let childStarted = AsyncGate()
        let plain = store!.start { api in
            await waitUntilCancelled()
            api.dispatch(.increment)
            return api.isCancelled
        }
        let withID = store!.start(id: "id") { api in
            await waitUntilCancelled()
            return api.isCancelled
        }
        let parent = store!.start { api in
            let child = api.start { api in
                childStarted.open()
                await waitUntilCancelled()
                return api.isCancelled
            }
            return try await child.value
        }
        await childStarted.wait()
        store = nil
        #expect(weakStore == nil)
        #expect(try await plain.value)
        #expect(try await withID.value)
        #expect(try await parent.value)
    }

    @Test func anEffectStartedAfterTheStoreIsGoneStartsCancelled() async throws {
        var store: Store<TestState, TestAction>? = Store(initialState: TestState(count: 3), reducer: testReducer)
        let api = store!.run { $0 }
        store = nil
        let task = api.start { api in
            api.dispatch(.increment)
            return (api.isCancelled, Task.isCancelled, api.state.count)
        }
        let (apiCancelled, taskCancelled, count) = try await task.value
        #expect(apiCancelled)
        #expect(taskCancelled)
        #expect(count == 3)
    }
}

extension MiddlewareAPI {
    /// The number of handlers on this run's cancellation (0 without one).
    fileprivate var cancellationHandlerCount: Int {
        cancellation?.handlerCount ?? 0
    }
}
