#include "CSluiceSupport.h"

__thread intptr_t csluice_owned_pipelines = 0;
// Thread-local state of Sluice's dispatch engine, in C because Swift has no thread-local storage of its own:
// `pthread_getspecific` costs about 20 instructions per access, a `__thread` variable one.

__thread pthread_cond_t csluice_thread_condition_storage = PTHREAD_COND_INITIALIZER;
// Statically initialized, so never destroyed: a condition variable holds no resources on the platforms we run on
// (glibc, musl, Darwin) unless a thread waits on it, and a thread exits only when it is not waiting.
