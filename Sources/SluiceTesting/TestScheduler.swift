public import Dispatch
public import Sluice

/// An ``Sluice/EffectScheduler`` with virtual time, for testing time-based behaviour without waiting.
///
/// Time stands still until the test moves it. ``advance(by:)`` and ``advance(to:)`` run the work that falls
/// due, synchronously on the calling thread, in deadline order and first-in first-out for equal deadlines,
/// including work that the work they run schedules, as long as it falls due by the target time.
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
/// Work scheduled for a deadline that already passed runs at the next advance.
public final class TestScheduler: EffectScheduler, @unchecked Sendable {
    // @unchecked: `currentTime`, `queue` and `sequence` are guarded by `lock`.
    private let lock = Lock()
    private var currentTime: UInt64
    private var queue: [Entry] = []
    private var sequence: UInt64 = 0

    private struct Entry {
        let deadline: UInt64
        let sequence: UInt64
        let work: ScheduledWork
    }

    /// Creates a scheduler whose clock starts at `now` (at least 1 ns of uptime).
    public init(now: DispatchTime = DispatchTime(uptimeNanoseconds: 1)) {
        currentTime = max(now.uptimeNanoseconds, 1)
    }

    /// The virtual time.
    public var now: DispatchTime {
        DispatchTime(uptimeNanoseconds: lock.withLock { currentTime })
    }

    public func schedule(after deadline: DispatchTime, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let scheduled = ScheduledWork(work)
        lock.withLock {
            sequence += 1
            queue.append(Entry(deadline: deadline.uptimeNanoseconds, sequence: sequence, work: scheduled))
        }
        return scheduled
    }

    /// Moves the clock forward by `interval`, running the work that falls due on the way.
    ///
    /// - Parameter interval: How far to move; must not be negative. `.never` runs all the work there is.
    public func advance(by interval: DispatchTimeInterval) {
        guard let nanoseconds = interval.nanoseconds(checking: "TestScheduler.advance(by:)") else {
            run()
            return
        }
        let target = lock.withLock { currentTime.addingReportingOverflow(nanoseconds) }
        advance(toNanoseconds: target.overflow ? UInt64.max : target.partialValue)
    }

    /// Moves the clock forward to `deadline`, running the work that falls due on the way.
    ///
    /// A deadline in the past does not move the clock back; it only runs the work that is already due.
    public func advance(to deadline: DispatchTime) {
        advance(toNanoseconds: deadline.uptimeNanoseconds)
    }

    /// Runs all scheduled work, moving the clock to each deadline in turn, until there is none left.
    public func run() {
        while let next = takeNext(until: .max) {
            next.run()
        }
    }

    /// The number of pieces of work scheduled and neither run nor cancelled.
    public var pendingWorkCount: Int {
        lock.withLock { queue.count { $0.work.isPending } }
    }

    private func advance(toNanoseconds target: UInt64) {
        while let next = takeNext(until: target) {
            next.run()
        }
        lock.withLock { currentTime = max(currentTime, target) }
    }

    /// Removes the earliest pending work due by `target` (FIFO among equal deadlines) and moves the clock to it.
    private func takeNext(until target: UInt64) -> ScheduledWork? {
        lock.withLock {
            queue.removeAll { !$0.work.isPending }
            var best: Int?
            for index in queue.indices where queue[index].deadline <= target {
                if let current = best {
                    let (a, b) = (queue[index], queue[current])
                    if (a.deadline, a.sequence) < (b.deadline, b.sequence) { best = index }
                } else {
                    best = index
                }
            }
            guard let best else { return nil }
            let entry = queue.remove(at: best)
            currentTime = max(currentTime, entry.deadline)
            return entry.work
        }
    }
}
