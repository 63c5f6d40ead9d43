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
 * The stop waits out the owner's brief sections after its count and
 * counts again (engine/ctx_run.c, runner_quiesce_fenced); with that undone
 * (DOCA_EXPLORE_REVERT=stop_ignores_owner_frees) a free preempted after
 * its credit's return, across the stop and the deferred free, reads the
 * freed run, which the explorer build fills with a pattern first: a
 * pointer made of it faults (verdict "crash"). With the fix the stop ends
 * DOCA_SUCCESS or DOCA_ERROR_IN_PROGRESS, the context reaches IDLE, and
 * the task had its one event.
 *
 * Two more races of the same free (a review's scenarios, 2026-12-05):
 *  - owner_free_close (and _bulk_): the other thread stops the context,
 *    progresses the PE until IDLE, revoking the owner's parked guard (a
 *    turn there may retire the run instead of the stop: it holds the
 *    guard, whose revoker waits for the owner's brief hold), and destroys
 *    every object, the PE last;
 *  - owner_free_wait (and _bulk_): the event holds the context's one
 *    credit and the other thread's doca_task_submit_wait is the context's
 *    first wait for one: the free, outside a section, either sees `used`
 *    and wakes it, or the waiter finds the credit (engine/ctx_credits.c,
 *    top); a lost wake-up is a deadlock.
 */
#include "scenario.h"

static struct world w;
static doca_error_t wait_result;

static void free_one(struct doca_event *ev)
{
	doca_event_free(ev);
}

static void free_bulk(struct doca_event *ev)
{
	doca_event_free_bulk(&ev, 1);
}

/* A context of @p max_tasks credits with one task done; the other thread
 * starts (@p start), this one frees the event as the PE's parked owner,
 * and @p end joins the other thread and finishes the context. */
static void owner_free_race(void (*free_fn)(struct doca_event *), uint32_t max_tasks, void (*start)(pthread_t *),
			    void (*end)(pthread_t))
{
	pthread_t t;

	world_open(&w, "sw0", max_tasks, NULL);
	EXPECT_OK(world_submit(&w, 0));
	/* progress parks the guard for this thread: the free below is the owner's */
	struct doca_event *ev = world_take_event(&w);

	start(&t);
	free_fn(ev);
	end(t);
	world_finish(&w);
}

static void spawn(pthread_t *t, void *(*fn)(void *))
{
	if (pthread_create(t, NULL, fn, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
}

static void stop_start(pthread_t *t)
{
	world_stop_start(&w, t);
}

static void stop_end(pthread_t t)
{
	world_stop_join(&w, t);
	world_progress_until_idle(&w);
	world_close(&w);
}

static void *closer(void *unused)
{
	(void)unused;
	explore_name("closer");
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	return NULL;
}

static void close_start(pthread_t *t)
{
	spawn(t, closer);
}

static void close_end(pthread_t t)
{
	pthread_join(t, NULL);
}

static void *waiter(void *unused)
{
	(void)unused;
	explore_name("waiter");
	wait_result = world_submit_wait(&w, 1, -1);
	return NULL;
}

static void wait_start(pthread_t *t)
{
	spawn(t, waiter);
}

static void wait_end(pthread_t t)
{
	pthread_join(t, NULL);
	EXPECT_OK(wait_result);
	while (atomic_load(&w.events_total) < 2)
		if (world_progress(&w) == 0)
			sched_yield();
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
}

void scenario_owner_free_stop(void)
{
	owner_free_race(free_one, 2, stop_start, stop_end);
}

void scenario_owner_free_bulk_stop(void)
{
	owner_free_race(free_bulk, 2, stop_start, stop_end);
}

void scenario_owner_free_close(void)
{
	owner_free_race(free_one, 2, close_start, close_end);
}

void scenario_owner_free_bulk_close(void)
{
	owner_free_race(free_bulk, 2, close_start, close_end);
}

void scenario_owner_free_wait(void)
{
	owner_free_race(free_one, 1, wait_start, wait_end);
}

void scenario_owner_free_bulk_wait(void)
{
	owner_free_race(free_bulk, 1, wait_start, wait_end);
}
