/*
 * stress/explore/scenario_free_destroy.c — a free on another thread than
 * the PE's (the mailbox path: the freer drops the pins itself,
 * engine/buf.c), a destroy of the event's buffers on a third thread, and
 * the PE's thread submitting a task naming the same buffers under its
 * guard (guarded pins) meanwhile; then new buffers that may reuse the
 * cells while the slot still waits in the mailbox. Invariants: the destroy
 * succeeds only once no unfreed event names the buffer (a free of one that
 * starts after it is a defect); the freed slot's turn never unpins again
 * (the new buffers' destroys succeed); every accepted task has its one
 * event.
 */
#include "scenario.h"

#include <sched.h>

static struct world w;
static struct doca_event *ev0;
static atomic_bool destroyed, destroy_finished;

static void *freer(void *unused)
{
	(void)unused;
	explore_name("freer");
	doca_event_free(ev0);
	return NULL;
}

static void *destroyer(void *unused)
{
	doca_error_t rc;

	(void)unused;
	explore_name("destroyer");
	while ((rc = doca_buf_destroy(w.src[0])) == DOCA_ERROR_IN_USE)
		sched_yield();
	if (rc != DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT, "result: doca_buf_destroy(src) returned %s", doca_error_get_name(rc));
	atomic_store(&destroyed, true);
	while ((rc = doca_buf_destroy(w.dst[0])) == DOCA_ERROR_IN_USE)
		sched_yield();
	if (rc != DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT, "result: doca_buf_destroy(dst) returned %s", doca_error_get_name(rc));
	atomic_store(&destroy_finished, true);
	return NULL;
}

void scenario_free_destroy(void)
{
	pthread_t f, d;
	struct doca_event *ev;

	world_open(&w, "sw0", 4, NULL);
	(void)doca_pe_progress(w.pe); /* this thread runs the PE: its guard parked */
	EXPECT_OK(world_submit(&w, 0)); /* guarded pins */
	while ((ev0 = doca_pe_get_event(w.pe)) == NULL) {
		(void)doca_pe_progress(w.pe);
		sched_yield();
	}
	world_event(&w, ev0);
	if (pthread_create(&f, NULL, freer, NULL) != 0 || pthread_create(&d, NULL, destroyer, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	/* a second task naming the same buffers, under the guard, racing the destroy */
	doca_error_t rc = world_submit(&w, 0);

	if (rc != DOCA_SUCCESS && rc != DOCA_ERROR_INVALID_VALUE)
		explore_end(VERDICT_INVARIANT, "result: second submit returned %s", doca_error_get_name(rc));
	if (rc == DOCA_SUCCESS) {
		while ((ev = doca_pe_get_event(w.pe)) == NULL) {
			(void)doca_pe_progress(w.pe);
			sched_yield();
		}
		if (atomic_load(&destroyed))
			explore_end(VERDICT_INVARIANT,
				    "buffer destroyed while an unfreed event of a task naming it was held");
		world_event(&w, ev);
		doca_event_free(ev);
	}
	pthread_join(f, NULL);
	pthread_join(d, NULL);
	/* no progress since the free: its slot may still wait in the mailbox;
	 * new buffers in the freed cells */
	explore_rcu_barrier();
	EXPECT_OK(doca_buf_create(w.mem, 0, WORLD_LEN, &w.src[0]));
	EXPECT_OK(doca_buf_create(w.mem, WORLD_TASKS * WORLD_LEN, WORLD_LEN, &w.dst[0]));
	EXPECT_OK(world_submit(&w, 0));
	while (atomic_load(&w.events_total) < atomic_load(&w.accepted_total))
		if (world_progress(&w) == 0)
			sched_yield();
	EXPECT_OK(doca_ctx_stop(w.ctx));
	world_progress_until_idle(&w);
	world_close(&w); /* the new buffers' destroys: SUCCESS (no second unpin) */
	world_finish(&w);
}
