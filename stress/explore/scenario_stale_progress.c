/*
 * stress/explore/scenario_stale_progress.c — a progress call on a PE handle
 * racing the PE's destroy and a new PE that reuses its memory
 * (stale_progress).
 *
 * The application destroys a PE while another thread progresses it (an
 * application bug: that call must be refused as stale, never touch the new
 * PE), waits for its memory to be freed, then creates a PE, which gets the
 * same cell (engine/cells.c hands the last freed one out first), and
 * progresses it from this thread only. Every one of those calls must
 * succeed: no other thread runs the new PE. The stale call must answer
 * SUCCESS (it came first), IN_USE (the destroy held the PE's guard) or
 * INVALID_VALUE. A stale call that checked its handle, was preempted
 * across the destroy, the grace period and the new create, and then took
 * the runner guard in the cell held the new PE's guard until it saw its
 * handle stale: a progress of the new PE meanwhile was refused IN_USE (and
 * a guard taken in the dead cell before the cell was zeroed and reused was
 * given up over the new PE's owner; found by a review).
 */
#include "scenario.h"

static struct doca_pe *old;
static doca_error_t stale_result;

static void *stale_progress(void *unused)
{
	uint32_t n;

	(void)unused;
	explore_name("stale");
	stale_result = doca_pe_try_progress(old, &n);
	return NULL;
}

void scenario_stale_progress(void)
{
	pthread_t t;
	struct doca_pe *pe = world_pe_reused_under(&old, stale_progress, &t);

	world_pe_progress_alone(pe, 3, false);
	world_pe_stale_end(pe, t, "a progress", &stale_result);
}
