public import Dispatch

/// Where the time-based modifiers run their trailing, debounced and delayed work, and what time it is there.
///
/// Sluice's own schedulers are ``DispatchQueueScheduler`` (real time, on a `DispatchQueue`) and
/// `SluiceTesting.TestScheduler` (virtual time, for tests). Time is `DispatchTime`: monotonic, never `Date()`.
///
/// The requirements deal in instants (`DispatchTime`), never in spans of time: the modifiers take their intervals
/// as `Duration` and turn them into deadlines themselves, so a scheduler only says what time it is and runs work at
/// a deadline.
///
/// The name is not `Scheduler`: Combine has a protocol of that name, which `DispatchQueue` conforms to on
/// Apple platforms.
public protocol EffectScheduler: Sendable {
    /// The scheduler's current time.
    var now: DispatchTime { get }

    /// Runs `work` once, at `deadline` or as soon as possible after it, unless the returned work is cancelled.
    ///
    /// A deadline in the past means "as soon as possible". Work scheduled for the same deadline runs in the
    /// order in which it was scheduled.
    func schedule(after deadline: DispatchTime, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
}

/// A piece of work on an ``EffectScheduler``, which can be cancelled until it starts.
///
/// Cancelling releases the work closure (and whatever it captured) at once. An implementation of
/// ``EffectScheduler`` creates one per `schedule` call and calls ``run()`` when it is due.
public final class ScheduledWork: Sendable {
    private let state: LockedWork

    /// Creates pending work.
    public init(_ work: @escaping @Sendable () -> Void) {
        state = LockedWork(work)
    }

    /// Runs the work, unless it was cancelled or has run already.
    public func run() {
        state.take()?()
    }

    /// Cancels the work if it has not started; does nothing otherwise. Idempotent.
    public func cancel() {
        let work = state.take()
        _ = work  // released here, outside the lock
    }

    /// `true` until the work runs or is cancelled.
    public var isPending: Bool {
        state.isPending
    }
}

/// The work of a ``ScheduledWork`` until it runs or is cancelled.
private struct LockedWork: Sendable {
    private let work: Locked<(@Sendable () -> Void)?>

    init(_ work: @escaping @Sendable () -> Void) {
        self.work = Locked(work)
    }

    func take() -> (@Sendable () -> Void)? {
        work.withLock { work in
            defer { work = nil }
            return work
        }
    }

    var isPending: Bool {
        work.withLock { $0 != nil }
    }
}

/// An ``EffectScheduler`` that runs work on a `DispatchQueue`, at `DispatchTime` deadlines.
///
/// ```swift
/// Middlewares.debounce(.milliseconds(300), on: .queue(.main)) { action, api in save(api.state) }
/// ```
public struct DispatchQueueScheduler: EffectScheduler {
    /// The queue the work runs on.
    public let queue: DispatchQueue
    /// Whether a time modifier given this scheduler by default uses the store's scheduler instead, when the store's
    /// dependencies set one (see ``StoreDependencies/scheduler``).
    @usableFromInline
    let prefersStoreScheduler: Bool

    /// A scheduler on `queue`.
    public init(queue: DispatchQueue) {
        self.queue = queue
        prefersStoreScheduler = false
    }

    /// A scheduler on a new serial queue of its own.
    public init() {
        queue = DispatchQueue(label: "sluice.effect-scheduler")
        prefersStoreScheduler = false
    }

    /// The default of the time modifiers: the store's scheduler if its dependencies set one, else a new serial
    /// queue.
    @usableFromInline
    init(prefersStoreScheduler: Bool) {
        queue = DispatchQueue(label: "sluice.effect-scheduler")
        self.prefersStoreScheduler = prefersStoreScheduler
    }

    /// `DispatchTime.now()`.
    ///
    /// On Linux read straight from `CLOCK_MONOTONIC`, the clock of `DispatchTime.now()` there (libdispatch's uptime):
    /// the same value without the detour through `dispatch_time`, which a throttle or debounce would take on every
    /// action.
    public var now: DispatchTime {
        #if os(Linux)
        DispatchTime(uptimeNanoseconds: monotonicNanoseconds())
        #else
        DispatchTime.now()
        #endif
    }

    public func schedule(after deadline: DispatchTime, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let scheduled = ScheduledWork(work)
        queue.asyncAfter(deadline: deadline) {
            scheduled.run()
        }
        return scheduled
    }
}

extension EffectScheduler where Self == DispatchQueueScheduler {
    /// A scheduler that runs work on `queue`.
    public static func queue(_ queue: DispatchQueue) -> DispatchQueueScheduler {
        DispatchQueueScheduler(queue: queue)
    }

    /// The default scheduler of a time modifier: the store's ``StoreDependencies/scheduler`` when the store's
    /// dependencies set one, else a serial queue of the modifier's own.
    @usableFromInline
    static var storeSchedulerOrOwnQueue: DispatchQueueScheduler {
        DispatchQueueScheduler(prefersStoreScheduler: true)
    }
}

// MARK: - Intervals

extension Duration {
    /// The interval in whole nanoseconds, a fraction of a nanosecond rounded up (so that a positive interval is
    /// never zero); `nil` for an interval of 2⁶⁴ ns or more (about 584 years), longer than `DispatchTime` counts,
    /// which never ends.
    ///
    /// Stops the program, naming `operatorName`, if the interval is negative.
    @usableFromInline
    package func nanoseconds(checking operatorName: String) -> UInt64? {
        if self < .zero {
            usageError("\(operatorName): the interval must not be negative, got \(self).")
        }
        // Both components are zero or positive here; attoseconds are below 10¹⁸.
        let (seconds, attoseconds) = components
        let (wholeNanoseconds, fraction) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let (secondsInNanoseconds, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, sumOverflow) = secondsInNanoseconds.addingReportingOverflow(
            UInt64(wholeNanoseconds) + (fraction > 0 ? 1 : 0)
        )
        return overflow || sumOverflow ? nil : sum
    }
}

extension DispatchTime {
    /// This time plus `nanoseconds`; `nil` means never, and a sum past the end of time is never too.
    @inlinable
    package func adding(_ nanoseconds: UInt64?) -> DispatchTime? {
        guard let nanoseconds else { return nil }
        let (sum, overflow) = uptimeNanoseconds.addingReportingOverflow(nanoseconds)
        return overflow || sum >= DispatchTime.distantFuture.uptimeNanoseconds
            ? nil : DispatchTime(uptimeNanoseconds: sum)
    }
}
