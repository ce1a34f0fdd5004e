// `public import`: the entry and exit below are inlined into `Store.dispatch` in the caller's module, and inlinable
// code may only call functions of a module imported publicly. CSluiceSupport declares nothing public of Sluice's.
public import CSluiceSupport

/// The owner word of a store's pipeline: an uncontended dispatch takes and gives up the pipeline with one
/// compare-and-swap each, without the store's lock.
///
/// The word holds 0 while the pipeline is idle, the owning thread's identity (`ThreadID.raw`) while a thread owns it
/// on the fast path, and that identity with ``slow`` set once the lock-guarded ``PipelineStateMachine`` has taken
/// over. The machine takes over whenever the fast path is not enough: a thread waits for the pipeline or queues an
/// action for its owner (rule 2, the cross-store hand-over), a task sends while it is owned, the store went away or
/// refuses dispatches (shutdown), or code under the lock reads the machine. Then:
///
/// - a fast entry (``tryTake(_:)``, 0 to owner) fails, since the word is not 0, and the dispatch takes the lock;
/// - a fast exit (``tryRelease(_:)``, owner to 0) fails, since the word is not the bare owner, and the owner takes
///   the lock and releases through the machine (its queue, its line of waiters), which writes the word last: 0
///   (``StoreCore/deflateLocked()``) once nobody is in line and the store accepts dispatches, the next owner with
///   ``slow`` on a hand-over, ``slow`` alone while the store is closed.
///
/// Only a thread that holds the store's lock sets or clears ``slow`` (``StoreCore/inflateLocked()``,
/// ``StoreCore/deflateLocked()``); without the lock, the word only moves between 0 and a bare owner, by
/// compare-and-swap. So under the lock a word with ``slow`` set is stable, and the machine is the truth; a word
/// without it means the machine is idle (no owner, empty queue, nobody in line) while a fast owner may come and go.
///
/// Ordering: ``tryTake(_:)`` acquires and ``tryRelease(_:)`` and ``store(_:)`` release, so the work of one owner
/// happens before the work of the next, however the pipeline passed between them (fast, or through the lock: the
/// state machine's side takes the word with an acquiring ``inflate()``).
///
/// Thread identities are `pthread_t` values, pointers to a thread's control block on every platform Sluice runs on
/// (glibc, musl, Darwin): aligned, so bit 0 of an identity is free for ``slow`` (checked in debug builds).
@usableFromInline
struct PipelineEntry: @unchecked Sendable {
    // @unchecked: a pointer to one word, allocated in `init`, freed by `deallocate()` (the core's deinit), and
    // only ever accessed through the C11 atomic functions of CSluiceSupport.
    @usableFromInline
    let word: UnsafeMutablePointer<UInt>

    /// Set while the lock-guarded state machine, not the word alone, says who owns the pipeline and what must happen
    /// when the owner is done.
    @usableFromInline
    static var slow: UInt { 1 }

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
    }

    func deallocate() {
        word.deallocate()
    }

    /// Idle to owned by `thread`, without the lock; `false` if the pipeline is owned or the state machine is in
    /// charge.
    @inlinable
    func tryTake(_ thread: ThreadID) -> Bool {
        assert(thread.raw & PipelineEntry.slow == 0, "a thread identity with bit 0 set")
        return csluice_pipeline_try_take(word, thread.raw)
    }

    /// Owned by `thread` to idle, without the lock; `false` if the state machine took over meanwhile (then the owner
    /// releases under the lock).
    @inlinable
    func tryRelease(_ thread: ThreadID) -> Bool {
        csluice_pipeline_try_release(word, thread.raw)
    }

    /// The word (relaxed: read under the lock, or only as a hint).
    @inlinable
    var value: UInt {
        csluice_pipeline_load(word)
    }

    /// Sets ``slow`` and returns the word before; called with the store's lock held.
    @inlinable
    func inflate() -> UInt {
        csluice_pipeline_fetch_or(word, PipelineEntry.slow)
    }

    /// Writes the word; called with the store's lock held.
    @inlinable
    func store(_ value: UInt) {
        csluice_pipeline_store(word, value)
    }
}
