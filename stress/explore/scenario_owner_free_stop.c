/*
 * stress/explore/scenario_owner_free_stop.c — the PE's parked owner frees
 * its last event while another thread stops the context (owner_free_stop;
 * owner_free_bulk_stop frees it with doca_event_free_bulk, whose route
 * entered by runner_unpark takes no section either).
 *
 * The owner's doca_event_free takes no read-side section when it enters
 * its parked guard by runner_unpark (engine/event.c), yet it reads the
 * run after putting the credit back (task_pool_put's tail,
 * run_credits_returned). A stop that stores STOPPING after that return
 * counts no credit out, and its grace period does not wait for the free:
 * it retires the run itself, and the run is freed a grace period later.
 * The stop waits out the owner's brief sections before it counts
 * (engine/ctx_run.c, runner_quiesce_begin); with that undone
 * (DOCA_EXPLORE_REVERT=stop_ignores_owner_frees) a free preempted after
 * its credit's return, across the stop and the deferred free, reads the
 * freed run, which the explorer build fills with a pattern first: a
 * pointer made of it faults (verdict "crash"). With the fix the stop ends
 * DOCA_SUCCESS or DOCA_ERROR_IN_PROGRESS, the context reaches IDLE, and
 * the task had its one event.
 */
#include "scenario.h"

static struct world w;

static void free_one(struct doca_event *ev)
{
	doca_event_free(ev);
}

static void free_bulk(struct doca_event *ev)
{
	doca_event_free_bulk(&ev, 1);
}

static void owner_free_stop_with(void (*free_fn)(struct doca_event *))
{
	pthread_t s;

	world_open(&w, "sw0", 2, NULL);
	EXPECT_OK(world_submit(&w, 0));
	/* progress parks the guard for this thread: the free below is the owner's */
	struct doca_event *ev = world_take_event(&w);

	world_stop_start(&w, &s);
	free_fn(ev);
	world_stop_join(&w, s);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

void scenario_owner_free_stop(void)
{
	owner_free_stop_with(free_one);
}

void scenario_owner_free_bulk_stop(void)
{
	owner_free_stop_with(free_bulk);
}
