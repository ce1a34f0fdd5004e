import Dispatch
import Foundation
import Sluice
import SluiceTesting
import Testing

/// The time modifiers on a scheduler that is late: runs happen in the order of their actions, however late the
/// scheduler is, and a late debounce is superseded rather than run with a stale action.
///
/// `TestScheduler.letTimePass` models a busy queue in virtual time: time passes and the work that falls due
/// waits. Each table gives the action times (ms, the action is its time) and the runs as `action@time`.
@Suite struct LateSchedulerTests {
    @Test func throttleWithoutLatestRunsEachLeadingRunAtOnceOnALateScheduler() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), runs: .inDispatch, on: $0, $1) }
        harness.store.dispatch(.add(0))
        harness.scheduler.letTimePass(by: .milliseconds(250))
        harness.store.dispatch(.add(250))
        harness.store.dispatch(.add(260))
        harness.scheduler.advance(by: .seconds(1))
        #expect(harness.recorded == runs([(0, 0), (250, 250)]))
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func throttleLatestRunsTheOwedTrailingRunBeforeTheActionThatFindsItLate() {
        let harness = EffectHarness {
            Middlewares.throttle(.milliseconds(100), latest: true, runs: .inDispatch, on: $0, $1)
        }
        harness.play([0, 50], flush: 0)
        // The trailing run of 50 is due at 100, but the queue is busy until after the next window ended too.
        harness.scheduler.letTimePass(to: harness.start + .milliseconds(250))
        harness.store.dispatch(.add(250))
        #expect(harness.recorded == runs([(0, 0), (50, 250), (250, 250)]))
        harness.scheduler.advance(by: .seconds(1))  // the late timer is stale: nothing more runs
        #expect(harness.recorded == runs([(0, 0), (50, 250), (250, 250)]))
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func throttleLatestOwedRunOpensTheWindowAsIfTheTimerHadBeenOnTime() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), latest: true, on: $0, $1) }
        harness.play([0, 50], flush: 0)
        harness.scheduler.letTimePass(to: harness.start + .milliseconds(150))
        // 50 runs now and opens [100, 200): 150 falls inside it and trails at 200.
        harness.store.dispatch(.add(150))
        harness.scheduler.advance(by: .seconds(1))
        #expect(harness.recorded == runs([(0, 0), (50, 150), (150, 200)]))
    }

    @Test func throttleLatestLateTimerRunsWhenTheQueueGetsToIt() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), latest: true, on: $0, $1) }
        harness.play([0, 50], flush: 0)
        harness.scheduler.letTimePass(to: harness.start + .milliseconds(130))
        harness.scheduler.advance(by: .nanoseconds(0))  // the queue is free again: the timer runs, late
        harness.play([140, 210, 220])
        // 50 ran at 130 and opened [100, 200); 140 trails at 200 and opens [200, 300); 220 trails at 300.
        #expect(harness.recorded == runs([(0, 0), (50, 130), (140, 200), (220, 300)]))
    }

    @Test func debounceDueButNotYetRunIsSupersededByTheNextAction() {
        let harness = EffectHarness { Middlewares.debounce(.milliseconds(10), on: $0, $1) }
        harness.store.dispatch(.add(0))
        harness.scheduler.letTimePass(by: .milliseconds(15))  // the run of 0 is due; the queue is busy
        harness.store.dispatch(.add(15))
        harness.scheduler.advance(by: .seconds(1))
        #expect(harness.recorded == runs([(15, 25)]))
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func debounceSupersededWhileBothRunsAreDueRunsOnlyTheLast() {
        let harness = EffectHarness { Middlewares.debounce(.milliseconds(10), on: $0, $1) }
        harness.store.dispatch(.add(0))
        harness.scheduler.letTimePass(by: .milliseconds(15))
        harness.store.dispatch(.add(15))
        harness.scheduler.letTimePass(by: .milliseconds(20))  // the run of 15 is due too, still busy
        harness.scheduler.advance(by: .nanoseconds(0))
        #expect(harness.recorded == runs([(15, 35)]))
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func debounceLateRunHappensWhenTheQueueGetsToIt() {
        let harness = EffectHarness { Middlewares.debounce(.milliseconds(10), on: $0, $1) }
        harness.store.dispatch(.add(0))
        harness.scheduler.letTimePass(by: .milliseconds(15))
        harness.scheduler.advance(by: .nanoseconds(0))
        harness.play([20])
        #expect(harness.recorded == runs([(0, 15), (20, 30)]))
    }

    @Test func delayRunsOverdueActionsInOrderBeforeLaterOnes() {
        let harness = EffectHarness { Middlewares.delay(.milliseconds(50), on: $0, $1) }
        harness.play([0, 30], flush: 0)
        harness.scheduler.letTimePass(to: harness.start + .milliseconds(200))
        harness.store.dispatch(.add(200))
        harness.scheduler.letTimePass(by: .milliseconds(100))
        harness.store.dispatch(.add(300))
        #expect(harness.recorded.isEmpty)
        harness.scheduler.advance(by: .seconds(1))
        #expect(harness.recorded == runs([(0, 300), (30, 300), (200, 300), (300, 350)]))
        #expect(harness.scheduler.pendingWorkCount == 0)
    }
}

/// The time modifiers on a real `DispatchQueue` that is busy when their runs fall due: the test blocks the queue
/// with a semaphore, dispatches, lets the runs fall due, then frees the queue.
///
/// Bounded: the only sleeps are until an instant a few milliseconds ahead (real time passing is what these tests
/// are about); the runs are awaited, with the hang guard.
@Suite struct BusyQueueTests {
    /// A store with one modifier on a serial queue that the test keeps busy until `release()`.
    final class BusyQueue: Sendable {
        let queue: DispatchQueue
        let gate = DispatchSemaphore(value: 0)
        let runs = Locked<[Int]>([])
        let store: Store<TestState, TestAction>

        init(
            _ modify: (DispatchQueueScheduler, SideEffect<TestState, TestAction>) -> SideEffect<TestState, TestAction>,
            body: @escaping @Sendable (Int) -> Void = { _ in }
        ) {
            let queue = DispatchQueue(label: "sluice.tests.busy")
            self.queue = queue
            let runs = runs
            let record = SideEffect<TestState, TestAction> { action, _ in
                if case .add(let value) = action {
                    body(value)
                    runs.append(value)
                }
            }
            store = Store(
                initialState: TestState(),
                reducer: testReducer,
                middleware: [Middleware(modify(.queue(queue), record))]
            )
            let gate = gate
            queue.async { gate.wait() }
        }

        /// Frees the queue, waits until `count` runs happened (or the hang guard passed), then until the queue has
        /// done everything that was queued on it by then.
        func release(expecting count: Int) -> [Int] {
            gate.signal()
            _ = runs.waitBlocking { $0.count >= count }
            queue.sync {}
            queue.sync {}
            return runs.current
        }
    }

    /// Blocks the calling thread until `deadline`; the runs under test fall due meanwhile.
    func wait(until deadline: DispatchTime) {
        while case let now = DispatchTime.now(), now < deadline {
            let remaining = deadline.uptimeNanoseconds - now.uptimeNanoseconds
            Thread.sleep(forTimeInterval: Double(min(remaining, 1_000_000)) / 1e9)
        }
    }

    @Test func throttleWithoutLatest() {
        let busy = BusyQueue { Middlewares.throttle(.milliseconds(20), on: $0, $1) }
        let start = DispatchTime.now()
        busy.store.dispatch(.add(1))
        busy.store.dispatch(.add(2))
        wait(until: start + .milliseconds(25))
        busy.store.dispatch(.add(3))
        #expect(busy.release(expecting: 2) == [1, 3])
    }

    @Test func throttleLatestRunsOwedTrailingRunBeforeNewerAction() {
        let busy = BusyQueue { Middlewares.throttle(.milliseconds(20), latest: true, on: $0, $1) }
        let start = DispatchTime.now()
        busy.store.dispatch(.add(1))
        busy.store.dispatch(.add(2))  // trails at +20, but the queue is busy
        wait(until: start + .milliseconds(45))  // the window that 2 opens, [20, 40), has ended too
        busy.store.dispatch(.add(3))
        #expect(busy.release(expecting: 3) == [1, 2, 3])
    }

    @Test func debounceRunsOnceWithTheLastAction() {
        let busy = BusyQueue { Middlewares.debounce(.milliseconds(10), on: $0, $1) }
        busy.store.dispatch(.add(1))
        wait(until: .now() + .milliseconds(15))  // the run of 1 is due; the queue is busy
        busy.store.dispatch(.add(2))
        wait(until: .now() + .milliseconds(15))  // the run of 2 is due too
        #expect(busy.release(expecting: 1) == [2])
    }

    @Test func delayRunsInOrder() {
        let busy = BusyQueue { Middlewares.delay(.milliseconds(10), on: $0, $1) }
        busy.store.dispatch(.add(1))
        wait(until: .now() + .milliseconds(5))
        busy.store.dispatch(.add(2))
        wait(until: .now() + .milliseconds(5))
        busy.store.dispatch(.add(3))
        wait(until: .now() + .milliseconds(15))
        #expect(busy.release(expecting: 3) == [1, 2, 3])
    }

    /// A trailing run is slow; the next action, which finds the window ended, waits for it instead of running
    /// alongside it on the dispatching thread.
    @Test func throttleRunsNeverOverlap() {
        let events = Locked<[String]>([])
        let slowRun = DispatchSemaphore(value: 0)
        let onQueue = DispatchSpecificKey<Bool>()
        let body: @Sendable (Int) -> Void = { value in
            events.append("start \(value)")
            if value == 2 && DispatchQueue.getSpecific(key: onQueue) == true {
                _ = slowRun.wait(timeout: .now() + hangGuardSeconds)
            }
            events.append("end \(value)")
        }
        let busy = BusyQueue({ Middlewares.throttle(.milliseconds(20), latest: true, on: $0, $1) }, body: body)
        busy.queue.setSpecific(key: onQueue, value: true)
        busy.gate.signal()  // the queue is free; the trailing run makes it busy
        let start = DispatchTime.now()
        busy.store.dispatch(.add(1))
        busy.store.dispatch(.add(2))  // trails at +20, on the queue, and opens [20, 40)
        #expect(events.waitBlocking { $0.contains("start 2") })
        wait(until: start + .milliseconds(45))
        busy.store.dispatch(.add(3))  // the window has ended, but the run of 2 is in progress
        slowRun.signal()
        #expect(busy.release(expecting: 3) == [1, 2, 3])
        #expect(events.current == ["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"])
    }
}
