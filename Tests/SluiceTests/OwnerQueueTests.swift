import Testing

@testable import Sluice

/// The owner's own queue (`StoreCore.ownerQueue`): an action that the thread owning the pipeline on the fast path
/// dispatches to it (rule 2) is queued without the lock, and processed, in order, before the pipeline is given up.
@Suite struct OwnerQueueTests {
    /// Records every action that reaches the reducer, in order, and the owner word seen after each follow-up was
    /// dispatched.
    private func recordingStore(
        followUps: @escaping @Sendable (TestAction, MiddlewareAPI<TestState, TestAction>) -> Void
    ) -> (store: Store<TestState, TestAction>, reduced: Locked<[TestAction]>) {
        let reduced = Locked<[TestAction]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, _ in
                    reduced.append(action)
                    return true
                },
                afterNext(followUps),
            ]
        )
        return (store, reduced)
    }

    @Test func followUpsOfAFastOwnerRunInOrderWithoutTheMachineAndAreCounted() {
        let words = Locked<[UInt]>([])
        let storeBox = Locked<Store<TestState, TestAction>?>(nil)
        let (store, reduced) = recordingStore { action, api in
            switch action {
            case .add(1):
                api.dispatch(.add(2))
                api.dispatch(.add(3))
                if let store = storeBox.current { words.append(store.core.entryWord.value) }
            case .add(2):
                api.dispatch(.add(4))
            default:
                break
            }
        }
        storeBox.withValue { $0 = store }
        store.dispatch(.add(1))
        #expect(reduced.current == [.add(1), .add(2), .add(3), .add(4)])
        #expect(store.state.count == 10)
        // Queued in the owner's queue: the word was this thread with `queued`, the state machine never in charge.
        #expect(words.current == [ThreadID.current.raw | PipelineEntry.queued])
        #expect(store.core.entryWord.value == 0)
        // Counted all the same: three queued, at most two at once (3 and 4, after 2 was taken).
        var expected = StoreStatistics()
        expected.queuedActions = 3
        expected.deepestQueue = 2
        #expect(store.statistics == expected)
        // The queue keeps its buffer and empties: a second round queues and runs the same way.
        store.dispatch(.add(1))
        #expect(store.state.count == 20)
        #expect(store.statistics.queuedActions == 6)
        #expect(store.core.entryWord.value == 0)
        storeBox.withValue { $0 = nil }
    }

    @Test func actionsQueuedBeforeTheMachineTookOverRunBeforeThoseQueuedAfter() {
        let storeBox = Locked<Store<TestState, TestAction>?>(nil)
        let (store, reduced) = recordingStore { action, api in
            guard action == .record("outer"), let store = storeBox.current else { return }
            api.dispatch(.record("A"))
            api.dispatch(.record("B"))
            // Code under the lock that reads the machine puts it in charge, as a thread that starts waiting does.
            _ = store.core.lock.withLock { store.core.waiters }
            #expect(store.core.entryWord.value & PipelineEntry.slow != 0)
            // From now on the owner's actions go to the machine's queue, after A and B.
            api.dispatch(.record("C"))
            store.dispatch(.record("D"))
        }
        storeBox.withValue { $0 = store }
        store.dispatch(.record("outer"))
        #expect(reduced.current == ["outer", "A", "B", "C", "D"].map(TestAction.record))
        #expect(store.state.log == ["outer", "A", "B", "C", "D"])
        #expect(store.statistics.queuedActions == 4)
        // Released through the machine, back to the fast path.
        store.dispatch(.noop)
        #expect(store.core.entryWord.value == 0)
        storeBox.withValue { $0 = nil }
    }

    @Test func aSubscriberOfAStoreWithoutMiddlewareQueuesThroughAScopeAndItRuns() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let scope = store.scope(\.count)
        let seen = Locked<[Int]>([])
        let subscription = store.subscribe { state in
            seen.append(state.count)
            if state.count == 1 {
                scope.dispatch(.add(10))
            }
        }
        store.dispatch(.increment)
        #expect(seen.current == [1, 11])
        #expect(store.state.count == 11)
        #expect(store.statistics.queuedActions == 1)
        #expect(store.core.entryWord.value == 0)
        subscription.cancel()
    }

    @Test func aReadingDispatchFromTheOwnersWorkIsQueuedAndReadsNothing() {
        let readings = Locked<[Int?]>([])
        let (store, reduced) = recordingStore { action, api in
            if action == .add(1) {
                readings.append(api.dispatch(.add(5), reading: { $0.count }))
            }
        }
        store.dispatch(.add(1))
        #expect(readings.current == [nil])
        #expect(reduced.current == [.add(1), .add(5)])
        #expect(store.state.count == 6)
    }

    @Test func aReadingDispatchOnAFreePipelineReadsBeforeItsFollowUpsRun() {
        let words = Locked<[UInt]>([])
        let storeBox = Locked<Store<TestState, TestAction>?>(nil)
        let (store, reduced) = recordingStore { action, api in
            if action == .add(1) {
                api.dispatch(.add(10))
                if let store = storeBox.current { words.append(store.core.entryWord.value) }
            }
        }
        storeBox.withValue { $0 = store }
        // Taken on the fast path like a plain dispatch: the follow-up goes to the owner's queue, and the reading
        // shows the action alone.
        let read = store.dispatch(.add(1), reading: { $0.count })
        #expect(read == 1)
        #expect(store.state.count == 11)
        #expect(reduced.current == [.add(1), .add(10)])
        #expect(words.current == [ThreadID.current.raw | PipelineEntry.queued])
        #expect(store.core.entryWord.value == 0)
        // An action that queues nothing reads the state after it, and leaves the pipeline free.
        #expect(store.dispatch(.noop, reading: { $0.count }) == 11)
        #expect(store.core.entryWord.value == 0)
        storeBox.withValue { $0 = nil }
    }

    @Test func aReadingSendOnAFreePipelineReadsBeforeItsFollowUpsRun() async {
        let storeBox = Locked<Store<TestState, TestAction>?>(nil)
        let words = Locked<[UInt]>([])
        let (store, reduced) = recordingStore { action, api in
            if action == .add(1) {
                api.dispatch(.add(10))
                if let store = storeBox.current { words.append(store.core.entryWord.value) }
            }
        }
        storeBox.withValue { $0 = store }
        let read = await store.send(.add(1), reading: { $0.count })
        #expect(read == 1)
        #expect(store.state.count == 11)
        #expect(reduced.current == [.add(1), .add(10)])
        // Taken through the owner word, as a dispatch takes it: the follow-up went to the owner's queue.
        #expect(words.current.count == 1)
        #expect((words.current.first ?? 0) & PipelineEntry.queued != 0)
        #expect(store.core.entryWord.value == 0)
        #expect(store.statistics.waits == 0)
        storeBox.withValue { $0 = nil }
    }

    @Test func readingDispatchesUnderEightThreadsEachReadTheirOwnAction() async {
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                afterNext { action, api in
                    if case .record(let name) = action, !name.hasSuffix("/f") {
                        api.dispatch(.record(name + "/f"))
                    }
                }
            ]
        )
        let wrong = Locked(0)
        await runOnThreads(8) { thread in
            for index in 0..<500 {
                let name = "\(thread).\(index)"
                // The last entry of the log right after this action: the action itself, never its follow-up or
                // another thread's action.
                let last = store.dispatch(.record(name), reading: { $0.log.last })
                if last != name { wrong.withValue { $0 += 1 } }
            }
        }
        #expect(wrong.current == 0)
        #expect(store.state.log.count == 8 * 500 * 2)
        #expect(store.statistics.queuedActions == 8 * 500)
    }

    @Test func followUpsUnderEightThreadsAddUpExactlyInEachSendersOrder() async {
        // Each thread's action queues two follow-ups that carry its index; whatever the interleaving of owners, the
        // machine taking over from fast owners, and hand-overs, every follow-up runs once, right after its action.
        let (store, reduced) = recordingStore { action, api in
            if case .record(let name) = action, !name.contains("/") {
                api.dispatch(.record(name + "/1"))
                api.dispatch(.record(name + "/2"))
            }
        }
        await runOnThreads(8) { thread in
            for index in 0..<500 {
                store.dispatch(.record("\(thread).\(index)"))
            }
        }
        let log = reduced.current.map { action -> String in
            guard case .record(let name) = action else { return "" }
            return name
        }
        #expect(log.count == 8 * 500 * 3)
        #expect(Set(log).count == log.count)
        // A follow-up is queued on the pipeline of the action that dispatched it: it runs right after that action's
        // work and before any other thread's action.
        for (position, name) in log.enumerated() where !name.contains("/") {
            #expect(Array(log[position..<position + 3]) == [name, name + "/1", name + "/2"])
        }
        #expect(store.statistics.queuedActions == 8 * 500 * 2)
        #expect(store.core.lock.withLock { store.core.waiters } == 0)
    }
}
