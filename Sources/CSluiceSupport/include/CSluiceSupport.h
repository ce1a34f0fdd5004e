#ifndef CSLUICE_SUPPORT_H
#define CSLUICE_SUPPORT_H

#include <pthread.h>
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

#endif
