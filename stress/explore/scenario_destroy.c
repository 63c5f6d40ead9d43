/*
 * stress/explore/scenario_destroy.c — destroys refused while the objects
 * are in use (destroy_refused): while the application runs a task, stops
 * the ctx and finishes the stop, another thread tries to destroy the PE,
 * the memory, the device and the ctx. Each call must be refused with its
 * documented code whatever the moment (the README's error table), and
 * change nothing: the application then tears everything down, every
 * destroy succeeding once.
 */
#include "scenario.h"

#include <sched.h>

static struct world w;

static void *destroyer(void *unused)
{
	(void)unused;
	explore_name("destroyer");
	EXPECT_IN(doca_pe_destroy(w.pe), 1, DOCA_ERROR_IN_USE);
	EXPECT_IN(doca_mem_destroy(w.mem), 1, DOCA_ERROR_IN_USE);
	EXPECT_IN(doca_dev_close(w.dev), 1, DOCA_ERROR_IN_USE);
	EXPECT_IN(doca_ctx_destroy(w.ctx), 2, DOCA_ERROR_BAD_STATE, DOCA_ERROR_IN_USE);
	return NULL;
}

void scenario_destroy_refused(void)
{
	pthread_t t;

	world_open(&w, "sw0", 2, NULL);
	if (pthread_create(&t, NULL, destroyer, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	EXPECT_OK(world_submit(&w, 0));
	while (atomic_load(&w.events_total) == 0)
		if (world_progress(&w) == 0)
			sched_yield();
	/* IN_PROGRESS: the destroyer held the PE's guard (its doca_pe_destroy
	 * decides under it) as we freed the event, so its credit returns
	 * through the mailbox, at the next turn */
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	pthread_join(t, NULL);
	world_close(&w);
	world_finish(&w);
}
