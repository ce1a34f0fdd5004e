public import Dispatch
public import Sluice

/// An ``Sluice/EffectScheduler`` with virtual time, for testing time-based behaviour without waiting.
///
/// Time stands still until the test moves it. `advance(by:)` and ``advance(to:)`` run the work that falls
/// due, synchronously on the calling thread, in deadline order and first-in first-out for equal deadlines,
/// including work that the work they run schedules, as long as it falls due by the target time.
/// `letTimePass(by:)` and ``letTimePass(to:)`` move it without running anything, as a queue that is busy, so that
/// a test can check what happens when work runs late.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let store = Store(initialState: State(), reducer: reducer, middleware: [
///     Middleware(Middlewares.debounce(.milliseconds(300), on: scheduler, save))
/// ])
/// store.dispatch(.edit("a"))
/// scheduler.advance(by: .milliseconds(299))   // nothing saved yet
/// scheduler.advance(by: .milliseconds(1))     // saved once
/// ```
///
/// Virtual time starts at an uptime of 1 ns (`DispatchTime(uptimeNanoseconds: 0)` means "now" to Dispatch).
/// Work scheduled for a deadline that already passed runs at the next advance, in the order of its deadline like all
/// due work.
public final class TestScheduler: EffectScheduler, Sendable {
    private struct Timeline: Sendable {
        var currentTime: UInt64
        var queue = WorkQueue()
    }

    private let timeline: Locked<Timeline>

    /// Creates a scheduler whose clock starts at `now` (at least 1 ns of uptime).
    public init(now: DispatchTime = DispatchTime(uptimeNanoseconds: 1)) {
        timeline = Locked(Timeline(currentTime: max(now.uptimeNanoseconds, 1)))
    }

    /// The virtual time.
    public var now: DispatchTime {
        DispatchTime(uptimeNanoseconds: timeline.withLock { $0.currentTime })
    }

    public func schedule(after deadline: DispatchTime, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let scheduled = ScheduledWork(work)
        timeline.withLock { $0.queue.insert(scheduled, deadline: deadline.uptimeNanoseconds) }
        return scheduled
    }

    /// Moves the clock forward by `interval`, running the work that falls due on the way.
    ///
    /// - Parameter interval: How far to move, in whole nanoseconds (a fraction of one rounds up); must not be
    ///   negative. `.zero` runs the work that is due now. An interval of 2⁶⁴ ns or more (about 584 years, e.g.
    ///   `.seconds(Int64.max)`) runs all the work there is, like ``run()``.
    public func advance(by interval: Duration) {
        guard let target = target(after: interval, checking: "TestScheduler.advance(by:)") else {
            run()
            return
        }
        advance(toNanoseconds: target)
    }

    /// Moves the clock forward to `deadline`, running the work that falls due on the way.
    ///
    /// A deadline in the past does not move the clock back; it only runs the work that is already due.
    public func advance(to deadline: DispatchTime) {
        advance(toNanoseconds: deadline.uptimeNanoseconds)
    }

    /// Moves the clock forward by `interval` without running anything, as a queue that is busy with other work.
    ///
    /// The work that falls due on the way stays pending, overdue, and sees the later time when it runs: at the
    /// next `advance(by:)`, ``advance(to:)`` or ``run()``, in deadline order, before anything due later. Meanwhile
    /// the test can dispatch actions that find their modifier's timers late, as on a real queue that is busy.
    ///
    /// ```swift
    /// store.dispatch(.edit("a"))                      // debounce(.milliseconds(10)) arms its timer for 10 ms
    /// scheduler.letTimePass(by: .milliseconds(15))    // the queue is busy: the run is due but does not happen
    /// store.dispatch(.edit("ab"))                     // supersedes it
    /// scheduler.advance(by: .milliseconds(10))        // runs once, with "ab"
    /// ```
    ///
    /// - Parameter interval: How far to move, in whole nanoseconds (a fraction of one rounds up); must not be
    ///   negative, nor 2⁶⁴ ns or more (a time that `DispatchTime` does not reach).
    public func letTimePass(by interval: Duration) {
        guard let target = target(after: interval, checking: "TestScheduler.letTimePass(by:)") else {
            usageError(
                "TestScheduler.letTimePass(by:): the interval must be shorter than 2^64 nanoseconds, got \(interval)."
            )
        }
        letTimePass(to: DispatchTime(uptimeNanoseconds: target))
    }

    /// Moves the clock forward to `deadline` without running anything; see `letTimePass(by:)`.
    ///
    /// A deadline in the past does not move the clock back.
    public func letTimePass(to deadline: DispatchTime) {
        timeline.withLock { $0.currentTime = max($0.currentTime, deadline.uptimeNanoseconds) }
    }

    /// Runs all scheduled work, moving the clock to each deadline in turn, until there is none left.
    public func run() {
        while let next = takeNext(until: .max) {
            next.run()
        }
    }

    /// The number of pieces of work scheduled and neither run nor cancelled.
    public var pendingWorkCount: Int {
        timeline.withLock { $0.queue.pendingCount }
    }

    /// The time `interval` after now, in uptime nanoseconds, at most the end of time; `nil` for an interval too long
    /// to count in nanoseconds.
    private func target(after interval: Duration, checking name: String) -> UInt64? {
        guard let nanoseconds = interval.nanoseconds(checking: name) else { return nil }
        let target = timeline.withLock { $0.currentTime.addingReportingOverflow(nanoseconds) }
        return target.overflow ? UInt64.max : target.partialValue
    }

    private func advance(toNanoseconds target: UInt64) {
        while let next = takeNext(until: target) {
            next.run()
        }
        timeline.withLock { $0.currentTime = max($0.currentTime, target) }
    }

    /// Removes the earliest pending work due by `target` (FIFO among equal deadlines) and moves the clock to it.
    private func takeNext(until target: UInt64) -> ScheduledWork? {
        timeline.withLock { timeline in
            guard let (deadline, work) = timeline.queue.removeNext(dueBy: target) else { return nil }
            timeline.currentTime = max(timeline.currentTime, deadline)
            return work
        }
    }
}

/// The pending work of a ``TestScheduler``: a binary heap ordered by deadline, then by the order of scheduling.
///
/// The heap holds plain values (deadline, sequence, slot), so that sifting moves no references; the work itself
/// waits in `slots`, whose free entries are reused. Cancelled work stays queued (its closure is already released
/// by ``Sluice/ScheduledWork/cancel()``) and is dropped when it comes first.
package struct WorkQueue: Sendable {
    package struct Entry: Comparable, Sendable {
        package let deadline: UInt64
        package let sequence: UInt64
        package let slot: Int

        package static func < (a: Entry, b: Entry) -> Bool {
            (a.deadline, a.sequence) < (b.deadline, b.sequence)
        }

        package static func == (a: Entry, b: Entry) -> Bool {
            (a.deadline, a.sequence) == (b.deadline, b.sequence)
        }
    }

    private var heap = BinaryHeap<Entry>()
    private var slots: [ScheduledWork?] = []
    private var freeSlots: [Int] = []
    private var sequence: UInt64 = 0

    /// An empty queue.
    package init() {}

    /// Adds `work`, due at `deadline` (uptime nanoseconds), behind any work already due at the same deadline.
    package mutating func insert(_ work: ScheduledWork, deadline: UInt64) {
        sequence += 1
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = work
        } else {
            slot = slots.count
            slots.append(work)
        }
        heap.insert(Entry(deadline: deadline, sequence: sequence, slot: slot))
    }

    /// Removes and returns the earliest pending work due by `target`, dropping cancelled and run work on the way.
    package mutating func removeNext(dueBy target: UInt64) -> (deadline: UInt64, work: ScheduledWork)? {
        while let first = heap.min {
            let isPending = slots[first.slot]?.isPending ?? false
            if isPending && first.deadline > target { return nil }
            _ = heap.removeMin()
            let work = slots[first.slot].take()
            freeSlots.append(first.slot)
            if isPending, let work {
                return (first.deadline, work)
            }
        }
        return nil
    }

    /// The number of pieces of work neither run nor cancelled.
    package var pendingCount: Int {
        slots.count { $0?.isPending ?? false }
    }
}
