/*
 * stress/explore/scenario_runner_handoff.c — two threads take turns
 * running one PE (runner_handoff). Each runs an application's polling
 * loop (progress, take every event, free it) until every task has its
 * event, so the runner guard is parked by one thread, revoked by the
 * other, taken back and parked again (actors/runner.h). The guard checks
 * itself in this build (a second holder aborts the schedule) and the
 * world checks exactly one event per task. (The parking generation's
 * defect — a revoker that read a parked word, slept through its owner
 * giving the guard up and parking it again, and then won its CAS while the
 * owner entered unseen — was found by tests/api/event_free.c's two
 * reapers, not here: it needs the revoker to stop for a whole turn of the
 * other thread inside one call, deeper than these schedules go.)
 */
#include "scenario.h"

#include <sched.h>

#define TASKS 3u

static struct world w;

static void *reaper(void *arg)
{
	explore_name(arg != NULL ? "reaper 1" : "reaper 0");
	while (atomic_load(&w.events_total) < TASKS)
		if (world_progress(&w) == 0)
			sched_yield();
	return NULL;
}

void scenario_runner_handoff(void)
{
	pthread_t t[2];

	world_open(&w, "sw0", TASKS, NULL);
	for (unsigned tag = 0; tag < TASKS; tag++)
		EXPECT_OK(world_submit(&w, tag));
	if (pthread_create(&t[0], NULL, reaper, NULL) != 0 ||
	    pthread_create(&t[1], NULL, reaper, (void *)1) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/* IN_PROGRESS: a free made while the other reaper held the guard
	 * returns its credit through the mailbox, at the next turn */
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
