/*
 * stress/explore/scenario_stale_notify.c — a notification call on a PE
 * handle racing the PE's destroy and a new PE, run by a worker, that
 * reuses its memory (stale_notify).
 *
 * The application destroys a PE while another thread clears its
 * notification (an application bug: the clear must be refused as stale,
 * never answered for the new PE), waits for its memory to be freed, then
 * creates a PE, which gets the same cell (engine/cells.c hands the last
 * freed one out first), and runs it on a worker. The clear must answer
 * SUCCESS (it came first), IN_USE (the destroy held the PE's guard) or
 * INVALID_VALUE (a stale handle): one that checked the handle, was
 * preempted, and then read the new PE's worker flag answered BAD_STATE,
 * as if the destroyed PE ran a worker (found by a review).
 */
#include "scenario.h"

static struct doca_pe *old;
static doca_error_t clear_result;

static void *clearer(void *unused)
{
	(void)unused;
	explore_name("clearer");
	clear_result = doca_pe_clear_notification(old);
	return NULL;
}

void scenario_stale_notify(void)
{
	pthread_t t;
	struct doca_pe *pe = world_pe_reused_under(&old, clearer, &t);

	EXPECT_OK(doca_pe_run_on_cpu(pe, -1));
	pthread_join(t, NULL);
	if (clear_result != DOCA_SUCCESS && clear_result != DOCA_ERROR_IN_USE &&
	    clear_result != DOCA_ERROR_INVALID_VALUE)
		explore_end(VERDICT_INVARIANT, "result: a clear on a destroyed PE's handle returned %s",
			    doca_error_get_name(clear_result));
	EXPECT_OK(doca_pe_stop_run(pe));
	EXPECT_OK(doca_pe_destroy(pe));
	explore_rcu_barrier();
	explore_guards_check();
}
