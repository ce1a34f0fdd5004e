import Dispatch
import Sluice
import Testing

/// The error channel: `Store(..., onEffectError:)` receives the errors of async side effects and of started
/// effects; cancellation is not an error; one failing effect never stops another.
@Suite struct EffectFailureTests {
    private struct Boom: Error, Equatable {
        let code: Int
    }

    /// A store whose failures are recorded.
    private func makeStore(
        middleware: [Middleware<TestState, TestAction>] = []
    ) -> (Store<TestState, TestAction>, Locked<[EffectFailure]>) {
        let failures = Locked<[EffectFailure]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: middleware,
            onEffectError: { failure in failures.append(failure) }
        )
        return (store, failures)
    }

    @Test func anAsyncSideEffectThatThrowsIsReportedWithItsAction() async {
        let effect = SideEffect<TestState, TestAction> { action, _ in
            if case .add(let value) = action { throw Boom(code: value) }
        }
        let (store, failures) = makeStore(middleware: [Middleware(effect)])
        store.dispatch(.add(7))
        #expect(await store.tasksEnded())
        #expect(failures.current.count == 1)
        let failure = failures.current[0]
        #expect(failure.source == .sideEffect)
        #expect(failure.error as? Boom == Boom(code: 7))
        #expect(failure.action as? TestAction == .add(7))
        #expect(failure.id == nil)
    }

    @Test func aStartedEffectThatThrowsIsReportedWithItsID() async {
        let (store, failures) = makeStore()
        store.start(id: "sync") { _ in throw Boom(code: 1) }
        #expect(await store.tasksEnded())
        #expect(failures.current.count == 1)
        #expect(failures.current[0].source == .effect)
        #expect(failures.current[0].id as? String == "sync")
        #expect(failures.current[0].error as? Boom == Boom(code: 1))
    }

    @Test func anAwaitedRunThrowsToItsCallerAndIsNotReported() async {
        let (store, failures) = makeStore()
        await #expect(throws: Boom(code: 2)) {
            try await store.run { _ in
                await Task.yield()
                throw Boom(code: 2)
            }
        }
        // A started effect that fails afterwards is reported: the run's failure came first and was not.
        store.start { _ in throw Boom(code: 3) }
        #expect(await store.tasksEnded())
        #expect(failures.current.count == 1)
        #expect(failures.current.map { $0.error as? Boom } == [Boom(code: 3)])
    }

    @Test func cancellationIsNotAnError() async {
        let (store, failures) = makeStore()
        let gate = AsyncGate()
        // Cancelled by id: it throws CancellationError.
        let first = store.start(id: "a") { _ in
            try await Task.sleep(for: hangGuard)
        }
        // Cancelled, then throws an error of its own: still a cancellation.
        let second = store.start(id: "b") { api in
            await waitUntilCancelled()
            gate.open()
            throw Boom(code: 4)
        }
        store.cancel(id: "a")
        store.cancel(id: "b")
        _ = await first.result
        _ = await second.result
        await gate.wait()
        // A failure after the cancelled ones proves the handler was reachable the whole time.
        store.start { _ in throw Boom(code: 5) }
        #expect(await store.tasksEnded())
        #expect(failures.current.count == 1)
        #expect(failures.current.map { $0.error as? Boom } == [Boom(code: 5)])
    }

    @Test func aSupersededTakeLatestRunIsNotReported() async {
        let effect = Middlewares.takeLatest(
            SideEffect<TestState, TestAction> { action, _ in
                if case .add(let value) = action {
                    if value == 1 { await waitUntilCancelled() }
                    throw Boom(code: value)
                }
            }
        )
        let (store, failures) = makeStore(middleware: [Middleware(effect)])
        store.dispatch(.add(1))
        store.dispatch(.add(2))
        // Both runs' tasks ended, so a report of run 1 would have been made already.
        #expect(await store.tasksEnded())
        #expect(failures.current.map { $0.error as? Boom } == [Boom(code: 2)])
    }

    @Test func oneFailingEffectNeverStopsAnother() async throws {
        let gate = AsyncGate()
        let effect = SideEffect<TestState, TestAction> { action, api in
            switch action {
            case .add(let value) where value < 0:
                throw Boom(code: value)
            case .add:
                await gate.wait()
                api.dispatch(.record("done"))
            default:
                break
            }
        }
        let (store, failures) = makeStore(middleware: [Middleware(effect)])
        store.dispatch(.add(1))
        for index in 1...10 {
            store.dispatch(.add(-index))
        }
        let sibling = store.start { api in
            await gate.wait()
            return api.dispatch(.record("effect"))
        }
        #expect(await failures.wait { $0.count == 10 })
        gate.open()
        #expect(await store.tasksEnded())
        #expect(store.state.log.sorted() == ["done", "effect"])
        #expect(try await sibling.value == true)
        #expect(Set(failures.current.compactMap { ($0.error as? Boom)?.code }) == Set((1...10).map { -$0 }))
    }

    @Test func aStoreWithoutHandlerIgnoresFailures() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let task = store.start { _ in throw Boom(code: 9) }
        await #expect(throws: Boom(code: 9)) { try await task.value }
    }
}
