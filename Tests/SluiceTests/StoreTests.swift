import Foundation
import Sluice
import Testing

/// One test (or more) per rule of the dispatch contract (the DocC article "The dispatch contract",
/// Sources/Sluice/Sluice.docc/DispatchContract.md), named after the rule.
@Suite struct StoreTests {
    // MARK: Rule 1

    @Test func rule1_synchronousRunToCompletion() {
        let notified = Locked<[Int]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, api in
                    if action == .increment { api.dispatch(.add(10)) }
                    return true
                }
            ]
        )
        let subscription = store.subscribe { state in notified.append(state.count) }
        store.dispatch(.increment)
        // When dispatch returns, the action, the action it caused, and both notifications are done.
        #expect(store.state.count == 11)
        #expect(notified.current == [1, 11])
        subscription.cancel()
    }

    @Test func rule1_initialStateIsVisibleBeforeAnyDispatch() {
        let store = Store(initialState: TestState(count: 42), reducer: testReducer)
        #expect(store.state.count == 42)
    }

    // MARK: Rule 2

    @Test func rule2_reentrantDispatchIsQueuedFIFONotRecursive() {
        let depth = Locked(0)
        let maxDepth = Locked(0)
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware { api in
                    { next in
                        { action in
                            depth.withValue { $0 += 1 }
                            maxDepth.withValue { [d = depth.current] in $0 = max($0, d) }
                            if action == .record("A") {
                                api.dispatch(.record("B"))
                                api.dispatch(.record("C"))
                            }
                            next(action)
                            depth.withValue { $0 -= 1 }
                        }
                    }
                }
            ]
        )
        let subscription = store.subscribe { state in
            if state.log.last == "B" { store.dispatch(.record("D")) }
        }
        store.dispatch(.record("A"))
        #expect(store.state.log == ["A", "B", "C", "D"])
        #expect(maxDepth.current == 1)
        subscription.cancel()
    }

    @Test func rule2_longChainOfReentrantDispatchesDoesNotGrowTheStack() {
        // Each notification dispatches the next action: recursive dispatch would overflow the stack.
        let store = Store(initialState: TestState(), reducer: testReducer)
        let subscription = store.subscribe { state in
            if state.count < 200_000 { store.dispatch(.increment) }
        }
        store.dispatch(.increment)
        #expect(store.state.count == 200_000)
        subscription.cancel()
    }

    @Test func rule2_dispatchFromASideEffectIsQueuedAndGoesThroughTheWholeChain() {
        let seenByFirst = Locked<[TestAction]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, _ in
                    seenByFirst.append(action)
                    return true
                },
                tap { action, api in
                    if action == .increment {
                        // Runs after the reducer (like a side effect) and dispatches.
                        api.dispatch(.add(5))
                    }
                    return true
                },
            ]
        )
        store.dispatch(.increment)
        #expect(seenByFirst.current == [.increment, .add(5)])
        #expect(store.state.count == 6)
    }

    // MARK: Rule 3

    @Test func rule3_dispatchesFromManyThreadsAreSerializedWithExactTotals() async {
        let threads = 8
        let perThread = 5_000
        let seen = Locked<[Int]>([])
        let store = Store(initialState: TestState(), reducer: testReducer)
        let subscription = store.subscribe { state in seen.append(state.count) }
        await runOnThreads(threads) { _ in
            for _ in 0..<perThread {
                store.dispatch(.increment)
            }
        }
        #expect(store.state.count == threads * perThread)
        // Every subscriber notification saw the state one step after the previous one: nothing lost or reordered.
        #expect(seen.current == Array(1...(threads * perThread)))
        subscription.cancel()
    }

    @Test func rule3_middlewareStoresAreSerializedAcrossThreadsToo() async {
        let threads = 4
        let perThread = 2_000
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, api in
                    if action == .increment { api.dispatch(.add(2)) }
                    return true
                }
            ]
        )
        let seen = Locked<[Int]>([])
        let subscription = store.subscribe { state in seen.append(state.count) }
        await runOnThreads(threads) { _ in
            for _ in 0..<perThread {
                store.dispatch(.increment)
            }
        }
        #expect(store.state.count == threads * perThread * 3)
        let counts = seen.current
        #expect(counts.count == threads * perThread * 2)
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 < $1 })
        subscription.cancel()
    }

    @Test func rule3_readingStateWhileOtherThreadsDispatch() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        await runOnThreads(4) { index in
            if index < 2 {
                for _ in 0..<10_000 { store.dispatch(.increment) }
            } else {
                var last = 0
                for _ in 0..<10_000 {
                    let now = store.state.count
                    precondition(now >= last, "state went backwards")
                    last = now
                }
            }
        }
        #expect(store.state.count == 20_000)
    }

    @Test func rule3_reentrancyIsPerThreadNotPerTask() async {
        // A Task started inside a middleware runs on another thread: its dispatch must wait for the pipeline and
        // then run (not be mistaken for a re-entrant dispatch and queued forever, or lost).
        let started = Locked<Task<Void, Never>?>(nil)
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, api in
                    if action == .increment {
                        started.withValue { $0 = Task.detached { api.dispatch(.add(100)) } }
                    }
                    return true
                }
            ]
        )
        store.dispatch(.increment)
        await started.current?.value
        #expect(store.state.count == 101)
    }

    // MARK: Rule 4

    @Test func rule4_reducerStartsFromTheCurrentStateNotASnapshot() async {
        // The middleware holds `.record("late")` back and reduces it later from another thread, after another
        // action was reduced: the reducer must see that action's result.
        let heldNext = Locked<DispatchFunction<TestAction>?>(nil)
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware { _ in
                    { next in
                        { action in
                            if action == .record("late") {
                                heldNext.withValue { $0 = next }
                            } else {
                                next(action)
                            }
                        }
                    }
                }
            ]
        )
        store.dispatch(.record("late"))
        store.dispatch(.record("early"))
        let next = heldNext.current!
        await runOnThreads(1) { _ in next(.record("late")) }
        #expect(store.state.log == ["early", "late"])
    }

    // MARK: Rule 5

    @Test func rule5_middlewareRunsInArrayOrderAndTheLastNextReducesAndNotifies() {
        let events = Locked<[String]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [recording("a", into: events), recording("b", into: events), recording("c", into: events)]
        )
        let subscription = store.subscribe { state in events.append("notified \(state.count)") }
        store.dispatch(.increment)
        #expect(events.current == ["a in", "b in", "c in", "notified 1", "c out", "b out", "a out"])
        subscription.cancel()
    }

    @Test func rule5_middlewareCanTransformSwallowAndRedispatch() {
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                // Swallows .noop.
                tap { action, _ in action != .noop },
                // Doubles every .add.
                Middleware { _ in
                    { next in
                        { action in
                            if case .add(let amount) = action { next(.add(amount * 2)) } else { next(action) }
                        }
                    }
                },
            ]
        )
        store.dispatch(.noop)
        store.dispatch(.add(3))
        #expect(store.state.count == 6)
    }

    @Test func rule5_apiDispatchEntersAtTheFirstMiddleware() {
        let seenByFirst = Locked<[TestAction]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, _ in
                    seenByFirst.append(action)
                    return true
                },
                tap { action, api in
                    if action == .increment { api.dispatch(.noop) }
                    return true
                },
            ]
        )
        store.dispatch(.increment)
        #expect(seenByFirst.current == [.increment, .noop])
    }

    @Test func rule5_reSwiftSpellingGetsDispatchAndGetState() {
        let counts = Locked<[Int]>([])
        let middleware = Middleware<TestState, TestAction> { dispatch, getState in
            { next in
                { action in
                    next(action)
                    counts.append(getState().count)
                    if action == .increment { dispatch(.add(10)) }
                }
            }
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [middleware])
        store.dispatch(.increment)
        #expect(counts.current == [1, 11])
    }

    @Test func rule5_nextCalledFromAnotherThreadAfterTheStoreIsGoneDoesNothing() async {
        let heldNext = Locked<DispatchFunction<TestAction>?>(nil)
        var store: Store<TestState, TestAction>? = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware { _ in
                    { next in
                        heldNext.withValue { $0 = next }
                        return { action in next(action) }
                    }
                }
            ]
        )
        store?.dispatch(.increment)
        store = nil
        let next = heldNext.current!
        await runOnThreads(1) { _ in next(.increment) }  // must not crash or block
        #expect(store == nil)
    }

    // MARK: Rule 6

    @Test func rule6_subscribersAreNotifiedInSubscriptionOrderAfterEachAction() {
        let events = Locked<[String]>([])
        let store = Store(initialState: TestState(), reducer: testReducer)
        let first = store.subscribe { state in events.append("first \(state.count)") }
        let second = store.subscribe { state in events.append("second \(state.count)") }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(events.current == ["first 1", "second 1", "first 2", "second 2"])
        _ = (first, second)
    }

    @Test func rule6_subscribingDuringANotificationTakesEffectFromTheNextAction() {
        let events = Locked<[String]>([])
        let late = Locked<Subscription?>(nil)
        let store = Store(initialState: TestState(), reducer: testReducer)
        let first = store.subscribe { state in
            events.append("first \(state.count)")
            if state.count == 1 {
                late.withValue {
                    $0 = store.subscribe { state in events.append("late \(state.count)") }
                }
            }
        }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(events.current == ["first 1", "first 2", "late 2"])
        first.cancel()
        late.current?.cancel()
    }

    @Test func rule6_cancellingDuringANotificationTakesEffectFromTheNextAction() {
        let events = Locked<[String]>([])
        let store = Store(initialState: TestState(), reducer: testReducer)
        let second = Locked<Subscription?>(nil)
        let first = store.subscribe { state in
            events.append("first \(state.count)")
            if state.count == 1 { second.current?.cancel() }
        }
        second.withValue { $0 = store.subscribe { state in events.append("second \(state.count)") } }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(events.current == ["first 1", "second 1", "first 2"])
        first.cancel()
    }

    @Test func rule6_subscribeToKeyPathSkipsRepeats() {
        let counts = Locked<[Int]>([])
        let store = Store(initialState: TestState(), reducer: testReducer)
        let subscription = store.subscribe(to: \.count) { count in counts.append(count) }
        store.dispatch(.increment)
        store.dispatch(.noop)
        store.dispatch(.record("x"))
        store.dispatch(.add(0))
        store.dispatch(.increment)
        #expect(counts.current == [1, 2])
        subscription.cancel()
    }

    @Test func rule6_subscribeToKeyPathComparesWithTheValueAtSubscription() {
        let counts = Locked<[Int]>([])
        let store = Store(initialState: TestState(count: 5), reducer: testReducer)
        let subscription = store.subscribe(to: \.count) { count in counts.append(count) }
        store.dispatch(.add(0))  // still 5: no call
        store.dispatch(.add(1))
        #expect(counts.current == [6])
        subscription.cancel()
    }

    @Test func rule6_newSubscriberIsNotReplayedTheCurrentState() {
        let calls = Locked(0)
        let store = Store(initialState: TestState(count: 3), reducer: testReducer)
        let subscription = store.subscribe { _ in calls.withValue { $0 += 1 } }
        #expect(calls.current == 0)
        store.dispatch(.noop)
        #expect(calls.current == 1)
        subscription.cancel()
    }

    @Test func rule6_cancelStopsNotifications() {
        let calls = Locked(0)
        let store = Store(initialState: TestState(), reducer: testReducer)
        let subscription = store.subscribe { _ in calls.withValue { $0 += 1 } }
        store.dispatch(.increment)
        subscription.cancel()
        store.dispatch(.increment)
        #expect(calls.current == 1)
    }

    @Test func rule6_discardedSubscriptionCancelsAtOnce() {
        let calls = Locked(0)
        let store = Store(initialState: TestState(), reducer: testReducer)
        _ = store.subscribe { _ in calls.withValue { $0 += 1 } }
        store.dispatch(.increment)
        #expect(calls.current == 0)
    }

    @Test func rule6_subscribersAreNotifiedOnTheDispatchingThread() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let threads = Locked<[Bool]>([])
        let dispatchingThread = Locked<Thread?>(nil)
        let subscription = store.subscribe { _ in threads.append(Thread.current == dispatchingThread.current) }
        await runOnThreads(1) { _ in
            dispatchingThread.withValue { $0 = Thread.current }
            store.dispatch(.increment)
        }
        #expect(threads.current == [true])
        subscription.cancel()
    }

    // MARK: Rule 7

    @Test func rule7_releasingTheStoreFreesItAndItsMiddleware() {
        final class MiddlewareState: Sendable {}
        weak var weakStore: Store<TestState, TestAction>?
        weak var weakMiddlewareState: MiddlewareState?
        do {
            let middlewareState = MiddlewareState()
            weakMiddlewareState = middlewareState
            let store = Store<TestState, TestAction>(
                initialState: TestState(),
                reducer: testReducer,
                middleware: [
                    Middleware { api in
                        // The chain captures the API and per-store state: a cycle if the API kept the store.
                        { next in
                            { action in
                                _ = middlewareState
                                next(action)
                                _ = api.state
                            }
                        }
                    }
                ]
            )
            weakStore = store
            let subscription = store.subscribe { _ in }
            store.dispatch(.increment)
            _ = subscription
        }
        #expect(weakStore == nil)
        #expect(weakMiddlewareState == nil)
    }

    @Test func rule7_apiOfAFreedStoreDoesNothingAndReportsCancelled() {
        let (store, api) = makeStoreAndAPI()
        store.current?.dispatch(.add(7))
        #expect(api.isCancelled == false)
        store.withValue { $0 = nil }
        #expect(api.isCancelled)
        api.dispatch(.add(1))  // does nothing, does not crash
        #expect(api.state.count == 7)  // the last state
    }

    @Test func rule7_subscriptionDoesNotKeepTheStoreAlive() {
        weak var weakStore: Store<TestState, TestAction>?
        var subscription: Subscription?
        do {
            let store = Store(initialState: TestState(), reducer: testReducer)
            weakStore = store
            subscription = store.subscribe { _ in }
        }
        #expect(weakStore == nil)
        subscription?.cancel()  // after the store is gone: does nothing
        subscription = nil
    }

    // MARK: Rule 8 (see also LargeStateTests)

    @Test func rule8_stateIsMovedNotCopied() {
        let store = Store<BigState, Int>(initialState: BigState(elements: 100_000), reducer: appendReducer)
        let addresses = (0..<100).map { value in
            store.dispatch(value)
            return store.state.itemsAddress
        }
        #expect(Set(addresses).count == 1)
        #expect(store.state.items.count == 100_100)
    }
}
