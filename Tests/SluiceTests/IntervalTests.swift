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

// MARK: - The deprecated `DispatchTimeInterval` forms

/// The deprecated forms, declared again as requirements so that these tests reach them through the protocol: a
/// direct call would be a use of deprecated API, and the package builds without warnings.
private protocol DispatchTimeIntervalForms {
    static func throttle<State, Action>(
        _ interval: DispatchTimeInterval,
        leading: Bool,
        trailing: Bool,
        runs placement: RunPlacement,
        on scheduler: any EffectScheduler,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action>

    static func throttle<State, Action>(
        _ interval: DispatchTimeInterval,
        leading: Bool,
        trailing: Bool,
        runs placement: RunPlacement,
        on scheduler: any EffectScheduler,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action>

    static func throttle<State, Action>(
        _ interval: DispatchTimeInterval,
        latest: Bool,
        on scheduler: any EffectScheduler,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action>

    static func throttle<State, Action>(
        _ interval: DispatchTimeInterval,
        latest: Bool,
        on scheduler: any EffectScheduler,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action>

    static func debounce<State, Action>(
        _ interval: DispatchTimeInterval,
        maxWait: DispatchTimeInterval,
        runs placement: RunPlacement,
        on scheduler: any EffectScheduler,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action>

    static func debounce<State, Action>(
        _ interval: DispatchTimeInterval,
        maxWait: DispatchTimeInterval,
        runs placement: RunPlacement,
        on scheduler: any EffectScheduler,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action>

    static func delay<State, Action>(
        _ interval: DispatchTimeInterval,
        runs placement: RunPlacement,
        on scheduler: any EffectScheduler,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action>

    static func delay<State, Action>(
        _ interval: DispatchTimeInterval,
        runs placement: RunPlacement,
        on scheduler: any EffectScheduler,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action>

    static func snapshot<State: Encodable & Sendable, Action: Sendable>(
        to journal: Journal,
        debounce interval: DispatchTimeInterval,
        maxWait: DispatchTimeInterval,
        reducerVersion: Int
    ) -> SideEffect<State, Action>
}

extension Middlewares: DispatchTimeIntervalForms {}

/// The store's scheduler under its deprecated name.
private protocol ClockForm {
    var clock: any EffectScheduler { get set }
}

extension StoreDependencies: ClockForm {}

/// `Middlewares`, seen through its deprecated forms.
private var deprecated: any DispatchTimeIntervalForms.Type { Middlewares.self }

/// Each deprecated form forwards to its `Duration` form: the same timeline gives the same runs, and `.never` is an
/// interval that never ends.
@Suite struct DeprecatedIntervalFormsTests {
    /// Actions at these times (µs), with quiet times long and short.
    private static let timeline = [0, 300, 700, 1_000, 1_100, 1_150, 2_500, 2_600, 6_000]

    /// Plays the timeline under `old` and under `new` and expects the same runs, at least `minimum` of them.
    private static func expectSameRuns(
        _ old: NanosecondHarness,
        _ new: NanosecondHarness,
        minimum: Int = 2,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        old.play(timeline.map { $0 * 1_000 })
        new.play(timeline.map { $0 * 1_000 })
        #expect(new.recorded.count >= minimum, sourceLocation: sourceLocation)
        #expect(old.recorded == new.recorded, sourceLocation: sourceLocation)
    }

    @Test func throttleForwards() {
        Self.expectSameRuns(
            NanosecondHarness {
                deprecated.throttle(.microseconds(500), leading: false, trailing: true, runs: .inDispatch, on: $0, $1)
            },
            NanosecondHarness { Middlewares.throttle(.microseconds(500), leading: false, trailing: true, on: $0, $1) }
        )
        Self.expectSameRuns(
            NanosecondHarness.handler({
                deprecated.throttle(.milliseconds(1), leading: true, trailing: true, runs: .onScheduler, on: $0, $1)
            }),
            NanosecondHarness.handler({
                Middlewares.throttle(.milliseconds(1), leading: true, trailing: true, runs: .onScheduler, on: $0, $1)
            })
        )
        Self.expectSameRuns(
            NanosecondHarness { deprecated.throttle(.milliseconds(1), latest: true, on: $0, $1) },
            NanosecondHarness { Middlewares.throttle(.milliseconds(1), latest: true, on: $0, $1) }
        )
        Self.expectSameRuns(
            NanosecondHarness.handler({ deprecated.throttle(.nanoseconds(400_000), latest: false, on: $0, $1) }),
            NanosecondHarness.handler({ Middlewares.throttle(.microseconds(400), latest: false, on: $0, $1) })
        )
        let never = NanosecondHarness { deprecated.throttle(.never, latest: true, on: $0, $1) }
        never.play([0, 10, 5_000])
        #expect(never.recorded == runs([(0, 0)]))
    }

    @Test func debounceForwards() {
        Self.expectSameRuns(
            NanosecondHarness {
                deprecated.debounce(.microseconds(200), maxWait: .never, runs: .inDispatch, on: $0, $1)
            },
            NanosecondHarness { Middlewares.debounce(.microseconds(200), on: $0, $1) }
        )
        Self.expectSameRuns(
            NanosecondHarness.handler({
                deprecated.debounce(.microseconds(200), maxWait: .microseconds(500), runs: .onScheduler, on: $0, $1)
            }),
            NanosecondHarness.handler({
                Middlewares.debounce(.microseconds(200), maxWait: .microseconds(500), runs: .onScheduler, on: $0, $1)
            })
        )
        let never = NanosecondHarness {
            deprecated.debounce(.never, maxWait: .never, runs: .inDispatch, on: $0, $1)
        }
        never.play([0, 10])
        #expect(never.recorded.isEmpty)
    }

    @Test func delayForwards() {
        Self.expectSameRuns(
            NanosecondHarness { deprecated.delay(.microseconds(250), runs: .inDispatch, on: $0, $1) },
            NanosecondHarness { Middlewares.delay(.microseconds(250), on: $0, $1) },
            minimum: Self.timeline.count
        )
        Self.expectSameRuns(
            NanosecondHarness.handler({ deprecated.delay(.seconds(0), runs: .onScheduler, on: $0, $1) }),
            NanosecondHarness.handler({ Middlewares.delay(.zero, runs: .onScheduler, on: $0, $1) }),
            minimum: Self.timeline.count
        )
        let never = NanosecondHarness { deprecated.delay(.never, runs: .inDispatch, on: $0, $1) }
        never.play([0, 1])
        #expect(never.recorded.isEmpty)
    }

    @Test func snapshotForwards() async throws {
        try await withTemporaryDirectory { directory in
            let scheduler = TestScheduler()
            let journal = try Journal(directory: directory)
            defer { journal.close() }
            let snapshot: SideEffect<LedgerState, LedgerAction> = deprecated.snapshot(
                to: journal,
                debounce: .seconds(5),
                maxWait: .seconds(8),
                reducerVersion: 2
            )
            let store = try Store<LedgerState, LedgerAction>(
                recoveringFrom: journal,
                durability: .everyAction,
                initialState: LedgerState(),
                reducer: ledgerReducer,
                middleware: [Middleware(snapshot)],
                dependencies: .test { $0.scheduler = scheduler }
            )
            for value in 1...4 {
                store.dispatch(.add(value))
                scheduler.advance(by: .seconds(3))  // never 5 s of quiet: only the longest wait saves
            }
            #expect(try journal.storage.snapshotSequences() == [3])  // at 8 s, after the third action (at 6 s)
        }
    }

    @Test func clockIsTheScheduler() {
        let scheduler = TestScheduler()
        var dependencies = StoreDependencies.test()
        setClock(of: &dependencies, to: scheduler)
        #expect(dependencies.scheduler as? TestScheduler === scheduler)
        #expect(clock(of: dependencies) as? TestScheduler === scheduler)
    }
}

private func setClock(of dependencies: inout some ClockForm, to scheduler: any EffectScheduler) {
    dependencies.clock = scheduler
}

private func clock(of dependencies: some ClockForm) -> any EffectScheduler {
    dependencies.clock
}
