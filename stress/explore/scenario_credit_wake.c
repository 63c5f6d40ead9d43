/*
 * stress/explore/scenario_credit_wake.c — a blocked submitter and a credit
 * notification armed at the same moment (credit_wake).
 *
 * max_tasks 1 and the one credit taken: one thread blocks in
 * doca_task_submit_wait for a credit while another arms the context's
 * credit notification fd, and the application frees the event that
 * returns the credit. The return must wake the sleeper whatever the
 * order: an arming that moved the fd to ARMED before it was counted in
 * `waiters` let the return's fd fire take the sleeper's count, and the
 * sleeper was then never woken (found by a review; a deadlock here).
 */
#include "scenario.h"

static struct world w;
static doca_error_t wait_result;
static struct world_armer arm = { .w = &w };

static void *sleeper(void *unused)
{
	(void)unused;
	explore_name("sleeper");
	wait_result = world_submit_wait(&w, 1, -1);
	return NULL;
}

/* Progress until @p total events were taken, yielding when idle. */
static void progress_until_events(unsigned total)
{
	while (atomic_load(&w.events_total) < total)
		if (world_progress(&w) == 0)
			sched_yield();
}

void scenario_credit_wake(void)
{
	struct doca_event *ev;
	pthread_t t[2];

	world_open(&w, "sw0", 1, NULL);
	EXPECT_OK(world_submit(&w, 0));
	if (pthread_create(&t[0], NULL, sleeper, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	ev = world_take_event(&w);
	world_until_asleep(t[0]);
	/* the arming races the return to the sleeper */
	if (pthread_create(&t[1], NULL, world_armer, &arm) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	doca_event_free(ev);
	pthread_join(t[0], NULL); /* the return must have woken it */
	pthread_join(t[1], NULL);
	EXPECT_OK(wait_result);
	EXPECT_OK(arm.result);
	progress_until_events(2);
	EXPECT_OK(doca_ctx_clear_credit_notification(w.ctx));
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
