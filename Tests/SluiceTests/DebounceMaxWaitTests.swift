import Dispatch
import Sluice
import SluiceTesting
import Testing

/// `debounce(_:maxWait:runs:on:_:)`: lodash's `maxWait`, at least one run every `maxWait` under steady load.
@Suite struct DebounceMaxWaitTests {
    @Test func steadyLoadRunsEveryMaxWaitThenOnceAfterQuiet() {
        // The timeline of the Debounce article: an action every 50 ms from 0 to 1000, interval 100, maxWait 300.
        let harness = EffectHarness {
            Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(300), on: $0, $1)
        }
        harness.play(Array(stride(from: 0, through: 1_000, by: 50)))
        #expect(harness.recorded == runs([(250, 300), (550, 600), (850, 900), (1_000, 1_100)]))
    }

    @Test func withoutMaxWaitSteadyLoadRunsOnlyAfterQuiet() {
        let harness = EffectHarness { Middlewares.debounce(.milliseconds(100), on: $0, $1) }
        harness.play(Array(stride(from: 0, through: 1_000, by: 50)))
        #expect(harness.recorded == runs([(1_000, 1_100)]))
    }

    @Test func aBurstShorterThanMaxWaitRunsOnceAfterQuiet() {
        let harness = EffectHarness {
            Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(300), on: $0, $1)
        }
        harness.play([0, 50, 100, 500, 550])
        #expect(harness.recorded == runs([(100, 200), (550, 650)]))
    }

    @Test func afterQuietTheMaxWaitCountsFromTheFirstActionOfTheNewBurst() {
        let harness = EffectHarness {
            Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(200), on: $0, $1)
        }
        // Burst 1 ends quietly at 150; burst 2 starts at 1000, so its longest wait ends at 1200, not earlier.
        harness.play([0, 50, 1_000, 1_080, 1_160, 1_240])
        #expect(harness.recorded == runs([(50, 150), (1_160, 1_200), (1_240, 1_340)]))
    }

    @Test func maxWaitEqualToIntervalRunsLikeATrailingThrottle() {
        let harness = EffectHarness {
            Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(100), on: $0, $1)
        }
        harness.play(Array(stride(from: 0, through: 340, by: 10)))
        #expect(harness.recorded == runs([(90, 100), (190, 200), (290, 300), (340, 400)]))
    }

    @Test func lateMaxWaitRunsTheNewestActionInsideTheDispatchThatFindsIt() {
        let harness = EffectHarness {
            Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(200), runs: .inDispatch, on: $0, $1)
        }
        harness.play([0, 50, 100, 150], flush: 0)
        // The longest wait ends at 200; the queue is busy until 260, and actions keep coming.
        harness.scheduler.letTimePass(to: harness.start + .milliseconds(260))
        harness.store.dispatch(.add(260))
        #expect(harness.recorded == runs([(260, 260)]))  // 150 was superseded; 260 ran inside `dispatch`
        harness.scheduler.advance(by: .seconds(1))
        #expect(harness.recorded == runs([(260, 260)]))  // nothing was left pending
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func lateQuietRunIsStillSupersededWithMaxWait() {
        let harness = EffectHarness {
            Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(500), on: $0, $1)
        }
        harness.store.dispatch(.add(0))
        harness.scheduler.letTimePass(by: .milliseconds(150))  // 0 is due at 100; the queue is busy
        harness.store.dispatch(.add(150))
        harness.scheduler.advance(by: .seconds(1))
        #expect(harness.recorded == runs([(150, 250)]))
    }
}
