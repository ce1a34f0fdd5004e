import Dispatch
import Foundation
import Sluice
import SluiceTesting
import Testing

@Suite struct CombineTests {
    @Test func combinedMiddlewareRunsFirstOutermost() {
        let events = Locked<[String]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middlewares.combine(recording("a", into: events), recording("b", into: events)),
                recording("c", into: events),
            ]
        )
        store.dispatch(.increment)
        #expect(events.current == ["a in", "b in", "c in", "c out", "b out", "a out"])
    }

    @Test func combinedSideEffectsRunInOrder() {
        let events = Locked<[String]>([])
        let effect = Middlewares.combine(
            SideEffect<TestState, TestAction> { _, _ in events.append("first") },
            SideEffect { _, _ in events.append("second") },
            Middlewares.filter({ $0 == .noop }, SideEffect { _, _ in events.append("only noop") })
        )
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.increment)
        store.dispatch(.noop)
        #expect(events.current == ["first", "second", "first", "second", "only noop"])
    }

    @Test func filterAroundCombinedEffectsRunsNoPartForARejectedAction() {
        // The combined handler asks each part; the filter around it must still be asked first.
        let events = Locked<[String]>([])
        let effect = Middlewares.filter(
            { $0 == .noop },
            Middlewares.combine(
                SideEffect<TestState, TestAction> { _, _ in events.append("any") },
                Middlewares.filter({ $0 != .noop }, SideEffect { _, _ in events.append("not noop") })
            )
        )
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.increment)
        store.dispatch(.noop)
        #expect(events.current == ["any"])
        #expect(store.state.count == 1)
    }

    @Test func combinedEffectAcceptsWhatAnyPartAccepts() {
        let harness = EffectHarness { scheduler, effect in
            Middlewares.throttle(
                .milliseconds(100),
                runs: .inDispatch,
                on: scheduler,
                Middlewares.combine(
                    Middlewares.filter({ $0 == .add(1) }, effect),
                    Middlewares.filter({ $0 == .add(2) }, effect)
                )
            )
        }
        harness.store.dispatch(.add(3))  // accepted by no part: it opens no window
        #expect(harness.recorded.isEmpty)
        harness.store.dispatch(.add(1))  // accepted by the first part: runs and opens the window
        harness.store.dispatch(.add(2))  // accepted by the second part: inside the window, dropped
        #expect(harness.recorded.map(\.value) == [1])
    }
}
