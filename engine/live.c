/*
 * engine/live.c — the live-object counters of engine/live.h and the
 * at-exit report, one warning line per kind still alive, like a validation
 * layer's: "at exit: 1 memory (1048576 bytes) still alive".
 *
 * The counters are relaxed atomics (a report is a snapshot). `total` alone
 * decides "the last object is gone": its 1 -> 0 and 0 -> 1 transitions
 * tell the reclaimer (doca_rcu_live_changed), which reads it again under
 * its lock, so of a create racing with the last destroy the later one to
 * take that lock decides; the reclaimer ends only with its queue empty.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "engine/engine.h"

static _Atomic uint64_t live_count[LIVE_KINDS];
static _Atomic uint64_t live_mem_bytes;
static _Atomic uint64_t live_total;

void live_created(enum live_kind kind, size_t bytes)
{
	atomic_fetch_add_explicit(&live_count[kind], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&live_mem_bytes, bytes, memory_order_relaxed);
	if (atomic_fetch_add_explicit(&live_total, 1, memory_order_relaxed) == 0)
		doca_rcu_live_changed();
}

void live_destroyed(enum live_kind kind, size_t bytes)
{
	atomic_fetch_sub_explicit(&live_count[kind], 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&live_mem_bytes, bytes, memory_order_relaxed);
	if (atomic_fetch_sub_explicit(&live_total, 1, memory_order_acq_rel) == 1)
		doca_rcu_live_changed();
}

bool live_none(void)
{
	return atomic_load_explicit(&live_total, memory_order_relaxed) == 0;
}

void live_after_fork_child(void)
{
	for (int k = 0; k < LIVE_KINDS; k++)
		atomic_store_explicit(&live_count[k], 0, memory_order_relaxed);
	atomic_store_explicit(&live_mem_bytes, 0, memory_order_relaxed);
	atomic_store_explicit(&live_total, 0, memory_order_relaxed);
}

__attribute__((destructor)) static void live_report_at_exit(void)
{
	static const char *const names[LIVE_KINDS][2] = {
		[LIVE_DEV] = { "device", "devices" },
		[LIVE_CTX] = { "context", "contexts" },
		[LIVE_MEM] = { "memory", "memories" },
		[LIVE_BUF] = { "buffer", "buffers" },
		[LIVE_PE] = { "progress engine", "progress engines" },
	};

	for (int k = 0; k < LIVE_KINDS; k++) {
		uint64_t n = atomic_load_explicit(&live_count[k], memory_order_relaxed);

		if (n == 0)
			continue;
		if (k == LIVE_MEM)
			doca_log(DOCA_LOG_WARN, "at exit: %llu %s (%llu bytes) still alive",
				 (unsigned long long)n, names[k][n != 1],
				 (unsigned long long)atomic_load_explicit(&live_mem_bytes,
									  memory_order_relaxed));
		else
			doca_log(DOCA_LOG_WARN, "at exit: %llu %s still alive", (unsigned long long)n,
				 names[k][n != 1]);
	}
}
