import Foundation
import Sluice
import SluiceTesting
import Testing

@Suite struct BuiltInDependenciesTests {
    private typealias Effect = SideEffect<TestState, TestAction>

    /// One override of the scheduler puts every time modifier of the store that was given none on virtual time.
    @Test func timeModifiersWithoutASchedulerUseTheStoresScheduler() {
        let scheduler = TestScheduler()
        let runs = Locked<[String]>([])
        let record = { (name: String) in Effect { action, _ in runs.append("\(name) \(action)") } }
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(Middlewares.debounce(.milliseconds(300), record("debounce"))),
                Middleware(Middlewares.delay(.milliseconds(100), record("delay"))),
                Middleware(
                    Middlewares.throttle(.milliseconds(200), latest: true, runs: .inDispatch, record("throttle"))
                ),
            ],
            dependencies: .test { $0.scheduler = scheduler }
        )
        store.dispatch(.add(1))
        store.dispatch(.add(2))
        #expect(runs.current == ["throttle add(1)"])
        scheduler.advance(by: .milliseconds(100))
        #expect(runs.current == ["throttle add(1)", "delay add(1)", "delay add(2)"])
        scheduler.advance(by: .milliseconds(100))
        #expect(runs.current.last == "throttle add(2)")
        scheduler.advance(by: .milliseconds(100))
        #expect(runs.current.last == "debounce add(2)")
        #expect(runs.current.count == 5)
        #expect(scheduler.pendingWorkCount == 0)
    }

    /// A scheduler given with `on:` wins over the store's.
    @Test func anExplicitSchedulerWinsOverTheStoresScheduler() {
        let storeScheduler = TestScheduler()
        let own = TestScheduler()
        let runs = Locked(0)
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(Middlewares.delay(.milliseconds(10), on: own, Effect { _, _ in runs.withValue { $0 += 1 } }))
            ],
            dependencies: .test { $0.scheduler = storeScheduler }
        )
        store.dispatch(.increment)
        storeScheduler.advance(by: .seconds(1))
        #expect(runs.current == 0)
        own.advance(by: .milliseconds(10))
        #expect(runs.current == 1)
    }

    /// A scheduled run of a time modifier sees the store's dependencies as `StoreDependencies.current`.
    @Test func aScheduledRunReadsTheStoresDependencies() {
        let scheduler = TestScheduler()
        let seen = Locked<[String]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    Middlewares.debounce(
                        .milliseconds(50),
                        Effect { _, _ in
                            seen.append(StoreDependencies.current.greeter.name)
                        }
                    )
                )
            ],
            dependencies: .test {
                $0.scheduler = scheduler
                $0.greeter = NamedGreeter(name: "store")
            }
        )
        store.dispatch(.increment)
        scheduler.advance(by: .milliseconds(50))
        #expect(seen.current == ["store"])
    }

    @Test func incrementingIDsStartAfreshPerTestContainer() {
        let first = StoreDependencies.test()
        #expect(first.makeID().uuidString == "00000000-0000-0000-0000-000000000000")
        #expect(first.makeID().uuidString == "00000000-0000-0000-0000-000000000001")
        #expect(StoreDependencies.test().makeID().uuidString == "00000000-0000-0000-0000-000000000000")
        let live = StoreDependencies()
        #expect(live.makeID() != live.makeID())
    }

    @Test func theTestRandomSourceIsReproducible() {
        var one = StoreDependencies.test().random
        var two = StoreDependencies.test().random
        let first = (0..<5).map { _ in one.next() }
        let second = (0..<5).map { _ in two.next() }
        #expect(first == second)
        #expect(Set(first).count == 5)
        var seeded = RandomSource.seeded(42)
        var again = RandomSource.seeded(42)
        #expect(Int.random(in: 0..<1_000_000, using: &seeded) == Int.random(in: 0..<1_000_000, using: &again))
    }

    @Test func theDateIsTheSystemsOrTheOneATestSets() {
        let fixed = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(StoreDependencies.test { $0.date = .constant(fixed) }.date.now == fixed)
        let before = Date()
        let now = StoreDependencies().date.now
        #expect(now >= before && now <= Date())
    }

    /// The scheduler and the date have no test value: a test that reads them without setting them is told so.
    @Test func theSchedulerAndTheDateHaveNoTestValue() {
        let reports = Locked<[String]>([])
        let dependencies = StoreDependencies.test(onMissingTestValue: { reports.append($0.key) })
        _ = dependencies.scheduler.now
        _ = dependencies.date.now
        #expect(reports.current == ["SchedulerKey", "DateKey"])
    }
}
