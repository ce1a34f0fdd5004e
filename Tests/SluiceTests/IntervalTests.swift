import Dispatch
import Sluice
import SluiceJournal
import SluiceTesting
import Testing

/// A store with one side effect under a time modifier on a `TestScheduler`, which dispatches `.add(t)` at virtual
/// times `t` given in nanoseconds and records each run as the action's value and the nanoseconds since the start.
private final class NanosecondHarness: Sendable {
    struct Run: Equatable, CustomStringConvertible {
        let value: Int
        let at: UInt64

        var description: String { "\(value)@\(at)ns" }
    }

    let scheduler = TestScheduler()
    let runs = Locked<[Run]>([])
    let store: Store<TestState, TestAction>
    let start: DispatchTime

    typealias Effect = SideEffect<TestState, TestAction>
    typealias Handler = @Sendable (TestAction, MiddlewareAPI<TestState, TestAction>) -> Void

    /// - Parameter modify: Wraps the recording effect in the modifier under test, on the harness's scheduler.
    convenience init(_ modify: (TestScheduler, Effect) -> Effect) {
        self.init(handler: { scheduler, record in modify(scheduler, SideEffect(record)) })
    }

    /// A harness whose `modify` wraps the recording handler in the modifier under test, on the harness's scheduler.
    static func handler(_ modify: (TestScheduler, @escaping Handler) -> Effect) -> Self {
        Self(handler: modify)
    }

    private init(handler modify: (TestScheduler, @escaping Handler) -> Effect) {
        let scheduler = scheduler
        let runs = runs
        let start = scheduler.now
        self.start = start
        let record: Handler = { action, _ in
            if case .add(let value) = action {
                runs.append(Run(value: value, at: scheduler.now.uptimeNanoseconds - start.uptimeNanoseconds))
            }
        }
        store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [Middleware(modify(scheduler, record))]
        )
    }

    /// Dispatches `.add(t)` at each time `t` (ns); work due at an instant runs before the action of that instant.
    /// Then runs everything that is left.
    func play(_ times: [Int]) {
        for time in times {
            scheduler.advance(to: DispatchTime(uptimeNanoseconds: start.uptimeNanoseconds + UInt64(time)))
            store.dispatch(.add(time))
        }
        scheduler.run()
    }

    var recorded: [Run] { runs.current }
}

private func runs(_ pairs: [(Int, UInt64)]) -> [NanosecondHarness.Run] {
    pairs.map { NanosecondHarness.Run(value: $0.0, at: $0.1) }
}

/// The time modifiers take their intervals as `Duration`s, counted in whole nanoseconds exactly: below a millisecond,
/// with a fraction of a nanosecond (rounded up), and far beyond anything a timer would wait for.
@Suite struct IntervalTests {
    @Test func throttleWindowsOfAMicrosecond() {
        let harness = NanosecondHarness { Middlewares.throttle(.microseconds(1), latest: true, on: $0, $1) }
        harness.play([0, 500, 999, 1_000])
        // 999 trails at the end of [0, 1000) and opens [1000, 2000), inside which the action at 1000 trails.
        #expect(harness.recorded == runs([(0, 0), (999, 1_000), (1_000, 2_000)]))
    }

    @Test func debounceOfNanosecondsWithAMaxWait() {
        let harness = NanosecondHarness {
            Middlewares.debounce(.nanoseconds(250), maxWait: .nanoseconds(400), on: $0, $1)
        }
        harness.play([0, 200, 400, 1_000])
        // 200 runs at the longest wait, 400 after the burst's quiet time, 1000 alone after its own.
        #expect(harness.recorded == runs([(200, 400), (400, 650), (1_000, 1_250)]))
    }

    @Test func delayOfAMillisecondAndAHalf() {
        let harness = NanosecondHarness { Middlewares.delay(.milliseconds(1.5), on: $0, $1) }
        harness.play([0, 1])
        #expect(harness.recorded == runs([(0, 1_500_000), (1, 1_500_001)]))
    }

    /// Half a nanosecond is 1 ns, not zero: the effect is delayed, not run inside `dispatch` as under `.zero`.
    @Test func aFractionOfANanosecondRoundsUpAndIsNeverZero() {
        let harness = NanosecondHarness { Middlewares.delay(.nanoseconds(0.5), on: $0, $1) }
        harness.store.dispatch(.add(7))
        #expect(harness.recorded.isEmpty)
        harness.scheduler.advance(by: .nanoseconds(1))
        #expect(harness.recorded == runs([(7, 1)]))

        let oneAttosecond = Duration(secondsComponent: 0, attosecondsComponent: 1)
        let throttled = NanosecondHarness { Middlewares.throttle(oneAttosecond, on: $0, $1) }
        throttled.play([0, 0, 1])
        #expect(throttled.recorded == runs([(0, 0), (1, 1)]))  // the second action at 0 is inside the 1 ns window
    }

    @Test func zeroIsNoRateLimit() {
        let harness = NanosecondHarness { Middlewares.throttle(.zero, on: $0, $1) }
        harness.play([0, 0, 0])
        #expect(harness.recorded == runs([(0, 0), (0, 0), (0, 0)]))
    }

    /// Thirty years are counted to the nanosecond.
    @Test func aDelayOfThirtyYearsIsExact() {
        let thirtyYears = Duration.seconds(30 * 365 * 86_400)
        let harness = NanosecondHarness { Middlewares.delay(thirtyYears + .nanoseconds(1), on: $0, $1) }
        harness.play([0])
        #expect(harness.recorded == runs([(0, 946_080_000_000_000_001)]))
    }

    /// 2⁶⁴ ns and more is past the end of `DispatchTime`: the interval never ends, so a delay never runs, and a
    /// `maxWait` that long is no limit.
    @Test func intervalsPastTheEndOfTimeNeverEnd() {
        let endOfTime = Duration.nanoseconds(UInt64.max) + .nanoseconds(1)
        let delayed = NanosecondHarness { Middlewares.delay(endOfTime, on: $0, $1) }
        delayed.play([0, 1])
        #expect(delayed.recorded.isEmpty)
        #expect(delayed.scheduler.pendingWorkCount == 0)

        let debounced = NanosecondHarness {
            Middlewares.debounce(.nanoseconds(100), maxWait: endOfTime, on: $0, $1)
        }
        debounced.play(Array(stride(from: 0, through: 1_000, by: 50)))
        #expect(debounced.recorded == runs([(1_000, 1_100)]))  // under steady load, only after the quiet time
    }
}
