/*
 * stress/explore/scenario_event_free.c — two threads free the same event at
 * once (event_double_free), neither of them the PE's thread. The README
 * promises the second caller is refused and nothing is corrupted:
 * afterwards the ctx's credits must be exact — with every credit back, a submitter gets exactly max_tasks tasks
 * accepted and then DOCA_ERROR_AGAIN — and every accepted task gets its one
 * event. With the claim's CAS undone (event_claim_load_store) both frees
 * can win: if both push the slot into the mailbox it is linked to itself
 * and the next drain never ends (a livelock), or, pushed into two shards,
 * it is drained twice and its second drain posts a freed slot (abort:
 * "device SQ full although credits bound it"); if one returns it straight
 * to the pool and the other through the mailbox, the credit comes back
 * twice (invariant: credits). The PE's thread keeps its runner guard
 * parked between calls (actors/runner.h) and a freer never revokes it, so
 * here both freers take the mailbox route.
 */
#include "scenario.h"

#include <sched.h>

#define MAX_TASKS 4u

static struct world w;
static unsigned credits_taken;
static doca_error_t credits_end;

static void *freer(void *ev)
{
	explore_name("freer");
	doca_event_free(ev);
	return NULL;
}

/* Not the PE's thread, so its tasks wait in the mailbox: the count is the
 * credits alone, whatever the device would do with a fifth descriptor. */
static void *submit_until_refused(void *unused)
{
	(void)unused;
	explore_name("submitter");
	credits_end = DOCA_SUCCESS;
	for (unsigned tag = 1; tag < WORLD_TASKS && credits_end == DOCA_SUCCESS; tag++) {
		credits_end = world_submit(&w, tag);
		credits_taken += credits_end == DOCA_SUCCESS;
	}
	return NULL;
}

void scenario_event_double_free(void)
{
	pthread_t a, b, s;
	struct doca_event *ev;

	world_open(&w, "sw0", MAX_TASKS, NULL);
	EXPECT_OK(world_submit(&w, 0));
	while ((ev = doca_pe_get_event(w.pe)) == NULL) {
		(void)doca_pe_progress(w.pe);
		sched_yield();
	}
	world_event(&w, ev);
	if (pthread_create(&a, NULL, freer, ev) != 0 || pthread_create(&b, NULL, freer, ev) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	/* A free off the PE's thread comes back through the mailbox: one turn
	 * puts the credit back in the pool. */
	(void)doca_pe_progress(w.pe);
	if (pthread_create(&s, NULL, submit_until_refused, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	pthread_join(s, NULL);
	if (credits_taken != MAX_TASKS || credits_end != DOCA_ERROR_AGAIN)
		explore_end(VERDICT_INVARIANT,
			    "credits: %u tasks accepted, then %s, with max_tasks %u and every event freed",
			    credits_taken, doca_error_get_name(credits_end), MAX_TASKS);
	while (atomic_load(&w.events_total) < 1 + MAX_TASKS)
		if (world_progress(&w) == 0)
			sched_yield();
	EXPECT_OK(doca_ctx_stop(w.ctx));
	world_close(&w);
	world_finish(&w);
}
