internal import Sluice

/// The reads of dependencies without a test value that a test store's store made, kept until the test store's next
/// step reports them from the test's own task.
///
/// A read may happen on any thread (an async side effect, a scheduled run on a queue), where Swift Testing does not
/// know the current test; the test store reports what was kept at its next `send`, `receive` or `finish` (or when it
/// is released), at that step's line. Each key is kept once, at its first read: a key read for every action would
/// otherwise fail the test once per action, and setting it fixes them all.
final class MissingTestValueLog: Sendable {
    private struct Reads {
        var keysSeen: Set<String> = []
        var unreported: [String] = []
    }

    private let reads = Locked(Reads())

    init() {}

    /// Keeps the read of `key` made while processing the action that `action` describes (`nil`: no action).
    func record(key: String, action: String?) {
        reads.withLock { reads in
            guard reads.keysSeen.insert(key).inserted else { return }
            let during =
                action.map { "while processing \($0)" }
                ?? "outside the processing of an action (by an effect, or by a middleware as it was set up)"
            reads.unreported.append(
                "\(key) has no test value and was read \(during); the live value was used. Set it in the test "
                    + "store's dependencies (`dependencies: .test { ... }`) or declare a `testValue` for \(key)."
            )
        }
    }

    /// The messages not reported yet, in the order of the reads.
    func removeAll() -> [String] {
        reads.withLock { reads in
            defer { reads.unreported.removeAll() }
            return reads.unreported
        }
    }
}
