import Dispatch
import Foundation
import Sluice
import SluiceTesting
import Testing

/// Timers of the store (`schedule(id:after:)`, `schedule(id:at:)`): work at a time on the store's scheduler, driven
/// by a `TestScheduler` in virtual time, cancelled by id, with their run, at shutdown and with the store.
@Suite(.timeLimit(suiteTimeLimit)) struct StoreTimersTests {
    private typealias TestStore = Store<TestState, TestAction>

    private func store(_ scheduler: TestScheduler, middleware: [Middleware<TestState, TestAction>] = []) -> TestStore {
        Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: middleware,
            dependencies: .test { $0.scheduler = scheduler }
        )
    }

    @Test func aTimerRunsAtItsTimeInsideTheAdvanceThatReachesIt() {
        let scheduler = TestScheduler()
        let store = store(scheduler)
        #expect(store.schedule(id: "close", after: .seconds(60)) { api in api.dispatch(.record("closed")) })
        scheduler.advance(by: .milliseconds(59_999))
        #expect(store.state.log.isEmpty)
        #expect(store.pendingTimerCount == 1)
        scheduler.advance(by: .milliseconds(1))
        #expect(store.state.log == ["closed"])
        #expect(store.pendingTimerCount == 0)
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test func aTimerAtAnInstantOfTheScheduler() {
        let scheduler = TestScheduler()
        let store = store(scheduler)
        let deadline = scheduler.now + .milliseconds(250)
        store.schedule(id: 1, at: deadline) { api in api.dispatch(.add(1)) }
        scheduler.advance(by: .milliseconds(249))
        #expect(store.state.count == 0)
        scheduler.advance(by: .milliseconds(1))
        #expect(store.state.count == 1)
    }

    /// A deadline that passed (while the service was down, say) runs at the scheduler's next turn.
    @Test func aDelayOfZeroOrLessRunsAtTheNextTurn() {
        let scheduler = TestScheduler()
        let store = store(scheduler)
        store.schedule(id: "late", after: .seconds(-30)) { api in api.dispatch(.add(1)) }
        store.schedule(id: "now", after: .zero) { api in api.dispatch(.add(10)) }
        #expect(store.state.count == 0)
        scheduler.advance(by: .zero)
        #expect(store.state.count == 11)
    }

    @Test func manyTimersRunEachAtItsOwnTime() {
        let scheduler = TestScheduler()
        let store = store(scheduler)
        let start = scheduler.now
        var generator = SplitMix64(seed: 7)
        var deadlines: [Int] = []
        for auction in 0..<1_000 {
            let seconds = Int(generator.next() % 600)
            deadlines.append(seconds)
            store.schedule(id: "deadline-\(auction)", after: .seconds(seconds)) { api in api.dispatch(.add(1)) }
        }
        for second in 0..<600 {
            scheduler.advance(to: start + .seconds(second))
            let closed = deadlines.filter { $0 <= second }.count
            #expect(store.state.count == closed)
            #expect(store.pendingTimerCount == 1_000 - closed)
        }
        #expect(store.state.count == 1_000)
    }

    // MARK: Cancelling

    @Test func cancellingByIdStopsTheTimer() {
        let scheduler = TestScheduler()
        let store = store(scheduler)
        store.schedule(id: "a", after: .seconds(1)) { api in api.dispatch(.record("a")) }
        store.schedule(id: "a", after: .seconds(2)) { api in api.dispatch(.record("a2")) }
        store.schedule(id: "b", after: .seconds(1)) { api in api.dispatch(.record("b")) }
        #expect(store.pendingTimerCount(id: "a") == 2)
        store.cancel(id: "a")
        #expect(store.pendingTimerCount(id: "a") == 0)
        #expect(scheduler.pendingWorkCount == 1)  // the cancelled work is released at once
        scheduler.advance(by: .seconds(5))
        #expect(store.state.log == ["b"])
    }

    @Test func cancelInFlightMovesTheDeadline() {
        let scheduler = TestScheduler()
        let store = store(scheduler)
        store.schedule(id: "close", after: .seconds(60)) { api in api.dispatch(.record("at 60")) }
        scheduler.advance(by: .seconds(50))
        store.schedule(id: "close", cancelInFlight: true, after: .seconds(30)) { api in api.dispatch(.record("at 80")) }
        scheduler.advance(by: .seconds(40))
        #expect(store.state.log == ["at 80"])
    }

    /// Effects and timers share their ids: `cancel(id:)` cancels both, and `cancelInFlight` of either replaces both.
    @Test func effectsAndTimersShareTheirIds() async {
        let scheduler = TestScheduler()
        let store = store(scheduler)
        let effect = store.start(id: "poll") { _ in await waitUntilCancelled() }
        store.schedule(id: "poll", after: .seconds(1)) { api in api.dispatch(.record("timer")) }
        store.cancel(id: "poll")
        _ = await effect.result
        #expect(store.pendingTimerCount == 0)

        store.schedule(id: "poll", after: .seconds(1)) { api in api.dispatch(.record("timer")) }
        let replacing = store.start(id: "poll", cancelInFlight: true) { _ in }
        _ = await replacing.result
        #expect(store.pendingTimerCount == 0)

        let running = store.start(id: "poll") { _ in await waitUntilCancelled() }
        store.schedule(id: "poll", cancelInFlight: true, after: .seconds(1)) { api in api.dispatch(.record("timer")) }
        _ = await running.result  // it ends only once cancelled
        scheduler.advance(by: .seconds(1))
        #expect(store.state.log == ["timer"])
    }

    @Test func aTimerSetByASupersededRunIsCancelled() {
        let scheduler = TestScheduler()
        let store = store(
            scheduler,
            middleware: [
                Middleware(
                    Middlewares.takeLatest { (action: TestAction, api: MiddlewareAPI<TestState, TestAction>) in
                        guard case .add(let value) = action else { return }
                        api.schedule(id: "reminder", after: .seconds(10)) { api in
                            api.dispatch(.record("reminder \(value)"))
                        }
                    }
                )
            ]
        )
        store.dispatch(.add(1))
        store.dispatch(.add(2))
        #expect(store.pendingTimerCount == 1)
        scheduler.advance(by: .seconds(10))
        #expect(store.state.log == ["reminder 2"])
    }

    @Test func freeingTheStoreCancelsItsTimers() {
        let scheduler = TestScheduler()
        let fired = Locked(false)
        var store: Store<TestState, TestAction>? = store(scheduler)
        store?.schedule(id: "t", after: .seconds(1)) { _ in fired.withValue { $0 = true } }
        #expect(scheduler.pendingWorkCount == 1)
        store = nil
        #expect(scheduler.pendingWorkCount == 0)
        scheduler.advance(by: .seconds(2))
        #expect(!fired.current)
    }

    /// Shutdown cancels the pending timers when it begins (their dispatches would be refused), so it waits for
    /// none; a timer set after that is refused.
    @Test func shutdownCancelsThePendingTimers() async {
        let scheduler = TestScheduler()
        let fired = Locked(false)
        let store = store(scheduler)
        for index in 0..<100 {
            store.schedule(id: index, after: .seconds(3_600)) { _ in fired.withValue { $0 = true } }
        }
        let report = await store.shutdown(timeout: hangGuard)
        #expect(report == ShutdownReport(flushedRuns: 0, finishedTasks: 0, cancelledTasks: 0, refusedDispatches: 0))
        #expect(store.pendingTimerCount == 0)
        #expect(scheduler.pendingWorkCount == 0)
        #expect(!store.schedule(id: "late", after: .seconds(1)) { _ in fired.withValue { $0 = true } })
        scheduler.run()
        #expect(!fired.current)
    }

    @Test func aTimerThatNeverComesWaitsToBeCancelled() {
        let scheduler = TestScheduler()
        let store = store(scheduler)
        #expect(store.schedule(id: "never", after: .seconds(Int64.max)) { api in api.dispatch(.increment) })
        #expect(scheduler.pendingWorkCount == 0)
        #expect(store.pendingTimerCount == 1)
        store.cancel(id: "never")
        #expect(store.pendingTimerCount == 0)
    }

    @Test func theWorkSeesTheStoresDependencies() {
        let scheduler = TestScheduler()
        let seen = Locked<Date?>(nil)
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            dependencies: .test {
                $0.scheduler = scheduler
                $0.date = .constant(date)
            }
        )
        store.schedule(id: "t", after: .seconds(1)) { _ in
            seen.withValue { $0 = StoreDependencies.current.date.now }
        }
        scheduler.advance(by: .seconds(1))
        #expect(seen.current == date)
    }

    // MARK: Under threads

    /// Four threads set 1,000 timers each and cancel every other one: exactly the others run, once.
    @Test func timersSetAndCancelledFromFourThreadsRunExactlyOnce() async {
        let scheduler = TestScheduler()
        let store = store(scheduler)
        await runOnThreads(4) { thread in
            for index in 0..<1_000 {
                let id = thread * 10_000 + index
                store.schedule(id: id, after: .milliseconds(index % 50)) { api in api.dispatch(.add(1)) }
                if index % 2 == 1 {
                    store.cancel(id: id)
                }
            }
        }
        #expect(store.pendingTimerCount == 2_000)
        scheduler.advance(by: .milliseconds(50))
        #expect(store.state.count == 2_000)
        #expect(store.pendingTimerCount == 0)
    }

    /// Timers that fire on a real queue while other threads cancel them: each runs at most once, and the ones not
    /// cancelled run.
    @Test func timersOnARealQueueRunOnceUnlessCancelled() async {
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            dependencies: StoreDependencies { $0.scheduler = DispatchQueueScheduler() }
        )
        let fired = Locked<[Int: Int]>([:])
        await runOnThreads(4) { thread in
            for index in 0..<500 {
                let id = thread * 10_000 + index
                store.schedule(id: id, after: .microseconds(index % 7)) { _ in
                    fired.withValue { $0[id, default: 0] += 1 }
                }
                if index % 3 == 0 {
                    store.cancel(id: id)
                }
            }
        }
        #expect(await waitUntil { store.pendingTimerCount == 0 })
        let counts = fired.current
        #expect(counts.values.allSatisfy { $0 == 1 })
        let kept = (0..<4).flatMap { thread in (0..<500).filter { $0 % 3 != 0 }.map { thread * 10_000 + $0 } }
        #expect(kept.allSatisfy { counts[$0] == 1 })
    }
}
