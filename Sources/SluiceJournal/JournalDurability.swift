/// When a journaled action is on stable storage, relative to the reducer seeing it.
///
/// See <doc:Durability> for what each mode guarantees after a process crash and after a power loss, and what it
/// costs.
public enum JournalDurability: Sendable, Equatable {
    /// Each action is written and `fsync`ed before the reducer runs: once `dispatch` returns, the action survives
    /// a process crash and a power loss. The slowest mode: one `fsync` per action.
    case everyAction
    /// Actions are reduced at once and written by ``Journal/run()`` in batches, one `fsync` per batch.
    ///
    /// The writer waits up to `interval` after the first pending action to gather more into the batch (`.zero`:
    /// a batch is whatever arrived while the previous one was being synced, and what the senders that its
    /// commit resumed dispatch before the writer runs again: it yields once to them). Wait with
    /// ``Journal/durable(through:)`` before acknowledging an action to the outside world.
    case groupCommit(interval: Duration)
    /// Each action is written (to the operating system's cache) before the reducer runs, never `fsync`ed by
    /// the middleware: it survives a process crash, not a power loss.
    case none
}
