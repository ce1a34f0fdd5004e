import Dispatch
import Sluice
import SluiceTesting
import Testing

@Suite struct TakeLatestTests {
    private typealias API = MiddlewareAPI<TestState, TestAction>

    @Test func aNewRunCancelsThePreviousRunsAPI() {
        let apis = Locked<[API]>([])
        let effect = Middlewares.takeLatest { (_: TestAction, api: API) in apis.append(api) }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.add(1))
        let first = apis.current[0]
        #expect(first.isCancelled == false)
        store.dispatch(.add(2))
        let second = apis.current[1]
        #expect(first.isCancelled)
        #expect(second.isCancelled == false)
        // The superseded run's dispatch is a no-op; the current one's goes through.
        first.dispatch(.add(100))
        second.dispatch(.add(1_000))
        #expect(store.state.count == 1 + 2 + 1_000)
    }

    @Test func supersededAsyncRunIsCancelledAndItsDispatchDropped() async {
        let events = Locked<[String]>([])
        let effect = Middlewares.takeLatest { (action: TestAction, api: API) async in
            guard case .add(let value) = action, value < 100 else { return }
            if value == 1 { await waitUntilCancelled() }
            events.append("\(value) ended, cancelled: \(Task.isCancelled)")
            api.dispatch(.add(value * 100))
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.add(1))  // runs until cancelled
        store.dispatch(.add(2))  // supersedes it
        #expect(await events.wait { $0.count == 2 })
        #expect(Set(events.current) == ["1 ended, cancelled: true", "2 ended, cancelled: false"])
        #expect(await store.state { $0.count == 1 + 2 + 200 })
        #expect(store.state.count == 203)  // the 100 from the superseded run was dropped
    }

    @Test func timersOfModifiersInsideASupersededRunDoNotRun() {
        let harness = EffectHarness { scheduler, effect in
            Middlewares.takeLatest(Middlewares.delay(.milliseconds(100), on: scheduler, effect))
        }
        harness.play([0, 50])
        #expect(harness.recorded == runs([(50, 150)]))
    }

    @Test func filteredOutActionDoesNotSupersedeTheRun() {
        let apis = Locked<[API]>([])
        let record = SideEffect<TestState, TestAction> { _, api in apis.append(api) }
        let onlyAdds: @Sendable (TestAction) -> Bool = { if case .add = $0 { true } else { false } }
        for effect in [
            Middlewares.takeLatest(Middlewares.filter(onlyAdds, record)),
            Middlewares.filter(onlyAdds, Middlewares.takeLatest(record)),
        ] {
            apis.withValue { $0 = [] }
            let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
            store.dispatch(.add(1))
            store.dispatch(.increment)  // rejected by the filter
            store.dispatch(.record("x"))  // rejected by the filter
            #expect(apis.current.count == 1)
            #expect(apis.current[0].isCancelled == false)
        }
    }

    @Test func nestedTakeLatestCancelsInnerRunsWithTheOuter() {
        let apis = Locked<[API]>([])
        let effect = Middlewares.takeLatest(Middlewares.takeLatest { (_: TestAction, api: API) in apis.append(api) })
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(apis.current.map(\.isCancelled) == [true, false])
    }

    @Test func freeingTheStoreCancelsTheCurrentRun() {
        let apis = Locked<[API]>([])
        var store: Store<TestState, TestAction>? = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [Middleware(Middlewares.takeLatest { (_: TestAction, api: API) in apis.append(api) })]
        )
        store?.dispatch(.increment)
        store = nil
        #expect(apis.current[0].isCancelled)
    }
}
