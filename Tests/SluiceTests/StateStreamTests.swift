import Sluice
import Testing

/// `store.states` and `store.values(of:)`: current value first, then changes; newest value wins; termination.
///
/// The time limit is a hang guard, not a speed check: on CI's fresh two-core machine, with every suite of the run
/// sharing the cooperative pool, a test here took 140 s of wall time for 7.5 s of work alone.
@Suite(.timeLimit(suiteTimeLimit)) struct StateStreamTests {
    @Test func eachIterationStartsWithTheCurrentValue() async {
        let store = Store(initialState: TestState(count: 5), reducer: testReducer)
        var first = store.states.makeAsyncIterator()
        #expect(await first.next()?.count == 5)
        store.dispatch(.increment)
        // A second iteration of the same sequence starts from the state at that moment.
        let sequence = store.values(of: \.count)
        var second = sequence.makeAsyncIterator()
        #expect(await second.next() == 6)
        #expect(await first.next()?.count == 6)
    }

    @Test func statesYieldsTheStateAfterEachAction() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        var iterator = store.states.makeAsyncIterator()
        #expect(await iterator.next() == TestState())
        store.dispatch(.increment)
        #expect(await iterator.next()?.count == 1)
        store.dispatch(.record("a"))
        #expect(await iterator.next() == TestState(count: 1, log: ["a"]))
    }

    @Test func valuesOfSkipsRepeats() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        var iterator = store.values(of: \.count).makeAsyncIterator()
        #expect(await iterator.next() == 0)
        store.dispatch(.noop)
        store.dispatch(.record("not a count change"))
        store.dispatch(.increment)
        #expect(await iterator.next() == 1)
        // A change and its reversal before the consumer asks: nothing new to see.
        store.dispatch(.add(4))
        store.dispatch(.add(-4))
        store.dispatch(.add(2))
        #expect(await iterator.next() == 3)
    }

    @Test func aWaitingConsumerIsResumedByTheNextChange() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let consumer = await startCollectingCounts(of: store, until: 3)
        store.dispatch(.noop)
        store.dispatch(.add(3))
        #expect(await consumer.value == [0, 3])
    }

    @Test func aSlowConsumerSeesTheNewestValueNotABacklog() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        var states = store.states.makeAsyncIterator()
        var counts = store.values(of: \.count).makeAsyncIterator()
        #expect(await states.next()?.count == 0)
        #expect(await counts.next() == 0)
        for _ in 0..<10_000 {
            store.dispatch(.increment)
        }
        // Ten thousand changes, one value held per iteration: the newest.
        #expect(await states.next()?.count == 10_000)
        #expect(await counts.next() == 10_000)
        store.dispatch(.increment)
        #expect(await states.next()?.count == 10_001)
        #expect(await counts.next() == 10_001)
    }

    @Test func concurrentDispatchersAndOneConsumerSeeIncreasingValuesEndingWithTheTotal() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let consumer = await startCollectingCounts(of: store, until: 4_000)
        await runOnThreads(4) { _ in
            for _ in 0..<1_000 {
                store.dispatch(.increment)
            }
        }
        let received = await consumer.value
        #expect(received.first == 0)
        #expect(received.last == 4_000)
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 })
        #expect(store.subscriberCount == 0)
    }

    /// Two threads dispatch while the consumer keeps catching up and waiting again, so a dispatch often wakes the
    /// consumer while that task is still suspending in `next()`. Under `swift test --sanitize=thread` this test
    /// reported a data race (`withUnsafeContinuation` against `UnsafeContinuation.resume` in `StreamBuffer.send`)
    /// until the buffer resumed its waiter inside its lock; `StreamBuffer`'s comment says why that report was a
    /// false positive and how the lock removes it. Without the sanitizer it checks what every consumer sees.
    @Test func consumersWokenFromOtherThreadsWhileTheySuspendSeeIncreasingValuesEndingWithTheTotal() async {
        for _ in 0..<100 {
            let store = Store(initialState: TestState(), reducer: testReducer)
            // Detached: the consumer runs on another thread than the one that started it, as a server's would.
            let consumer = Task.detached {
                var received: [Int] = []
                for await count in store.values(of: \.count) {
                    received.append(count)
                    if count == 2_000 { break }
                }
                return received
            }
            await onThread {
                runOnThreadsBlocking(2) { _ in
                    for _ in 0..<1_000 {
                        store.dispatch(.increment)
                    }
                }
            }
            let received = await consumer.value
            #expect(received.last == 2_000)
            #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 })
            #expect(store.subscriberCount == 0)
        }
    }

    @Test func aWokenConsumerWaitsAgainWhenTheChangeWasRevertedBeforeItRan() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let consumer = await startCollectingCounts(of: store, until: 5)
        // `add(1)` may wake the consumer; `add(-1)` withdraws the change before or after it ran. Either way, it
        // sees no value that is not the newest when it looks, and ends with 5.
        for _ in 0..<100 {
            store.dispatch(.add(1))
            store.dispatch(.add(-1))
        }
        store.dispatch(.add(5))
        let received = await consumer.value
        #expect(received.first == 0)
        #expect(received.last == 5)
        #expect(received.allSatisfy { $0 == 0 || $0 == 1 || $0 == 5 })
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 != $1 })
    }

    // MARK: Termination

    @Test func iterationEndsWhenTheStoreIsFreedAfterTheNewestValue() async {
        var store: Store<TestState, TestAction>? = Store(initialState: TestState(), reducer: testReducer)
        weak let weakStore = store
        var iterator = store!.values(of: \.count).makeAsyncIterator()
        #expect(await iterator.next() == 0)
        store!.dispatch(.add(7))
        store = nil
        // The sequence and its iterator do not keep the store alive.
        #expect(weakStore == nil)
        #expect(await iterator.next() == 7)
        #expect(await iterator.next() == nil)
        #expect(await iterator.next() == nil)
    }

    @Test func aWaitingLoopEndsWhenTheStoreIsFreed() async {
        var store: Store<TestState, TestAction>? = Store(initialState: TestState(), reducer: testReducer)
        let states = store!.states
        let ready = AsyncGate()
        let consumer = Task {
            var received = 0
            for await _ in states {
                received += 1
                ready.open()
            }
            return received
        }
        await ready.wait()
        store = nil
        #expect(await consumer.value == 1)
    }

    @Test func iterationStartedAfterTheStoreIsGoneEndsAtOnce() async {
        var store: Store<TestState, TestAction>? = Store(initialState: TestState(), reducer: testReducer)
        let counts = store!.values(of: \.count)
        store = nil
        var iterator = counts.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test func iterationEndsWhenTheTaskIsCancelled() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let ready = AsyncGate()
        let consumer = Task {
            var received = 0
            for await _ in store.states {
                received += 1
                ready.open()
            }
            return received
        }
        await ready.wait()
        consumer.cancel()
        #expect(await consumer.value == 1)
        // The iteration gave back its subscription and its teardown handler.
        #expect(store.subscriberCount == 0)
        #expect(store.teardownHandlerCount == 0)
    }

    @Test func aCancelledTaskGetsNoMoreValuesEvenIfOneIsPending() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let values = Task {
            var iterator = store.values(of: \.count).makeAsyncIterator()
            let first = await iterator.next()
            withUnsafeCurrentTask { $0?.cancel() }
            store.dispatch(.increment)
            let second = await iterator.next()
            return (first, second)
        }
        let (first, second) = await values.value
        #expect(first == 0)
        #expect(second == nil)
    }

    @Test func releasingTheIteratorEndsItsSubscription() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        do {
            var iterator = store.states.makeAsyncIterator()
            _ = await iterator.next()
            #expect(store.subscriberCount == 1)
            #expect(store.teardownHandlerCount == 1)
        }
        #expect(store.subscriberCount == 0)
        #expect(store.teardownHandlerCount == 0)
    }

    @Test func manyFinishedIterationsLeaveNoTeardownHandlers() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        for index in 0..<200 {
            for await count in store.values(of: \.count) {
                #expect(count == index)
                break
            }
            store.dispatch(.increment)
        }
        #expect(store.subscriberCount == 0)
        #expect(store.teardownHandlerCount == 0)
    }

    @Test func manyConsumersSeeTheTotalThenEndWhenTheStoreIsFreed() async {
        var store: Store<TestState, TestAction>? = Store(initialState: TestState(), reducer: testReducer)
        weak let weakStore = store
        let counts = store!.values(of: \.count)
        let started = Locked(0)
        let allStarted = AsyncGate()
        let consumers = (0..<8).map { _ in
            Task {
                var last = -1
                for await count in counts {
                    if last == -1,
                        started.withValue({
                            $0 += 1
                            return $0
                        }) == 8
                    {
                        allStarted.open()
                    }
                    last = count
                }
                return last
            }
        }
        await allStarted.wait()
        await runOnThreads(4) { _ in
            guard let store = weakStore else { return }
            for _ in 0..<500 {
                store.dispatch(.increment)
            }
        }
        #expect(store?.state.count == 2_000)
        store = nil
        #expect(weakStore == nil)
        for consumer in consumers {
            #expect(await consumer.value == 2_000)
        }
    }
}

/// Starts a task that collects `store.values(of: \.count)` until it sees `last`, and returns once the task has
/// received the first value (so the caller's dispatches come after the iteration started).
private func startCollectingCounts(
    of store: Store<TestState, TestAction>,
    until last: Int
) async -> Task<[Int], Never> {
    let ready = AsyncGate()
    let consumer = Task {
        var received: [Int] = []
        for await count in store.values(of: \.count) {
            received.append(count)
            if received.count == 1 { ready.open() }
            if count == last { break }
        }
        return received
    }
    await ready.wait()
    return consumer
}
