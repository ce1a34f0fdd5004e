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
/// A fast owner that queues an action for itself (rule 2) sets ``queued`` (`ThreadID.raw | queued`), so that its
/// fast exit fails and it processes that queue (``StoreCore/ownerQueue``) before giving the pipeline up.
///
/// Thread identities are `pthread_t` values, pointers to a thread's control block on every platform Sluice runs on
/// (glibc, musl, Darwin): aligned, so bits 0 and 1 of an identity are free for ``slow`` and ``queued`` (checked in
/// debug builds).
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

    /// Set by a fast owner that queued an action for itself (``StoreCore/ownerQueue``), so that its ``tryRelease(_:)``
    /// fails and it processes that queue first: the fast exit tests nothing else.
    @usableFromInline
    static var queued: UInt { 2 }

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
        assert(thread.raw & (PipelineEntry.slow | PipelineEntry.queued) == 0, "a thread identity with bit 0 or 1 set")
        return csluice_pipeline_try_take(word, thread.raw)
    }

    /// Owned by `thread` to idle, without the lock; `false` if the state machine took over meanwhile (then the owner
    /// releases under the lock).
    @inlinable
    func tryRelease(_ thread: ThreadID) -> Bool {
        csluice_pipeline_try_release(word, thread.raw)
    }

    /// Owned by `thread` with ``queued`` set to idle: the exit of a fast owner that has processed its own queue;
    /// `false` if the state machine took over meanwhile.
    @inlinable
    func tryReleaseQueued(_ thread: ThreadID) -> Bool {
        csluice_pipeline_try_release(word, thread.raw | PipelineEntry.queued)
    }

    /// Whether `thread` owns the pipeline on the fast path (the state machine not in charge). Only `thread` itself
    /// can make the answer change from `true` while it runs, by giving the pipeline up: exact for the owner, a hint
    /// for any other thread.
    @inlinable
    func isBareOwner(_ thread: ThreadID) -> Bool {
        value & ~PipelineEntry.queued == thread.raw
    }

    /// Sets ``queued``; called by the fast owner.
    @inlinable
    func markQueued() {
        _ = csluice_pipeline_fetch_or(word, PipelineEntry.queued)
    }

    /// The owning thread in a word that has one.
    @inlinable
    static func owner(in word: UInt) -> ThreadID {
        ThreadID(raw: word & ~(slow | queued))
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

/// The figures of a store's ``StoreCore/ownerQueue`` for ``Store/statistics``: how many actions were queued there,
/// and the most it held at once. Written only by the pipeline's owner (a load and a store, no read-modify-write),
/// read by anyone: atomic words, so that a reader on another thread sees a value that was written.
@usableFromInline
struct OwnerQueueCounts: @unchecked Sendable {
    // @unchecked: two words allocated in `init`, freed by `deallocate()` (the core's deinit), and only ever accessed
    // through the C11 atomic functions of CSluiceSupport.
    @usableFromInline
    let words: UnsafeMutablePointer<UInt>

    init() {
        words = .allocate(capacity: 2)
        words.initialize(repeating: 0, count: 2)
    }

    func deallocate() {
        words.deallocate()
    }

    /// The owner queued one more action; its queue now holds `depth`.
    @inlinable
    func noteQueued(depth: Int) {
        csluice_pipeline_store(words, csluice_pipeline_load(words) &+ 1)
        if UInt(depth) > csluice_pipeline_load(words + 1) {
            csluice_pipeline_store(words + 1, UInt(depth))
        }
    }

    /// The actions queued so far.
    var queued: Int { Int(csluice_pipeline_load(words)) }

    /// The most actions queued at once.
    var deepest: Int { Int(csluice_pipeline_load(words + 1)) }
}
