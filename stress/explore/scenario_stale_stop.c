/*
 * stress/explore/scenario_stale_stop.c — a stop on a handle racing its
 * destroy and a new context that reuses its memory (stale_stop).
 *
 * The application destroys an IDLE context while another thread stops it
 * (an application bug: the stop must be refused, never crash), waits for
 * its memory to be freed, and creates and starts a new context, which gets
 * the same cell (engine/cells.c hands the last freed one out first). The
 * stop must answer BAD_STATE (it saw the old context IDLE) with nothing
 * counted or INVALID_VALUE (a stale handle) counted once by
 * doca_stale_handle_count, and the new context must stay RUNNING: a
 * stop that checked the handle, was preempted, and then took a reference
 * on the cell would stop the new context instead.
 */
#include "scenario.h"

static struct world w;
static struct doca_ctx *old;
static doca_error_t stop_result;

static void *stopper(void *unused)
{
	explore_name("stopper");
	stop_result = doca_ctx_stop(old);
	return NULL;
}

void scenario_stale_stop(void)
{
	uint64_t stale = doca_stale_handle_count();
	pthread_t t;

	world_ctx_destroyed_under(&old, stopper, &t);
	world_open(&w, "sw0", 2, NULL);
	pthread_join(t, NULL);
	expect_current_or_stale("doca_ctx_stop", stop_result, DOCA_ERROR_BAD_STATE, stale);
	if (world_state(&w) != DOCA_CTX_STATE_RUNNING)
		explore_end(VERDICT_INVARIANT, "state: a stop on a destroyed handle stopped the context that reused its memory");
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
