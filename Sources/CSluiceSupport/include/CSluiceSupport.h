#ifndef CSLUICE_SUPPORT_H
#define CSLUICE_SUPPORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/// How many store pipelines the calling thread owns.
extern __thread intptr_t csluice_owned_pipelines;

static inline intptr_t csluice_owned_pipelines_count(void) {
    return csluice_owned_pipelines;
}

static inline void csluice_owned_pipelines_add(intptr_t delta) {
    csluice_owned_pipelines += delta;
}

// The store's lock (`Lock` in Sluice).
//
// On Linux it is a futex lock of our own: one 32-bit word (0 free, 1 held, 2 held and a thread may sleep on it), taken
// with one compare-and-swap and given up with one exchange, inline in Swift's callers; a thread that finds it held
// spins a little (the critical sections of a store are about one reducer call) before it sleeps in the kernel. A
// `pthread_mutex_t` is a call into glibc on each side, and goes to the kernel whenever two threads collide on it.
// Waiting for a condition is a futex too: a sequence number for the lock's own condition, and a word
// per thread on which that thread waits for a store's pipeline, so that the owner wakes exactly the thread it hands
// the pipeline to.
//
// Elsewhere (Darwin; and Linux built with `-Xcc -DCSLUICE_PTHREAD_LOCK`, which is how that branch is tested) the lock
// is a `pthread_mutex_t` and its conditions `pthread_cond_t`s.
#if defined(__linux__) && !defined(CSLUICE_PTHREAD_LOCK)
#define CSLUICE_FUTEX_LOCK 1
#else
#define CSLUICE_FUTEX_LOCK 0
#endif

/// A lock and its condition. Must not move in memory: Sluice allocates it once and initializes it with
/// `csluice_lock_init`. The futex words are plain integers here (Swift imports no `_Atomic` field) and are only ever
/// accessed as `_Atomic(uint32_t)`, by the functions below.
typedef struct csluice_lock {
#if CSLUICE_FUTEX_LOCK
    uint32_t state;
    uint32_t sequence;
#else
    pthread_mutex_t mutex;
    pthread_cond_t condition;
#endif
    /// The thread that holds the lock (`pthread_self`), or 0; kept by Sluice's debug builds only, to stop a thread
    /// that takes the lock twice (a reducer that calls its own store) with a message instead of a deadlock.
    uintptr_t owner;
} csluice_lock_t;

void csluice_lock_init(csluice_lock_t *lock);
void csluice_lock_destroy(csluice_lock_t *lock);
/// The contended part of `csluice_lock_lock`: spins a little, then sleeps until the lock is free.
void csluice_lock_lock_slow(csluice_lock_t *lock);
/// The contended part of `csluice_lock_unlock`: wakes a sleeping thread.
void csluice_lock_wake_one(csluice_lock_t *lock);
/// Releases the lock, waits for `csluice_lock_signal` or `csluice_lock_broadcast`, and takes the lock again. The wait
/// may end spuriously.
void csluice_lock_wait(csluice_lock_t *lock);
/// As `csluice_lock_wait`, but returns after about `nanoseconds` at the latest (spuriously earlier too).
void csluice_lock_wait_timeout(csluice_lock_t *lock, int64_t nanoseconds);
/// Wakes a thread in `csluice_lock_wait`, if any.
void csluice_lock_signal(csluice_lock_t *lock);
/// Wakes every thread in `csluice_lock_wait`.
void csluice_lock_broadcast(csluice_lock_t *lock);
/// Releases the lock, waits for `csluice_wake_up_signal(wake_up)`, and takes the lock again; `wake_up` must be the
/// calling thread's own (`csluice_thread_wake_up`). The wait may end spuriously. Signal with the lock held: the woken
/// thread can then neither return nor exit before the signal is done.
void csluice_lock_wait_for(csluice_lock_t *lock, void *wake_up);
/// Wakes the thread whose `csluice_thread_wake_up()` is `wake_up`, if it waits in `csluice_lock_wait_for`.
void csluice_wake_up_signal(void *wake_up);
/// The calling thread's own wake-up: a thread-local futex word on Linux, a thread-local `pthread_cond_t` elsewhere.
void *csluice_thread_wake_up(void);

// CRC-32C (Castagnoli) with the processor's instruction: SSE 4.2 `crc32` on x86-64 (checked at run time), the ARMv8
// CRC32 extension where the compiler targets it (every Apple arm64 processor). Sluice's table-driven `CRC32C` is the
// reference and the fallback.

/// Whether `csluice_crc32c` may be called on this processor.
bool csluice_crc32c_available(void);

/// The CRC-32C of `length` bytes at `bytes`, continuing from `crc` (the CRC-32C of the bytes before them; 0 to
/// start): the value of Sluice's `CRC32C.checksum(_:continuing:)`. Only if `csluice_crc32c_available()`.
uint32_t csluice_crc32c(uint32_t crc, const void *bytes, size_t length);

#if CSLUICE_FUTEX_LOCK
_Static_assert(sizeof(_Atomic(uint32_t)) == sizeof(uint32_t), "atomic 32-bit word size");
_Static_assert(_Alignof(_Atomic(uint32_t)) == _Alignof(uint32_t), "atomic 32-bit word alignment");
#endif
_Static_assert(sizeof(_Atomic(uintptr_t)) == sizeof(uintptr_t), "atomic word size");
_Static_assert(_Alignof(_Atomic(uintptr_t)) == _Alignof(uintptr_t), "atomic word alignment");

/// Takes the lock, waiting for it if another thread holds it.
static inline void csluice_lock_lock(csluice_lock_t *lock) {
#if CSLUICE_FUTEX_LOCK
    uint32_t expected = 0;
    if (__builtin_expect(atomic_compare_exchange_strong_explicit((_Atomic(uint32_t) *)&lock->state, &expected, 1,
                                                                 memory_order_acquire, memory_order_relaxed),
                         1)) {
        return;
    }
    csluice_lock_lock_slow(lock);
#else
    pthread_mutex_lock(&lock->mutex);
#endif
}

/// Gives the lock up.
static inline void csluice_lock_unlock(csluice_lock_t *lock) {
#if CSLUICE_FUTEX_LOCK
    if (__builtin_expect(atomic_exchange_explicit((_Atomic(uint32_t) *)&lock->state, 0, memory_order_release) == 2,
                         0)) {
        csluice_lock_wake_one(lock);
    }
#else
    pthread_mutex_unlock(&lock->mutex);
#endif
}

/// The thread recorded as holding the lock (debug builds), or 0.
static inline uintptr_t csluice_lock_owner(csluice_lock_t *lock) {
    return atomic_load_explicit((_Atomic(uintptr_t) *)&lock->owner, memory_order_relaxed);
}

/// Records the thread that holds the lock (debug builds); 0 for none.
static inline void csluice_lock_set_owner(csluice_lock_t *lock, uintptr_t owner) {
    atomic_store_explicit((_Atomic(uintptr_t) *)&lock->owner, owner, memory_order_relaxed);
}

// Nanoseconds of the monotonic clock (`CLOCK_MONOTONIC`), for the waits of a store's pipeline.
static inline uint64_t csluice_monotonic_nanoseconds(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (uint64_t)time.tv_sec * 1000000000u + (uint64_t)time.tv_nsec;
}

// The monotonic clock as of the last timer tick (`CLOCK_MONOTONIC_COARSE`, Linux): never ahead of
// `csluice_monotonic_nanoseconds()`, behind it by about one tick (`csluice_monotonic_coarse_resolution()`), and
// cheaper to read (no time-stamp counter read). Elsewhere the precise clock, with a resolution of 0.
static inline uint64_t csluice_monotonic_coarse_nanoseconds(void) {
    struct timespec time;
#ifdef CLOCK_MONOTONIC_COARSE
    clock_gettime(CLOCK_MONOTONIC_COARSE, &time);
#else
    clock_gettime(CLOCK_MONOTONIC, &time);
#endif
    return (uint64_t)time.tv_sec * 1000000000u + (uint64_t)time.tv_nsec;
}

// The tick of `csluice_monotonic_coarse_nanoseconds()` in nanoseconds.
static inline uint64_t csluice_monotonic_coarse_resolution(void) {
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec resolution;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) != 0) {
        return 1000000000u;
    }
    return (uint64_t)resolution.tv_sec * 1000000000u + (uint64_t)resolution.tv_nsec;
#else
    return 0;
#endif
}

// The calling thread's identity (`ThreadID`), inline in Swift's callers, which look it up at least twice per
// dispatch through a middleware: a lookup is `pthread_self` and no call into Sluice.

/// The calling thread's `pthread_t`, as an integer (a pointer to its control block on glibc, musl and Darwin).
static inline uintptr_t csluice_thread_self(void) {
    return (uintptr_t)pthread_self();
}

// The owner word of a store's pipeline (`PipelineEntry` in Sluice): 0 when the pipeline is idle and nobody needs the
// lock, else the owning thread's identity, with bit 0 set once the lock-guarded state machine has taken over (someone
// waits or queued, or the store closed). Swift has no atomics before Synchronization (macOS 15), which the library's
// platforms do not require, so the word is a C11 atomic. Swift allocates it as a `uintptr_t`; these functions view
// it as `_Atomic(uintptr_t)`, which has the same size and alignment (checked above) on every platform Swift runs on.

/// Idle to owned by `owner` (acquire: the work of the previous owner happened before), if the word is 0.
static inline bool csluice_pipeline_try_take(uintptr_t *word, uintptr_t owner) {
    uintptr_t expected = 0;
    return atomic_compare_exchange_strong_explicit(
        (_Atomic(uintptr_t) *)word, &expected, owner, memory_order_acquire, memory_order_relaxed);
}

/// Owned by `owner` to idle (release: this work happens before the next owner's), if nothing else changed the word.
static inline bool csluice_pipeline_try_release(uintptr_t *word, uintptr_t owner) {
    uintptr_t expected = owner;
    return atomic_compare_exchange_strong_explicit(
        (_Atomic(uintptr_t) *)word, &expected, 0, memory_order_release, memory_order_relaxed);
}

/// The word now. Relaxed: a caller that acts on it holds the store's lock, or retries with a compare-and-swap.
static inline uintptr_t csluice_pipeline_load(uintptr_t *word) {
    return atomic_load_explicit((_Atomic(uintptr_t) *)word, memory_order_relaxed);
}

/// Sets `bits` and returns the word before (acquire and release: the state machine takes over from a fast owner).
static inline uintptr_t csluice_pipeline_fetch_or(uintptr_t *word, uintptr_t bits) {
    return atomic_fetch_or_explicit((_Atomic(uintptr_t) *)word, bits, memory_order_acq_rel);
}

/// Writes the word (release: the owner's work happens before whoever takes the pipeline next).
static inline void csluice_pipeline_store(uintptr_t *word, uintptr_t value) {
    atomic_store_explicit((_Atomic(uintptr_t) *)word, value, memory_order_release);
}

/// Adds one to a counter and returns its value before (relaxed: the count orders nothing else).
static inline uint64_t csluice_counter_next(uint64_t *word) {
    return atomic_fetch_add_explicit((_Atomic(uint64_t) *)word, 1, memory_order_relaxed);
}

#endif
