#include "CSluiceSupport.h"

__thread intptr_t csluice_owned_pipelines = 0;
