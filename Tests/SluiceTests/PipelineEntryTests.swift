import Dispatch
import Foundation
import Testing

@testable import Sluice

/// The owner word (`PipelineEntry.swift`): an uncontended dispatch takes and gives up the pipeline without the
/// store's lock, and the state machine takes over whenever someone else needs the pipeline meanwhile. These tests
/// check both sides of that hand-over under many threads, with exact totals.
@Suite struct PipelineEntryTests {
    /// Counts how many threads run a section at once, and keeps a plain (unlocked) counter that only the pipeline's
    /// mutual exclusion protects: the thread sanitizer reports a race on it if two owners' work is not ordered.
    final class Exclusion: @unchecked Sendable {
        // @unchecked: `inside` and `maximum` are atomic through `Locked`; `unguarded` is written only by the
        // pipeline's owner, which is what the tests check.
        private let inside = Locked(0)
        let maximum = Locked(0)
        var unguarded = 0

        func run(_ body: () -> Void) {
            inside.withValue { count in
                count += 1
                let current = count
                maximum.withValue { $0 = max($0, current) }
            }
            unguarded += 1
            body()
            inside.withValue { $0 -= 1 }
        }
    }

    private func middleware(_ exclusion: Exclusion) -> Middleware<TestState, TestAction> {
        Middleware { _ in
            { next in
                { action in exclusion.run { next(action) } }
            }
        }
    }

    // MARK: The fast path

    @Test func anUncontendedDispatchOwnsThePipelineThroughTheWordAloneAndCountsNothing() {
        let wordInside = Locked<UInt>(0)
        let owner = Locked<UInt>(0)
        let storeBox = Locked<Store<TestState, TestAction>?>(nil)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { _, _ in
                    if let store = storeBox.current {
                        wordInside.withValue { $0 = store.core.entryWord.value }
                        owner.withValue { $0 = ThreadID.current.raw }
                    }
                    return true
                }
            ]
        )
        storeBox.withValue { $0 = store }
        for _ in 0..<100 {
            store.dispatch(.increment)
        }
        // During the dispatch the word was this thread, without the state machine's bit; after it, idle.
        #expect(wordInside.current == owner.current)
        #expect(wordInside.current & PipelineEntry.slow == 0)
        #expect(store.core.entryWord.value == 0)
        #expect(store.state.count == 100)
        // Reading the statistics does not put the state machine in charge: the fast path stays the fast path.
        #expect(store.statistics == StoreStatistics())
        #expect(store.core.entryWord.value == 0)
        // Code under the lock that reads the machine does (here, the count of waiters); the next dispatch hands the
        // pipeline back to the fast path.
        #expect(store.core.lock.withLock { store.core.waiters } == 0)
        #expect(store.core.entryWord.value == PipelineEntry.slow)
        store.dispatch(.increment)
        #expect(store.core.entryWord.value == 0)
        storeBox.withValue { $0 = nil }
    }

    @Test func aSubscriberOnlyStoreTakesThePipelineThroughTheWord() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let seen = Locked<[Int]>([])
        let subscription = store.subscribe { state in
            seen.withValue { $0.append(state.count) }
            #expect(store.core.entryWord.value == ThreadID.current.raw)
        }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(seen.current == [1, 2])
        #expect(store.core.entryWord.value == 0)
        subscription.cancel()
    }

    @Test func aSendWithoutMiddlewareLeavesTheWordIdle() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        for _ in 0..<10 {
            await store.send(.increment)
        }
        // The send reduced under the lock without putting the state machine in charge: a dispatch after it still
        // finds the word 0 and keeps the fast path.
        #expect(store.core.entryWord.value == 0)
        #expect(store.state.count == 10)
    }

    // MARK: Contention, exact totals

    @Test func middlewareRunsOnOneThreadAtATimeUnderEightThreads() async {
        let exclusion = Exclusion()
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [middleware(exclusion)])
        await runOnThreads(8) { _ in
            for _ in 0..<2_000 {
                store.dispatch(.increment)
            }
        }
        #expect(store.state.count == 16_000)
        #expect(exclusion.unguarded == 16_000)
        #expect(exclusion.maximum.current == 1)
        let statistics = store.statistics
        // Only dispatches here: every wait blocked a thread, and nothing was queued.
        #expect(statistics.waits == statistics.blockedWaits)
        #expect(statistics.queuedActions == 0)
        #expect(store.core.lock.withLock { store.core.waiters } == 0)
    }

    @Test func middlewareStateWithoutALockIsOrderedByThePipelineAlone() async {
        // A counter that only the middleware touches, before `next` and with nothing else between two owners: the
        // owner word's acquire and release order the accesses (the thread sanitizer reports a race otherwise).
        final class Unguarded: @unchecked Sendable {
            // @unchecked: written only by the pipeline's owner, which is what this test checks.
            var count = 0
        }
        let unguarded = Unguarded()
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware { _ in
                    { next in
                        { action in
                            unguarded.count += 1
                            next(action)
                        }
                    }
                }
            ]
        )
        await runOnThreads(8) { _ in
            for _ in 0..<2_000 {
                store.dispatch(.increment)
            }
        }
        #expect(unguarded.count == 16_000)
        #expect(store.state.count == 16_000)
    }

    @Test func subscribersRunOnOneThreadAtATimeUnderEightThreads() async {
        let exclusion = Exclusion()
        let store = Store(initialState: TestState(), reducer: testReducer)
        let subscription = store.subscribe { _ in exclusion.run {} }
        await runOnThreads(8) { _ in
            for _ in 0..<2_000 {
                store.dispatch(.increment)
            }
        }
        #expect(store.state.count == 16_000)
        #expect(exclusion.unguarded == 16_000)
        #expect(exclusion.maximum.current == 1)
        subscription.cancel()
    }

    @Test func reentrantDispatchesUnderEightThreadsAreQueuedAndCountedExactly() async {
        let exclusion = Exclusion()
        let notified = Locked(0)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                middleware(exclusion),
                afterNext { action, api in
                    // Every action of 2 queues one increment (rule 2) on the pipeline it runs on.
                    if action == .add(2) { api.dispatch(.increment) }
                },
            ]
        )
        let subscription = store.subscribe { _ in notified.withValue { $0 += 1 } }
        await runOnThreads(8) { _ in
            for _ in 0..<1_000 {
                store.dispatch(.add(2))
            }
        }
        #expect(store.state.count == 24_000)
        #expect(notified.current == 16_000)
        #expect(exclusion.unguarded == 16_000)
        #expect(exclusion.maximum.current == 1)
        #expect(store.statistics.queuedActions == 8_000)
        #expect(store.core.lock.withLock { store.core.waiters } == 0)
        subscription.cancel()
    }

    @Test func dispatchesThroughTheStoreAndTheAPIUnderEightThreadsAddUpExactly() async {
        let exclusion = Exclusion()
        let saved = Locked<MiddlewareAPI<TestState, TestAction>?>(nil)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [savingAPI(into: saved), middleware(exclusion)]
        )
        let api = saved.current!
        await runOnThreads(8) { index in
            for _ in 0..<1_000 {
                if index.isMultiple(of: 2) {
                    store.dispatch(.increment)
                } else {
                    #expect(api.dispatch(.add(2)))
                }
            }
        }
        #expect(store.state.count == 12_000)
        #expect(exclusion.unguarded == 8_000)
        #expect(exclusion.maximum.current == 1)
        // The API's dispatches go through the state machine, which gives the pipeline back when it is idle.
        #expect(store.core.entryWord.value == 0)
    }

    @Test func twoStoresDispatchingIntoEachOtherFromTwoThreadsNeitherDeadlockNorLose() async {
        // The cross-store hand-over with fast owners: a thread that owns A's pipeline hands its action for B to
        // B's owner instead of waiting (waiting could close a cycle).
        let boxA = Locked<Store<TestState, TestAction>?>(nil)
        let boxB = Locked<Store<TestState, TestAction>?>(nil)
        func forwarding(to box: Locked<Store<TestState, TestAction>?>) -> Middleware<TestState, TestAction> {
            afterNext { action, _ in
                if case .add = action { box.current?.dispatch(.increment) }
            }
        }
        let a = Store(initialState: TestState(), reducer: testReducer, middleware: [forwarding(to: boxB)])
        let b = Store(initialState: TestState(), reducer: testReducer, middleware: [forwarding(to: boxA)])
        boxA.withValue { $0 = a }
        boxB.withValue { $0 = b }
        await runOnThreads(4) { index in
            let store = index.isMultiple(of: 2) ? a : b
            for _ in 0..<1_000 {
                store.dispatch(.add(2))
            }
        }
        // Each store got 2,000 actions of 2 and one increment for each action of 2 that the other store reduced.
        #expect(a.state.count == 6_000)
        #expect(b.state.count == 6_000)
        #expect(a.core.entryWord.value == 0)
        #expect(b.core.entryWord.value == 0)
        boxA.withValue { $0 = nil }
        boxB.withValue { $0 = nil }
    }

    // MARK: From the fast path to the state machine

    @Test func aThreadWaitingForAFastOwnerIsHandedThePipeline() async throws {
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, _ in
                    if action == .record("block") {
                        entered.signal()
                        release.wait()
                    }
                    return true
                }
            ]
        )
        let returned = DispatchSemaphore(value: 0)
        let owner = Thread {
            store.dispatch(.record("block"))
            returned.signal()
        }
        owner.start()
        entered.wait()
        // The owner took the pipeline on the fast path: the word is its thread, without the state machine's bit.
        #expect(store.core.entryWord.value & PipelineEntry.slow == 0)
        #expect(store.core.entryWord.value != 0)
        let waiter = Thread {
            store.dispatch(.record("waiter"))
            returned.signal()
        }
        waiter.start()
        // No event announces a thread joining the line: polled.
        #expect(await waitUntil { store.core.lock.withLock { store.core.waiters } == 1 })
        // The waiter put the state machine in charge: the owner's release must go through it.
        #expect(store.core.entryWord.value & PipelineEntry.slow != 0)
        release.signal()
        // Both dispatches returned, so the pipeline was given up.
        let bothReturned = await onThread {
            (0..<2).allSatisfy { _ in returned.wait(timeout: .now() + hangGuardSeconds) == .success }
        }
        #expect(bothReturned)
        #expect(store.state.log == ["block", "waiter"])
        #expect(store.core.entryWord.value == 0)
        let statistics = store.statistics
        #expect(statistics.waits == 1)
        #expect(statistics.blockedWaits == 1)
    }

    @Test func shutdownRefusesDispatchesThatWouldTakeTheFastPath() async {
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [tap { _, _ in true }]
        )
        store.dispatch(.increment)
        _ = await store.shutdown(timeout: hangGuard)
        await onThread {
            runOnThreadsBlocking(4) { _ in
                for _ in 0..<100 {
                    store.dispatch(.increment)
                }
            }
        }
        #expect(store.state.count == 1)
        #expect(store.statistics.refusedDispatches == 400)
        #expect(store.core.entryWord.value == PipelineEntry.slow)
    }

    @Test func aStoreThatWentAwayStopsTheFastPathOfItsAPI() async {
        let (store, api) = makeStoreAndAPI()
        #expect(api.dispatch(.increment))
        store.withValue { $0 = nil }
        await runOnThreads(4) { _ in
            for _ in 0..<100 {
                #expect(!api.dispatch(.increment))
            }
        }
        #expect(api.state.count == 1)
    }
}
