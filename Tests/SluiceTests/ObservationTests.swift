import Observation
import Sluice
import Testing

/// `Store` is `Observable`: a tracked read of `state` is told about the next reduced action.
@Suite struct ObservationTests {
    /// Tracks a read of `store.state.count`; `changes` counts the calls of `onChange`.
    private func track(_ store: Store<TestState, TestAction>, _ changes: Locked<Int>) {
        withObservationTracking {
            _ = store.state.count
        } onChange: {
            changes.withValue { $0 += 1 }
        }
    }

    @Test func aTrackedReadIsToldAboutTheNextDispatch() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let changes = Locked(0)
        track(store, changes)
        #expect(changes.current == 0)
        store.dispatch(.increment)
        #expect(changes.current == 1)
    }

    @Test func aTrackedReadIsToldAboutADispatchThroughTheMiddleware() {
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [tap { _, _ in true }]
        )
        let changes = Locked(0)
        track(store, changes)
        store.dispatch(.increment)
        #expect(changes.current == 1)
    }

    @Test func onChangeSeesTheNewState() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let seen = Locked<[Int]>([])
        withObservationTracking {
            _ = store.state
        } onChange: {
            seen.append(store.state.count)
        }
        store.dispatch(.add(3))
        #expect(seen.current == [3])
    }

    @Test func trackingIsOneShotAndAReadArmsItAgain() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let changes = Locked(0)
        track(store, changes)
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(changes.current == 1)
        track(store, changes)
        store.dispatch(.increment)
        #expect(changes.current == 2)
    }

    @Test func onChangeMayDispatchAndTheActionIsQueued() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        withObservationTracking {
            _ = store.state.count
        } onChange: {
            store.dispatch(.add(10))
        }
        store.dispatch(.increment)
        #expect(store.state.count == 11)
    }

    @Test func aSubscriberAndAnObserverAreBothNotified() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let order = Locked<[String]>([])
        let subscription = store.subscribe { _ in order.append("subscriber") }
        withObservationTracking {
            _ = store.state
        } onChange: {
            order.append("observer")
        }
        store.dispatch(.increment)
        #expect(order.current == ["subscriber", "observer"])
        subscription.cancel()
    }

    /// The hot path: without a read of `state` since the last action, a dispatch does not call Observation.
    @Test func onlyAReadOfStateMarksTheStoreObserved() {
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { _, api in
                    _ = api.state  // a middleware's read is not a tracked read
                    return true
                }
            ]
        )
        #expect(!store.isObservedSinceLastChange)
        store.dispatch(.increment)
        #expect(!store.isObservedSinceLastChange)
        store.run { api in _ = api.state }
        #expect(!store.isObservedSinceLastChange)
        _ = store.state
        #expect(store.isObservedSinceLastChange)
        store.dispatch(.increment)
        #expect(!store.isObservedSinceLastChange)
    }

    @Test func cancellingTheLastSubscriberAfterATrackedReadStillReportsTheChange() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let changes = Locked(0)
        let subscription = store.subscribe { _ in }
        track(store, changes)
        subscription.cancel()
        store.dispatch(.increment)
        #expect(changes.current == 1)
        // And a subscriber that comes and goes leaves the store unobserved once the change was reported.
        let other = store.subscribe { _ in }
        other.cancel()
        #expect(!store.isObservedSinceLastChange)
        store.dispatch(.increment)
        #expect(changes.current == 1)
    }

    @Test func aScopedReadIsTrackedToo() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let log = store.scope(\.log)
        let changes = Locked(0)
        withObservationTracking {
            _ = log.state
        } onChange: {
            changes.withValue { $0 += 1 }
        }
        store.dispatch(.record("a"))
        #expect(changes.current == 1)
    }

    /// Reads of `state` make the next dispatch take the slow path (it reports to Observation), so dispatches from
    /// several threads alternate between the fast and the slow path: a dispatch that waited for the pipeline and
    /// then took the fast path must still wake the next waiter, or the other threads wait forever.
    @Test func readsAndDispatchesFromManyThreadsNeverStall() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        for _ in 0..<20 {
            // One thread reads now and then: the next dispatch is a slow one, which other threads wait for.
            await runOnThreads(4) { thread in
                for index in 0..<1_000 {
                    if thread == 0, index.isMultiple(of: 50) {
                        // A slow dispatch that takes a while (20 observers to tell), for the others to queue up.
                        for _ in 0..<20 {
                            withObservationTracking {
                                _ = store.state
                            } onChange: {
                            }
                        }
                    }
                    store.dispatch(.increment)
                }
            }
        }
        #expect(store.state.count == 20 * 4_000)
    }

    /// Observers track on several threads, then several threads dispatch: each tracking fires exactly once.
    @Test func observersOnSeveralThreadsAreEachToldOnce() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let changes = Locked(0)
        for _ in 0..<50 {
            await runOnThreads(4) { _ in
                for _ in 0..<5 {
                    track(store, changes)
                }
            }
            await runOnThreads(4) { _ in
                for _ in 0..<10 {
                    store.dispatch(.increment)
                }
            }
        }
        #expect(changes.current == 50 * 4 * 5)
        #expect(store.state.count == 50 * 4 * 10)
    }

    /// Threads that track and dispatch at the same time: no tracking is lost.
    ///
    /// Two facts of Observation itself (seen with a plain `ObservationRegistrar` too) make exact counts impossible
    /// here: `withObservationTracking` installs its observer after the tracked closure returns, so a change made on
    /// another thread in between is not reported to it (the store then reports to it after the next read of
    /// `state`); and a change that arrives while an observer is being installed can leave that observer registered,
    /// so its `onChange` runs again on later changes. So: after a final read and dispatch, every tracking has been
    /// told at least once.
    @Test func concurrentTrackingAndDispatchingLoseNoTracking() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let fired = Locked([Int](repeating: 0, count: 4 * 500))
        await runOnThreads(4) { thread in
            for index in 0..<500 {
                let slot = thread * 500 + index
                withObservationTracking {
                    _ = store.state.count
                } onChange: {
                    fired.withValue { $0[slot] += 1 }
                }
                store.dispatch(.increment)
            }
        }
        _ = store.state
        store.dispatch(.noop)
        #expect(fired.current.allSatisfy { $0 >= 1 })
        #expect(store.state.count == 4 * 500)
    }
}
