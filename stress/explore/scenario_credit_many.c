/*
 * stress/explore/scenario_credit_many.c — two blocked submitters, a credit
 * notification armed and cleared, and two credits returned by a free off
 * the PE's thread (credit_many).
 *
 * max_tasks 2, both credits taken. Two threads block in
 * doca_task_submit_wait (one without limit, one with a limit that may
 * pass: it then passes its wake on), a third arms the credit fd, and a
 * fourth frees both events at once from another thread (through the
 * mailbox: the PE's turn returns the credits, one return of two). The
 * main thread progresses the PE until both submitters have left. Every
 * submitter without a limit must get a credit; the fd must have fired.
 */
#include "scenario.h"

#include <sched.h>

static struct world w;
static doca_error_t res[2];
static struct world_armer arm = { .w = &w };
static struct doca_event *evs[2];

static void *sleeper0(void *unused)
{
	(void)unused;
	explore_name("sleeper0");
	res[0] = world_submit_wait(&w, 2, -1);
	return NULL;
}

static void *sleeper1(void *unused)
{
	(void)unused;
	explore_name("sleeper1");
	res[1] = world_submit_wait(&w, 3, 1);
	return NULL;
}

static void *freer(void *unused)
{
	(void)unused;
	explore_name("freer");
	doca_event_free_bulk(evs, 2);
	return NULL;
}

void scenario_credit_many(void)
{
	pthread_t t[4];
	unsigned got = 0;

	world_open(&w, "sw0", 2, NULL);
	EXPECT_OK(world_submit(&w, 0));
	EXPECT_OK(world_submit(&w, 1));
	while (got < 2) {
		if (doca_pe_progress(w.pe) == 0)
			sched_yield();
		struct doca_event *ev;

		while (got < 2 && (ev = doca_pe_get_event(w.pe)) != NULL) {
			world_event(&w, ev);
			evs[got++] = ev;
		}
	}
	if (pthread_create(&t[0], NULL, sleeper0, NULL) != 0 ||
	    pthread_create(&t[1], NULL, sleeper1, NULL) != 0 ||
	    pthread_create(&t[2], NULL, world_armer, &arm) != 0 ||
	    pthread_create(&t[3], NULL, freer, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	const struct explore_thread *s0 = explore_thread_of(t[0]), *s1 = explore_thread_of(t[1]);

	/* the application's loop: progress (taking the events the sleepers'
	 * tasks make) until both submitters have left */
	while (s0->state != THREAD_FINISHED || s1->state != THREAD_FINISHED) {
		if (world_progress(&w) == 0)
			sched_yield();
	}
	for (unsigned i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	EXPECT_OK(res[0]);
	EXPECT_IN(res[1], 2, DOCA_SUCCESS, DOCA_ERROR_TIME_OUT);
	EXPECT_OK(arm.result);
	int fd;
	EXPECT_OK(doca_ctx_get_credit_notification_handle(w.ctx, &fd));
	unsigned want = 3u + (res[1] == DOCA_SUCCESS); /* the two freed, sleeper0, sleeper1 if it got in */

	while (atomic_load(&w.events_total) < want)
		if (world_progress(&w) == 0)
			sched_yield();
	EXPECT_OK(doca_ctx_clear_credit_notification(w.ctx));
	world_end_with_exact_credits(&w, 2);
}
