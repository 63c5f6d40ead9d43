/*
 * tests/api/event_free.c — freeing events is never refused for an event the
 * application holds, from any thread, and never applied to a recycled one:
 * stale and double frees are refused, logged and counted; bursts in and
 * out (doca_pe_get_events, doca_event_free_bulk); a worker's PE hands no
 * event to another thread and refuses a running context without callback.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static _Atomic unsigned errors_logged;

static void count_errors(enum doca_log_level level, const char *message, void *user)
{
	(void)message;
	(void)user;
	if (level == DOCA_LOG_ERROR)
		atomic_fetch_add(&errors_logged, 1);
}

static void log_counting(void)
{
	atomic_store(&errors_logged, 0);
	assert_ok(doca_log_set_handler(count_errors, NULL));
}

static void log_restore(void)
{
	assert_ok(doca_log_set_handler(NULL, NULL));
}

Test(event_free, a_stale_free_after_reuse_is_refused_and_leaves_the_new_event_alone,
     .init = log_counting, .fini = log_restore)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, 1);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	struct doca_event *first = wait_event(f.pe);

	cr_assert_eq(doca_event_get_user_data(first).u64, 1);
	doca_event_free(first);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1024, 0));
	struct doca_event *second = wait_event(f.pe);
	uint64_t stale = doca_stale_handle_count();

	cr_assert_neq(second, first, "a reused slot gets a new handle");
	doca_event_free(first);
	cr_assert_eq(doca_stale_handle_count(), stale + 1);
	cr_assert_eq(atomic_load(&errors_logged), 1);
	cr_assert_eq(doca_event_get_user_data(second).u64, 1024, "the new event is untouched");
	cr_assert_eq(doca_event_get_status(second), DOCA_EVENT_STATUS_SUCCESS);
	cr_assert_eq(doca_event_get_user_data(first).u64, 0, "a stale handle reads as none");
	cr_assert_eq(doca_event_get_ctx(first), NULL);
	/* every getter's neutral value (doca_event.h), as for NULL */
	cr_assert_eq(doca_event_get_status(first), DOCA_EVENT_STATUS_FAILURE);
	assert_doca(doca_event_get_error(first), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_event_get_bytes(first), 0);
	cr_assert_eq(doca_event_get_type(first), 0);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 3, 0), DOCA_ERROR_AGAIN); /* no early credit */

	doca_event_free(second);
	cr_assert_eq(doca_stale_handle_count(), stale + 1, "a held event's free is no refusal");
	doca_event_free(second);
	cr_assert_eq(doca_stale_handle_count(), stale + 2, "a double free is counted");
	cr_assert_eq(atomic_load(&errors_logged), 2);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 4, 0));
	expect_success_event(f.pe, 4, 64);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 5, 0), DOCA_SUCCESS);
	expect_success_event(f.pe, 5, 64);
	fixture_fini(&f);
}

/* A slot's generation carries from its handle's low 6 bits into its top
 * 16 bits at every 64th reuse (ev_handle_next_free and ev_gs_next_free):
 * 130 uses of one slot, freed by both frees in turn, each under a handle
 * none of the earlier ones equals, and every earlier handle refused as
 * stale by either free afterwards. */
Test(event_free, a_slot_reused_past_its_low_generation_bits_refuses_every_earlier_handle,
     .init = log_counting, .fini = log_restore)
{
	enum { ROUNDS = 130 };
	struct api_fixture f;
	struct doca_event *seen[ROUNDS];

	fixture_init_started(&f, "sw0", 64, 1);
	for (uint32_t i = 0; i < ROUNDS; i++) {
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i + 1, 0));
		struct doca_event *ev = wait_event(f.pe);

		cr_assert_eq(doca_event_get_user_data(ev).u64, i + 1);
		for (uint32_t j = 0; j < i; j++)
			cr_assert_neq(ev, seen[j], "use %u of the slot has the handle of use %u", i, j);
		seen[i] = ev;
		if (i % 2 != 0)
			doca_event_free(ev);
		else
			doca_event_free_bulk(&ev, 1);
	}
	uint64_t stale = doca_stale_handle_count();

	for (uint32_t i = 0; i < ROUNDS; i++) {
		if (i % 2 == 0)
			doca_event_free(seen[i]);
		else
			doca_event_free_bulk(&seen[i], 1);
	}
	cr_assert_eq(doca_stale_handle_count(), stale + ROUNDS);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 7, 0)); /* the slot's credit is back, once */
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 8, 0), DOCA_ERROR_AGAIN);
	expect_success_event(f.pe, 7, 64);
	fixture_fini(&f);
}

/* One thread reaps, another frees: a pipe carries the handles. */
struct handoff {
	int fds[2];
	unsigned freed;
};

static void *free_from_pipe(void *arg)
{
	struct handoff *h = arg;
	struct doca_event *ev;

	while (read(h->fds[0], &ev, sizeof(ev)) == (ssize_t)sizeof(ev)) {
		doca_event_free(ev);
		h->freed++;
	}
	return NULL;
}

#define HANDOFF_TASKS 20000u

Test(event_free, events_reaped_on_one_thread_and_freed_on_another_all_return,
     .init = log_counting, .fini = log_restore)
{
	struct api_fixture f;
	struct handoff h = { .freed = 0 };
	pthread_t t;
	unsigned submitted = 0, reaped = 0;
	uint64_t sum = 0, stale = doca_stale_handle_count();
	uint64_t deadline = now_ns() + 60ull * 1000000000ull;

	fixture_init_started(&f, "sw0", 64, 64);
	cr_assert_eq(pipe(h.fds), 0);
	cr_assert_eq(pthread_create(&t, NULL, free_from_pipe, &h), 0);
	while (reaped < HANDOFF_TASKS && now_ns() < deadline) {
		while (submitted < HANDOFF_TASKS &&
		       submit_copy(f.ctx, f.src, f.dst, submitted + 1, 0) == DOCA_SUCCESS)
			submitted++;
		(void)doca_pe_progress(f.pe);
		struct doca_event *ev;

		while ((ev = doca_pe_get_event(f.pe)) != NULL) {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
			sum += doca_event_get_user_data(ev).u64;
			reaped++;
			cr_assert_eq(write(h.fds[1], &ev, sizeof(ev)), (ssize_t)sizeof(ev));
		}
	}
	close(h.fds[1]);
	pthread_join(t, NULL);
	close(h.fds[0]);
	cr_assert_eq(reaped, HANDOFF_TASKS, "reaped %u of %u (credits lost?)", reaped, HANDOFF_TASKS);
	cr_assert_eq(h.freed, HANDOFF_TASKS);
	cr_assert_eq(sum, (uint64_t)HANDOFF_TASKS * (HANDOFF_TASKS + 1) / 2);
	cr_assert_eq(atomic_load(&errors_logged), 0, "no free was refused");
	cr_assert_eq(doca_stale_handle_count(), stale);
	/* Every credit comes back: the stop finishes. */
	stop_and_drain(f.ctx, f.pe);
	fixture_fini(&f);
}

/* The textbook reap loop on two threads at once. */
struct reaper {
	struct api_fixture *f;
	_Atomic unsigned *reaped;
	unsigned target;
};

static void *reap_loop(void *arg)
{
	struct reaper *r = arg;
	uint64_t deadline = now_ns() + 60ull * 1000000000ull;

	while (atomic_load(r->reaped) < r->target && now_ns() < deadline) {
		struct doca_event *ev;

		(void)doca_pe_progress(r->f->pe);
		while ((ev = doca_pe_get_event(r->f->pe)) != NULL) {
			if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS)
				atomic_fetch_add(r->reaped, 1);
			doca_event_free(ev);
		}
	}
	return NULL;
}

#define REAP_TASKS 20000u

Test(event_free, two_threads_running_the_reap_loop_lose_no_credit, .init = log_counting,
     .fini = log_restore)
{
	struct api_fixture f;
	_Atomic unsigned reaped = 0;
	unsigned submitted = 0;
	pthread_t t[2];
	uint64_t deadline = now_ns() + 60ull * 1000000000ull;

	fixture_init_started(&f, "sw0", 64, 32);
	struct reaper r = { .f = &f, .reaped = &reaped, .target = REAP_TASKS };

	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, reap_loop, &r), 0);
	while (submitted < REAP_TASKS && now_ns() < deadline) {
		if (submit_copy(f.ctx, f.src, f.dst, submitted, 0) == DOCA_SUCCESS)
			submitted++;
		else
			sched_yield();
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(submitted, REAP_TASKS);
	cr_assert_eq(atomic_load(&reaped), REAP_TASKS);
	cr_assert_eq(atomic_load(&errors_logged), 0, "no free was refused");
	stop_and_drain(f.ctx, f.pe);
	fixture_fini(&f);
}

#define BURST 10u

Test(event_free, a_burst_comes_out_with_get_events_and_goes_back_with_free_bulk,
     .init = log_counting, .fini = log_restore)
{
	struct api_fixture f;
	struct doca_event *evs[BURST + 2] = { NULL };
	uint32_t got = 0, mask = 0;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	fixture_init_started(&f, "sw0", 64, BURST);
	for (uint32_t i = 0; i < BURST; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 99, 0), DOCA_ERROR_AGAIN);
	cr_assert_eq(doca_pe_get_events(f.pe, evs, 0), 0);
	cr_assert_eq(doca_pe_get_events(f.pe, NULL, 4), 0);
	cr_assert_eq(doca_pe_get_events(NULL, evs, 4), 0);
	while (got < BURST && now_ns() < deadline) {
		(void)doca_pe_progress(f.pe);
		/* room for two more than can come: the count says how many did */
		got += doca_pe_get_events(f.pe, evs + 1 + got, BURST + 1 - got);
	}
	cr_assert_eq(got, BURST);
	for (uint32_t i = 1; i <= BURST; i++) {
		cr_assert_eq(doca_event_get_status(evs[i]), DOCA_EVENT_STATUS_SUCCESS);
		mask |= 1u << doca_event_get_user_data(evs[i]).u64;
	}
	cr_assert_eq(mask, (1u << BURST) - 1, "each task's event once: %#x", mask);
	cr_assert_null(evs[BURST + 1]);
	doca_event_free_bulk(NULL, 3);
	doca_event_free_bulk(evs, BURST + 2); /* NULL at both ends is skipped */
	cr_assert_eq(atomic_load(&errors_logged), 0);

	uint64_t stale = doca_stale_handle_count();

	doca_event_free_bulk(evs + 1, BURST);
	cr_assert_eq(doca_stale_handle_count(), stale + BURST, "each double free refused and counted");
	for (uint32_t i = 0; i < BURST; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 99, 0), DOCA_ERROR_AGAIN);
	fixture_fini(&f);
}

/* The handout's rounds of four and its last max % 4 places one at a time
 * (engine/pe.c, pe_take_ready_watched): for every ready count and max from
 * 1 to 9, each get hands out exactly min(max, what is left) events, oldest
 * first, and writes nothing past them; then nothing is left. */
Test(event_free, get_events_hands_out_exactly_what_is_ready_up_to_max_in_order)
{
	enum { MOST = 9 };
	struct api_fixture f;
	struct doca_event *poison = (struct doca_event *)&f, *evs[MOST + 1];

	fixture_init_started(&f, "sw0", 64, MOST);
	for (uint32_t ready = 1; ready <= MOST; ready++) {
		for (uint32_t max = 1; max <= MOST; max++) {
			uint32_t done = 0;
			uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

			for (uint32_t i = 0; i < ready; i++)
				assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
			while (done < ready && now_ns() < deadline)
				done += (uint32_t)doca_pe_progress(f.pe);
			cr_assert_eq(done, ready);
			for (uint32_t from = 0; from < ready;) {
				uint32_t want = ready - from < max ? ready - from : max;

				for (uint32_t i = 0; i <= MOST; i++)
					evs[i] = poison;
				cr_assert_eq(doca_pe_get_events(f.pe, evs, max), want, "ready %u max %u from %u", ready,
					     max, from);
				for (uint32_t i = 0; i < want; i++)
					cr_assert_eq(doca_event_get_user_data(evs[i]).u64, from + i, "ready %u max %u",
						     ready, max);
				for (uint32_t i = want; i <= MOST; i++)
					cr_assert_eq(evs[i], poison, "ready %u max %u: place %u written", ready, max, i);
				doca_event_free_bulk(evs, want);
				from += want;
			}
			cr_assert_eq(doca_pe_get_events(f.pe, evs, max), 0, "ready %u max %u: one too many", ready, max);
		}
	}
	fixture_fini(&f);
}

/* A thread whose first call into the library is a get has no record yet:
 * the owner ways refuse it (runner_parked_by is false for a NULL record,
 * before the record is read) and it takes the sectioned way, which makes
 * the record, takes the ready events from the guard the main thread
 * parked, and its frees give every credit back. */
struct first_getter {
	struct doca_pe *pe;
	struct doca_event *ev[3];
	uint64_t user[2];
};

static void *get_first_then_free(void *arg)
{
	struct first_getter *g = arg;

	for (int i = 0; i < 3; i++)
		g->ev[i] = doca_pe_get_event(g->pe);
	for (int i = 0; i < 2; i++) {
		g->user[i] = g->ev[i] != NULL ? doca_event_get_user_data(g->ev[i]).u64 : 0;
		doca_event_free(g->ev[i]);
	}
	return NULL;
}

Test(event_free, a_thread_whose_first_call_is_a_get_takes_and_frees_the_events,
     .init = log_counting, .fini = log_restore)
{
	struct api_fixture f;
	struct first_getter g = { .pe = NULL };
	pthread_t t;

	fixture_init_started(&f, "sw0", 64, 2);
	g.pe = f.pe;
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 2, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 3, 0), DOCA_ERROR_AGAIN);
	/* the inline device executes both in the first turn; the main
	 * thread's guard is parked after it */
	for (int i = 0; i < 100 && doca_pe_progress(f.pe) != 0; i++)
		;
	cr_assert_eq(pthread_create(&t, NULL, get_first_then_free, &g), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_not_null(g.ev[0]);
	cr_assert_not_null(g.ev[1]);
	cr_assert_null(g.ev[2], "two tasks, two events");
	cr_assert_eq(g.user[0], 1);
	cr_assert_eq(g.user[1], 2);
	cr_assert_eq(atomic_load(&errors_logged), 0, "no free was refused");
	(void)doca_pe_progress(f.pe); /* a credit sent through the mailbox comes back */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 4, 0));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 5, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 6, 0), DOCA_ERROR_AGAIN);
	expect_success_event(f.pe, 4, 64);
	expect_success_event(f.pe, 5, 64);
	fixture_fini(&f);
}

static void count_event(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	atomic_fetch_add((_Atomic unsigned *)ud.ptr, 1);
}

Test(event_free, a_worker_pe_takes_no_running_context_without_callback)
{
	struct api_fixture f;
	struct doca_event *ev = NULL;
	_Atomic unsigned delivered = 0;
	enum doca_ctx_state st;

	fixture_init_started(&f, "sw0", 64, 8);
	assert_doca(doca_pe_run_on_cpu(f.pe, -1), DOCA_ERROR_NOT_PERMITTED);
	fixture_copy_and_verify(&f); /* the refusal changed nothing: still ours to progress */

	assert_ok(doca_ctx_stop(f.ctx));
	assert_ok(doca_pe_run_on_cpu(f.pe, -1)); /* an IDLE one may wait for its callback */
	assert_doca(doca_ctx_start(f.ctx), DOCA_ERROR_NOT_PERMITTED);
	assert_ok(doca_ctx_get_state(f.ctx, &st));
	cr_assert_eq(st, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_ctx_set_event_cb(f.ctx, count_event));
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = (void *)&delivered }));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	while (atomic_load(&delivered) == 0 && now_ns() < deadline) {
		cr_assert_null(doca_pe_get_event(f.pe), "another thread gets no event of a worker's PE");
		cr_assert_eq(doca_pe_get_events(f.pe, &ev, 1), 0);
		bool has_error = true;

		cr_assert_eq(doca_pe_get_events_ok(f.pe, &ev, 1, &has_error), 0);
		cr_assert(!has_error);
		sched_yield();
	}
	cr_assert_eq(atomic_load(&delivered), 1);
	doca_error_t rc = doca_ctx_stop(f.ctx);

	cr_assert(rc == DOCA_SUCCESS || rc == DOCA_ERROR_IN_PROGRESS, "%s", doca_error_get_name(rc));
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	do
		assert_ok(doca_ctx_get_state(f.ctx, &st));
	while (st != DOCA_CTX_STATE_IDLE && now_ns() < deadline && sched_yield() == 0);
	cr_assert_eq(st, DOCA_CTX_STATE_IDLE, "the worker finished the stop");
	assert_ok(doca_pe_stop_run(f.pe));
	fixture_fini(&f);
}

/* Collect exactly @p n events of @p pe into @p evs. */
static void collect_events(struct doca_pe *pe, struct doca_event **evs, uint32_t n)
{
	uint32_t got = 0;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	while (got < n && now_ns() < deadline) {
		(void)doca_pe_progress(pe);
		got += doca_pe_get_events(pe, evs + got, n - got);
	}
	cr_assert_eq(got, n, "%u of %u events", got, n);
	cr_assert_null(doca_pe_get_event(pe), "no event more than its tasks");
}

/* Exactly @p max tasks accepted, then DOCA_ERROR_AGAIN: every credit back. */
static void assert_credits(struct doca_ctx *ctx, struct doca_buf *src, struct doca_buf *dst, uint32_t max)
{
	for (uint32_t i = 0; i < max; i++)
		assert_ok(submit_copy(ctx, src, dst, 100 + i, 0));
	assert_doca(submit_copy(ctx, src, dst, 199, 0), DOCA_ERROR_AGAIN);
}

/* The 2 * @p each events @p p as delivered, split into ctx's (@p a) and
 * the other context's (@p b), @p each of both. */
static void split_by_ctx(struct doca_event **p, uint32_t each, struct doca_ctx *ctx, struct doca_event **a,
			 struct doca_event **b)
{
	uint32_t na = 0, nb = 0;

	for (uint32_t i = 0; i < 2 * each; i++) {
		if (doca_event_get_ctx(p[i]) == ctx) {
			cr_assert_lt(na, each);
			a[na++] = p[i];
		} else {
			cr_assert_lt(nb, each);
			b[nb++] = p[i];
		}
	}
}

#define MIXED_MAX 3u

/* One burst with the events of two contexts of one PE and of a context of
 * another PE interleaved (runs and PEs change between neighbours, and
 * back), a double free and a NULL among them: each run gets back exactly
 * its credits, the double free alone is refused and counted. */
Test(event_free, a_burst_mixing_runs_and_pes_returns_each_run_its_credits,
     .init = log_counting, .fini = log_restore)
{
	struct api_fixture f, g;
	struct api_sibling s;
	struct doca_event *p1[2 * MIXED_MAX], *p2[MIXED_MAX];

	fixture_init_started(&f, "sw0", 64, MIXED_MAX);
	sibling_init(&s, &f, MIXED_MAX);
	fixture_init_started(&g, "sw0", 64, MIXED_MAX);
	for (uint32_t i = 0; i < MIXED_MAX; i++) {
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
		assert_ok(submit_copy(s.ctx, s.src, s.dst, 10 + i, 0));
		assert_ok(submit_copy(g.ctx, g.src, g.dst, 20 + i, 0));
	}
	collect_events(f.pe, p1, 2 * MIXED_MAX);
	collect_events(g.pe, p2, MIXED_MAX);

	/* p1 as delivered: find each context's events */
	struct doca_event *a[MIXED_MAX], *b[MIXED_MAX];

	split_by_ctx(p1, MIXED_MAX, f.ctx, a, b);

	struct doca_event *burst[] = { a[0], b[0], p2[0], a[1], p2[1], b[1], NULL,
				       a[2], a[0], b[2], p2[2] };
	uint64_t stale = doca_stale_handle_count();

	doca_event_free_bulk(burst, sizeof(burst) / sizeof(burst[0]));
	cr_assert_eq(doca_stale_handle_count(), stale + 1, "the double free alone is counted");
	cr_assert_eq(atomic_load(&errors_logged), 1, "the double free alone is refused");
	assert_credits(f.ctx, f.src, f.dst, MIXED_MAX);
	assert_credits(s.ctx, s.src, s.dst, MIXED_MAX);
	assert_credits(g.ctx, g.src, g.dst, MIXED_MAX);
	fixture_fini(&g);
	sibling_fini_with_fixture(&s, &f);
}

#define REFUSED_MAX 5u

/* Refusals (NULL, stale and double frees) among one run's events in a
 * burst: on the owner's way with one run, then across two runs of one
 * PE, a refusal inside each run's stretch and the last stretch ending the
 * burst. Every claimed slot's credit comes back exactly once (a burst
 * counts the slots it linked when it hands its chain on, less the
 * refused). */
Test(event_free, refusals_among_a_runs_events_in_a_burst_leave_every_credit_exact,
     .init = log_counting, .fini = log_restore)
{
	struct api_fixture f;
	struct api_sibling s;
	struct doca_event *p[2 * REFUSED_MAX], *a[REFUSED_MAX], *b[REFUSED_MAX];

	fixture_init_started(&f, "sw0", 64, REFUSED_MAX);
	sibling_init(&s, &f, REFUSED_MAX);
	for (uint32_t i = 0; i < REFUSED_MAX; i++) {
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
		assert_ok(submit_copy(s.ctx, s.src, s.dst, 10 + i, 0));
	}
	collect_events(f.pe, p, 2 * REFUSED_MAX);
	split_by_ctx(p, REFUSED_MAX, f.ctx, a, b);

	uint64_t stale = doca_stale_handle_count();
	struct doca_event *one[] = { NULL, a[0], NULL, a[1], a[0], a[2], NULL };

	doca_event_free_bulk(one, sizeof(one) / sizeof(one[0]));
	cr_assert_eq(doca_stale_handle_count(), stale + 1, "the double free alone is counted");

	struct doca_event *two[] = { b[0], b[1], a[0], b[2], a[3], NULL, a[4], a[3], b[3], b[4], b[4] };

	doca_event_free_bulk(two, sizeof(two) / sizeof(two[0]));
	cr_assert_eq(doca_stale_handle_count(), stale + 4, "a stale and two double frees more");
	assert_credits(f.ctx, f.src, f.dst, REFUSED_MAX);
	assert_credits(s.ctx, s.src, s.dst, REFUSED_MAX);
	sibling_fini_with_fixture(&s, &f);
}

#define ELSEWHERE 6u

struct burst_freer {
	struct doca_event **evs;
	uint32_t n;
};

static void *free_burst(void *arg)
{
	struct burst_freer *b = arg;

	doca_event_free_bulk(b->evs, b->n);
	return NULL;
}

/* A burst freed on a thread that does not run the PE (this thread keeps
 * its guard parked) goes through the run's mailbox: its claims store the
 * next generation at once and mark each slot a free again before the push
 * (event_claim). The turn then takes them back as frees, not as tasks (no
 * event more), each credit once; every handle, freed again before that
 * turn or after it, is refused as stale. */
Test(event_free, a_burst_freed_on_another_thread_comes_back_through_the_mailbox_once,
     .init = log_counting, .fini = log_restore)
{
	struct api_fixture f;
	struct doca_event *evs[ELSEWHERE];
	struct burst_freer b = { .evs = evs, .n = ELSEWHERE };
	pthread_t t;

	fixture_init_started(&f, "sw0", 64, ELSEWHERE);
	for (uint32_t i = 0; i < ELSEWHERE; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	collect_events(f.pe, evs, ELSEWHERE);
	cr_assert_eq(pthread_create(&t, NULL, free_burst, &b), 0);
	pthread_join(t, NULL);
	cr_assert_eq(atomic_load(&errors_logged), 0, "no free was refused");

	uint64_t stale = doca_stale_handle_count();

	doca_event_free_bulk(evs, 2);
	doca_event_free(evs[2]);
	cr_assert_eq(doca_stale_handle_count(), stale + 3, "in the mailbox: each a double free");
	(void)doca_pe_progress(f.pe);
	cr_assert_null(doca_pe_get_event(f.pe), "a free in the mailbox is no task");
	doca_event_free_bulk(evs + 3, 2);
	doca_event_free(evs[5]);
	cr_assert_eq(doca_stale_handle_count(), stale + ELSEWHERE, "back in the pool: each a double free");
	assert_credits(f.ctx, f.src, f.dst, ELSEWHERE);
	fixture_fini(&f);
}
