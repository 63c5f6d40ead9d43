/*
 * engine/handle.c — the count of refused stale handles
 * (doca_stale_handle_count, include/doca_log.h).
 */
#include <stdatomic.h>

#include "engine/engine.h"

static _Atomic uint64_t stale_handles;

void handle_count_stale(void)
{
	atomic_fetch_add_explicit(&stale_handles, 1, memory_order_relaxed);
}

uint64_t doca_stale_handle_count(void)
{
	return atomic_load_explicit(&stale_handles, memory_order_relaxed);
}
