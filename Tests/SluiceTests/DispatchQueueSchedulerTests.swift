import Dispatch
import Foundation
import Sluice
import SluiceTesting
import Testing

@Suite struct DispatchQueueSchedulerTests {
    /// `now` is read from the clock that `DispatchTime.now()` reads (on Linux straight from `CLOCK_MONOTONIC`): a
    /// deadline computed from it fires when `asyncAfter` would, so it lies between two readings of `DispatchTime`.
    @Test func nowIsTheClockOfDispatchTime() {
        let scheduler = DispatchQueueScheduler()
        for _ in 0..<1_000 {
            let before = DispatchTime.now()
            let now = scheduler.now
            let after = DispatchTime.now()
            #expect(before <= now && now <= after)
        }
    }

    @Test func debounceOnARealQueueRunsOnceWithTheLastAction() async {
        let runs = Locked<[Int]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    Middlewares.debounce(.milliseconds(20)) {
                        (action: TestAction, _: MiddlewareAPI<TestState, TestAction>) in
                        if case .add(let value) = action { runs.append(value) }
                    }
                )
            ]
        )
        for value in 1...5 { store.dispatch(.add(value)) }
        #expect(await runs.wait { !$0.isEmpty })
        #expect(runs.current == [5])
    }

    @Test func delayOnACallersQueueRunsThereInOrder() async {
        let queue = DispatchQueue(label: "test.delay")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let runs = Locked<[String]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    Middlewares.delay(.milliseconds(5), on: .queue(queue)) {
                        (action: TestAction, _: MiddlewareAPI<TestState, TestAction>) in
                        if case .add(let value) = action {
                            runs.append("\(value) on queue: \(DispatchQueue.getSpecific(key: key) ?? false)")
                        }
                    }
                )
            ]
        )
        for value in 1...3 { store.dispatch(.add(value)) }
        #expect(await runs.wait { $0.count == 3 })
        #expect(runs.current == ["1 on queue: true", "2 on queue: true", "3 on queue: true"])
    }

    @Test func scheduledWorkCancelsAndRunsAtMostOnce() {
        let work = ScheduledWork {}
        #expect(work.isPending)
        work.run()
        #expect(!work.isPending)
        let cancelled = ScheduledWork {}
        cancelled.cancel()
        cancelled.cancel()
        #expect(!cancelled.isPending)
    }
}
