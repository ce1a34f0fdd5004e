#ifndef CSLUICE_SUPPORT_H
#define CSLUICE_SUPPORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/// How many store pipelines the calling thread owns.
extern __thread intptr_t csluice_owned_pipelines;

static inline intptr_t csluice_owned_pipelines_count(void) {
    return csluice_owned_pipelines;
}

static inline void csluice_owned_pipelines_add(intptr_t delta) {
    csluice_owned_pipelines += delta;
}

/// The calling thread's own condition variable, on which it waits for a store's pipeline: the owner hands the
/// pipeline to the oldest waiting thread and wakes that thread alone.
extern __thread pthread_cond_t csluice_thread_condition_storage;

static inline pthread_cond_t *csluice_thread_condition(void) {
    return &csluice_thread_condition_storage;
}

// The store's lock (`Lock` in Sluice) and the calling thread's identity (`ThreadID`), inline in Swift's callers: as
// calls into Sluice, `Lock.lock()` and `Lock.unlock()` cost 14 instructions each on top of the pthread function (a
// wrapper and a merged thunk; callgrind), `ThreadID.current` 10 on top of `pthread_self`. Inlinable Swift code may
// call only what a module imported publicly declares, and `Lock` does not import the C library publicly: so the mutex
// is passed untyped here.

/// `pthread_mutex_lock` of the `pthread_mutex_t` at `mutex`.
static inline int csluice_mutex_lock(void *mutex) {
    return pthread_mutex_lock((pthread_mutex_t *)mutex);
}

/// `pthread_mutex_unlock` of the `pthread_mutex_t` at `mutex`.
static inline int csluice_mutex_unlock(void *mutex) {
    return pthread_mutex_unlock((pthread_mutex_t *)mutex);
}

/// The calling thread's `pthread_t`, as an integer (a pointer to its control block on glibc, musl and Darwin).
static inline uintptr_t csluice_thread_self(void) {
    return (uintptr_t)pthread_self();
}

// The owner word of a store's pipeline (`PipelineEntry` in Sluice): 0 when the pipeline is idle and nobody needs the
// lock, else the owning thread's identity, with bit 0 set once the lock-guarded state machine has taken over (someone
// waits or queued, or the store closed). Swift has no atomics before Synchronization (macOS 15), which the library's
// platforms do not require, so the word is a C11 atomic. Swift allocates it as a `uintptr_t`; these functions view
// it as `_Atomic(uintptr_t)`, which has the same size and alignment (checked below) on every platform Swift runs on.
_Static_assert(sizeof(_Atomic(uintptr_t)) == sizeof(uintptr_t), "atomic word size");
_Static_assert(_Alignof(_Atomic(uintptr_t)) == _Alignof(uintptr_t), "atomic word alignment");

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

#endif
