/*
 * stress/explore/scenario_stale_worker.c — a worker's stop and start on a
 * PE handle racing the PE's destroy and a new PE that reuses its memory
 * (stale_worker).
 *
 * The application destroys a PE while another thread stops its worker
 * (there is none), then hands it to a worker and stops that one (an
 * application bug: each call must be refused as a stale handle once the
 * destroy came first, never applied to the new occupant), waits for its
 * memory to be freed and creates a PE, which gets the same cell
 * (engine/cells.c hands the last freed one out first). The first stop
 * answers BAD_STATE (no worker) with nothing counted or INVALID_VALUE
 * counted once; the start SUCCESS (then the destroy waits, IN_USE, for
 * the second stop, which must succeed) with nothing counted or
 * INVALID_VALUE counted once. The new PE has no worker. Both calls look
 * the PE up inside their read-side section and again under the locks;
 * finding it destroyed there, they answered INVALID_VALUE with no log line
 * and nothing counted (found by a review).
 */
#include "scenario.h"

static struct doca_pe *old;

static void *worker_starter(void *unused)
{
	(void)unused;
	explore_name("starter");
	/* checked here: only this thread uses stale handles */
	uint64_t stale = doca_stale_handle_count();
	doca_error_t rc = doca_pe_stop_run(old);

	expect_current_or_stale("doca_pe_stop_run", rc, DOCA_ERROR_BAD_STATE, stale);
	stale = doca_stale_handle_count();
	rc = doca_pe_run_on_cpu(old, -1);
	expect_current_or_stale("doca_pe_run_on_cpu", rc, DOCA_SUCCESS, stale);
	if (rc == DOCA_SUCCESS)
		EXPECT_OK(doca_pe_stop_run(old));
	return NULL;
}

void scenario_stale_worker(void)
{
	pthread_t t;
	struct doca_pe *pe = world_pe_reused_under(&old, worker_starter, &t);

	pthread_join(t, NULL);
	/* no worker runs the new PE */
	EXPECT_IN(doca_pe_stop_run(pe), 1, DOCA_ERROR_BAD_STATE);
	EXPECT_OK(doca_pe_destroy(pe));
	explore_rcu_barrier();
	explore_guards_check();
}
