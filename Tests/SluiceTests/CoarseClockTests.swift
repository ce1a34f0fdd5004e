import Dispatch
import Sluice
import SluiceTesting
import Testing

/// The time-based modifiers on a scheduler with a coarse clock, as they run on Linux with the default scheduler
/// (the kernel's coarse monotonic clock), here on virtual time: the coarse reading is the time of the last tick,
/// up to a tick behind. A deadline derived from it is never early: `delay` and `debounce` without `maxWait` take
/// the coarse time plus two ticks (an upper bound of the time) when that lateness is at most a tenth of their
/// interval, and the exact time otherwise; `throttle` takes the exact time at a window's end.
@Suite struct CoarseClockTests {
    /// A `TestScheduler` whose coarse clock ticks every `tick` nanoseconds from its start; with `stalledTicks`, its
    /// reading is that many ticks older still, as when the CPU that updates the kernel's coarse clock stalls.
    struct CoarseTestScheduler: CoarseClockScheduler {
        let base = TestScheduler()
        let tick: UInt64
        let origin: UInt64
        let stalledTicks: UInt64
        let coarseLag: UInt64

        init(tick: UInt64, stalledTicks: UInt64 = 0, lagTicks: UInt64 = 2) {
            self.tick = tick
            self.stalledTicks = stalledTicks
            coarseLag = lagTicks * tick
            origin = base.now.uptimeNanoseconds
        }

        var now: DispatchTime { base.now }

        var coarseNow: DispatchTime {
            let now = base.now.uptimeNanoseconds
            let lastTick = now - (now - origin) % tick
            return DispatchTime(uptimeNanoseconds: max(origin, lastTick - min(lastTick, stalledTicks * tick)))
        }

        var coarseTick: UInt64 { tick }

        func schedule(after deadline: DispatchTime, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
            base.schedule(after: deadline, work)
        }
    }

    /// A store whose only middleware is the recording effect under `modify`, on a coarse scheduler with a 4 ms
    /// tick; runs are recorded as `value@microseconds` since the start.
    final class Harness: Sendable {
        let scheduler: CoarseTestScheduler
        let runs = Locked<[String]>([])
        let store: Store<TestState, TestAction>
        let start: UInt64

        init(
            scheduler: CoarseTestScheduler = CoarseTestScheduler(tick: 4_000_000),
            _ modify: (CoarseTestScheduler, SideEffect<TestState, TestAction>) -> SideEffect<TestState, TestAction>
        ) {
            self.scheduler = scheduler
            let runs = runs
            let start = scheduler.now.uptimeNanoseconds
            self.start = start
            let record = SideEffect<TestState, TestAction> { action, _ in
                if case .add(let value) = action {
                    runs.append("\(value)@\((scheduler.now.uptimeNanoseconds - start) / 1_000)")
                }
            }
            store = Store(
                initialState: TestState(),
                reducer: testReducer,
                middleware: [Middleware(modify(scheduler, record))]
            )
        }

        /// Moves the virtual time to `microseconds` after the start, running the work due by then.
        func advance(toMicroseconds microseconds: UInt64) {
            scheduler.base.advance(to: DispatchTime(uptimeNanoseconds: start + microseconds * 1_000))
        }

        /// Dispatches `.add(value)` at `microseconds` after the start.
        func dispatch(_ value: Int, atMicroseconds microseconds: UInt64) {
            advance(toMicroseconds: microseconds)
            store.dispatch(.add(value))
        }

        var recorded: [String] { runs.current }
    }

    @Test func aDelayedRunIsNeverEarlyAndAtMostTwoTicksLate() {
        // 100 ms: two ticks (8 ms) are at most a tenth of it, so the coarse time plus two ticks is taken.
        let harness = Harness { Middlewares.delay(.milliseconds(100), on: $0, $1) }
        // At 3.5 ms the coarse clock still reads 0: the time given is 0 + 8 ms, the run's deadline 108 ms.
        harness.dispatch(1, atMicroseconds: 3_500)
        harness.advance(toMicroseconds: 103_499)
        #expect(harness.recorded.isEmpty)  // the exact deadline, 103.5 ms, is not reached: never early
        harness.advance(toMicroseconds: 103_500)
        #expect(harness.recorded.isEmpty)  // due now, and the run is at most two ticks late
        harness.advance(toMicroseconds: 103_500 + 8_000)
        #expect(harness.recorded == ["1@108000"])
    }

    @Test func aDelayedRunIsNeverEarlyWhenTheCoarseClockStallsWithinItsLag() {
        // The coarse reading five ticks older than its last tick (20 ms), as Linux allows before another CPU updates
        // it; the margin six ticks (24 ms, what the kernel's clock gets), at most a tenth of the 1 s delay.
        let scheduler = CoarseTestScheduler(tick: 4_000_000, stalledTicks: 5, lagTicks: 6)
        let harness = Harness(scheduler: scheduler) { Middlewares.delay(.seconds(1), on: $0, $1) }
        // At 50 ms the coarse clock reads 28 ms: the time given is 28 + 24 = 52 ms, the run's deadline 1,052 ms.
        harness.dispatch(1, atMicroseconds: 50_000)
        harness.advance(toMicroseconds: 1_049_999)
        #expect(harness.recorded.isEmpty)  // the exact deadline, 1,050 ms, is not reached: never early
        harness.advance(toMicroseconds: 1_050_000 + 24_000)
        #expect(harness.recorded == ["1@1052000"])  // at most six ticks late
    }

    @Test func aShortDelayTakesTheExactTime() {
        // 50 ms: two ticks (8 ms) are more than a tenth of it, so the precise time is taken.
        let harness = Harness { Middlewares.delay(.milliseconds(50), on: $0, $1) }
        harness.dispatch(1, atMicroseconds: 3_500)
        harness.advance(toMicroseconds: 53_499)
        #expect(harness.recorded.isEmpty)
        harness.advance(toMicroseconds: 53_500)
        #expect(harness.recorded == ["1@53500"])
    }

    @Test func delayedRunsKeepTheirOrderWithCoarseTimes() {
        let harness = Harness { Middlewares.delay(.milliseconds(100), on: $0, $1) }
        harness.dispatch(1, atMicroseconds: 1_000)
        harness.dispatch(2, atMicroseconds: 3_999)
        harness.dispatch(3, atMicroseconds: 4_000)
        harness.advance(toMicroseconds: 200_000)
        // Coarse readings 0, 0, 4 ms: deadlines 108, 108 and 112 ms, each after the exact one.
        #expect(harness.recorded == ["1@108000", "2@108000", "3@112000"])
    }

    @Test func aDebouncedRunIsNeverEarlyAndAtMostTwoTicksLate() {
        let harness = Harness { Middlewares.debounce(.milliseconds(100), on: $0, $1) }
        harness.dispatch(1, atMicroseconds: 1_000)
        harness.dispatch(2, atMicroseconds: 50_500)
        // The quiet time passes at 150.5 ms; the coarse reading at 50.5 ms was 48 ms, so the deadline is 156 ms.
        harness.advance(toMicroseconds: 150_499)
        #expect(harness.recorded.isEmpty)
        harness.advance(toMicroseconds: 155_999)
        #expect(harness.recorded.isEmpty)
        harness.advance(toMicroseconds: 156_000)
        #expect(harness.recorded == ["2@156000"])
    }

    @Test func aDebounceWithMaxWaitTakesTheExactTime() {
        // With `maxWait` a late time would make the longest wait seem over early: the precise time is taken.
        let harness = Harness { Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(150), on: $0, $1) }
        harness.dispatch(1, atMicroseconds: 1_000)
        harness.dispatch(2, atMicroseconds: 90_500)
        harness.advance(toMicroseconds: 150_999)
        #expect(harness.recorded.isEmpty)
        harness.advance(toMicroseconds: 151_000)  // maxWait after the first action
        #expect(harness.recorded == ["2@151000"])
    }

    @Test func aShortDebounceTakesTheExactTime() {
        let harness = Harness { Middlewares.debounce(.milliseconds(50), on: $0, $1) }
        harness.dispatch(1, atMicroseconds: 3_500)
        harness.advance(toMicroseconds: 53_499)
        #expect(harness.recorded.isEmpty)
        harness.advance(toMicroseconds: 53_500)
        #expect(harness.recorded == ["1@53500"])
    }

    @Test func aThrottleWindowEndsOnTimeThoughTheCoarseClockLags() {
        let harness = Harness { Middlewares.throttle(.milliseconds(100), latest: true, on: $0, $1) }
        harness.dispatch(1, atMicroseconds: 3_500)
        harness.advance(toMicroseconds: 3_500)  // the leading run, handed to the scheduler
        harness.dispatch(2, atMicroseconds: 50_000)
        harness.dispatch(3, atMicroseconds: 98_000)  // held inside the window, decided on the coarse time
        harness.advance(toMicroseconds: 103_499)
        #expect(harness.recorded == ["1@3500"])
        harness.advance(toMicroseconds: 103_500)  // the window's end: the newest held action runs exactly then
        #expect(harness.recorded == ["1@3500", "3@103500"])
    }

    @Test func aHeldActionUnderTakeLatestBringsItsOwnRun() {
        // Under `takeLatest` each action has an API of its own (its run's cancellation): the held action replaces
        // the pending run whole, so the trailing run has the newest action's API, which nothing superseded.
        let harness = Harness {
            Middlewares.takeLatest(Middlewares.throttle(.milliseconds(100), latest: true, on: $0, $1))
        }
        harness.dispatch(1, atMicroseconds: 3_500)
        harness.advance(toMicroseconds: 3_500)
        harness.dispatch(2, atMicroseconds: 50_000)
        harness.dispatch(3, atMicroseconds: 60_000)  // held in place of 2, whose run 3 supersedes
        harness.advance(toMicroseconds: 103_500)
        #expect(harness.recorded == ["1@3500", "3@103500"])
    }

    @Test func aLeadingThrottleLetsAnActionThroughAtTheWindowsEnd() {
        let harness = Harness { Middlewares.throttle(.milliseconds(100), on: $0, $1) }
        harness.dispatch(1, atMicroseconds: 3_500)
        harness.advance(toMicroseconds: 3_500)  // the leading run, handed to the scheduler
        harness.dispatch(2, atMicroseconds: 103_499)  // inside the window: dropped
        // At the window's end the coarse clock reads 100 ms, behind; the precise time decides, and it runs.
        harness.dispatch(3, atMicroseconds: 103_500)
        harness.advance(toMicroseconds: 103_500)
        #expect(harness.recorded == ["1@3500", "3@103500"])
    }
}
