import Dispatch
import Sluice
import SluiceTesting
import Testing

@Suite struct ThrottleTests {
    /// The timeline of the Throttle article (Sources/Sluice/Sluice.docc/Operators/Throttle.md): actions at 0, 10,
    /// …, 340 ms, interval 100 ms.
    private let every10ms = Array(stride(from: 0, through: 340, by: 10))

    @Test func designExampleWithoutLatestRunsOnTheLeadingEdge() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), on: $0, $1) }
        harness.play(every10ms)
        #expect(harness.recorded == runs([(0, 0), (100, 100), (200, 200), (300, 300)]))
    }

    @Test func designExampleWithLatestRunsTheNewestWhenTheWindowEnds() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), latest: true, on: $0, $1) }
        harness.play(every10ms)
        #expect(harness.recorded == runs([(0, 0), (90, 100), (190, 200), (290, 300), (340, 400)]))
    }

    @Test func theWindowIsHalfOpen() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), on: $0, $1) }
        harness.play([0, 99, 100, 199, 200])
        #expect(harness.recorded == runs([(0, 0), (100, 100), (200, 200)]))
    }

    @Test func trailingRunDueAtAnInstantRunsBeforeTheActionOfThatInstant() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), latest: true, on: $0, $1) }
        // 50 is pending; at 100 it runs and opens [100, 200), so the action at 100 is inside that window.
        harness.play([0, 50, 100])
        #expect(harness.recorded == runs([(0, 0), (50, 100), (100, 200)]))
    }

    @Test func aLoneActionAfterAQuietWindowRunsAtOnce() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), latest: true, on: $0, $1) }
        harness.play([0, 500, 550])
        #expect(harness.recorded == runs([(0, 0), (500, 500), (550, 600)]))
    }

    @Test func leadingRunIsSynchronousInsideDispatch() {
        let harness = EffectHarness { Middlewares.throttle(.seconds(1), runs: .inDispatch, on: $0, $1) }
        harness.store.dispatch(.add(7))
        #expect(harness.recorded == runs([(7, 0)]))
        #expect(harness.scheduler.pendingWorkCount == 0)  // no timer without `latest`
    }

    @Test func zeroIntervalRunsEveryAction() {
        let harness = EffectHarness { Middlewares.throttle(.nanoseconds(0), on: $0, $1) }
        harness.play([0, 0, 1])
        #expect(harness.recorded == runs([(0, 0), (0, 0), (1, 1)]))
    }

    /// A window of 2⁶⁴ ns or more is longer than `DispatchTime` counts: it never ends.
    @Test func anIntervalPastTheEndOfTimeRunsOnlyTheFirstAction() {
        let harness = EffectHarness { Middlewares.throttle(.seconds(Int64.max), latest: true, on: $0, $1) }
        harness.play([0, 10, 5_000])
        #expect(harness.recorded == runs([(0, 0)]))
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func theReducerSeesEveryActionAtOnce() {
        let harness = EffectHarness { Middlewares.throttle(.milliseconds(100), runs: .inDispatch, on: $0, $1) }
        harness.store.dispatch(.add(1))
        harness.store.dispatch(.add(2))
        harness.store.dispatch(.add(3))
        #expect(harness.store.state.count == 6)
        #expect(harness.recorded.count == 1)
    }

    @Test func leadingThrottleRunsExactlyOnceWhenFourThreadsDispatchAtOnce() async {
        for _ in 0..<20 {
            let harness = EffectHarness { Middlewares.throttle(.seconds(60), runs: .inDispatch, on: $0, $1) }
            await runOnThreads(4) { index in
                for _ in 0..<50 { harness.store.dispatch(.add(index)) }
            }
            #expect(harness.recorded.count == 1)
            #expect(harness.store.state.count == (0 + 1 + 2 + 3) * 50)
        }
    }

    @Test func trailingClosureForm() {
        let scheduler = TestScheduler()
        let seen = Locked<[TestAction]>([])
        let throttled: SideEffect<TestState, TestAction> = Middlewares.throttle(
            .milliseconds(10),
            runs: .inDispatch,
            on: scheduler
        ) {
            action,
            _ in seen.append(action)
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(throttled)])
        store.dispatch(.increment)
        store.dispatch(.noop)
        #expect(seen.current == [.increment])
    }
}
