import Dispatch
import Foundation
import Sluice
import SluiceTesting
import Testing

@Suite struct SideEffectTests {
    @Test func runsAfterTheReducerForEveryActionOnceInOrder() {
        let seen = Locked<[String]>([])
        let effect = SideEffect<TestState, TestAction> { action, api in
            seen.append("\(action) count=\(api.state.count)")
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.increment)
        store.dispatch(.add(2))
        #expect(seen.current == ["increment count=1", "add(2) count=3"])
    }

    @Test func dispatchFromAnEffectIsQueuedAndGoesThroughTheWholeChain() {
        let firstSaw = Locked<[TestAction]>([])
        let effectSawCountAfterDispatch = Locked<[Int]>([])
        let effect = SideEffect<TestState, TestAction> { action, api in
            if action == .increment {
                api.dispatch(.add(10))
                // Queued: not reduced yet while this effect still runs.
                effectSawCountAfterDispatch.append(api.state.count)
            }
        }
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, _ in
                    firstSaw.append(action)
                    return true
                },
                Middleware(effect),
            ]
        )
        store.dispatch(.increment)
        #expect(firstSaw.current == [.increment, .add(10)])
        #expect(effectSawCountAfterDispatch.current == [1])
        #expect(store.state.count == 11)
    }

    @Test func oneSideEffectValueServesSeveralStoresWithStateOfItsOwnEach() {
        let scheduler = TestScheduler()
        let runs = Locked<[Int]>([])
        let throttled = Middlewares.throttle(.seconds(10), runs: .inDispatch, on: scheduler) {
            (action: TestAction, _: MiddlewareAPI<TestState, TestAction>) in
            if case .add(let value) = action { runs.append(value) }
        }
        let first = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(throttled)])
        let second = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(throttled)])
        first.dispatch(.add(1))
        first.dispatch(.add(2))  // dropped: first store's window is open
        second.dispatch(.add(3))  // runs: the second store has its own window
        #expect(runs.current == [1, 3])
    }

    @Test func asyncEffectRunsInATaskAndCanDispatch() async {
        let effect = SideEffect<TestState, TestAction> { action, api in
            if action == .increment {
                await Task.yield()
                api.dispatch(.add(41))
            }
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.increment)
        #expect(await store.state { $0.count == 42 })
    }

    @Test func freeingTheStoreCancelsItsAsyncEffects() async {
        let outcome = Locked<String?>(nil)
        var store: Store<TestState, TestAction>? = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    SideEffect<TestState, TestAction> { _, api in
                        await waitUntilCancelled()
                        outcome.withValue { $0 = "cancelled, api cancelled: \(api.isCancelled)" }
                    }
                )
            ]
        )
        store?.dispatch(.increment)
        store = nil
        #expect(await outcome.wait { $0 != nil })
        #expect(outcome.current == "cancelled, api cancelled: true")
    }

    @Test func freeingTheStoreCancelsPendingTimersAndReleasesMemory() {
        final class Captured: Sendable {}
        let scheduler = TestScheduler()
        let ran = Locked(0)
        weak var weakStore: Store<TestState, TestAction>?
        weak var weakCaptured: Captured?
        do {
            let captured = Captured()
            weakCaptured = captured
            let effect = SideEffect<TestState, TestAction> { _, _ in
                _ = captured
                ran.withValue { $0 += 1 }
            }
            let store = Store(
                initialState: TestState(),
                reducer: testReducer,
                middleware: [
                    Middleware(Middlewares.debounce(.milliseconds(100), on: scheduler, effect)),
                    Middleware(Middlewares.delay(.milliseconds(100), on: scheduler, effect)),
                    Middleware(
                        Middlewares.throttle(.milliseconds(100), latest: true, runs: .inDispatch, on: scheduler, effect)
                    ),
                ]
            )
            weakStore = store
            store.dispatch(.increment)  // the throttle's leading run
            store.dispatch(.increment)
            #expect(ran.current == 1)
            #expect(scheduler.pendingWorkCount == 3)
        }
        #expect(weakStore == nil)
        #expect(scheduler.pendingWorkCount == 0)
        scheduler.run()
        #expect(ran.current == 1)  // nothing ran after the store was gone
        #expect(weakCaptured == nil)
    }
}
