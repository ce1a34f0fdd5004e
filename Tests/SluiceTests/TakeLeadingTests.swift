import Dispatch
import Sluice
import SluiceTesting
import Testing

/// `Middlewares.takeLeading`: a new run is ignored while one is running.
@Suite struct TakeLeadingTests {
    @Test func anAsyncRunIgnoresTheActionsThatArriveWhileItRuns() async {
        let gate = AsyncGate()
        let started = Locked<[Int]>([])
        let finished = Locked(0)
        let effect = Middlewares.takeLeading(
            SideEffect<TestState, TestAction> { action, _ in
                guard case .add(let value) = action else { return }
                started.append(value)
                await gate.wait()
                finished.withValue { $0 += 1 }
            }
        )
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.add(1))
        store.dispatch(.add(2))
        store.dispatch(.add(3))
        #expect(await started.wait { $0 == [1] })
        gate.open()
        #expect(await finished.wait { $0 == 1 })
        // The run is over once its task ended (a moment after it counted): the next action runs.
        #expect(await store.tasksEnded())
        #expect(await runEnded(store))
        #expect(started.current == [1])
        store.dispatch(.add(4))
        #expect(await finished.wait { $0 == 2 })
        #expect(started.current == [1, 4])
        #expect(store.state.count == 1 + 2 + 3 + 4)  // the reducer saw every action
    }

    /// A time-based modifier inside a run performs its work after the run ended (it is not awaited): that work belongs
    /// to no run any more, so its end cannot end the run in progress then.
    @Test func delayedWorkOfAnEndedRunDoesNotEndTheCurrentRun() async {
        let scheduler = TestScheduler()
        let gate = AsyncGate()
        let started = Locked<[Int]>([])
        let delayed = Middlewares.delay(
            .seconds(1),
            on: scheduler,
            SideEffect<TestState, TestAction> { action, _ async in
                if action == .add(1) { started.append(-1) }  // the delayed task of the run of 1
            }
        )
        let holds = SideEffect<TestState, TestAction> { action, api in
            guard case .add(let value) = action, value != 1 else { return }
            started.append(value)
            api.start { _ in await gate.wait() }  // the run of `value` is in progress until the gate opens
        }
        let effect = Middlewares.takeLeading(Middlewares.combine(delayed, holds))
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.add(1))  // its run hands the action to `delay` and ends
        store.dispatch(.add(2))  // its run is in progress
        scheduler.advance(by: .seconds(1))  // the delayed task of 1 starts, then ends, while the run of 2 runs
        #expect(await started.wait { $0 == [2, -1] })
        // The delayed task of 1 ended: only the run of 2's effect (waiting for the gate) still runs.
        #expect(await waitUntil { store.runningSideEffectTaskCount == 0 })
        store.dispatch(.add(3))  // ignored: the run of 2 is still in progress
        gate.open()
        #expect(await store.tasksEnded())
        store.dispatch(.add(4))
        #expect(started.current == [2, -1, 4])
    }

    @Test func exactlyOneRunStartsWhenEightThreadsDispatchWhileItRuns() async {
        let gate = AsyncGate()
        let started = Locked(0)
        let effect = Middlewares.takeLeading(
            SideEffect<TestState, TestAction> { _, _ in
                started.withValue { $0 += 1 }
                await gate.wait()
            }
        )
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        await onThread {
            runOnThreadsBlocking(8) { _ in
                for _ in 0..<50 { store.dispatch(.increment) }
            }
        }
        #expect(await started.wait { $0 == 1 })
        gate.open()
        #expect(await store.tasksEnded())
        #expect(await runEnded(store))
        #expect(started.current == 1)
        #expect(store.state.count == 400)
    }

    @Test func aSyncRunIsInProgressUntilTheEffectsItStartedEnd() async {
        let gate = AsyncGate()
        let ran = Locked<[Int]>([])
        let effect = Middlewares.takeLeading(
            SideEffect<TestState, TestAction> { action, api in
                guard case .add(let value) = action else { return }
                ran.append(value)
                api.start { _ in await gate.wait() }
            }
        )
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.add(1))
        store.dispatch(.add(2))  // run 1's effect is still running: ignored
        #expect(ran.current == [1])
        gate.open()
        #expect(await store.tasksEnded())
        #expect(await runEnded(store))
        store.dispatch(.add(3))
        #expect(ran.current == [1, 3])
    }

    @Test func aSyncRunWithoutWorkEndsWithItsCall() {
        let ran = Locked<[Int]>([])
        let effect = Middlewares.takeLeading(
            Middlewares.filter(
                { (action: TestAction) in if case .add = action { true } else { false } },
                SideEffect<TestState, TestAction> { action, _ in
                    if case .add(let value) = action { ran.append(value) }
                }
            )
        )
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.increment)
        store.dispatch(.add(1))
        store.dispatch(.add(2))
        #expect(ran.current == [1, 2])
        #expect(store.teardownHandlerCount == 0)  // finished runs do not pile up in the store
    }

    @Test func freeingTheStoreCancelsTheRunningRun() async {
        let cancelled = Locked(false)
        var store: Store<TestState, TestAction>? = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    Middlewares.takeLeading(
                        SideEffect<TestState, TestAction> { _, _ in
                            await waitUntilCancelled()
                            cancelled.withValue { $0 = true }
                        }
                    )
                )
            ]
        )
        store?.dispatch(.increment)
        store = nil
        #expect(await cancelled.wait { $0 })
    }
}

/// Whether the run of `store`'s `takeLeading` is over, once the store's tasks ended: the ledger ends the run just
/// after it counts the run's last task as ended, so a wait on the tasks can resume a moment before the run is over.
/// No event announces that moment; the poll holds at its first or second check.
private func runEnded(_ store: Store<TestState, TestAction>) async -> Bool {
    await waitUntil { store.teardownHandlerCount == 0 }
}
