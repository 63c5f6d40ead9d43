/*
 * stress/explore/scenario_wait_restart.c — a blocked submit whose run is
 * stopped and a new one started before it registers (wait_restart).
 *
 * max_tasks 1 and the one credit taken. A thread calls
 * doca_task_submit_wait (no limit): its first doca_task_submit is refused
 * with AGAIN in run 1, and its first use of the context waits for a grace
 * period (a reader holds one up, so the sleeper is seen blocked there:
 * proof that run 1 refused it). Meanwhile the application stops the
 * context, frees the event, progresses it to IDLE and starts it again.
 *
 * The contract (include/doca_task.h): DOCA_ERROR_BAD_STATE when the
 * context leaves RUNNING while the call waits, "also when a new
 * doca_ctx_start followed before the sleeper ran again: a waiting task
 * never lands in a later run". A sleeper that reads the run to wait in
 * only after its grace period (engine/ctx_credits.c, ctx_run_start after
 * credits_first_use) takes run 2's free credit: its task lands in run 2.
 */
#include "scenario.h"

#include <sched.h>

#include "engine/engine.h"

static struct world w;
static doca_error_t wait_result;

static void *sleeper(void *unused)
{
	(void)unused;
	explore_name("sleeper");
	wait_result = world_submit_wait(&w, 1, -1);
	return NULL;
}

void scenario_wait_restart(void)
{
	struct doca_event *ev;
	pthread_t t[2];

	world_open(&w, "sw0", 1, NULL);
	EXPECT_OK(world_submit(&w, 0));
	while (world_state(&w) == DOCA_CTX_STATE_RUNNING && doca_pe_progress(w.pe) == 0)
		sched_yield();
	ev = doca_pe_get_event(w.pe);
	if (ev == NULL)
		explore_end(VERDICT_INVARIANT, "events: progress made one ready, get_event returned none");
	world_event(&w, ev);
	t[1] = world_section_hold();
	if (pthread_create(&t[0], NULL, sleeper, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	/* the sleeper in its first-use grace period: run 1 refused it */
	world_until_blocked(t[0], BLOCK_GRACE, "result: submit_wait returned with no credit free");
	world_section_let_go();
	/* the stop, IDLE and a new start, racing the sleeper's registration */
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	doca_event_free(ev);
	world_progress_until_idle(&w);
	EXPECT_OK(doca_ctx_start(w.ctx));
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	if (wait_result == DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT,
			    "result: a task run 1 refused (submit_wait) was accepted into run 2");
	if (wait_result != DOCA_ERROR_BAD_STATE)
		explore_end(VERDICT_INVARIANT, "result: submit_wait returned %s, not BAD_STATE",
			    doca_error_get_name(wait_result));
	world_end_with_exact_credits(&w, 1);
}
