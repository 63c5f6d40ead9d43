/*
 * stress/explore/scenario_pool_share.c — the task pool turning shared
 * under an owner that updates it with plain stores (pool_share).
 *
 * The owner thread runs the PE (its progress parks the runner guard) and
 * submits and frees its tasks, so every take and return of credits is a
 * plain update of the pool's word (engine/task_pool.c). A foreign thread
 * submits meanwhile: its first take finds the guard parked and turns the
 * pool shared, which must wait for any plain update under way. An update
 * lost either way hands one credit to two tasks (a slot's second event,
 * "returned twice") or loses one (the stop never ends). At the end, with
 * every event freed, exactly max_tasks submits are accepted and the next
 * is refused with DOCA_ERROR_AGAIN: the count is exact.
 */
#include "scenario.h"

#include <sched.h>

#define MAX_TASKS 2u
#define OWNER_TASKS 3u   /* tags 0..2 */
#define FOREIGN_TASKS 2u /* tags 3..4 */

static struct world w;

/* Submit tag until a credit is free, progressing (owner) or yielding. */
static void submit_retrying(unsigned tag, bool progress)
{
	doca_error_t err;

	while ((err = world_submit(&w, tag)) == DOCA_ERROR_AGAIN)
		if (!progress || world_progress(&w) == 0)
			sched_yield();
	if (err != DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT, "result: submit of task %u: %s", tag, doca_error_get_name(err));
}

static void *owner(void *unused)
{
	explore_name("owner");
	(void)world_progress(&w); /* this thread runs the PE: its guard is parked */
	for (unsigned tag = 0; tag < OWNER_TASKS; tag++)
		submit_retrying(tag, true);
	while (atomic_load(&w.events_total) < OWNER_TASKS + FOREIGN_TASKS)
		if (world_progress(&w) == 0)
			sched_yield();
	return NULL;
}

static void *foreign(void *unused)
{
	explore_name("foreign");
	for (unsigned tag = OWNER_TASKS; tag < OWNER_TASKS + FOREIGN_TASKS; tag++)
		submit_retrying(tag, false);
	return NULL;
}

void scenario_pool_share(void)
{
	pthread_t t[2];

	world_open(&w, "sw0", MAX_TASKS, NULL);
	if (pthread_create(&t[0], NULL, owner, NULL) != 0 || pthread_create(&t[1], NULL, foreign, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	world_end_with_exact_credits(&w, MAX_TASKS);
}
