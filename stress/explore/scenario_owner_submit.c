/*
 * stress/explore/scenario_owner_submit.c — the PE's parked owner submits
 * a task while a second thread destroys its source buffer and a third
 * stops the context (owner_submit_destroy).
 *
 * The owner's doca_task_submit takes no read-side section when it enters
 * its parked guard by runner_unpark (engine/task.c): it checks the
 * context's handle, state and PE before it holds anything, again under
 * the guard, and the buffers' handles and fields only there. Three things
 * keep that sound, each undone by a switch:
 *  - buf_destroy_no_quiesce: a buffer's destroy finishes without waiting
 *    out the owner's brief sections (engine/buf.c, buf_quiesce_owner).
 *    The owner, preempted after checking the source, finds it zeroed
 *    after the destroy's grace period (no DEAD left, no pin): the task is
 *    accepted naming a destroyed buffer, whose copy from its NULL data
 *    faults in the turn (verdict "crash"), or the destroy ends SUCCESS
 *    beside an accepted task (verdict "invariant");
 *  - buf_destroy_withdraw_before_kill: the destroy waits them out, but
 *    before it kills the handle, not after (buf_quiesce_after_kill): the
 *    owner unparks in between, checks the handle still live, and pins
 *    the zeroed cell as above (a pinned seed at depth 5,
 *    stress/explore/meson.build);
 *  - owner_submit_no_recheck: RUNNING and the handle are not
 *    looked at again under the guard. The owner, preempted after finding
 *    RUNNING outside, enters its guard after the stop retired the run
 *    (nothing was outstanding) and reads the run NULL (verdict "crash").
 * With all three: the submit is accepted (and the destroy then refused
 * IN_USE, the task's event not yet freed), refused INVALID_VALUE (the
 * buffer destroyed or closed first) or BAD_STATE (the stop first); the
 * stop ends DOCA_SUCCESS or DOCA_ERROR_IN_PROGRESS; every accepted task
 * has its one event and its copy.
 */
#include "scenario.h"

static struct world w;
static doca_error_t destroy_result;

static void *destroyer(void *unused)
{
	(void)unused;
	explore_name("destroyer");
	destroy_result = doca_buf_destroy(w.src[0]);
	return NULL;
}

void scenario_owner_submit_destroy(void)
{
	pthread_t d, s;

	world_open(&w, "sw0", 2, NULL);
	(void)doca_pe_progress(w.pe); /* this thread runs the PE: its guard parked */
	if (pthread_create(&d, NULL, destroyer, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	world_stop_start(&w, &s);
	doca_error_t rc = world_submit(&w, 0);

	EXPECT_IN(rc, 3, DOCA_SUCCESS, DOCA_ERROR_INVALID_VALUE, DOCA_ERROR_BAD_STATE);
	pthread_join(d, NULL);
	/* the task's event, if accepted, is not freed yet: its source is in use */
	EXPECT_IN(destroy_result, 2, DOCA_SUCCESS, DOCA_ERROR_IN_USE);
	if (rc == DOCA_SUCCESS && destroy_result == DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT, "a buffer destroyed beside an accepted task naming it, its event unfreed");
	world_stop_join(&w, s);
	world_progress_until_idle(&w);
	if (destroy_result == DOCA_SUCCESS) /* for world_close's destroys */
		EXPECT_OK(doca_buf_create(w.mem, 0, WORLD_LEN, &w.src[0]));
	world_close(&w);
	world_finish(&w);
}
