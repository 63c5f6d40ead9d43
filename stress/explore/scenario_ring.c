/*
 * stress/explore/scenario_ring.c — a foreign submitter's rings (engine/ring.c,
 * ring21 step 1), two scenarios of one shape: one foreign thread submits
 * tasks 0-7 in order, each retried on AGAIN until accepted (or refused
 * with BAD_STATE once a stop began), while the application's polling
 * loop takes every event, checks it and frees it at once. Every accepted
 * task has exactly one event with its own copy (or SHUTDOWN), in the
 * submitter's order, and the ctx reaches IDLE.
 *
 * - ring_wrap: max_tasks 2, so an SP ring of capacity 2 that the eight
 *   tasks take round four times, while a third thread stops the ctx
 *   (the flush drains the ring). Its reverts: ring_ready_before_fields
 *   (the head stored READY before the fields: the PE reads the last lap's
 *   entry: another task's user data, or its slot twice),
 *   ring_flush_skips_rings (the stop never drains the rings: deadlock).
 * - ring_sp_mp_sp: max_tasks 4 and the SP capacity forced to 1
 *   (ring_sp_cap_max, the test hook), so the submitter's SP ring is full
 *   whenever the PE lags: SP -> MP -> SP. Its reverts: ring_mp_before_sp
 *   (the PE takes the MP ring first: a later MP task before an earlier
 *   SP one), ring_no_mp_stickiness (back to SP while MP still holds its
 *   tasks: D7), ring_look_before_flags (the rings looked at before the
 *   flags are taken: an announce lost, deadlock), ring_mp_no_second_look
 *   (MP items taken with no look at the SP rings after their acquire: an
 *   SP entry written between the feed's first look and that acquire
 *   follows the later MP task; depth 5, a pinned seed).
 * - ring_batch: max_tasks 4 (a roomy SP ring of 4) and the feed's batch
 *   lowered to 2 (explore_feed_batch), so the ring holds more than one
 *   feed takes. Its revert: ring_limit_drops_flags (the feed that stops
 *   at its batch drops the flags: the entries left wait for an announce
 *   that never comes: livelock).
 */
#include "scenario.h"

#include "engine/ring.h"

static struct world w;
static atomic_uint submitter_done;

static void *submitter(void *arg)
{
	doca_error_t err = DOCA_SUCCESS;

	(void)arg;
	explore_name("submitter");
	for (unsigned i = 0; i < WORLD_TASKS && err != DOCA_ERROR_BAD_STATE; i++) {
		while ((err = world_submit(&w, i)) == DOCA_ERROR_AGAIN)
			sched_yield();
		EXPECT_IN(err, 2, DOCA_SUCCESS, DOCA_ERROR_BAD_STATE);
	}
	atomic_store(&submitter_done, 1);
	return NULL;
}

/* The application's loop until the submitter is done and, when @p stopped,
 * the ctx IDLE, else every accepted task has its event: each event checked
 * (world_event) and in the submitter's order, then freed. */
static void poll_in_order(bool stopped)
{
	int last = -1;

	for (;;) {
		struct doca_event *ev;
		uint32_t n = doca_pe_progress(w.pe);

		while ((ev = doca_pe_get_event(w.pe)) != NULL) {
			int tag = (int)doca_event_get_user_data(ev).u64;

			world_event(&w, ev);
			if (tag <= last)
				explore_end(VERDICT_INVARIANT, "order: task %d completed after task %d", tag, last);
			last = tag;
			doca_event_free(ev);
		}
		if (atomic_load(&submitter_done) &&
		    (stopped ? world_state(&w) == DOCA_CTX_STATE_IDLE
			     : atomic_load(&w.events_total) == atomic_load(&w.accepted_total)))
			return;
		if (n == 0)
			sched_yield();
	}
}

/* One foreign submitter against the polling loop, a stopper racing when
 * @p stop; the world opened with @p max_tasks on the inline sw0. */
static void ring_run(uint32_t max_tasks, bool stop)
{
	pthread_t sub, stopper;

	atomic_store(&submitter_done, 0);
	world_open(&w, "sw0", max_tasks, NULL);
	(void)doca_pe_progress(w.pe); /* this thread is the PE's: the submitter is foreign */
	if (pthread_create(&sub, NULL, submitter, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	if (stop)
		world_stop_start(&w, &stopper);
	poll_in_order(stop);
	pthread_join(sub, NULL);
	if (stop) {
		world_stop_join(&w, stopper);
	} else {
		EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
		world_progress_until_idle(&w);
	}
	world_close(&w);
	world_finish(&w);
}

void scenario_ring_wrap(void)
{
	ring_run(2, true);
}

void scenario_ring_sp_mp_sp(void)
{
	ring_sp_cap_max = 1; /* (a schedule is a process of its own) */
	ring_run(4, false);
}

void scenario_ring_batch(void)
{
	explore_feed_batch = 2; /* (a schedule is a process of its own) */
	ring_run(4, false);
}
