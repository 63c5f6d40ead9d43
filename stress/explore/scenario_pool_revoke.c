/*
 * stress/explore/scenario_pool_revoke.c — the pool's owner mode
 * under guard revocation: two threads each progress the PE (the guard is
 * parked, revoked, parked again) and submit and free their own tasks, while
 * a third submits without progressing (its first take turns the pool
 * shared) and a fourth frees events the first hands it (foreign frees
 * through the mailbox, or direct when it can take the free guard). At the
 * end the credits must be exact and the stop must finish.
 */
#include "scenario.h"

#include <sched.h>

#define MAX_TASKS 2u
#define TOTAL 7u

static struct world w;
static _Atomic(struct doca_event *) handoff;

static void submit_retrying(unsigned tag, bool progress)
{
	doca_error_t err;

	while ((err = world_submit(&w, tag)) == DOCA_ERROR_AGAIN)
		if (!progress || world_progress(&w) == 0)
			sched_yield();
	if (err != DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT, "result: submit of task %u: %s", tag, doca_error_get_name(err));
}

/* progress, but hand one event to the freer instead of freeing it */
static unsigned progress_handing(void)
{
	struct doca_event *ev;
	unsigned n = doca_pe_progress(w.pe);

	while ((ev = doca_pe_get_event(w.pe)) != NULL) {
		world_event(&w, ev);
		struct doca_event *none = NULL;

		if (!atomic_compare_exchange_strong(&handoff, &none, ev))
			doca_event_free(ev);
		n++;
	}
	return n;
}

static void *runner_a(void *unused)
{
	explore_name("runner a");
	(void)progress_handing();
	submit_retrying(0, true);
	submit_retrying(1, true);
	while (atomic_load(&w.events_total) < TOTAL)
		if (progress_handing() == 0)
			sched_yield();
	return NULL;
}

static void *runner_b(void *unused)
{
	explore_name("runner b");
	(void)world_progress(&w);
	submit_retrying(2, true);
	submit_retrying(3, true);
	while (atomic_load(&w.events_total) < TOTAL)
		if (world_progress(&w) == 0)
			sched_yield();
	return NULL;
}

static void *foreign(void *unused)
{
	explore_name("foreign");
	submit_retrying(4, false);
	submit_retrying(5, false);
	submit_retrying(6, false);
	return NULL;
}

static void *freer(void *unused)
{
	explore_name("freer");
	unsigned freed = 0;

	while (atomic_load(&w.events_total) < TOTAL || atomic_load(&handoff) != NULL) {
		struct doca_event *ev = atomic_exchange(&handoff, NULL);

		if (ev != NULL) {
			doca_event_free(ev);
			freed++;
		} else {
			sched_yield();
		}
	}
	return NULL;
}

void scenario_pool_revoke(void)
{
	pthread_t t[4];
	void *(*fns[4])(void *) = { runner_a, runner_b, foreign, freer };

	atomic_store(&handoff, NULL);
	world_open(&w, "sw0", MAX_TASKS, NULL);
	for (unsigned i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, fns[i], NULL) != 0)
			explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	/* let the PE take back credits that went through the mailbox */
	for (unsigned i = 0; i < 4; i++)
		(void)world_progress(&w);
	world_end_with_exact_credits(&w, MAX_TASKS);
}
