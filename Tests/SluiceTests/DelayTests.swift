import Dispatch
import Sluice
import SluiceTesting
import Testing

@Suite struct DelayTests {
    @Test func everyActionRunsIntervalLaterInOrder() {
        let harness = EffectHarness { Middlewares.delay(.milliseconds(50), on: $0, $1) }
        harness.play([0, 30, 100])
        #expect(harness.recorded == runs([(0, 50), (30, 80), (100, 150)]))
    }

    @Test func actionsAtTheSameInstantRunInDispatchOrder() {
        let harness = EffectHarness { Middlewares.delay(.milliseconds(10), on: $0, $1) }
        for value in 0..<20 { harness.store.dispatch(.add(value)) }
        #expect(harness.recorded.isEmpty)
        harness.scheduler.advance(by: .milliseconds(10))
        #expect(harness.recorded == runs((0..<20).map { ($0, 10) }))
    }

    @Test func zeroDelayRunsSynchronously() {
        let harness = EffectHarness { Middlewares.delay(.nanoseconds(0), runs: .inDispatch, on: $0, $1) }
        harness.store.dispatch(.add(3))
        #expect(harness.recorded == runs([(3, 0)]))
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    /// A delay of 2⁶⁴ ns or more is longer than `DispatchTime` counts: it never passes.
    @Test func aDelayPastTheEndOfTimeNeverRuns() {
        let harness = EffectHarness { Middlewares.delay(.seconds(Int64.max), on: $0, $1) }
        harness.play([0, 1])
        harness.scheduler.run()
        #expect(harness.recorded.isEmpty)
    }

    @Test func manyThreadsEveryActionRunsExactlyOnceInReducerOrder() async {
        let order = Locked<[Int]>([])
        let harness = EffectHarness { scheduler, effect in
            Middlewares.delay(.milliseconds(5), on: scheduler, effect)
        }
        let subscription = harness.store.subscribe { state in order.append(state.count) }
        await runOnThreads(4) { index in
            for step in 0..<100 { harness.store.dispatch(.add(index * 1_000 + step)) }
        }
        harness.scheduler.advance(by: .milliseconds(5))
        let values = harness.recorded.map(\.value)
        #expect(values.count == 400)
        #expect(Set(values).count == 400)
        // Runs happen in the order in which the reducer saw the actions.
        let sums = values.reduce(into: [Int]()) { sums, value in sums.append((sums.last ?? 0) + value) }
        #expect(sums == order.current)
        subscription.cancel()
    }
}
