import Dispatch
import Sluice
import SluiceTesting
import Testing

/// A value shared with `@Sendable` closures in these tests; the scheduler runs work on the test's thread.
final class Log<Element: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private var storage: [Element] = []

    func append(_ element: Element) {
        lock.withLock { storage.append(element) }
    }

    var elements: [Element] {
        lock.withLock { storage }
    }
}

/// Milliseconds of virtual time since a scheduler started at 1 ns.
func ms(_ scheduler: TestScheduler) -> UInt64 {
    (scheduler.now.uptimeNanoseconds - 1) / 1_000_000
}

@Suite struct TestSchedulerTests {
    @Test func startsAtOneNanosecondOfUptime() {
        #expect(TestScheduler().now.uptimeNanoseconds == 1)
        #expect(TestScheduler(now: DispatchTime(uptimeNanoseconds: 500)).now.uptimeNanoseconds == 500)
    }

    @Test func timeStandsStillUntilAdvanced() {
        let scheduler = TestScheduler()
        let log = Log<String>()
        _ = scheduler.schedule(after: scheduler.now + .milliseconds(10)) { log.append("ran") }
        #expect(log.elements.isEmpty)
        #expect(scheduler.pendingWorkCount == 1)
        scheduler.advance(by: .milliseconds(9))
        #expect(log.elements.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        #expect(log.elements == ["ran"])
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test func runsDueWorkInDeadlineOrderAndFIFOForEqualDeadlines() {
        let scheduler = TestScheduler()
        let log = Log<String>()
        let start = scheduler.now
        _ = scheduler.schedule(after: start + .milliseconds(20)) { log.append("b@20") }
        _ = scheduler.schedule(after: start + .milliseconds(10)) { log.append("a@10") }
        _ = scheduler.schedule(after: start + .milliseconds(20)) { log.append("c@20") }
        _ = scheduler.schedule(after: start + .milliseconds(10)) { log.append("d@10") }
        scheduler.advance(by: .milliseconds(30))
        #expect(log.elements == ["a@10", "d@10", "b@20", "c@20"])
    }

    @Test func clockShowsTheDeadlineOfTheWorkThatRuns() {
        let scheduler = TestScheduler()
        let times = Log<UInt64>()
        _ = scheduler.schedule(after: scheduler.now + .milliseconds(10)) { times.append(ms(scheduler)) }
        _ = scheduler.schedule(after: scheduler.now + .milliseconds(25)) { times.append(ms(scheduler)) }
        scheduler.advance(by: .milliseconds(100))
        #expect(times.elements == [10, 25])
        #expect(ms(scheduler) == 100)
    }

    @Test func runsWorkThatWorkSchedulesWhenItFallsDueWithinTheAdvance() {
        let scheduler = TestScheduler()
        let log = Log<UInt64>()
        @Sendable func tick() {
            log.append(ms(scheduler))
            _ = scheduler.schedule(after: scheduler.now + .milliseconds(10), tick)
        }
        _ = scheduler.schedule(after: scheduler.now + .milliseconds(10), tick)
        scheduler.advance(by: .milliseconds(35))
        #expect(log.elements == [10, 20, 30])
        #expect(scheduler.pendingWorkCount == 1)
    }

    @Test func workScheduledInThePastRunsAtTheNextAdvance() {
        let scheduler = TestScheduler(now: DispatchTime(uptimeNanoseconds: 1_000_000_000))
        let log = Log<String>()
        _ = scheduler.schedule(after: DispatchTime(uptimeNanoseconds: 5)) { log.append("past") }
        #expect(log.elements.isEmpty)
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.elements == ["past"])
        #expect(scheduler.now.uptimeNanoseconds == 1_000_000_000)  // the clock did not go back
    }

    @Test func cancelledWorkDoesNotRunAndIsNotPending() {
        let scheduler = TestScheduler()
        let log = Log<String>()
        let work = scheduler.schedule(after: scheduler.now + .milliseconds(1)) { log.append("cancelled") }
        _ = scheduler.schedule(after: scheduler.now + .milliseconds(1)) { log.append("kept") }
        work.cancel()
        work.cancel()
        #expect(scheduler.pendingWorkCount == 1)
        scheduler.advance(by: .seconds(1))
        #expect(log.elements == ["kept"])
    }

    @Test func advanceToAnAbsoluteDeadline() {
        let scheduler = TestScheduler()
        let log = Log<String>()
        let start = scheduler.now
        _ = scheduler.schedule(after: start + .milliseconds(50)) { log.append("50") }
        scheduler.advance(to: start + .milliseconds(49))
        #expect(log.elements.isEmpty)
        scheduler.advance(to: start + .milliseconds(50))
        #expect(log.elements == ["50"])
        scheduler.advance(to: start)  // in the past: no change
        #expect(scheduler.now == start + .milliseconds(50))
    }

    @Test func runDrainsEverythingIncludingFollowUps() {
        let scheduler = TestScheduler()
        let log = Log<UInt64>()
        _ = scheduler.schedule(after: scheduler.now + .seconds(5)) {
            log.append(ms(scheduler))
            _ = scheduler.schedule(after: scheduler.now + .seconds(5)) { log.append(ms(scheduler)) }
        }
        scheduler.run()
        #expect(log.elements == [5_000, 10_000])
        #expect(scheduler.pendingWorkCount == 0)
    }

    // MARK: - Durations

    /// The clock moves by exactly the nanoseconds of the `Duration`, below a millisecond too.
    @Test func advanceMovesTheClockByExactlyTheDuration() {
        let scheduler = TestScheduler()
        scheduler.advance(by: .microseconds(1))
        #expect(scheduler.now.uptimeNanoseconds == 1 + 1_000)
        scheduler.advance(by: .nanoseconds(7))
        #expect(scheduler.now.uptimeNanoseconds == 1 + 1_007)
        scheduler.advance(by: .milliseconds(1.5))
        #expect(scheduler.now.uptimeNanoseconds == 1 + 1_007 + 1_500_000)
        scheduler.advance(by: .seconds(2) + .nanoseconds(3))
        #expect(scheduler.now.uptimeNanoseconds == 1 + 1_007 + 1_500_000 + 2_000_000_003)
        scheduler.advance(by: .zero)
        #expect(scheduler.now.uptimeNanoseconds == 1 + 1_007 + 1_500_000 + 2_000_000_003)
    }

    /// Work 1 µs away does not run 1 ns early, and runs at exactly its deadline.
    @Test func subMillisecondDeadlinesRunExactlyWhenDue() {
        let scheduler = TestScheduler()
        let log = Log<UInt64>()
        _ = scheduler.schedule(after: scheduler.now + .microseconds(1)) { log.append(scheduler.now.uptimeNanoseconds) }
        scheduler.advance(by: .nanoseconds(999))
        #expect(log.elements.isEmpty)
        scheduler.advance(by: .nanoseconds(1))
        #expect(log.elements == [1 + 1_000])
    }

    /// A fraction of a nanosecond rounds up: the clock never moves less than the duration asks.
    @Test func aFractionOfANanosecondRoundsUp() {
        let scheduler = TestScheduler()
        scheduler.advance(by: Duration(secondsComponent: 0, attosecondsComponent: 1))
        #expect(scheduler.now.uptimeNanoseconds == 1 + 1)
        scheduler.advance(by: .nanoseconds(2.5))
        #expect(scheduler.now.uptimeNanoseconds == 1 + 1 + 3)
        scheduler.advance(by: Duration(secondsComponent: 1, attosecondsComponent: 1_000_000_000))
        #expect(scheduler.now.uptimeNanoseconds == 1 + 1 + 3 + 1_000_000_001)  // exactly 1 ns: nothing to round
    }

    /// Thirty years of uptime count exactly; 2⁶⁴ ns or more, past the end of `DispatchTime`, runs all the work.
    @Test func largeDurations() {
        let scheduler = TestScheduler()
        let log = Log<UInt64>()
        let thirtyYears = Duration.seconds(30 * 365 * 86_400)
        _ = scheduler.schedule(after: DispatchTime(uptimeNanoseconds: 1 + 946_080_000_000_000_000)) {
            log.append(scheduler.now.uptimeNanoseconds)
        }
        scheduler.advance(by: thirtyYears - .nanoseconds(1))
        #expect(log.elements.isEmpty)
        scheduler.advance(by: .nanoseconds(1))
        #expect(log.elements == [1 + 946_080_000_000_000_000])

        _ = scheduler.schedule(after: DispatchTime(uptimeNanoseconds: UInt64.max - 1)) { log.append(0) }
        scheduler.advance(by: .seconds(Int64.max))  // like `run()`: the clock goes to the last deadline
        #expect(log.elements == [1 + 946_080_000_000_000_000, 0])
        #expect(scheduler.now.uptimeNanoseconds == UInt64.max - 1)
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test func negativeAdvanceStopsTheProgramWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            TestScheduler().advance(by: .milliseconds(-1))
        }
        let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            standardError.contains(
                "Sluice usage error: TestScheduler.advance(by:): the interval must not be negative, got -0.001 seconds."
            ),
            "standard error: \(standardError)"
        )
    }

    @Test func negativeLetTimePassStopsTheProgramWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            TestScheduler().letTimePass(by: .nanoseconds(-1))
        }
        let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            standardError.contains(
                "Sluice usage error: TestScheduler.letTimePass(by:): the interval must not be negative, got -1e-09 seconds."
            ),
            "standard error: \(standardError)"
        )
    }

    @Test func letTimePassPastTheEndOfTimeStopsTheProgramWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            TestScheduler().letTimePass(by: .seconds(Int64.max))
        }
        let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            standardError.contains(
                "Sluice usage error: TestScheduler.letTimePass(by:): the interval must be shorter than 2^64 "
                    + "nanoseconds, got 9.223372036854776e+18 seconds."
            ),
            "standard error: \(standardError)"
        )
    }
}

@Suite struct TestSchedulerLatenessTests {
    @Test func letTimePassMovesTheClockWithoutRunningDueWork() {
        let scheduler = TestScheduler()
        let times = Log<UInt64>()
        _ = scheduler.schedule(after: scheduler.now + .milliseconds(10)) { times.append(ms(scheduler)) }
        scheduler.letTimePass(by: .milliseconds(15))
        #expect(ms(scheduler) == 15)
        #expect(times.elements.isEmpty)
        #expect(scheduler.pendingWorkCount == 1)
        scheduler.advance(by: .nanoseconds(0))
        #expect(times.elements == [15])  // overdue work sees the late time
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test func overdueWorkRunsInDeadlineOrderBeforeWorkDueLater() {
        let scheduler = TestScheduler()
        let log = Log<String>()
        let start = scheduler.now
        _ = scheduler.schedule(after: start + .milliseconds(20)) { log.append("b@\(ms(scheduler))") }
        _ = scheduler.schedule(after: start + .milliseconds(30)) { log.append("c@\(ms(scheduler))") }
        _ = scheduler.schedule(after: start + .milliseconds(10)) { log.append("a@\(ms(scheduler))") }
        scheduler.letTimePass(to: start + .milliseconds(25))
        _ = scheduler.schedule(after: start + .milliseconds(20)) { log.append("b2@\(ms(scheduler))") }
        #expect(log.elements.isEmpty)
        scheduler.advance(by: .milliseconds(10))
        #expect(log.elements == ["a@25", "b@25", "b2@25", "c@30"])
    }

    @Test func letTimePassToThePastDoesNotMoveTheClockBack() {
        let scheduler = TestScheduler()
        let start = scheduler.now
        scheduler.letTimePass(by: .milliseconds(5))
        scheduler.letTimePass(to: start)
        #expect(ms(scheduler) == 5)
    }
}

@Suite struct TestSchedulerScaleTests {
    /// 100,000 pending units, with many equal deadlines, some cancelled: the order and the count are exact.
    /// (The time it takes is measured by the `TestScheduler` benchmark area, not here.)
    @Test func hundredThousandUnitsRunInDeadlineThenSchedulingOrder() {
        let scheduler = TestScheduler()
        let start = scheduler.now
        let log = Log<(deadline: UInt64, index: Int)>()
        var cancelled: [ScheduledWork] = []
        for index in 0..<100_000 {
            // A permutation of 1,000 deadlines, each used 100 times.
            let deadline = UInt64((index &* 7_919) % 1_000)
            let work = scheduler.schedule(after: start + .milliseconds(Int(deadline))) {
                log.append((deadline, index))
            }
            if index % 10 == 3 { cancelled.append(work) }
        }
        for work in cancelled { work.cancel() }
        #expect(scheduler.pendingWorkCount == 90_000)
        scheduler.run()
        let ran = log.elements
        #expect(ran.count == 90_000)
        #expect(!ran.contains { $0.index % 10 == 3 })
        let inOrder = zip(ran, ran.dropFirst()).allSatisfy { a, b in
            a.deadline < b.deadline || (a.deadline == b.deadline && a.index < b.index)
        }
        #expect(inOrder)
        #expect(scheduler.pendingWorkCount == 0)
        #expect(ms(scheduler) == 999)
    }

    @Test func cancellingReleasesTheClosureAtOnce() {
        final class Payload: Sendable {}
        let scheduler = TestScheduler()
        var payload: Payload? = Payload()
        weak let watched = payload
        let work = scheduler.schedule(after: scheduler.now + .seconds(1)) { [payload] in _ = payload }
        payload = nil
        #expect(watched != nil)  // held by the pending work
        work.cancel()
        #expect(watched == nil)
        #expect(scheduler.pendingWorkCount == 0)
    }
}

@Suite struct BinaryHeapTests {
    @Test func removesInAscendingOrder() {
        var heap = BinaryHeap<Int>()
        var generator = SystemRandomNumberGenerator()
        let values = (0..<2_000).map { _ in Int.random(in: 0..<300, using: &generator) }
        for value in values { heap.insert(value) }
        #expect(heap.count == 2_000)
        var removed: [Int] = []
        while let value = heap.removeMin() { removed.append(value) }
        #expect(removed == values.sorted())
        #expect(heap.isEmpty)
    }

    @Test func interleavedInsertionsAndRemovalsStayOrdered() {
        var heap = BinaryHeap<Int>()
        var reference: [Int] = []
        for step in 0..<1_000 {
            let value = (step &* 37) % 101
            heap.insert(value)
            reference.append(value)
            if step % 3 == 0 {
                reference.sort()
                #expect(heap.removeMin() == reference.removeFirst())
            }
        }
        #expect(heap.count == reference.count)
        #expect(heap.min == reference.min())
    }

    @Test func workQueueKeepsSchedulingOrderForEqualDeadlines() {
        var queue = WorkQueue()
        let log = Log<String>()
        for name in ["a", "b", "c", "d", "e"] {
            queue.insert(ScheduledWork { log.append(name) }, deadline: 10)
        }
        queue.insert(ScheduledWork { log.append("early") }, deadline: 5)
        while let (_, work) = queue.removeNext(dueBy: .max) { work.run() }
        #expect(log.elements == ["early", "a", "b", "c", "d", "e"])
    }

    @Test func workQueueSkipsWorkCancelledInTheMiddle() {
        var queue = WorkQueue()
        let log = Log<Int>()
        var works: [ScheduledWork] = []
        for index in 0..<9 {
            let work = ScheduledWork { log.append(index) }
            works.append(work)
            queue.insert(work, deadline: UInt64(index / 3))  // three deadlines, three units each
        }
        works[4].cancel()  // the middle of the middle deadline
        works[3].cancel()
        works[8].cancel()
        #expect(queue.pendingCount == 6)
        let first = queue.removeNext(dueBy: 0)
        #expect(first?.work === works[0])
        first?.work.run()
        while let (_, work) = queue.removeNext(dueBy: 1) { work.run() }
        #expect(log.elements == [0, 1, 2, 5])
        #expect(queue.pendingCount == 2)
        #expect(queue.removeNext(dueBy: 1) == nil)
        while let (_, work) = queue.removeNext(dueBy: .max) { work.run() }
        #expect(log.elements == [0, 1, 2, 5, 6, 7])
        #expect(queue.pendingCount == 0)
    }
}
