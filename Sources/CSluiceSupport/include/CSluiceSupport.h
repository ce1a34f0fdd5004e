// Thread-local state of Sluice's dispatch engine, in C because Swift has no thread-local storage of its own:
// `pthread_getspecific` costs about 20 instructions per access, a `__thread` variable one.

#ifndef CSLUICE_SUPPORT_H
#define CSLUICE_SUPPORT_H

#include <stdint.h>

/// How many store pipelines the calling thread owns.
extern __thread intptr_t csluice_owned_pipelines;

static inline intptr_t csluice_owned_pipelines_count(void) {
    return csluice_owned_pipelines;
}

static inline void csluice_owned_pipelines_add(intptr_t delta) {
    csluice_owned_pipelines += delta;
}

#endif
