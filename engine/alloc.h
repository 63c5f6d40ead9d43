/*
 * engine/alloc.h — the slow-path allocator (declared in engine.h) and the
 * allocation-failure injection hook of test builds.
 */
#ifndef DOCA_ENGINE_ALLOC_H
#define DOCA_ENGINE_ALLOC_H

#include <stdint.h>

#ifdef DOCA_ALLOC_FAIL_INJECTION
/* Make allocation number k (counted from 1 after this call) fail; 0 disables
 * injection. Returns nothing; doca_alloc_fail_count says how many
 * allocations were made since. */
void doca_alloc_fail_at(uint64_t k);
uint64_t doca_alloc_count(void);
#endif

#endif /* DOCA_ENGINE_ALLOC_H */
