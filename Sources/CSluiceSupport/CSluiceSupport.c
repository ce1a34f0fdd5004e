#include "CSluiceSupport.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#if CSLUICE_FUTEX_LOCK
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

__thread intptr_t csluice_owned_pipelines = 0;
// Thread-local state of Sluice's dispatch engine, in C because Swift has no thread-local storage of its own: a
// `__thread` variable is a plain load or store, where `pthread_getspecific` is a call into the C library.

#if CSLUICE_FUTEX_LOCK

/// The calling thread's wake-up: `csluice_wake_up_waiting` from the moment it gets in line for a store's pipeline,
/// `csluice_wake_up_sleeping` once it sleeps in the kernel, `csluice_wake_up_signalled` once it was signalled. The
/// signal makes a system call only if the thread sleeps.
///
/// It does not spin before it sleeps: with more threads than cores, a spinning waiter only keeps the owner, or the
/// next in line, off a core (Benchmarks/HISTORY.md, "A futex lock", has the measurement).
static __thread uint32_t csluice_thread_wake_up_word = 0;
enum { csluice_wake_up_waiting = 0, csluice_wake_up_signalled = 1, csluice_wake_up_sleeping = 2 };

/// How many times a thread that finds the lock held looks at it again before it sleeps. A store holds its lock for
/// about one reducer call, so the holder usually gives it up within a few of these rounds; sleeping instead costs a
/// system call on each side.
enum { csluice_lock_spins = 100 };

static inline void csluice_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

/// Sleeps while the word at `word` is `expected` (or until a spurious wake-up).
static void csluice_futex_wait(uint32_t *word, uint32_t expected) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

/// Wakes up to `count` threads sleeping on `word`.
static void csluice_futex_wake(uint32_t *word, int count) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

void csluice_lock_init(csluice_lock_t *lock) {
    memset(lock, 0, sizeof(*lock));
}

void csluice_lock_destroy(csluice_lock_t *lock) {
    (void)lock;
}

void csluice_lock_lock_slow(csluice_lock_t *lock) {
    _Atomic(uint32_t) *state = (_Atomic(uint32_t) *)&lock->state;
    for (int spin = 0; spin < csluice_lock_spins; spin++) {
        // Read before trying, so that a spinning thread does not take the cache line from the holder for nothing.
        if (atomic_load_explicit(state, memory_order_relaxed) == 0) {
            uint32_t expected = 0;
            if (atomic_compare_exchange_weak_explicit(state, &expected, 1, memory_order_acquire,
                                                      memory_order_relaxed)) {
                return;
            }
        }
        csluice_cpu_relax();
    }
    // 2: held, and a thread may sleep on it, so the holder must wake one when it gives it up. A thread that takes the
    // lock here leaves it at 2, since others may still sleep: at worst one wake-up too many.
    while (atomic_exchange_explicit(state, 2, memory_order_acquire) != 0) {
        csluice_futex_wait(&lock->state, 2);
    }
}

void csluice_lock_wake_one(csluice_lock_t *lock) {
    csluice_futex_wake(&lock->state, 1);
}

void csluice_lock_wait(csluice_lock_t *lock) {
    // Read with the lock held: a signal sent after the waiter checked its condition (under the lock) changes the
    // sequence after this read, so the futex does not sleep through it.
    uint32_t sequence = atomic_load_explicit((_Atomic(uint32_t) *)&lock->sequence, memory_order_relaxed);
    csluice_lock_unlock(lock);
    csluice_futex_wait(&lock->sequence, sequence);
    csluice_lock_lock(lock);
}

void csluice_lock_wait_timeout(csluice_lock_t *lock, int64_t nanoseconds) {
    uint32_t sequence = atomic_load_explicit((_Atomic(uint32_t) *)&lock->sequence, memory_order_relaxed);
    csluice_lock_unlock(lock);
    if (nanoseconds > 0) {
        // FUTEX_WAIT's timeout is relative.
        struct timespec timeout = {.tv_sec = (time_t)(nanoseconds / 1000000000),
                                   .tv_nsec = (long)(nanoseconds % 1000000000)};
        syscall(SYS_futex, &lock->sequence, FUTEX_WAIT_PRIVATE, sequence, &timeout, NULL, 0);
    }
    csluice_lock_lock(lock);
}

void csluice_lock_signal(csluice_lock_t *lock) {
    atomic_fetch_add_explicit((_Atomic(uint32_t) *)&lock->sequence, 1, memory_order_relaxed);
    csluice_futex_wake(&lock->sequence, 1);
}

void csluice_lock_broadcast(csluice_lock_t *lock) {
    atomic_fetch_add_explicit((_Atomic(uint32_t) *)&lock->sequence, 1, memory_order_relaxed);
    csluice_futex_wake(&lock->sequence, INT_MAX);
}

void csluice_lock_wait_for(csluice_lock_t *lock, void *wake_up) {
    _Atomic(uint32_t) *word = (_Atomic(uint32_t) *)wake_up;
    // Cleared with the lock held, so that the signal (sent with the lock held) comes after it.
    atomic_store_explicit(word, csluice_wake_up_waiting, memory_order_relaxed);
    csluice_lock_unlock(lock);
    uint32_t expected = csluice_wake_up_waiting;
    if (atomic_compare_exchange_strong_explicit(word, &expected, csluice_wake_up_sleeping, memory_order_acquire,
                                                memory_order_acquire)) {
        while (atomic_load_explicit(word, memory_order_acquire) != csluice_wake_up_signalled) {
            csluice_futex_wait((uint32_t *)wake_up, csluice_wake_up_sleeping);
        }
    }
    csluice_lock_lock(lock);
}

void csluice_wake_up_signal(void *wake_up) {
    uint32_t before =
        atomic_exchange_explicit((_Atomic(uint32_t) *)wake_up, csluice_wake_up_signalled, memory_order_release);
    if (before == csluice_wake_up_sleeping) {
        csluice_futex_wake((uint32_t *)wake_up, 1);
    }
}

void *csluice_thread_wake_up(void) {
    return &csluice_thread_wake_up_word;
}

#else

/// The calling thread's own condition variable. Statically initialized, so never destroyed: a condition variable
/// holds no resources on the platforms we run on (glibc, musl, Darwin) unless a thread waits on it, and a thread
/// exits only when it is not waiting.
static __thread pthread_cond_t csluice_thread_condition = PTHREAD_COND_INITIALIZER;

void csluice_lock_init(csluice_lock_t *lock) {
    memset(lock, 0, sizeof(*lock));
    int error = pthread_mutex_init(&lock->mutex, NULL);
    if (error == 0) {
        error = pthread_cond_init(&lock->condition, NULL);
    }
    if (error != 0) {
        abort();
    }
}

void csluice_lock_destroy(csluice_lock_t *lock) {
    pthread_cond_destroy(&lock->condition);
    pthread_mutex_destroy(&lock->mutex);
}

void csluice_lock_lock_slow(csluice_lock_t *lock) {
    pthread_mutex_lock(&lock->mutex);
}

void csluice_lock_wake_one(csluice_lock_t *lock) {
    (void)lock;
}

void csluice_lock_wait(csluice_lock_t *lock) {
    pthread_cond_wait(&lock->condition, &lock->mutex);
}

void csluice_lock_wait_timeout(csluice_lock_t *lock, int64_t nanoseconds) {
    if (nanoseconds <= 0) {
        return;
    }
    // pthread_cond_timedwait takes an absolute time on the realtime clock; a jump of that clock only ends the wait
    // early or late, and every caller waits in a loop over its own monotonic deadline.
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t total = (int64_t)now.tv_nsec + nanoseconds % 1000000000;
    struct timespec deadline = {.tv_sec = now.tv_sec + (time_t)(nanoseconds / 1000000000) + (time_t)(total / 1000000000),
                                .tv_nsec = (long)(total % 1000000000)};
    pthread_cond_timedwait(&lock->condition, &lock->mutex, &deadline);
}

void csluice_lock_signal(csluice_lock_t *lock) {
    pthread_cond_signal(&lock->condition);
}

void csluice_lock_broadcast(csluice_lock_t *lock) {
    pthread_cond_broadcast(&lock->condition);
}

void csluice_lock_wait_for(csluice_lock_t *lock, void *wake_up) {
    pthread_cond_wait((pthread_cond_t *)wake_up, &lock->mutex);
}

void csluice_wake_up_signal(void *wake_up) {
    pthread_cond_signal((pthread_cond_t *)wake_up);
}

void *csluice_thread_wake_up(void) {
    return &csluice_thread_condition;
}

#endif

// MARK: - CRC-32C

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t csluice_crc32c_sse42(uint32_t crc, const uint8_t *bytes,
                                                                          size_t length) {
    uint64_t wide = crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        wide = _mm_crc32_u64(wide, word);
        bytes += 8;
        length -= 8;
    }
    uint32_t narrow = (uint32_t)wide;
    while (length > 0) {
        narrow = _mm_crc32_u8(narrow, *bytes);
        bytes += 1;
        length -= 1;
    }
    return narrow;
}

bool csluice_crc32c_available(void) {
    return __builtin_cpu_supports("sse4.2");
}

uint32_t csluice_crc32c(uint32_t crc, const void *bytes, size_t length) {
    return ~csluice_crc32c_sse42(~crc, (const uint8_t *)bytes, length);
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

bool csluice_crc32c_available(void) {
    return true;
}

uint32_t csluice_crc32c(uint32_t crc, const void *bytes, size_t length) {
    const uint8_t *cursor = (const uint8_t *)bytes;
    uint32_t value = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, cursor, 8);
        value = __crc32cd(value, word);
        cursor += 8;
        length -= 8;
    }
    while (length > 0) {
        value = __crc32cb(value, *cursor);
        cursor += 1;
        length -= 1;
    }
    return ~value;
}

#else

bool csluice_crc32c_available(void) {
    return false;
}

uint32_t csluice_crc32c(uint32_t crc, const void *bytes, size_t length) {
    (void)bytes;
    (void)length;
    return crc;
}

#endif
