import Sluice
import Testing

/// Misuse gets a defined answer, not a crash.
@Suite struct MisuseTests {
    @Test func dispatchThroughTheAPIOfAFreedStoreDoesNothing() async {
        let (store, api) = makeStoreAndAPI()
        store.current?.dispatch(.increment)
        store.withValue { $0 = nil }
        await runOnThreads(4) { _ in
            for _ in 0..<100 { api.dispatch(.increment) }
        }
        #expect(api.state.count == 1)
        #expect(api.isCancelled)
    }

    @Test func cancellingASubscriptionTwiceIsHarmless() {
        let calls = Locked(0)
        let store = Store(initialState: TestState(), reducer: testReducer)
        let subscription = store.subscribe { _ in calls.withValue { $0 += 1 } }
        let other = store.subscribe { _ in calls.withValue { $0 += 10 } }
        subscription.cancel()
        subscription.cancel()
        store.dispatch(.increment)
        #expect(calls.current == 10)  // the second cancel did not remove another subscriber
        other.cancel()
    }

    @Test func subscribingAndCancellingInsideANotification() {
        let events = Locked<[String]>([])
        let store = Store(initialState: TestState(), reducer: testReducer)
        let added = Locked<[Subscription]>([])
        let selfCancelling = Locked<Subscription?>(nil)
        selfCancelling.withValue {
            $0 = store.subscribe { state in
                events.append("self \(state.count)")
                selfCancelling.current?.cancel()  // cancels itself from inside its own notification
            }
        }
        let adder = store.subscribe { state in
            events.append("adder \(state.count)")
            let count = state.count
            added.append(store.subscribe { state in events.append("added@\(count) \(state.count)") })
        }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(events.current == ["self 1", "adder 1", "adder 2", "added@1 2"])
        adder.cancel()
        for subscription in added.current { subscription.cancel() }
    }

    @Test func subscriberDispatchingIntoASecondStoreThatDispatchesBackIntoTheFirst() {
        let first = Store(initialState: TestState(), reducer: testReducer)
        let second = Store(initialState: TestState(), reducer: testReducer)
        let toSecond = first.subscribe(to: \.count) { count in
            if count < 100 { second.dispatch(.add(1)) }
        }
        let toFirst = second.subscribe(to: \.count) { _ in first.dispatch(.increment) }
        first.dispatch(.increment)
        // The ping-pong ran to completion on this thread without recursion, deadlock or lost actions.
        #expect(first.state.count == 100)
        #expect(second.state.count == 99)
        toSecond.cancel()
        toFirst.cancel()
    }

    @Test func twoStoresPingPongFromManyThreads() async {
        let first = Store(initialState: TestState(), reducer: testReducer)
        let second = Store(initialState: TestState(), reducer: testReducer)
        // Every record in the first store sends `.add(1)` to the second, which sends `.increment` back. Two threads
        // can each own one store and dispatch into the other: the second hands its action over instead of waiting.
        let forward = first.subscribe(to: \.log.count) { _ in second.dispatch(.add(1)) }
        let back = second.subscribe(to: \.count) { _ in first.dispatch(.increment) }
        await runOnThreads(4) { _ in
            for _ in 0..<250 {
                first.dispatch(.record("forward"))
            }
        }
        #expect(second.state.count == 1_000)
        #expect(first.state.count == 1_000)
        #expect(first.state.log.count == 1_000)
        forward.cancel()
        back.cancel()
    }

    @Test func dispatchFromHundredsOfThreadsAtOnce() async {
        let threads = 200
        let perThread = 100
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [tap { _, _ in true }]
        )
        let notifications = Locked(0)
        let subscription = store.subscribe { _ in notifications.withValue { $0 += 1 } }
        await runOnThreads(threads) { _ in
            for _ in 0..<perThread { store.dispatch(.increment) }
        }
        #expect(store.state.count == threads * perThread)
        #expect(notifications.current == threads * perThread)
        subscription.cancel()
    }

    @Test func releasingTheStoreWhileAnotherThreadDispatchesThroughItsAPI() async {
        // The store goes away while a thread is dispatching through a saved API: nothing crashes, and every
        // dispatch either happened before the store went away or did nothing.
        for _ in 0..<50 {
            let (store, api) = makeStoreAndAPI()
            store.current?.dispatch(.noop)
            await runOnThreads(2) { index in
                if index == 0 {
                    for _ in 0..<200 { api.dispatch(.increment) }
                } else {
                    store.withValue { $0 = nil }
                }
            }
            #expect(api.isCancelled)
            #expect(api.state.count <= 200)
        }
    }

    #if DEBUG
    @Test func reducerThatCallsItsOwnStoreStopsWithAMessageInDebugBuilds() async {
        await #expect(processExitsWith: .failure) {
            final class Box: @unchecked Sendable { var store: Store<Int, Int>? }
            let box = Box()
            box.store = Store(
                initialState: 0,
                reducer: Reducer(mutating: { state, action in
                    state += action
                    _ = box.store?.state  // a reducer must not call its store
                })
            )
            box.store?.dispatch(1)
        }
    }
    #endif
}
