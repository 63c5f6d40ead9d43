/*
 * stress/explore/scenario_wait_destroy.c — a blocked submit whose context
 * is stopped and destroyed (wait_destroy, wait_destroy_race).
 *
 * max_tasks 1 and the one credit taken. A thread calls
 * doca_task_submit_wait (no limit) while the application stops the
 * context, frees the event, progresses it to IDLE and destroys everything.
 *
 * wait_destroy: the sleeper is asleep on its futex before the stop. The
 * context left RUNNING while the call waited: DOCA_ERROR_BAD_STATE
 * (include/doca_task.h), however late the sleeper runs again, and no stale
 * handle counted — the handle was current when the call began. A sleeper
 * that looked its handle up again after the destroy got
 * DOCA_ERROR_INVALID_VALUE, counted stale.
 *
 * wait_destroy_race: the call races the stop and the destroy from its
 * start. BAD_STATE with nothing counted, or, when the destroy came before
 * the call (or its doca_task_submit) looked at the context,
 * DOCA_ERROR_INVALID_VALUE counted once by doca_stale_handle_count, as
 * every stale handle is. The call's own "destroyed since its submit looked"
 * exit returned INVALID_VALUE uncounted.
 */
#include "scenario.h"

static struct world w;
static doca_error_t wait_result;

static void *sleeper(void *unused)
{
	(void)unused;
	explore_name("sleeper");
	wait_result = world_submit_wait(&w, 1, -1);
	return NULL;
}

/* A RUNNING world of one credit, taken (its event, ready and held, is
 * returned), and the sleeper started on it. */
static struct doca_event *open_and_start_sleeper(pthread_t *t)
{
	struct doca_event *ev;

	world_open(&w, "sw0", 1, NULL);
	EXPECT_OK(world_submit(&w, 0));
	ev = world_take_event(&w);
	if (pthread_create(t, NULL, sleeper, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	return ev;
}

/* Stop (the event is out: IN_PROGRESS), free, IDLE, destroy everything. */
static void stop_and_destroy(struct doca_event *ev)
{
	EXPECT_IN(doca_ctx_stop(w.ctx), 1, DOCA_ERROR_IN_PROGRESS);
	doca_event_free(ev);
	world_progress_until_idle(&w);
	world_close(&w);
}

void scenario_wait_destroy(void)
{
	uint64_t stale = doca_stale_handle_count();
	pthread_t t;
	struct doca_event *ev = open_and_start_sleeper(&t);

	world_until_asleep(t);
	stop_and_destroy(ev);
	pthread_join(t, NULL);
	if (wait_result != DOCA_ERROR_BAD_STATE)
		explore_end(VERDICT_INVARIANT, "result: submit_wait asleep when its context was destroyed returned %s, not BAD_STATE",
			    doca_error_get_name(wait_result));
	if (doca_stale_handle_count() != stale)
		explore_end(VERDICT_INVARIANT, "result: %llu stale handles counted, none used",
			    (unsigned long long)(doca_stale_handle_count() - stale));
	world_finish(&w);
}

void scenario_wait_destroy_race(void)
{
	uint64_t stale = doca_stale_handle_count();
	pthread_t t;
	struct doca_event *ev = open_and_start_sleeper(&t);

	stop_and_destroy(ev);
	pthread_join(t, NULL);
	expect_current_or_stale("submit_wait", wait_result, DOCA_ERROR_BAD_STATE, stale);
	world_finish(&w);
}
