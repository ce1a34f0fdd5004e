import Foundation
import Testing

@testable import Sluice

/// `dispatch(_:reading:)`: the state right after the reducer handled this dispatch's action, or `nil`.
@Suite struct DispatchReadingTests {
    /// A middleware that replaces every `.increment` with `.add(10)`.
    private let tenfold = Middleware<TestState, TestAction> { _ in
        { next in
            { action in next(action == .increment ? .add(10) : action) }
        }
    }

    @Test func readsAfterTheOwnActionWithoutMiddleware() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        #expect(store.dispatch(.add(5), reading: { $0.count }) == 5)
        #expect(store.dispatch(.increment, reading: { $0.count }) == 6)
    }

    @Test func readsAfterTheOwnActionThroughMiddleware() {
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [tap { _, _ in true }])
        #expect(store.dispatch(.add(5), reading: { $0.count }) == 5)
        #expect(store.dispatch(.record("a"), reading: { $0.log }) == ["a"])
    }

    @Test func aTransformedActionIsThisDispatchsAction() {
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [tenfold])
        #expect(store.dispatch(.increment, reading: { $0.count }) == 10)
    }

    @Test func aSwallowedActionReadsNil() {
        let calls = Locked(0)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [tap { action, _ in action != .noop }]
        )
        let result = store.dispatch(.noop) { state -> Int in
            calls.withValue { $0 += 1 }
            return state.count
        }
        #expect(result == nil)
        #expect(calls.current == 0)
        // The next dispatch is not affected by the one that read nothing.
        #expect(store.dispatch(.increment, reading: { $0.count }) == 1)
    }

    @Test func anActionPassedOnLaterReadsNilAndIsNotReadWhenItArrives() {
        let held = Locked<[@Sendable () -> Void]>([])
        let holdBack = Middleware<TestState, TestAction> { _ in
            { next in
                { action in held.append { next(action) } }
            }
        }
        let calls = Locked(0)
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [holdBack])
        let result = store.dispatch(.add(3)) { state -> Int in
            calls.withValue { $0 += 1 }
            return state.count
        }
        #expect(result == nil)
        #expect(store.state.count == 0)
        for release in held.current { release() }  // the action reaches the reducer now, after the dispatch
        #expect(store.state.count == 3)
        #expect(calls.current == 0)
    }

    @Test func anActionPassedOnFromAnotherThreadReadsNil() {
        let queue = DispatchQueue(label: "elsewhere")
        let hop = Middleware<TestState, TestAction> { _ in
            { next in
                { action in queue.async { next(action) } }
            }
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [hop])
        #expect(store.dispatch(.add(3), reading: { $0.count }) == nil)
        queue.sync {}  // the hop ran
        #expect(store.state.count == 3)
    }

    @Test func everyActionPassedOnDuringTheRunOfTheChainIsInTheReading() {
        // A middleware that passes on another action before this one: the reading shows both.
        let prefix = Middleware<TestState, TestAction> { _ in
            { next in
                { action in
                    if action == .increment { next(.add(100)) }
                    next(action)
                }
            }
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [prefix])
        #expect(store.dispatch(.increment, reading: { $0.count }) == 101)
    }

    @Test func actionsQueuedDuringTheDispatchAreNotInTheReading() {
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, api in
                    if action == .increment { api.dispatch(.add(100)) }  // queued: runs after this action
                    return true
                }
            ]
        )
        #expect(store.dispatch(.increment, reading: { $0.count }) == 1)
        #expect(store.state.count == 101)  // the queued action ran before dispatch returned
    }

    @Test func theReadingFollowsTheSubscribersOfTheActionAndPrecedesTheQueuedActions() {
        for middleware in [[], [tap { _, _ in true }]] {
            let events = Locked<[String]>([])
            let store = Store(initialState: TestState(), reducer: testReducer, middleware: middleware)
            let subscription = store.subscribe { state in
                events.append("notified \(state.count)")
                if state.count == 1 {
                    store.dispatch(.add(10))  // queued: runs after the reading
                }
            }
            let result = store.dispatch(.increment) { state -> Int in
                events.append("read \(state.count)")
                return state.count
            }
            #expect(result == 1)
            #expect(events.current == ["notified 1", "read 1", "notified 11"])
            subscription.cancel()
        }
    }

    @Test func cancellingTheLastSubscriptionDuringTheRunOfTheChainKeepsTheReading() {
        // The middleware cancels the only subscription before passing the action on: the store then has nobody to
        // notify, but the reading must still be taken.
        let subscription = Locked<Subscription?>(nil)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { _, _ in
                    subscription.withValue { $0?.cancel() }
                    return true
                }
            ]
        )
        subscription.withValue { $0 = store.subscribe { _ in } }
        #expect(store.dispatch(.add(2), reading: { $0.count }) == 2)
    }

    @Test func aDispatchFromInsideADispatchIsQueuedAndReadsNil() {
        final class Box: @unchecked Sendable { var store: Store<TestState, TestAction>? }
        let box = Box()
        let results = Locked<[Int?]>([])
        for middleware in [[], [tap { _, _ in true }]] {
            let store = Store(initialState: TestState(), reducer: testReducer, middleware: middleware)
            box.store = store
            let subscription = store.subscribe { state in
                if state.count == 1 {
                    results.append(box.store?.dispatch(.add(10), reading: { $0.count }))
                }
            }
            #expect(store.dispatch(.increment, reading: { $0.count }) == 1)
            #expect(store.state.count == 11)  // the queued action ran before the outer dispatch returned
            subscription.cancel()
            box.store = nil
        }
        #expect(results.current == [nil, nil])
    }

    @Test func aStoreThatIsGoneReadsNil() {
        let (store, api) = makeStoreAndAPI()
        #expect(api.dispatch(.add(2), reading: { $0.count }) == 2)
        store.withValue { $0 = nil }
        #expect(api.dispatch(.add(2), reading: { $0.count }) == nil)
    }

    @Test func aCancelledEffectReadsNil() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let gate = AsyncGate()
        let task = store.start { api in
            await waitUntilCancelled()
            gate.open()
            return api.dispatch(.increment, reading: { $0.count })
        }
        task.cancel()
        await gate.wait()
        #expect(try await task.value == nil)
        #expect(store.state.count == 0)
    }

    /// As `MiddlewareAPITests.aDispatchFromAnotherThreadDuringInstallationGoesThroughTheWholeChain`, with a reading:
    /// the poller's action waits until the whole chain is installed, then goes through it, and is read.
    @Test func aReadingDispatchFromAnotherThreadDuringInstallationGoesThroughTheWholeChain() {
        let reading = Locked<Int?>(nil)
        let (store, seen) = storeWithAPollerDuringSlowInstallation { api in
            reading.withValue { $0 = api.dispatch(.add(42), reading: { $0.count }) }
        }
        #expect(seen == ["slow saw add(42)", "poller saw add(42)"])
        #expect(reading.current == 42)
        #expect(store.state.count == 42)
    }

    @Test func anEffectReadsTheResultOfItsDispatch() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [tap { _, _ in true }])
        let count = try await store.run { api in
            await Task.yield()  // an asynchronous effect, outside any dispatch
            return api.dispatch(.add(7), reading: { $0.count })
        }
        #expect(count == 7)
    }

    @Test func eachOfManyConcurrentDispatchesReadsItsOwnAction() async {
        // Every dispatch adds 1; if a reading could include a later action of another thread, two readings would
        // be equal (or one would be missing).
        let threads = 4
        let perThread = 2_000
        for middleware in [[], [tap { _, _ in true }]] {
            let store = Store(initialState: TestState(), reducer: testReducer, middleware: middleware)
            let notified = Locked(0)
            let subscription = store.subscribe { _ in notified.withValue { $0 += 1 } }
            let collected = Locked<[Int]>([])
            await runOnThreads(threads) { _ in
                var mine = [Int]()
                mine.reserveCapacity(perThread)
                for _ in 0..<perThread {
                    mine.append(store.dispatch(.increment, reading: { $0.count }) ?? -1)
                }
                collected.withValue { $0 += mine }
            }
            // Each reading is a different count, and together they are 1 ... total.
            let readings = collected.current
            #expect(readings.count == threads * perThread)
            #expect(Set(readings).count == readings.count)
            #expect(readings.min() == 1 && readings.max() == threads * perThread)
            #expect(notified.current == threads * perThread)
            subscription.cancel()
        }
    }
}
