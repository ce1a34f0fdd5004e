import Dispatch
import Sluice
import SluiceTesting
import Testing

@Suite struct DebounceTests {
    @Test func runsOnceWithTheLastActionAfterQuiet() {
        let harness = EffectHarness { Middlewares.debounce(.milliseconds(200), on: $0, $1) }
        harness.play([0, 50, 100, 400, 450])
        #expect(harness.recorded == runs([(100, 300), (450, 650)]))
    }

    @Test func supersededRunsNeverStart() {
        let started = Locked(0)
        let scheduler = TestScheduler()
        let effect = SideEffect<TestState, TestAction> { _, _ in started.withValue { $0 += 1 } }
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [Middleware(Middlewares.debounce(.milliseconds(100), on: scheduler, effect))]
        )
        for _ in 0..<1_000 {
            store.dispatch(.increment)
            scheduler.advance(by: .milliseconds(99))
        }
        #expect(started.current == 0)
        scheduler.advance(by: .milliseconds(100))
        #expect(started.current == 1)
        #expect(store.state.count == 1_000)  // the reducer saw every action
    }

    @Test func eachActionRestartsTheTimer() {
        let harness = EffectHarness { Middlewares.debounce(.milliseconds(100), on: $0, $1) }
        harness.play([0, 99, 198, 297])
        #expect(harness.recorded == runs([(297, 397)]))
    }

    @Test func runDueAtAnInstantRunsBeforeTheActionOfThatInstant() {
        let harness = EffectHarness { Middlewares.debounce(.milliseconds(200), on: $0, $1) }
        harness.play([0, 200])
        #expect(harness.recorded == runs([(0, 200), (200, 400)]))
    }

    @Test func aBurstCostsOneTimer() {
        let harness = EffectHarness { Middlewares.debounce(.milliseconds(100), on: $0, $1) }
        for value in 0..<100 { harness.store.dispatch(.add(value)) }
        #expect(harness.scheduler.pendingWorkCount == 1)
        harness.scheduler.advance(by: .milliseconds(100))
        #expect(harness.recorded == runs([(99, 100)]))
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func zeroIntervalRunsEveryActionAtOnce() {
        let harness = EffectHarness { Middlewares.debounce(.nanoseconds(0), runs: .inDispatch, on: $0, $1) }
        harness.store.dispatch(.add(1))
        harness.store.dispatch(.add(2))
        #expect(harness.recorded == runs([(1, 0), (2, 0)]))
    }

    /// An interval of 2⁶⁴ ns or more is longer than `DispatchTime` counts: the quiet time never passes.
    @Test func anIntervalPastTheEndOfTimeNeverRuns() {
        let harness = EffectHarness { Middlewares.debounce(.seconds(Int64.max), on: $0, $1) }
        harness.play([0, 10])
        harness.scheduler.run()
        #expect(harness.recorded.isEmpty)
    }

    @Test func concurrentDispatchesFromFourThreadsRunOnce() async {
        let harness = EffectHarness { Middlewares.debounce(.milliseconds(50), on: $0, $1) }
        await runOnThreads(4) { index in
            for _ in 0..<100 { harness.store.dispatch(.add(index)) }
        }
        harness.scheduler.advance(by: .milliseconds(50))
        #expect(harness.recorded.count == 1)
        #expect(harness.store.state.count == 600)
    }
}
