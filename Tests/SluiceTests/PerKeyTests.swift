import Dispatch
import Sluice
import SluiceTesting
import Testing

/// The modifiers applied per key (`throttle(…, by:)`, `debounce(…, by:)`, `delay(…, by:)`, `takeLatest(by:)`,
/// `takeLeading(by:)`): each key decides exactly as the store-wide modifier decides for a store that sees only that
/// key's actions, keys are forgotten when idle, shutdown flushes every key, and the totals are exact under threads.
@Suite(.timeLimit(suiteTimeLimit)) struct PerKeyTests {
    // MARK: Each key is a store-wide modifier of its own

    /// Random timelines of many keys: the keyed modifier's runs of each key are the runs of the store-wide modifier
    /// on a store that saw only that key's actions at the same times, on the same scheduler, late timers included.
    ///
    /// With a coarse clock too (as on Linux with the default scheduler): both forms then read it alike, and take the
    /// same late times for `delay` and `debounce`.
    @Test(arguments: KeyedConfiguration.all, [false, true])
    func eachKeyRunsAsTheStoreWideModifier(_ configuration: KeyedConfiguration, coarseClock: Bool) {
        var generator = SplitMix64(seed: 43)
        // Two keys: each key's actions come close together (bursts, open windows); sixteen: they are sparse.
        for keys in [2, 2, 16, 16, 16] {
            let harness = KeyedHarness(keys: 0..<keys, configuration, coarseClock: coarseClock)
            var events: [KeyedHarness.Event] = []
            var time = 0
            for _ in 0..<400 {
                time += Int(generator.next() % 40)
                let key = Int(generator.next() % UInt64(keys))
                let busy = generator.next() % 8 == 0  // the scheduler is late: time passes without running work
                events.append(KeyedHarness.Event(time: time, key: key, lateScheduler: busy))
            }
            harness.play(events)
            for key in 0..<keys {
                #expect(harness.keyedRuns(of: key) == harness.storeWideRuns(of: key), "key \(key)")
            }
            #expect(harness.keyedRuns.current.count > keys)
            // Every key is forgotten once its window, burst or queue is over, and no timer is left behind.
            #expect(harness.keyed.perKeyModifierKeyCount == 0)
            #expect(harness.scheduler.pendingWorkCount == 0)
        }
    }

    @Test func anActionWithoutAKeyIsNotCounted() {
        let harness = KeyedHarness(keys: 0..<1, KeyedConfiguration.all[0])
        harness.keyed.dispatch(.unkeyed(1))
        harness.scheduler.advance(by: .seconds(1))
        #expect(harness.keyedRuns.current.isEmpty)
        #expect(harness.keyed.perKeyModifierKeyCount == 0)
        #expect(harness.keyed.state.count == 1)  // the reducer saw it
    }

    @Test func keysDoNotAffectEachOther() {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.throttle(
                .milliseconds(100),
                runs: .inDispatch,
                on: scheduler,
                by: \KeyedAction.key,
                record(runs)
            )
        )
        store.dispatch(.tick(key: 1, value: 1))
        store.dispatch(.tick(key: 2, value: 1))
        store.dispatch(.tick(key: 1, value: 2))  // dropped: key 1's window is open
        store.dispatch(.tick(key: 3, value: 1))
        #expect(runs.current == ["1:1", "2:1", "3:1"])
        #expect(store.perKeyModifierKeyCount == 3)
        scheduler.advance(by: .milliseconds(100))
        #expect(store.perKeyModifierKeyCount == 0)
        store.dispatch(.tick(key: 1, value: 3))
        #expect(runs.current == ["1:1", "2:1", "3:1", "1:3"])
    }

    // MARK: Keys are forgotten when idle

    /// 10,000 keys that are each active for a moment: the keys held at any time are the ones whose windows are open,
    /// and every key runs exactly twice (leading, then trailing).
    @Test func memoryFollowsTheActiveKeys() {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.throttle(.milliseconds(100), trailing: true, on: scheduler, by: \KeyedAction.key, record(runs))
        )
        var mostKeys = 0
        for key in 0..<10_000 {
            scheduler.advance(by: .milliseconds(1))
            store.dispatch(.tick(key: key, value: 1))
            store.dispatch(.tick(key: key, value: 2))
            mostKeys = max(mostKeys, store.perKeyModifierKeyCount)
        }
        scheduler.advance(by: .seconds(1))
        // A key's first window holds its trailing run, the second (opened by that run) nothing: 200 ms in all.
        #expect(mostKeys <= 201)
        #expect(store.perKeyModifierKeyCount == 0)
        #expect(runs.current.count == 20_000)
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test func aKeyIsHeldWhileItsWorkIsOwed() {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let store = keyedStore(Middlewares.delay(.milliseconds(50), on: scheduler, by: \KeyedAction.key, record(runs)))
        store.dispatch(.tick(key: 7, value: 1))
        scheduler.advance(by: .milliseconds(25))
        store.dispatch(.tick(key: 7, value: 2))
        #expect(store.perKeyModifierKeyCount == 1)
        scheduler.advance(by: .milliseconds(25))
        #expect(runs.current == ["7:1"])
        #expect(store.perKeyModifierKeyCount == 1)  // 7:2 is still queued
        scheduler.advance(by: .milliseconds(25))
        #expect(runs.current == ["7:1", "7:2"])
        #expect(store.perKeyModifierKeyCount == 0)
    }

    /// With `maxWait`, a key whose run happened while its actions go on is held until the burst is over: the next
    /// run's longest wait counts from the previous run, as the store-wide debounce counts it.
    @Test func aDebounceWithMaxWaitHoldsItsKeyUntilTheBurstIsOver() {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.debounce(
                .milliseconds(100),
                maxWait: .milliseconds(200),
                on: scheduler,
                by: \KeyedAction.key,
                record(runs)
            )
        )
        for value in 0..<4 {
            store.dispatch(.tick(key: 1, value: value))
            scheduler.advance(by: .milliseconds(60))
        }
        // Runs at 200 (the longest wait) with the action of 180; the burst goes on until 280.
        #expect(runs.current == ["1:3"])
        #expect(store.perKeyModifierKeyCount == 1)
        scheduler.advance(by: .milliseconds(40))
        #expect(store.perKeyModifierKeyCount == 0)
    }

    @Test func aWindowThatNeverEndsKeepsItsKey() {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.throttle(
                .seconds(Int64.max),
                runs: .inDispatch,
                on: scheduler,
                by: \KeyedAction.key,
                record(runs)
            )
        )
        store.dispatch(.tick(key: 1, value: 1))
        store.dispatch(.tick(key: 1, value: 2))
        scheduler.run()
        #expect(runs.current == ["1:1"])
        #expect(store.perKeyModifierKeyCount == 1)
    }

    // MARK: takeLatest and takeLeading per key

    @Test func aNewerActionCancelsOnlyTheRunOfItsKey() async {
        let gate = AsyncGate()
        let finished = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.takeLatest(by: \KeyedAction.key) {
                (action: KeyedAction, api: MiddlewareAPI<KeyedState, KeyedAction>) async in
                await gate.wait()
                if !api.isCancelled, case .tick(let key, let value) = action {
                    finished.append("\(key):\(value)")
                }
            }
        )
        store.dispatch(.tick(key: 1, value: 1))
        store.dispatch(.tick(key: 2, value: 1))
        store.dispatch(.tick(key: 1, value: 2))  // cancels 1:1 only
        store.dispatch(.unkeyed(0))  // supersedes nothing
        #expect(store.perKeyModifierKeyCount == 2)
        gate.open()
        #expect(await store.tasksEnded())
        #expect(Set(finished.current) == ["1:2", "2:1"])
        #expect(await waitUntil { store.perKeyModifierKeyCount == 0 })
    }

    @Test func aRunInProgressIgnoresOnlyTheActionsOfItsKey() async {
        let gate = AsyncGate()
        let started = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.takeLeading(by: \KeyedAction.key) {
                (action: KeyedAction, _: MiddlewareAPI<KeyedState, KeyedAction>) async in
                if case .tick(let key, let value) = action {
                    started.append("\(key):\(value)")
                }
                await gate.wait()
            }
        )
        store.dispatch(.tick(key: 1, value: 1))
        store.dispatch(.tick(key: 1, value: 2))  // ignored: 1 is running
        store.dispatch(.tick(key: 2, value: 1))
        #expect(store.perKeyModifierKeyCount == 2)
        gate.open()
        #expect(await store.tasksEnded())
        #expect(await waitUntil { store.perKeyModifierKeyCount == 0 })
        store.dispatch(.tick(key: 1, value: 3))
        #expect(await store.tasksEnded())
        #expect(started.current.sorted() == ["1:1", "1:3", "2:1"])
    }

    // MARK: Shutdown

    @Test func shutdownRunsWhatEveryKeyOwes() async {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.combine(
                Middlewares.throttle(
                    .seconds(3_600),
                    trailing: true,
                    on: scheduler,
                    by: \KeyedAction.key,
                    record(runs, "t")
                ),
                Middlewares.debounce(.seconds(3_600), on: scheduler, by: \KeyedAction.key, record(runs, "d")),
                Middlewares.delay(.seconds(3_600), on: scheduler, by: \KeyedAction.key, record(runs, "l"))
            )
        )
        for key in 0..<500 {
            store.dispatch(.tick(key: key, value: 1))
            store.dispatch(.tick(key: key, value: 2))
        }
        scheduler.advance(by: .zero)  // the throttle's leading runs
        #expect(runs.current.count == 500)
        let report = await store.shutdown(timeout: hangGuard)
        // Per key: the throttle's trailing run, the debounced run, the two delayed runs.
        #expect(report.flushedRuns == 500 * 4)
        #expect(runs.current.count == 500 * 5)
        for key in [0, 250, 499] {
            #expect(runs.current.filter { $0.hasPrefix("t\(key):") } == ["t\(key):1", "t\(key):2"])
            #expect(runs.current.filter { $0.hasPrefix("d\(key):") } == ["d\(key):2"])
            #expect(runs.current.filter { $0.hasPrefix("l\(key):") } == ["l\(key):1", "l\(key):2"])
        }
        #expect(store.perKeyModifierKeyCount == 0)  // shutdown ended with the store's lifetime: every key is forgotten
    }

    /// A keyed debounce behind a keyed delay: the delayed runs that shutdown releases make the debounced runs owed,
    /// which shutdown runs too, once per key.
    @Test func shutdownRunsWhatTheFlushedRunsOfEveryKeyLeaveOwed() async {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.delay(
                .seconds(3_600),
                on: scheduler,
                by: \KeyedAction.key,
                Middlewares.debounce(.seconds(3_600), on: scheduler, by: \KeyedAction.key, record(runs))
            )
        )
        for key in 0..<300 {
            for value in 0..<3 {
                store.dispatch(.tick(key: key, value: value))
            }
        }
        let report = await store.shutdown(timeout: hangGuard)
        #expect(report.flushedRuns == 300 * 3 + 300)
        #expect(runs.current.count == 300)
        #expect(Set(runs.current) == Set((0..<300).map { "\($0):2" }))
        #expect(store.perKeyModifierKeyCount == 0)
    }

    @Test func freeingTheStoreForgetsEveryKeyAndItsTimers() {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        var store: Store<KeyedState, KeyedAction>? = keyedStore(
            Middlewares.debounce(.seconds(1), on: scheduler, by: \KeyedAction.key, record(runs))
        )
        for key in 0..<100 {
            store?.dispatch(.tick(key: key, value: 1))
        }
        #expect(scheduler.pendingWorkCount == 100)
        store = nil
        #expect(scheduler.pendingWorkCount == 0)
        scheduler.advance(by: .seconds(2))
        #expect(runs.current.isEmpty)
    }

    // MARK: Under threads

    @Test func aLeadingThrottleRunsOncePerKeyWhenFourThreadsDispatch() async {
        for placement in [RunPlacement.inDispatch, .onScheduler] {
            let scheduler = TestScheduler()
            let runs = Locked<[String]>([])
            let store = keyedStore(
                Middlewares.throttle(.seconds(60), runs: placement, on: scheduler, by: \KeyedAction.key, record(runs))
            )
            await runOnThreads(4) { thread in
                for round in 0..<50 {
                    for key in 0..<100 {
                        store.dispatch(.tick(key: key, value: thread * 1_000 + round))
                    }
                }
            }
            scheduler.advance(by: .zero)
            #expect(runs.current.count == 100)
            #expect(Set(runs.current.map { $0.split(separator: ":")[0] }).count == 100)
            #expect(store.state.count == 4 * 50 * 100)
        }
    }

    /// Every action runs once, and each key's runs keep the order of each thread's actions.
    @Test func aDelayRunsEveryActionOfEveryKeyInOrderWhenFourThreadsDispatch() async {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.delay(.milliseconds(100), on: scheduler, by: \KeyedAction.key, record(runs))
        )
        await runOnThreads(4) { thread in
            for round in 0..<40 {
                for key in 0..<25 {
                    store.dispatch(.tick(key: key, value: thread * 1_000 + round))
                }
            }
        }
        #expect(store.perKeyModifierKeyCount == 25)
        scheduler.advance(by: .milliseconds(100))
        #expect(runs.current.count == 4 * 40 * 25)
        expectEachThreadInOrder(runs.current, keys: 25, threads: 4)
        #expect(store.perKeyModifierKeyCount == 0)
    }

    @Test func aDebounceRunsOncePerKeyWhenFourThreadsDispatch() async {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.debounce(.milliseconds(100), on: scheduler, by: \KeyedAction.key, record(runs))
        )
        await runOnThreads(4) { thread in
            for round in 0..<50 {
                for key in 0..<100 {
                    store.dispatch(.tick(key: key, value: thread * 1_000 + round))
                }
            }
        }
        scheduler.advance(by: .milliseconds(100))
        #expect(runs.current.count == 100)
        #expect(Set(runs.current.map { $0.split(separator: ":")[0] }).count == 100)
        #expect(store.perKeyModifierKeyCount == 0)
    }

    /// On a real queue: every delayed run of every key happens once and in order, and every key is forgotten.
    @Test func aDelayOnARealQueueRunsEveryActionOnceAndForgetsEveryKey() async {
        let runs = Locked<[String]>([])
        let store = keyedStore(
            Middlewares.delay(
                .milliseconds(1),
                on: .queue(DispatchQueue(label: "per-key")),
                by: \KeyedAction.key,
                record(runs)
            )
        )
        await runOnThreads(4) { thread in
            for round in 0..<50 {
                for key in 0..<20 {
                    store.dispatch(.tick(key: key, value: thread * 1_000 + round))
                }
            }
        }
        #expect(await runs.wait { $0.count == 4 * 50 * 20 })
        expectEachThreadInOrder(runs.current, keys: 20, threads: 4)
        #expect(await waitUntil { store.perKeyModifierKeyCount == 0 })
        #expect(runs.current.count == 4 * 50 * 20)
    }

    @Test func takeLatestKeepsTheLatestRunOfEachKeyWhenFourThreadsDispatch() async {
        let gate = AsyncGate()
        let finished = Locked<[String]>([])
        let cancelled = Locked(0)
        let store = keyedStore(
            Middlewares.takeLatest(by: \KeyedAction.key) {
                (action: KeyedAction, api: MiddlewareAPI<KeyedState, KeyedAction>) async in
                await gate.wait()
                if api.isCancelled {
                    cancelled.withValue { $0 += 1 }
                } else if case .tick(let key, _) = action {
                    finished.append("\(key)")
                }
            }
        )
        await runOnThreads(4) { thread in
            for round in 0..<10 {
                for key in 0..<50 {
                    store.dispatch(.tick(key: key, value: thread * 1_000 + round))
                }
            }
        }
        #expect(store.perKeyModifierKeyCount == 50)
        gate.open()
        #expect(await store.tasksEnded())
        #expect(finished.current.count == 50)
        #expect(Set(finished.current).count == 50)
        #expect(cancelled.current == 4 * 10 * 50 - 50)
        #expect(await waitUntil { store.perKeyModifierKeyCount == 0 })
    }

    @Test func takeLeadingStartsOneRunPerKeyWhenFourThreadsDispatch() async {
        // The runs of each round wait for the round's gate, which opens only once its dispatches are done.
        let gate = Locked(AsyncGate())
        let started = Locked(0)
        // Counted in the run's synchronous call; the run is in progress until the task it started ends.
        let store = keyedStore(
            Middlewares.takeLeading(by: \KeyedAction.key) {
                (_: KeyedAction, api: MiddlewareAPI<KeyedState, KeyedAction>) in
                started.withValue { $0 += 1 }
                let roundGate = gate.current
                api.start { _ in await roundGate.wait() }
            }
        )
        for round in 1...3 {
            await runOnThreads(4) { thread in
                for pass in 0..<10 {
                    for key in 0..<50 {
                        store.dispatch(.tick(key: key, value: thread * 1_000 + pass))
                    }
                }
            }
            #expect(started.current == 50 * round)
            #expect(store.perKeyModifierKeyCount == 50)
            let finished = gate.withValue { gate in
                defer { gate = AsyncGate() }
                return gate
            }
            finished.open()
            #expect(await store.tasksEnded())
            #expect(await waitUntil { store.perKeyModifierKeyCount == 0 })
        }
    }

    // MARK: Helpers

    private func record(_ runs: Locked<[String]>, _ prefix: String = "") -> SideEffect<KeyedState, KeyedAction> {
        SideEffect { action, _ in
            if case .tick(let key, let value) = action {
                runs.append("\(prefix)\(key):\(value)")
            }
        }
    }

    private func keyedStore(_ effect: SideEffect<KeyedState, KeyedAction>) -> Store<KeyedState, KeyedAction> {
        Store(initialState: KeyedState(), reducer: keyedReducer, middleware: [Middleware(effect)])
    }

    /// Each key's runs of the values `thread * 1_000 + round` are in increasing `round` order for every thread.
    private func expectEachThreadInOrder(_ runs: [String], keys: Int, threads: Int) {
        var last: [Int: [Int: Int]] = [:]
        var inOrder = true
        for run in runs {
            let parts = run.split(separator: ":").map { Int($0)! }
            let (key, thread, round) = (parts[0], parts[1] / 1_000, parts[1] % 1_000)
            if let previous = last[key]?[thread], previous >= round {
                inOrder = false
            }
            last[key, default: [:]][thread] = round
        }
        #expect(inOrder)
        #expect(last.count == keys)
        #expect(last.values.allSatisfy { $0.count == threads })
    }
}

/// The actions of the per-key tests: a tick of a key, or an action without one.
enum KeyedAction: Sendable, Equatable {
    case tick(key: Int, value: Int)
    case unkeyed(Int)

    var key: Int? {
        if case .tick(let key, _) = self { key } else { nil }
    }
}

struct KeyedState: Sendable, Equatable {
    var count = 0
}

let keyedReducer = Reducer<KeyedState, KeyedAction>(mutating: { state, _ in state.count += 1 })

/// A modifier in its keyed form and in its store-wide form, for the comparison of the two.
struct KeyedConfiguration: Sendable, CustomTestStringConvertible {
    typealias Effect = SideEffect<KeyedState, KeyedAction>

    let testDescription: String
    let keyed: @Sendable (any EffectScheduler, Effect) -> Effect
    let storeWide: @Sendable (any EffectScheduler, Effect) -> Effect

    static let all: [KeyedConfiguration] = [
        KeyedConfiguration(
            testDescription: "throttle",
            keyed: { Middlewares.throttle(.milliseconds(100), on: $0, by: \.key, $1) },
            storeWide: { Middlewares.throttle(.milliseconds(100), on: $0, $1) }
        ),
        KeyedConfiguration(
            testDescription: "throttle in dispatch",
            keyed: { Middlewares.throttle(.milliseconds(100), runs: .inDispatch, on: $0, by: \.key, $1) },
            storeWide: { Middlewares.throttle(.milliseconds(100), runs: .inDispatch, on: $0, $1) }
        ),
        KeyedConfiguration(
            testDescription: "throttle leading and trailing",
            keyed: { Middlewares.throttle(.milliseconds(100), trailing: true, on: $0, by: \.key, $1) },
            storeWide: { Middlewares.throttle(.milliseconds(100), trailing: true, on: $0, $1) }
        ),
        KeyedConfiguration(
            testDescription: "throttle trailing only",
            keyed: { Middlewares.throttle(.milliseconds(100), leading: false, trailing: true, on: $0, by: \.key, $1) },
            storeWide: { Middlewares.throttle(.milliseconds(100), leading: false, trailing: true, on: $0, $1) }
        ),
        KeyedConfiguration(
            testDescription: "throttle zero",
            keyed: { Middlewares.throttle(.zero, on: $0, by: \.key, $1) },
            storeWide: { Middlewares.throttle(.zero, on: $0, $1) }
        ),
        KeyedConfiguration(
            testDescription: "debounce",
            keyed: { Middlewares.debounce(.milliseconds(100), on: $0, by: \.key, $1) },
            storeWide: { Middlewares.debounce(.milliseconds(100), on: $0, $1) }
        ),
        KeyedConfiguration(
            testDescription: "debounce maxWait",
            keyed: { Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(250), on: $0, by: \.key, $1) },
            storeWide: { Middlewares.debounce(.milliseconds(100), maxWait: .milliseconds(250), on: $0, $1) }
        ),
        KeyedConfiguration(
            testDescription: "delay",
            keyed: { Middlewares.delay(.milliseconds(100), on: $0, by: \.key, $1) },
            storeWide: { Middlewares.delay(.milliseconds(100), on: $0, $1) }
        ),
        KeyedConfiguration(
            testDescription: "delay zero in dispatch",
            keyed: { Middlewares.delay(.zero, runs: .inDispatch, on: $0, by: \.key, $1) },
            storeWide: { Middlewares.delay(.zero, runs: .inDispatch, on: $0, $1) }
        ),
    ]
}

/// One store with the keyed modifier, and one store per key with the store-wide modifier, on one `TestScheduler`;
/// each event dispatches the same action to the keyed store and to its key's store at the same virtual time.
final class KeyedHarness: Sendable {
    struct Run: Equatable, CustomStringConvertible {
        let key: Int
        let value: Int
        let at: UInt64

        var description: String { "\(key):\(value)@\(at)" }
    }

    struct Event {
        let time: Int
        let key: Int
        /// Whether time passes to this event without running the work due meanwhile.
        let lateScheduler: Bool
    }

    /// The virtual time that the test moves.
    let scheduler: TestScheduler
    let keyedRuns = Locked<[Run]>([])
    let storeWideRuns = Locked<[Run]>([])
    let keyed: Store<KeyedState, KeyedAction>
    let storeWide: [Store<KeyedState, KeyedAction>]
    let start: DispatchTime

    /// - Parameter coarseClock: Whether the modifiers' scheduler has a coarse clock with a 4 ms tick.
    init(keys: Range<Int>, _ configuration: KeyedConfiguration, coarseClock: Bool = false) {
        let modifierScheduler: any EffectScheduler
        if coarseClock {
            let coarse = CoarseClockTests.CoarseTestScheduler(tick: 4_000_000)
            scheduler = coarse.base
            modifierScheduler = coarse
        } else {
            scheduler = TestScheduler()
            modifierScheduler = scheduler
        }
        let scheduler = scheduler
        let start = scheduler.now
        self.start = start
        func recorder(_ runs: Locked<[Run]>) -> SideEffect<KeyedState, KeyedAction> {
            SideEffect { action, _ in
                if case .tick(let key, let value) = action {
                    let elapsed = scheduler.now.uptimeNanoseconds - start.uptimeNanoseconds
                    runs.append(Run(key: key, value: value, at: elapsed / 1_000_000))
                }
            }
        }
        keyed = Store(
            initialState: KeyedState(),
            reducer: keyedReducer,
            middleware: [Middleware(configuration.keyed(modifierScheduler, recorder(keyedRuns)))]
        )
        let storeWideRecorder = recorder(storeWideRuns)
        storeWide = keys.map { _ in
            Store(
                initialState: KeyedState(),
                reducer: keyedReducer,
                middleware: [Middleware(configuration.storeWide(modifierScheduler, storeWideRecorder))]
            )
        }
    }

    func play(_ events: [Event], flush: Int = 10_000) {
        for (index, event) in events.enumerated() {
            let time = start + .milliseconds(event.time)
            if event.lateScheduler {
                scheduler.letTimePass(to: time)
            } else {
                scheduler.advance(to: time)
            }
            keyed.dispatch(.tick(key: event.key, value: index))
            storeWide[event.key].dispatch(.tick(key: event.key, value: index))
        }
        scheduler.advance(by: .milliseconds(flush))
    }

    func keyedRuns(of key: Int) -> [Run] {
        keyedRuns.current.filter { $0.key == key }
    }

    func storeWideRuns(of key: Int) -> [Run] {
        storeWideRuns.current.filter { $0.key == key }
    }
}
