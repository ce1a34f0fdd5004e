import Dispatch
import Sluice
import SluiceTesting
import Testing

/// `throttle(_:leading:trailing:runs:on:_:)`: lodash's options, and `latest:` as a spelling of them. Each table gives
/// the action times (ms, the action is its time) and the runs as `action@time`.
@Suite struct ThrottleOptionsTests {
    /// The timeline of the Throttle article: actions every 10 ms from 0 to 340, interval 100 ms.
    private let every10ms = Array(stride(from: 0, through: 340, by: 10))

    @Test func trailingOnlyRunsTheNewestActionOfEachWindowWhenItEnds() {
        let harness = EffectHarness {
            Middlewares.throttle(.milliseconds(100), leading: false, trailing: true, on: $0, $1)
        }
        harness.play(every10ms)
        #expect(harness.recorded == runs([(90, 100), (190, 200), (290, 300), (340, 400)]))
    }

    @Test func trailingOnlyNeverRunsInsideDispatch() {
        let harness = EffectHarness {
            Middlewares.throttle(.milliseconds(100), leading: false, trailing: true, on: $0, $1)
        }
        harness.store.dispatch(.add(7))
        #expect(harness.recorded.isEmpty)
        harness.scheduler.advance(by: .milliseconds(99))
        #expect(harness.recorded.isEmpty)
        harness.scheduler.advance(by: .milliseconds(1))
        #expect(harness.recorded == runs([(7, 100)]))
    }

    @Test func trailingOnlyAfterAQuietWindowOpensANewWindowAtTheAction() {
        let harness = EffectHarness {
            Middlewares.throttle(.milliseconds(100), leading: false, trailing: true, on: $0, $1)
        }
        // 0 trails at 100 and opens [100, 200), which stays empty; 250 opens [250, 350).
        harness.play([0, 250, 260])
        #expect(harness.recorded == runs([(0, 100), (260, 350)]))
    }

    @Test func leadingAndTrailingEqualsLatestTrue() {
        let options = EffectHarness {
            Middlewares.throttle(.milliseconds(100), leading: true, trailing: true, on: $0, $1)
        }
        let latest = EffectHarness { Middlewares.throttle(.milliseconds(100), latest: true, on: $0, $1) }
        options.play(every10ms)
        latest.play(every10ms)
        #expect(options.recorded == runs([(0, 0), (90, 100), (190, 200), (290, 300), (340, 400)]))
        #expect(latest.recorded == options.recorded)
    }

    @Test func theDefaultsAreLeadingOnlyAsLatestFalse() {
        let defaults = EffectHarness { Middlewares.throttle(.milliseconds(100), on: $0, $1) }
        let latest = EffectHarness { Middlewares.throttle(.milliseconds(100), latest: false, on: $0, $1) }
        defaults.play(every10ms)
        latest.play(every10ms)
        #expect(defaults.recorded == runs([(0, 0), (100, 100), (200, 200), (300, 300)]))
        #expect(latest.recorded == defaults.recorded)
    }

    @Test func trailingOnlyOwedRunOnALateSchedulerRunsBeforeTheActionThatFindsIt() {
        let harness = EffectHarness {
            Middlewares.throttle(.milliseconds(100), leading: false, trailing: true, runs: .inDispatch, on: $0, $1)
        }
        harness.play([0, 50], flush: 0)
        // 50 is due at 100; the queue is busy until 150. 50 runs first and opens [100, 200); 150 trails at 200.
        harness.scheduler.letTimePass(to: harness.start + .milliseconds(150))
        harness.store.dispatch(.add(150))
        #expect(harness.recorded == runs([(50, 150)]))
        harness.scheduler.advance(by: .seconds(1))
        #expect(harness.recorded == runs([(50, 150), (150, 200)]))
        #expect(harness.scheduler.pendingWorkCount == 0)
    }
}
