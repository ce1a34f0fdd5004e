/// Runs `wait` until it returns or `deadline` passes, whichever comes first, and returns whether `wait` returned.
///
/// A timer races the wait; nothing polls. The one that loses is cancelled, so `wait` must return when its task is
/// cancelled.
package func wait(
    until deadline: ContinuousClock.Instant,
    for wait: @escaping @Sendable () async -> Void
) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            await wait()
            return true
        }
        group.addTask {
            // A day at a time: `Task.sleep` counts in 64-bit nanoseconds, which a deadline as far as
            // `.seconds(Int64.max)` away does not fit.
            while !Task.isCancelled, ContinuousClock.now < deadline {
                let step = min(deadline, ContinuousClock.now.advanced(by: .seconds(86_400)))
                try? await Task.sleep(until: step, clock: .continuous)
            }
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}
