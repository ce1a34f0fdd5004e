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

    @Test func negativeAdvanceStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            TestScheduler().advance(by: .milliseconds(-1))
        }
    }
}
