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
 * - ring_batch_armed: ring_batch's context against the event loop below
 *   (no ring is watched while armed, so only the flags bring what a feed
 *   left: the polling ring_batch's watch now looks at the ring anyway).
 *   Its revert: ring_limit_drops_flags (deadlock).
 * - ring_mp_two: max_tasks 4, two foreign submitters (tasks 0-3 and 4-7)
 *   that both give up their slot's exclusivity (the test hook: a thread
 *   with no exclusive slot uses the MP ring), so their claims interleave
 *   and one may be preempted between its claim and its READY while the
 *   other's later position is READY: the gap. Each one's tasks complete
 *   in its order, and every one completes. No revert: the feed's flag
 *   keep at a gap is not what brings the positions behind it here (the
 *   gap's own producer announces after its READY, and that feed takes
 *   them); the keep serves the owner clause of I7 (engine/ring.c), which
 *   needs the PE's own thread as a third submitter.
 * - ring_watch_idle (ring21 step 4, the watch, rule L; WATCH_IDLE is 1
 *   in this build): max_tasks 8 (a roomy SP ring), the submitter yields
 *   after every task, so the polling loop's visits drain its ring (the
 *   bit set: it stops announcing; the context on the watch list), a
 *   turn's look finds it empty once (the bit cleared: the unwatch) and
 *   meets its next task on either side of that clear. Its reverts:
 *   ring_unwatch_no_relook (no relook after the heavy fence: a task
 *   written after the unwatching look by a producer that saw the bit
 *   still set is stranded, livelock), ring_relook_no_flags (the relook
 *   signals, but the visit, its bit clear and no shard flagged, does not
 *   feed: livelock), ring_watch_unlisted (the context, out of the ready
 *   set after its empty visit, is looked at by no turn: livelock).
 * - ring_watch_released: the same with WATCH_IDLE 3, so the context has
 *   left the ready set (its empty visit) before the look that unwatches.
 *   Its revert: ring_relook_no_signal (the relook flags the shard and
 *   signals nobody: the context is never visited for the task, livelock;
 *   found at depth 5 only; with WATCH_IDLE 1 the unwatch comes while the
 *   visit that produced the last events still keeps the context queued,
 *   so the other scenarios do not find it).
 * - ring_unwatch_release: the same submitter against the event loop of
 *   doca_pe.h on the inline sw0, whose progress calls go on after each
 *   arming until one finds nothing (turns while armed: pe_turn_rearm),
 *   so the context is unwatched, released and the PE armed between the
 *   submitter's tasks. Its revert: ring_unwatch_no_relook (deadlock: the
 *   PE sleeps on a stranded task; the arming's relook is the same call).
 * - ring_watch_arm: the same with WATCH_IDLE 3 (explore_watch_idle), so a
 *   bit is still set when the loop arms. Its revert: ring_arm_keeps_watch
 *   (the arming does not end the watch: a producer that sees its bit
 *   while the PE sleeps skips the wake-up it needs, deadlock).
 * - ring_watch_engine: ring_watch_arm on sw0:engines=1, whose copies run
 *   on an engine thread, so a submitter that finds the PE armed and its
 *   guard busy (a turn while armed) with a task of its context on the
 *   device, the context already queued, leaves the wake-up to that
 *   completion (pe_wake_after_push_armed), and the armed turn's visit
 *   feeds its entry; the completions the armed turns take themselves
 *   wake nobody (pe_wake_cb's unread look). The loop progresses 8 times
 *   after each arming and WATCH_IDLE is 64, so a bit set then outlives
 *   the turns before the sleep. The place of ring_watch_while_armed
 *   (that visit sets the bit while the PE is ARMED: the PE sleeps with
 *   it set, and the submitter's next task, seeing it, neither announces
 *   nor wakes: deadlock; review F2 of watch57): such a visit is reached
 *   (rarely: about 1 schedule in 3 000), the deadlock has not been found
 *   (bench/README.md, "### misc59"), so no must-fail case pins it.
 */
#include "scenario.h"

#include <sys/epoll.h>

#include "engine/ring.h"

static struct world w;
static atomic_uint submitter_done;
static bool submitters_on_mp; /* ring_mp_two: each submitter leaves its slot's exclusivity */
static unsigned submitter_gaps; /* ring_watch_*: the submitter yields this often after each task */
static unsigned armed_spins; /* ring_watch_engine: progress calls after each arming, whatever they find */

/* Submit tasks first .. first + n - 1 in order, each retried on AGAIN
 * (@p arg: first * WORLD_TASKS + n; n 0: all WORLD_TASKS). */
static void *submitter(void *arg)
{
	doca_error_t err = DOCA_SUCCESS;
	unsigned first = (unsigned)(uintptr_t)arg / WORLD_TASKS, n = (unsigned)(uintptr_t)arg % WORLD_TASKS;

	explore_name("submitter");
	if (submitters_on_mp) {
		(void)thread_slot_get();
		thread_slot_exclusive = false; /* the test hook: the MP ring for this thread */
	}
	for (unsigned i = first; i < first + (n != 0 ? n : WORLD_TASKS) && err != DOCA_ERROR_BAD_STATE; i++) {
		while ((err = world_submit(&w, i)) == DOCA_ERROR_AGAIN)
			sched_yield();
		EXPECT_IN(err, 2, DOCA_SUCCESS, DOCA_ERROR_BAD_STATE);
		for (unsigned y = 0; y < submitter_gaps; y++)
			sched_yield();
	}
	atomic_fetch_add(&submitter_done, 1);
	return NULL;
}

/* The application's loop until the @p nsub submitters are done and, when
 * @p stopped, the ctx IDLE, else every accepted task has its event: each
 * event checked (world_event) and in its submitter's order (submitter
 * tag * nsub / WORLD_TASKS), then freed. */
static void poll_in_order(bool stopped, unsigned nsub)
{
	int last[2] = { -1, -1 };

	for (;;) {
		struct doca_event *ev;
		uint32_t n = doca_pe_progress(w.pe);

		while ((ev = doca_pe_get_event(w.pe)) != NULL) {
			int tag = (int)doca_event_get_user_data(ev).u64;
			int *l = &last[(unsigned)tag * nsub / WORLD_TASKS];

			world_event(&w, ev);
			if (tag <= *l)
				explore_end(VERDICT_INVARIANT, "order: task %d completed after task %d", tag, *l);
			*l = tag;
			doca_event_free(ev);
		}
		if (atomic_load(&submitter_done) == nsub &&
		    (stopped ? world_state(&w) == DOCA_CTX_STATE_IDLE
			     : atomic_load(&w.events_total) == atomic_load(&w.accepted_total)))
			return;
		if (n == 0)
			sched_yield();
	}
}

/* @p nsub (1 or 2) foreign submitters, WORLD_TASKS / nsub tasks each,
 * against the polling loop, a stopper racing when @p stop; the world
 * opened with @p max_tasks on the inline sw0. */
static void ring_run(uint32_t max_tasks, bool stop, unsigned nsub)
{
	pthread_t sub[2], stopper;
	unsigned each = WORLD_TASKS / nsub;

	atomic_store(&submitter_done, 0);
	world_open(&w, "sw0", max_tasks, NULL);
	(void)doca_pe_progress(w.pe); /* this thread is the PE's: the submitters are foreign */
	for (unsigned i = 0; i < nsub; i++)
		if (pthread_create(&sub[i], NULL, submitter,
				   (void *)(uintptr_t)(i * each * WORLD_TASKS + each % WORLD_TASKS)) != 0)
			explore_end(VERDICT_HARNESS, "pthread_create");
	if (stop)
		world_stop_start(&w, &stopper);
	poll_in_order(stop, nsub);
	for (unsigned i = 0; i < nsub; i++)
		pthread_join(sub[i], NULL);
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
	ring_run(2, true, 1);
}

void scenario_ring_sp_mp_sp(void)
{
	ring_sp_cap_max = 1; /* (a schedule is a process of its own) */
	ring_run(4, false, 1);
}

void scenario_ring_batch(void)
{
	explore_feed_batch = 2; /* (a schedule is a process of its own) */
	ring_run(4, false, 1);
}

void scenario_ring_mp_two(void)
{
	submitters_on_mp = true; /* (a schedule is a process of its own) */
	ring_run(4, false, 2);
}

void scenario_ring_watch_idle(void)
{
	submitter_gaps = 1; /* (a schedule is a process of its own) */
	ring_run(8, false, 1);
}

void scenario_ring_watch_released(void)
{
	submitter_gaps = 4;     /* (a schedule is a process of its own) */
	explore_watch_idle = 3; /* the context leaves the set before the unwatch */
	ring_run(8, false, 1);
}

/* Take, check and free every ready event; how many. */
static uint32_t reap_all(void)
{
	uint32_t n = 0;

	for (struct doca_event *ev; (ev = doca_pe_get_event(w.pe)) != NULL; n++) {
		world_event(&w, ev);
		doca_event_free(ev);
	}
	return n;
}

/* The application's event loop of doca_pe.h, whose progress calls go on
 * after the arming until one finds nothing (turns while armed; at least
 * armed_spins of them, as a loop that polls a while before it sleeps)
 * before it sleeps, until the submitter is done and every accepted task
 * has its event. */
static void event_loop_rearming(int epfd)
{
	for (;;) {
		while (doca_pe_progress(w.pe) + reap_all() != 0)
			;
		if (atomic_load(&submitter_done) == 1 &&
		    atomic_load(&w.events_total) == atomic_load(&w.accepted_total))
			return;
		EXPECT_OK(doca_pe_request_notification(w.pe));
		for (unsigned i = 0; i < armed_spins; i++)
			(void)(doca_pe_progress(w.pe) + reap_all());
		if (doca_pe_progress(w.pe) + reap_all() != 0) {
			while (doca_pe_progress(w.pe) + reap_all() != 0)
				; /* armed: a turn's visit must not watch */
		}
		struct epoll_event e;
		bool due = atomic_load(&w.accepted_total) > atomic_load(&w.events_total);

		(void)epoll_wait(epfd, &e, 1, due ? -1 : 1);
		EXPECT_OK(doca_pe_clear_notification(w.pe));
	}
}

/* The submitter against event_loop_rearming on device @p dev (@p
 * max_tasks credits), then the stop. */
static void ring_event_run(const char *dev, uint32_t max_tasks)
{
	pthread_t sub;
	int epfd;

	atomic_store(&submitter_done, 0);
	world_open(&w, dev, max_tasks, NULL);
	EXPECT_OK(doca_pe_get_notification_handle(w.pe, &epfd));
	(void)doca_pe_progress(w.pe); /* this thread is the PE's: the submitter is foreign */
	/* the first arming's grace period (engine/pe_notify.c), before the
	 * submitter, as in event_wake */
	EXPECT_OK(doca_pe_request_notification(w.pe));
	EXPECT_OK(doca_pe_clear_notification(w.pe));
	if (pthread_create(&sub, NULL, submitter, (void *)(uintptr_t)0) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	event_loop_rearming(epfd);
	pthread_join(sub, NULL);
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

void scenario_ring_unwatch_release(void)
{
	submitter_gaps = 1; /* (a schedule is a process of its own) */
	ring_event_run("sw0", 8);
}

void scenario_ring_watch_arm(void)
{
	submitter_gaps = 1;  /* (a schedule is a process of its own) */
	explore_watch_idle = 3; /* a bit still set when the loop arms */
	ring_event_run("sw0", 8);
}

void scenario_ring_watch_engine(void)
{
	submitter_gaps = 1;      /* (a schedule is a process of its own) */
	armed_spins = 8;
	explore_watch_idle = 64; /* a bit set by an armed turn outlives the turns before the sleep */
	ring_event_run("sw0:engines=1", 8);
}

void scenario_ring_batch_armed(void)
{
	explore_feed_batch = 2; /* (a schedule is a process of its own) */
	ring_event_run("sw0", 4);
}
