import Dispatch
import Foundation
import Sluice
import SluiceTesting
import Testing

/// `runs: .onScheduler`: the runs that an action decides happen on the modifier's scheduler, never inside
/// `dispatch`, in order with the modifier's other runs.
@Suite struct RunPlacementTests {
    @Test func throttleLeadingRunOnTheSchedulerDoesNotRunInsideDispatch() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), runs: .onScheduler, on: $0, $1) }
        harness.store.dispatch(.add(1))
        #expect(harness.recorded.isEmpty)
        #expect(harness.scheduler.pendingWorkCount == 1)
        harness.scheduler.advance(by: .nanoseconds(0))
        #expect(harness.recorded == runs([(1, 0)]))
    }

    @Test func throttleOnTheSchedulerKeepsTheTimelineOfTheInlineThrottle() {
        let handedOff = EffectHarness {
            Middlewares.throttle(.milliseconds(100), leading: true, trailing: true, runs: .onScheduler, on: $0, $1)
        }
        handedOff.play(Array(stride(from: 0, through: 340, by: 10)))
        #expect(handedOff.recorded == runs([(0, 0), (90, 100), (190, 200), (290, 300), (340, 400)]))
    }

    @Test func lateThrottleRunsTheOwedAndTheNewRunOnTheSchedulerInOrder() {
        let harness = EffectHarness {
            Middlewares.throttle(.milliseconds(100), leading: true, trailing: true, runs: .onScheduler, on: $0, $1)
        }
        harness.store.dispatch(.add(0))
        harness.scheduler.advance(by: .nanoseconds(0))
        harness.scheduler.advance(to: harness.start + .milliseconds(50))
        harness.store.dispatch(.add(50))
        // 50 is due at 100; the queue is busy until 250, when a new action arrives.
        harness.scheduler.letTimePass(to: harness.start + .milliseconds(250))
        harness.store.dispatch(.add(250))
        #expect(harness.recorded == runs([(0, 0)]))  // nothing ran inside `dispatch`
        harness.scheduler.advance(by: .nanoseconds(0))
        #expect(harness.recorded == runs([(0, 0), (50, 250), (250, 250)]))
        harness.scheduler.advance(by: .seconds(1))
        #expect(harness.recorded == runs([(0, 0), (50, 250), (250, 250)]))
    }

    @Test func lateDebounceMaxWaitRunOnTheSchedulerDoesNotRunInsideDispatch() {
        let harness = EffectHarness {
            Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(200), runs: .onScheduler, on: $0, $1)
        }
        harness.play([0, 50, 100, 150], flush: 0)
        harness.scheduler.letTimePass(to: harness.start + .milliseconds(260))
        harness.store.dispatch(.add(260))
        #expect(harness.recorded.isEmpty)
        harness.scheduler.advance(by: .nanoseconds(0))
        #expect(harness.recorded == runs([(260, 260)]))
    }

    @Test func zeroIntervalOnTheSchedulerRunsEveryActionThereInOrder() {
        let throttle = EffectHarness { Middlewares.throttle(.nanoseconds(0), runs: .onScheduler, on: $0, $1) }
        let debounce = EffectHarness { Middlewares.debounce(.nanoseconds(0), runs: .onScheduler, on: $0, $1) }
        let delay = EffectHarness { Middlewares.delay(.nanoseconds(0), runs: .onScheduler, on: $0, $1) }
        for harness in [throttle, debounce, delay] {
            harness.store.dispatch(.add(1))
            harness.store.dispatch(.add(2))
            harness.store.dispatch(.add(3))
            #expect(harness.recorded.isEmpty)
            harness.scheduler.advance(by: .nanoseconds(0))
            #expect(harness.recorded == runs([(1, 0), (2, 0), (3, 0)]))
        }
    }

    @Test func zeroIntervalInDispatchStillRunsInsideDispatch() {
        let harness = EffectHarness { Middlewares.delay(.nanoseconds(0), runs: .inDispatch, on: $0, $1) }
        harness.store.dispatch(.add(1))
        #expect(harness.recorded == runs([(1, 0)]))
    }

    @Test func runsOnARealQueueHappenOffTheDispatchingThread() async {
        let dispatchingThread = Locked<String?>(nil)
        let runThreads = Locked<[String]>([])
        let effect = SideEffect<TestState, TestAction> { _, _ in runThreads.append(currentThread()) }
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [Middleware(Middlewares.throttle(.seconds(60), runs: .onScheduler, effect))]
        )
        await onThread {
            dispatchingThread.withValue { $0 = currentThread() }
            store.dispatch(.increment)
        }
        #expect(await runThreads.wait { $0.count == 1 })
        #expect(runThreads.current.first != dispatchingThread.current)
    }
}

/// The calling thread's identity, as text.
private func currentThread() -> String {
    String(describing: pthread_self())
}
