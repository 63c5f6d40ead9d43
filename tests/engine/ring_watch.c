/*
 * tests/engine/ring_watch.c — the watch (engine/ring.c, ring21 step 4):
 * a turn that drains a foreign submitter's SP ring watches it, and the
 * producer then neither announces nor runs the wake check; the context
 * still leaves the ready set after an empty visit, and each turn's look
 * at the watched ring signals it when its head is READY; WATCH_IDLE empty
 * looks, an arming or a stop end the watch; no bit is set while the PE is
 * armed. A started context on the inline sw0, this thread its
 * PE's, tasks from a joined thread (no race: each look below follows a
 * join or is this thread's own turn).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>

#include "actors/thread_slot.h"
#include "engine/engine.h"
#include "engine/ring.h"
#include "tests/api/common.h"

/* One task a foreign thread submits: a copy into ctx, user data user. */
struct task_to {
	struct doca_ctx *ctx;
	struct doca_buf *src, *dst;
	uint64_t user;
};

/* A thread of its own that submits tasks[0 .. n - 1] in order, each
 * accepted; every foreign submitter of this file is one. */
struct foreign {
	pthread_t thread;
	const struct task_to *tasks;
	uint32_t n;
	unsigned slot; /* the thread's: its SP ring's index */
};

static void *foreign_main(void *arg)
{
	struct foreign *t = arg;

	for (uint32_t i = 0; i < t->n; i++) {
		const struct task_to *k = &t->tasks[i];
		doca_error_t err = submit_copy(k->ctx, k->src, k->dst, k->user, 0);

		cr_assert_eq(err, DOCA_SUCCESS, "task %llu: %s", (unsigned long long)k->user, doca_error_get_name(err));
	}
	t->slot = thread_slot_get();
	cr_assert(thread_slot_exclusive, "the foreign thread holds its slot alone: its SP ring");
	return NULL;
}

static void foreign_start(struct foreign *t, const struct task_to *tasks, uint32_t n)
{
	*t = (struct foreign){ .tasks = tasks, .n = n };
	cr_assert_eq(pthread_create(&t->thread, NULL, foreign_main, t), 0);
}

/* Join @p t; returns its slot. */
static unsigned foreign_join(struct foreign *t)
{
	cr_assert_eq(pthread_join(t->thread, NULL), 0);
	cr_assert_lt(t->slot, RING_SP);
	return t->slot;
}

/* Submit @p n tasks from a new thread (joined); returns its slot. */
static unsigned submit_foreign_tasks(const struct task_to *tasks, uint32_t n)
{
	struct foreign t;

	foreign_start(&t, tasks, n);
	return foreign_join(&t);
}

/* Submit task @p user from a new thread (joined); returns its slot. */
static unsigned submit_foreign(struct api_fixture *f, uint64_t user)
{
	const struct task_to k = { f->ctx, f->src, f->dst, user };

	return submit_foreign_tasks(&k, 1);
}

static struct ctx_run *run_of(struct api_fixture *f)
{
	return handle_deref(f->ctx)->run; /* started on this thread: no race */
}

static uint32_t watch_of(const struct ctx_run *run)
{
	return atomic_load(&run->ring_watch);
}

/* Is the context in its PE's ready set (queued)? */
static bool queued(struct api_fixture *f)
{
	return atomic_load(&handle_deref(f->ctx)->ready.flags) != 0;
}

/* Is the context on its PE's watch list? */
static bool listed(struct api_fixture *f)
{
	return handle_deref(f->ctx)->watch_listed;
}

/* Start on the inline sw0 and make this thread the PE's; returns the run. */
static struct ctx_run *owned_fixture(struct api_fixture *f)
{
	fixture_init_started(f, "sw0", 64, 0);
	(void)doca_pe_progress(f->pe); /* this thread is the PE's */
	return run_of(f);
}

/* Disarm, reap task 1 (its turn took nothing from a ring: no bit set) and
 * tear down. */
static void disarm_reap_unwatched(struct api_fixture *f, struct ctx_run *run)
{
	cr_assert_eq(doca_pe_clear_notification(f->pe), DOCA_SUCCESS);
	expect_success_event(f->pe, 1, f->len);
	cr_assert_eq(watch_of(run), 0, "a turn that took nothing from a ring set a bit");
	fixture_fini(f);
}

/* Start, make this thread the PE's, then one foreign task, reaped: the
 * turn that drained it watches its ring. Returns its bit. */
static uint32_t watched_fixture(struct api_fixture *f)
{
	(void)owned_fixture(f);
	unsigned slot = submit_foreign(f, 1);

	cr_assert_eq(watch_of(run_of(f)), 0, "no turn took from the ring yet: not watched");
	expect_success_event(f->pe, 1, f->len);
	cr_assert_eq(watch_of(run_of(f)), 1u << slot, "the turn that drained the ring watches it");
	return 1u << slot;
}

Test(ring_watch, a_turn_that_drains_a_ring_watches_it_and_its_producer_stops_announcing)
{
	struct api_fixture f;
	uint32_t bit = watched_fixture(&f);
	struct ctx_run *run = run_of(&f);

	cr_assert_eq(atomic_load(&run->mbox.summary), 0, "the turn took the announce's flag");
	cr_assert(listed(&f), "a watched context is not on the watch list");
	/* the visit that produced the event kept it; an empty one releases
	 * it, watched or not (pe_ready.c's rule) */
	cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert(!queued(&f), "a watched context stayed in the ready set after an empty visit");
	(void)submit_foreign(&f, 2);
	cr_assert_eq(atomic_load(&run->mbox.summary), 0, "a watched ring's producer announced");
	cr_assert(!queued(&f), "a watched ring's producer signalled");
	cr_assert(ring_any(run), "the task waits in the ring");
	/* the next turn's look finds the READY head and signals the context */
	cr_assert_eq(doca_pe_progress(f.pe), 1, "the turn's look did not bring the watched ring's task");
	expect_success_event(f.pe, 2, f.len);
	cr_assert_eq(watch_of(run), bit);
	cr_assert(!ring_any(run));
	fixture_fini(&f);
}

Test(ring_watch, watch_idle_empty_visits_end_the_watch_and_the_producer_announces_again)
{
	struct api_fixture f;
	uint32_t bit = watched_fixture(&f);
	struct ctx_run *run = run_of(&f);

	/* each progress call is one turn, whose look finds the ring empty */
	for (uint32_t i = 1; i < WATCH_IDLE; i++) {
		cr_assert_eq(doca_pe_progress(f.pe), 0);
		cr_assert_eq(watch_of(run), bit, "unwatched after %u empty looks, not %u", i, WATCH_IDLE);
	}
	cr_assert(!queued(&f), "a watched context stayed in the ready set");
	cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert_eq(watch_of(run), 0, "still watched after %u empty looks", WATCH_IDLE);
	cr_assert(!queued(&f), "the relook signalled with the ring empty");
	/* the next turn drops it from the watch list */
	cr_assert(listed(&f));
	cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert(!listed(&f), "an unwatched context stayed on the watch list");
	cr_assert_eq(watch_of(run), 0);
	(void)submit_foreign(&f, 2);
	cr_assert_neq(atomic_load(&run->mbox.summary), 0, "an unwatched ring's producer did not announce");
	expect_success_event(f.pe, 2, f.len);
	cr_assert_eq(watch_of(run), bit, "the turn that drained it watches it again");
	fixture_fini(&f);
}

Test(ring_watch, a_nonempty_visit_restarts_the_idle_count)
{
	struct api_fixture f;
	uint32_t bit = watched_fixture(&f);
	struct ctx_run *run = run_of(&f);

	for (uint32_t i = 1; i < WATCH_IDLE; i++)
		cr_assert_eq(doca_pe_progress(f.pe), 0);
	(void)submit_foreign(&f, 2);
	expect_success_event(f.pe, 2, f.len);
	for (uint32_t i = 1; i < WATCH_IDLE; i++)
		cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert_eq(watch_of(run), bit, "the task's visit did not restart the count");
	cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert_eq(watch_of(run), 0);
	fixture_fini(&f);
}

Test(ring_watch, arming_ends_the_watch_and_drains_the_rings_it_watched)
{
	struct api_fixture f;
	(void)watched_fixture(&f);
	struct ctx_run *run = run_of(&f);
	int fd;

	cr_assert_eq(doca_pe_get_notification_handle(f.pe, &fd), DOCA_SUCCESS);
	(void)submit_foreign(&f, 2); /* no announce: the ring is watched */
	cr_assert(ring_any(run));
	cr_assert_eq(atomic_load(&run->mbox.summary), 0);
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	cr_assert_eq(watch_of(run), 0, "armed with a ring watched");
	cr_assert(!listed(&f), "the arming left the watch list");
	cr_assert(!ring_any(run), "the arming did not drain the watched ring");
	/* the inline device's task is pending work: the arming fired */
	cr_assert_neq(atomic_load(&handle_deref(f.pe)->armed), PE_ARMED, "armed with a task to run");
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_SUCCESS);
	expect_success_event(f.pe, 2, f.len);
	fixture_fini(&f);
}

Test(ring_watch, a_feed_outside_a_turn_sets_no_bit)
{
	struct api_fixture f;
	struct ctx_run *run = owned_fixture(&f);

	(void)submit_foreign(&f, 1); /* not watched: announced */
	cr_assert(ring_any(run));
	/* the arming's walk feeds the ring (WALK_FEED): not a turn's visit */
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	cr_assert(!ring_any(run), "the arming did not drain the ring");
	cr_assert_eq(watch_of(run), 0, "the arming's feed set a bit");
	disarm_reap_unwatched(&f, run);
}

/* The armed brief feed (pe_wake_after_push_armed's run_feed) is not
 * reached by one thread at a time: an armed PE with its guard free takes
 * a foreign producer's task directly (task_may_post_direct), no ring
 * written; the ring's armed way needs the guard busy at the producer's
 * take and free at its wake check. This checks the direct way. */
Test(ring_watch, an_armed_pes_foreign_task_is_posted_directly_and_sets_no_bit)
{
	struct api_fixture f;
	struct ctx_run *run = owned_fixture(&f);

	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&handle_deref(f.pe)->armed), PE_ARMED, "nothing pending: armed");
	(void)submit_foreign(&f, 1);
	cr_assert_eq(atomic_load(&run->sp_mask), 0u, "the armed PE's foreign task was written to a ring");
	cr_assert_not_null(run->backlog_head, "the armed PE's foreign task was not posted directly");
	cr_assert_neq(atomic_load(&handle_deref(f.pe)->armed), PE_ARMED, "the inline device's task did not fire the PE");
	cr_assert_eq(watch_of(run), 0);
	disarm_reap_unwatched(&f, run);
}

Test(ring_watch, a_stop_ends_the_watch_and_flushes_a_task_its_producer_did_not_announce)
{
	struct api_fixture f;
	(void)watched_fixture(&f);
	struct ctx_run *run = run_of(&f);

	(void)submit_foreign(&f, 2); /* no announce: the ring is watched */
	cr_assert_eq(atomic_load(&run->mbox.summary), 0);
	cr_assert_eq(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS, "a task is out");
	cr_assert_neq(atomic_load(&run->mbox.summary), 0, "the stop did not announce for the watched ring");
	struct doca_event *ev = wait_event(f.pe);

	cr_assert_eq(watch_of(run), 0, "a stopping visit left the ring watched");
	cr_assert_eq(doca_event_get_user_data(ev).u64, 2u);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE);
	cr_assert_eq(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN, "flushed: %s",
		     doca_error_get_name(doca_event_get_error(ev)));
	doca_event_free(ev);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
}

Test(ring_watch, the_pe_threads_own_watched_ring_drained_lets_it_post_directly)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, 0);
	struct ctx_run *run = run_of(&f);
	/* this thread's first task goes through its ring (nobody runs the PE
	 * yet); the turn that drains it watches it */
	cr_assert_eq(submit_copy(f.ctx, f.src, f.dst, 1, 0), DOCA_SUCCESS);
	cr_assert(ring_any(run));
	expect_success_event(f.pe, 1, f.len);
	cr_assert_neq(watch_of(run), 0);
	/* now the PE's: its ring watched but drained, so its next task is
	 * posted directly (the backlog of the inline device), not written */
	struct task_ring *r = atomic_load(&run->sp[thread_slot_get()]);
	uint64_t prod = atomic_load(&r->prod);

	cr_assert_eq(submit_copy(f.ctx, f.src, f.dst, 2, 0), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&r->prod), prod, "the owner wrote its ring");
	cr_assert_not_null(run->backlog_head, "the owner's task was not posted directly");
	expect_success_event(f.pe, 2, f.len);
	fixture_fini(&f);
}

/* More contexts on one PE than a turn has records (TURN_CTXS, 64 in
 * engine/pe_progress.c), all watched: none stays in the ready set after
 * its empty visit, every watched task comes by the turns' looks, and all
 * are unwatched after WATCH_IDLE empty looks, a turn looking at 64 of
 * them (round robin), and dropped from the watch list by their next
 * looks. */
#define MANY_CTXS 100u

/* Task base + i to context s[i], for each of the MANY_CTXS, into @p k. */
static void many_tasks(struct api_sibling *s, uint64_t base, struct task_to *k)
{
	for (uint32_t i = 0; i < MANY_CTXS; i++)
		k[i] = (struct task_to){ s[i].ctx, s[i].src, s[i].dst, base + i };
}

/* One task to each context from one new thread (joined), then every event
 * reaped: success, 64 bytes, each user data once. Returns the thread's slot. */
static unsigned many_round(struct api_fixture *f, struct api_sibling *s, uint64_t base)
{
	struct task_to k[MANY_CTXS];
	bool seen[MANY_CTXS] = { false };

	many_tasks(s, base, k);
	unsigned slot = submit_foreign_tasks(k, MANY_CTXS);

	for (uint32_t got = 0; got < MANY_CTXS; got++) {
		struct doca_event *ev = wait_event(f->pe);
		uint64_t i = doca_event_get_user_data(ev).u64 - base;

		cr_assert_lt(i, MANY_CTXS);
		cr_assert(!seen[i], "task %llu twice", (unsigned long long)(base + i));
		seen[i] = true;
		assert_success_event(ev, base + i, 64);
	}
	return slot;
}

static uint32_t many_watched(struct api_sibling *s, uint32_t bit)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < MANY_CTXS; i++) {
		uint32_t w = watch_of(handle_deref(s[i].ctx)->run);

		cr_assert(w == 0 || w == bit, "context %u watches %#x, not its submitter's %#x", i, w, bit);
		n += w != 0;
	}
	return n;
}

static uint32_t many_queued(struct api_sibling *s)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < MANY_CTXS; i++)
		n += atomic_load(&handle_deref(s[i].ctx)->ready.flags) != 0;
	return n;
}

/* MANY_CTXS contexts on one PE (this thread's), one task each from a new
 * thread, every event reaped and the turns run dry: every context's ring
 * watched. Returns the watched bit (the thread's slot). */
static uint32_t many_watched_fixture(struct api_fixture *f, struct api_sibling *s)
{
	(void)owned_fixture(f);
	for (uint32_t i = 0; i < MANY_CTXS; i++)
		sibling_init(&s[i], f, 0);
	uint32_t bit = 1u << many_round(f, s, 1000);

	while (doca_pe_progress(f->pe) != 0)
		;
	cr_assert_eq(many_watched(s, bit), MANY_CTXS);
	return bit;
}

Test(ring_watch, more_contexts_than_a_turns_records_leave_the_set_and_unwatch)
{
	struct api_fixture f;
	static struct api_sibling s[MANY_CTXS];

	uint32_t bit = many_watched_fixture(&f, s);

	cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert_eq(many_queued(s), 0, "watched contexts stayed in the ready set");
	/* no announce now: the turns' looks bring every task */
	cr_assert_eq(1u << many_round(&f, s, 2000), bit, "a new thread took another slot");
	cr_assert_eq(many_watched(s, bit), MANY_CTXS);
	/* a turn looks at 64 listed contexts (round robin): each of the 100
	 * gets WATCH_IDLE looks in more than WATCH_IDLE turns, fewer than
	 * 2 WATCH_IDLE (ceil(100 / 64) turns a look at most) */
	uint32_t turns = 0;

	for (; many_watched(s, bit) != 0; turns++) {
		cr_assert_lt(turns, 2 * WATCH_IDLE, "still watched after %u turns", turns);
		cr_assert_eq(doca_pe_progress(f.pe), 0);
	}
	cr_assert_gt(turns, WATCH_IDLE, "%u turns made WATCH_IDLE looks at 100 contexts", turns);
	cr_assert_eq(many_queued(s), 0);
	cr_assert_not_null(handle_deref(f.pe)->watch_head);
	for (uint32_t i = 0; i < 2; i++)
		cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert_null(handle_deref(f.pe)->watch_head, "two turns after left contexts on the watch list");
	/* unwatched: the producer announces again, and every task comes */
	(void)many_round(&f, s, 3000);
	siblings_fini_with_fixture(s, MANY_CTXS, &f);
}

/* The order the library promises (include/doca_pe.h, doca_pe_get_event):
 * one submitting thread's tasks of one context complete, on sw0, in its
 * submission order; across contexts none. A foreign thread submits to two
 * watched contexts in turn (A, B, A, B, ...) while this thread, the PE's,
 * progresses: each context's events come in that context's submission
 * order, every task exactly once. (The order between A's and B's events
 * is not checked: a watched context joins the visit order at a turn's
 * look, engine/pe_ready.c.) */
#define ORDER_TASKS 24u

/* Run one foreign thread of @p n pairs (@p joined: joined before this
 * thread reaps, so the PE's first turn after it finds both rings written
 * and every take is a turn's); reap its 2 n events, each context's in its
 * submission order. */
static void order_round(struct api_fixture *a, struct api_sibling *b, uint32_t n, bool joined)
{
	struct task_to k[2 * ORDER_TASKS];
	uint32_t next_a = 0, next_b = 0;
	struct foreign t;

	cr_assert_leq(n, ORDER_TASKS);
	for (uint32_t i = 0; i < n; i++) { /* A, B, A, B, ... */
		k[2 * i] = (struct task_to){ a->ctx, a->src, a->dst, 100 + i };
		k[2 * i + 1] = (struct task_to){ b->ctx, b->src, b->dst, 200 + i };
	}
	foreign_start(&t, k, 2 * n);
	if (joined)
		(void)foreign_join(&t);
	for (uint32_t got = 0; got < 2 * n; got++) {
		struct doca_event *ev = wait_event(a->pe);
		uint64_t u = doca_event_get_user_data(ev).u64;

		if (u >= 200) {
			cr_assert_eq(u, 200u + next_b, "context B: event %llu where its task %u was next",
				     (unsigned long long)u, 200u + next_b);
			next_b++;
		} else {
			cr_assert_eq(u, 100u + next_a, "context A: event %llu where its task %u was next",
				     (unsigned long long)u, 100u + next_a);
			next_a++;
		}
		assert_success_event(ev, u, 64);
	}
	if (!joined)
		(void)foreign_join(&t);
	cr_assert_eq(next_a, n);
	cr_assert_eq(next_b, n);
	cr_assert_eq(doca_pe_progress(a->pe), 0, "an event came twice");
	cr_assert_null(doca_pe_get_event(a->pe), "an event came twice");
}

Test(ring_watch, one_foreign_threads_events_keep_its_order_per_context_across_two_watched_contexts)
{
	struct api_fixture f;
	static struct api_sibling b;

	(void)owned_fixture(&f);
	sibling_init(&b, &f, 0);
	order_round(&f, &b, 1, true); /* both watched, A listed first */
	while (doca_pe_progress(f.pe) != 0)
		;
	cr_assert_neq(watch_of(run_of(&f)), 0);
	cr_assert_neq(watch_of(handle_deref(b.ctx)->run), 0);
	cr_assert(!queued(&f), "a watched context stayed in the ready set after an empty visit");
	order_round(&f, &b, ORDER_TASKS, false);
	sibling_fini_with_fixture(&b, &f);
}

/* The relook after a partial round: 100 watched contexts, a turn looks at
 * 64 of them (round robin), so the turn that unwatches the list's tail
 * looks at it in the middle of the list. A foreign task written to the
 * tail's ring inside that unwatching look (ring_unwatch_probe: the bit
 * still set, so its producer announces nothing) comes by that turn's
 * relook: in the same doca_pe_progress. (A relook of the wrong part of
 * the list strands it for hundreds of turns: review2 R1.) */
static struct ctx_run *unwatch_target;
static struct api_sibling *unwatch_sibling;
static uint32_t unwatch_turn, unwatch_slot;
static bool unwatch_fired;

static void unwatch_submit(struct ctx_run *run)
{
	if (run != unwatch_target)
		return;
	const struct task_to k = { unwatch_sibling->ctx, unwatch_sibling->src, unwatch_sibling->dst, 7777 };

	ring_unwatch_probe = NULL; /* once */
	unwatch_fired = true;
	unwatch_slot = submit_foreign_tasks(&k, 1);
}

Test(ring_watch, a_task_written_in_a_mid_list_unwatching_look_comes_by_that_turns_relook)
{
	struct api_fixture f;
	static struct api_sibling s[MANY_CTXS];

	uint32_t bit = many_watched_fixture(&f, s);
	struct doca_ctx *tail = handle_deref(f.pe)->watch_tail;
	uint32_t ti = MANY_CTXS;

	for (uint32_t i = 0; i < MANY_CTXS; i++)
		if (handle_deref(s[i].ctx) == tail)
			ti = i;
	cr_assert_lt(ti, MANY_CTXS, "the watch list's tail is none of the contexts");
	unwatch_sibling = &s[ti];
	unwatch_target = tail->run;
	ring_unwatch_probe = unwatch_submit;
	uint32_t n = 0, turns = 0;

	for (; n == 0 && turns < 4 * WATCH_IDLE; turns++) {
		if (!unwatch_fired)
			unwatch_turn = turns;
		n = doca_pe_progress(f.pe);
	}
	ring_unwatch_probe = NULL;
	cr_assert(unwatch_fired, "no look unwatched the tail in %u turns", turns);
	cr_assert_eq(1u << unwatch_slot, bit, "the probe's thread took another slot");
	cr_assert_eq(n, 1u, "the task written in the unwatching look: %u events in %u turns", n, turns);
	cr_assert_eq(turns, unwatch_turn + 1u, "the task came %u turns after its unwatching look",
		     turns - unwatch_turn - 1u);
	expect_success_event(f.pe, 7777, 64);
	siblings_fini_with_fixture(s, MANY_CTXS, &f);
}

/* Arming with more contexts listed than a turn looks at (100 > 64), mid
 * rotation, one unannounced task in each watched ring: the arming clears
 * every bit and empties the list, fires (there is work), and all 100
 * tasks come, each once. */
Test(ring_watch, arming_with_more_listed_than_a_turn_looks_at_clears_them_all)
{
	struct api_fixture f;
	static struct api_sibling s[MANY_CTXS];

	uint32_t bit = many_watched_fixture(&f, s);

	for (uint32_t i = 0; i < 3; i++) /* mid rotation */
		cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert_eq(many_watched(s, bit), MANY_CTXS);
	struct task_to k[MANY_CTXS];

	many_tasks(s, 5000, k);
	cr_assert_eq(1u << submit_foreign_tasks(k, MANY_CTXS), bit, "a new thread took another slot");
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	cr_assert_eq(many_watched(s, bit), 0, "armed with rings watched");
	cr_assert_null(handle_deref(f.pe)->watch_head, "the arming left contexts listed");
	cr_assert_null(handle_deref(f.pe)->watch_tail, "the arming left a tail");
	for (uint32_t i = 0; i < MANY_CTXS; i++)
		cr_assert(!handle_deref(s[i].ctx)->watch_listed, "context %u still listed", i);
	cr_assert_neq(atomic_load(&handle_deref(f.pe)->armed), PE_ARMED, "armed with 100 tasks to run");
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_SUCCESS);
	bool seen[MANY_CTXS] = { false };

	for (uint32_t got = 0; got < MANY_CTXS; got++) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t i = doca_event_get_user_data(ev).u64 - 5000;

		cr_assert_lt(i, MANY_CTXS);
		cr_assert(!seen[i], "task %llu twice", (unsigned long long)(5000 + i));
		seen[i] = true;
		assert_success_event(ev, 5000 + i, 64);
	}
	cr_assert_eq(doca_pe_progress(f.pe), 0, "an event came twice");
	siblings_fini_with_fixture(s, MANY_CTXS, &f);
}
