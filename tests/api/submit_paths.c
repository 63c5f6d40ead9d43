/*
 * tests/api/submit_paths.c — the two ways a task reaches the device: the
 * PE's own thread (the one that ran its last doca_pe_progress) posts it
 * straight to the queue pair, any other thread leaves it in the mailbox for
 * the PE's next turn. Observed through an engine thread, which copies
 * whatever reaches the device without any further progress call.
 */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

enum { LEN = 256 };

/* True once dst holds the source pattern, polling for up to @p ms without
 * calling doca_pe_progress. */
static bool copied_within(struct api_fixture *f, unsigned ms)
{
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000u;

	do {
		if (pattern_mismatch(f->dst_bytes, LEN, f->seed) == LEN)
			return true;
		sleep_ms(1);
	} while (now_ns() < deadline);
	return false;
}

/* Wait for one event, assert a partial copy (PARTIAL, TOO_BIG) of
 * @p bytes with user data @p user, free it. */
static void expect_partial_event(struct doca_pe *pe, uint64_t user, size_t bytes)
{
	struct doca_event *ev = wait_event(pe);

	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_PARTIAL);
	assert_doca(doca_event_get_error(ev), DOCA_ERROR_TOO_BIG);
	cr_assert_eq(doca_event_get_bytes(ev), bytes);
	cr_assert_eq(doca_event_get_user_data(ev).u64, user);
	doca_event_free(ev);
}

/* The fixture's end after copies of its source: dst holds the whole
 * pattern; stop, drain, destroy the two extra buffers (no pin left on
 * them), tear down. */
static void fini_copied_with(struct api_fixture *f, struct doca_buf *a, struct doca_buf *b)
{
	cr_assert_eq(pattern_mismatch(f->dst_bytes, LEN, f->seed), LEN);
	stop_and_drain(f->ctx, f->pe);
	assert_ok(doca_buf_destroy(a));
	assert_ok(doca_buf_destroy(b));
	fixture_fini(f);
}

struct foreign_submit {
	struct api_fixture *f;
	doca_error_t rc;
};

static void *foreign_submit_main(void *arg)
{
	struct foreign_submit *s = arg;

	s->rc = submit_copy(s->f->ctx, s->f->src, s->f->dst, 7, 0);
	return NULL;
}

Test(submit_paths, the_pe_thread_posts_straight_to_the_device)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0:engines=1", LEN, 0);
	doca_pe_progress(f.pe); /* this thread now runs the PE */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 7, 0));
	cr_assert(copied_within(&f, 5000), "the engine copied without a progress call");
	expect_success_event(f.pe, 7, LEN);
	fixture_fini(&f);
}

Test(submit_paths, another_thread_leaves_the_task_in_the_mailbox_until_progress)
{
	struct api_fixture f;
	struct foreign_submit s;
	pthread_t th;

	fixture_init_started(&f, "sw0:engines=1", LEN, 0);
	doca_pe_progress(f.pe);
	s = (struct foreign_submit){ .f = &f };
	cr_assert_eq(pthread_create(&th, NULL, foreign_submit_main, &s), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	assert_ok(s.rc);
	cr_assert_not(copied_within(&f, 50), "nothing drains the mailbox without progress");
	cr_assert_eq(bytes_mismatch(f.dst_bytes, LEN, 0), LEN, "dst untouched");
	expect_success_event(f.pe, 7, LEN);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, LEN, f.seed), LEN);
	fixture_fini(&f);
}

/* While another thread's task waits in the mailbox, the PE's thread queues
 * behind it too, and both arrive with the next turn. */
Test(submit_paths, the_pe_thread_queues_behind_a_waiting_mailbox)
{
	struct api_fixture f;
	struct foreign_submit s;
	struct doca_buf *src2, *dst2;
	pthread_t th;

	fixture_init_started(&f, "sw0:engines=1", 2 * LEN, 0);
	doca_pe_progress(f.pe);
	assert_ok(doca_buf_destroy(f.src));
	assert_ok(doca_buf_destroy(f.dst));
	assert_ok(doca_buf_create(f.src_mem, 0, LEN, &f.src));
	assert_ok(doca_buf_create(f.dst_mem, 0, LEN, &f.dst));
	assert_ok(doca_buf_create(f.src_mem, LEN, LEN, &src2));
	assert_ok(doca_buf_create(f.dst_mem, LEN, LEN, &dst2));
	s = (struct foreign_submit){ .f = &f };
	cr_assert_eq(pthread_create(&th, NULL, foreign_submit_main, &s), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	assert_ok(s.rc);
	assert_ok(submit_copy(f.ctx, src2, dst2, 8, 0));
	sleep_ms(50);
	cr_assert_eq(bytes_mismatch(f.dst_bytes, 2 * LEN, 0), 2 * LEN, "both wait for the turn");
	int seen7 = 0, seen8 = 0;

	for (int i = 0; i < 2; i++) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t user = doca_event_get_user_data(ev).u64;

		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
		seen7 += user == 7;
		seen8 += user == 8;
		doca_event_free(ev);
	}
	cr_assert_eq(seen7, 1);
	cr_assert_eq(seen8, 1);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 2 * LEN, f.seed), 2 * LEN);
	assert_ok(doca_buf_destroy(src2));
	assert_ok(doca_buf_destroy(dst2));
	fixture_fini(&f);
}

/* Three tasks from another thread: their pins count in the buffers' shared
 * count, which the PE's frees drop on a line of their own (engine/buf.c). */
static void *foreign_submit_three(void *arg)
{
	struct foreign_submit *s = arg;

	s->rc = DOCA_SUCCESS;
	for (uint64_t user = 1; user <= 3 && s->rc == DOCA_SUCCESS; user++)
		s->rc = submit_copy(s->f->ctx, s->f->src, s->f->dst, user, 0);
	return NULL;
}

/* A destroy of a buffer another thread's tasks name is refused, changing
 * nothing, until the PE frees the last of their events; the PE's own task
 * after them counts in the other count, and the destroy then succeeds. */
Test(submit_paths, a_buffer_another_threads_tasks_named_is_destroyed_after_the_last_free)
{
	struct api_fixture f;
	struct foreign_submit s = { 0 };
	struct doca_event *evs[3];
	pthread_t th;

	fixture_init_started(&f, "sw0", LEN, 0);
	doca_pe_progress(f.pe);
	s.f = &f;
	cr_assert_eq(pthread_create(&th, NULL, foreign_submit_three, &s), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	assert_ok(s.rc);
	for (int i = 0; i < 3; i++) {
		evs[i] = wait_event(f.pe);
		cr_assert_eq(doca_event_get_status(evs[i]), DOCA_EVENT_STATUS_SUCCESS);
		cr_assert_eq(doca_event_get_user_data(evs[i]).u64, (uint64_t)i + 1);
	}
	assert_doca(doca_buf_destroy(f.src), DOCA_ERROR_IN_USE);
	doca_event_free(evs[0]);
	doca_event_free(evs[1]);
	assert_doca(doca_buf_destroy(f.src), DOCA_ERROR_IN_USE);
	assert_doca(doca_buf_destroy(f.dst), DOCA_ERROR_IN_USE);
	doca_event_free(evs[2]);
	/* the refusals changed nothing: the buffers still copy */
	memset(f.dst_bytes, 0, LEN);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 9, 0));
	assert_doca(doca_buf_destroy(f.src), DOCA_ERROR_IN_USE);
	expect_success_event(f.pe, 9, LEN);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, LEN, f.seed), LEN);
	assert_ok(doca_buf_destroy(f.src));
	assert_ok(doca_buf_destroy(f.dst));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 10, 0), DOCA_ERROR_INVALID_VALUE);
	f.src = NULL;
	f.dst = NULL;
	fixture_fini(&f);
}

/* ---- a direct post never makes another thread's call a refusal ---- */

enum { READY = 1000, MORE = 2000 };

struct poster {
	struct api_fixture *f;
	atomic_bool go;
	int accepted;
	doca_error_t bad;
};

static void *poster_main(void *arg)
{
	struct poster *p = arg;

	doca_pe_progress(p->f->pe); /* this thread now runs the PE: it posts directly */
	atomic_store(&p->go, true);
	p->bad = DOCA_SUCCESS;
	while (p->accepted < MORE) {
		doca_error_t rc = submit_copy(p->f->ctx, p->f->src, p->f->dst, 1000000u + (uint64_t)p->accepted, 0);

		if (rc == DOCA_SUCCESS)
			p->accepted++;
		else if (rc != DOCA_ERROR_AGAIN) {
			p->bad = rc;
			break;
		}
	}
	return NULL;
}

/* While the PE's thread posts straight to the device (taking the runner
 * guard for a moment each time), another thread hands out and frees the
 * events a turn made ready: every doca_pe_get_event call returns one (none
 * is refused as "another thread runs the PE"), and every free counts. */
Test(submit_paths, direct_posts_never_refuse_another_threads_get_event_or_free)
{
	struct api_fixture f;
	struct poster p = { .f = &f };
	pthread_t th;
	int got = 0;

	fixture_init_started(&f, "sw0:engines=1", LEN, READY + MORE);
	for (int i = 0; i < READY; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	uint64_t deadline = now_ns() + 10ull * 1000000000ull;
	uint32_t ready = 0;

	while (ready < READY && now_ns() < deadline)
		ready += doca_pe_progress(f.pe); /* a turn takes up to 256 completions */
	cr_assert_eq(ready, READY);
	cr_assert_eq(pthread_create(&th, NULL, poster_main, &p), 0);
	while (!atomic_load(&p.go))
		sched_yield();
	for (int i = 0; i < READY; i++) {
		struct doca_event *ev = doca_pe_get_event(f.pe);

		cr_assert_not_null(ev, "get_event %d of %d returned nothing", i, READY);
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
		doca_event_free(ev);
		got++;
	}
	cr_assert_eq(pthread_join(th, NULL), 0);
	assert_ok(p.bad);
	cr_assert_eq(p.accepted, MORE);
	while (got < READY + MORE) {
		struct doca_event *ev = wait_event(f.pe);

		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
		doca_event_free(ev);
		got++;
	}
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f); /* stops to IDLE: every credit came back */
}

/* ---- an inline device: single submits wait for the turn, in order ---- */

enum { SINGLES_BEFORE = 3, BURST = 10, SINGLES_AFTER = 2 };

/* The PE's thread submits to an inline device: single tasks wait in the
 * run's backlog for the next turn (engine/task.c), and a burst that would
 * be posted at once joins them instead of overtaking them. The inline
 * device completes in the order its queue holds, so the events come in
 * submission order, each exactly once. */
Test(submit_paths, inline_single_submits_and_a_burst_complete_in_submission_order)
{
	struct doca_task_desc descs[BURST];
	struct api_fixture f;
	uint32_t accepted = 0;
	uint64_t user = 0;

	fixture_init_started(&f, "sw0", LEN, 0);
	doca_pe_progress(f.pe); /* this thread now runs the PE */
	for (int i = 0; i < SINGLES_BEFORE; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, user++, 0));
	for (int i = 0; i < BURST; i++)
		descs[i] = (struct doca_task_desc){
			.type = DOCA_TASK_COPY, .src = f.src, .dst = f.dst, .user_data = { .u64 = user++ }
		};
	assert_ok(doca_task_submit_batch(f.ctx, descs, BURST, &accepted));
	cr_assert_eq(accepted, BURST);
	for (int i = 0; i < SINGLES_AFTER; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, user++, 0));
	cr_assert_eq(bytes_mismatch(f.dst_bytes, LEN, 0), LEN, "an inline device copies only in a turn");
	for (uint64_t want = 0; want < user; want++)
		expect_success_event(f.pe, want, LEN);
	expect_no_event_for(f.pe, 20);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, LEN, f.seed), LEN);
	fixture_fini(&f);
}

/* A burst of 35 from the PE's thread on an inline device: 32 posted, 3 in
 * the backlog; one more single task; then a stop before any turn. Every
 * task is flushed (nothing ran), in submission order: the device's
 * first, then the backlog's (they came out ahead, found by a review). */
Test(submit_paths, inline_stop_flushes_the_device_then_the_backlog_in_submission_order)
{
	enum { BIG = 35 };
	struct doca_task_desc descs[BIG];
	struct api_fixture f;
	uint32_t accepted = 0;

	fixture_init_started(&f, "sw0", LEN, 64);
	doca_pe_progress(f.pe); /* this thread now runs the PE */
	for (int i = 0; i < BIG; i++)
		descs[i] = (struct doca_task_desc){
			.type = DOCA_TASK_COPY, .src = f.src, .dst = f.dst, .user_data = { .u64 = (uint64_t)i }
		};
	assert_ok(doca_task_submit_batch(f.ctx, descs, BIG, &accepted));
	cr_assert_eq(accepted, BIG);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, BIG, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	for (uint64_t want = 0; want <= BIG; want++) {
		struct doca_event *ev = wait_event(f.pe);

		cr_assert_eq(doca_event_get_user_data(ev).u64, want, "event %llu is of task %llu",
			     (unsigned long long)want, (unsigned long long)doca_event_get_user_data(ev).u64);
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE);
		assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
		doca_event_free(ev);
	}
	expect_no_event_for(f.pe, 20);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	cr_assert_eq(bytes_mismatch(f.dst_bytes, LEN, 0), LEN, "a flushed task copied");
	fixture_fini(&f);
}

/* More single submits from the PE's thread than a turn posts (256): the
 * backlog is posted a turn's share at a time and the context stays in the
 * ready set until it is empty, so every task completes once, in order. */
Test(submit_paths, inline_backlog_longer_than_a_turn_completes_in_order_over_several_turns)
{
	enum { LONG = 300 };
	struct api_fixture f;

	fixture_init_started(&f, "sw0", LEN, 512);
	doca_pe_progress(f.pe); /* this thread now runs the PE */
	for (uint64_t i = 0; i < LONG; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	for (uint64_t want = 0; want < LONG; want++)
		expect_success_event(f.pe, want, LEN);
	expect_no_event_for(f.pe, 20);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, LEN, f.seed), LEN);
	fixture_fini(&f);
}

/* The PE thread's single submit on an inline device takes the owner's way
 * (engine/task.c, task_one_owner), whose every rare case is a tail call to
 * a rest: a task its fast check does not let through (the full checks
 * answer, in contract order, before any credit), the first takes (fresh
 * slots, not the stack), an empty pool (an exact AGAIN), and the stack's
 * slots once events are freed. Each answers as the sectioned way does. */
Test(submit_paths, the_pe_threads_single_submits_answer_every_case_exactly)
{
	enum { CREDITS = 3 };
	struct api_fixture f;
	struct doca_buf *empty = NULL, *short_dst = NULL;
	uint64_t user = 0;

	fixture_init_started(&f, "sw0", LEN, CREDITS);
	assert_ok(doca_buf_create(f.src_mem, 0, 0, &empty));
	assert_ok(doca_buf_create(f.dst_mem, 0, LEN / 2, &short_dst));
	doca_pe_progress(f.pe); /* this thread now runs the PE */
	for (int round = 0; round < 2; round++) { /* fresh slots, then the stack's */
		struct doca_task_desc odd_type = { .type = (enum doca_task_type)999, .src = f.src, .dst = f.dst };
		struct doca_task_desc odd_flag = { .type = DOCA_TASK_COPY, .src = f.src, .dst = f.dst, .flags = 1u << 9 };

		assert_doca(doca_task_submit(f.ctx, &odd_type), DOCA_ERROR_INVALID_VALUE);
		assert_doca(doca_task_submit(f.ctx, &odd_flag), DOCA_ERROR_INVALID_VALUE);
		assert_doca(submit_copy(f.ctx, empty, f.dst, 90, 0), DOCA_ERROR_INVALID_VALUE);
		assert_doca(submit_copy(f.ctx, f.dst, f.src, 91, 0), DOCA_ERROR_NOT_PERMITTED);
		assert_doca(submit_copy(f.ctx, f.src, short_dst, 92, 0), DOCA_ERROR_INVALID_VALUE);
		assert_ok(submit_copy(f.ctx, f.src, short_dst, user++, DOCA_TASK_FLAG_ALLOW_PARTIAL));
		for (int i = 1; i < CREDITS; i++)
			assert_ok(submit_copy(f.ctx, f.src, f.dst, user++, 0));
		assert_doca(submit_copy(f.ctx, f.src, f.dst, 93, 0), DOCA_ERROR_AGAIN);
		/* an argument fault still reports itself with no credit left */
		assert_doca(submit_copy(f.ctx, f.dst, f.src, 94, 0), DOCA_ERROR_NOT_PERMITTED);
		assert_doca(submit_copy(f.ctx, f.src, short_dst, 95, 0), DOCA_ERROR_INVALID_VALUE);
		expect_partial_event(f.pe, user - CREDITS, LEN / 2);
		for (uint64_t want = user - CREDITS + 1u; want < user; want++)
			expect_success_event(f.pe, want, LEN);
		expect_no_event_for(f.pe, 10);
	}
	fini_copied_with(&f, empty, short_dst);
}

/* The refusals the owner's way hands to the sectioned way (engine/task.c,
 * task_one_owner: a stale context or buffer handle, a buffer of another
 * context, a context not RUNNING) answer exactly from the PE's thread, and
 * leave nothing held: no credit, no pin (the buffers destroy at the end),
 * the owner's way still taken for the tasks after them. */
Test(submit_paths, the_pe_threads_refused_single_submits_change_nothing)
{
	enum { CREDITS = 2 };
	struct api_fixture f;
	struct api_sibling s;
	struct doca_buf *gone = NULL;
	struct doca_ctx *gone_ctx = NULL;
	uint64_t user = 0;

	fixture_init_started(&f, "sw0", LEN, CREDITS);
	sibling_init(&s, &f, 0);
	assert_ok(doca_buf_create(f.src_mem, 0, LEN, &gone));
	assert_ok(doca_buf_destroy(gone));
	assert_ok(doca_ctx_create(&gone_ctx));
	assert_ok(doca_ctx_destroy(gone_ctx));
	doca_pe_progress(f.pe); /* this thread now runs the PE */
	for (int round = 0; round < 2; round++) { /* fresh slots, then the stack's */
		assert_doca(submit_copy(gone_ctx, f.src, f.dst, 90, 0), DOCA_ERROR_INVALID_VALUE);
		assert_doca(submit_copy(f.ctx, gone, f.dst, 91, 0), DOCA_ERROR_INVALID_VALUE);
		assert_doca(submit_copy(f.ctx, f.src, gone, 92, 0), DOCA_ERROR_INVALID_VALUE);
		assert_doca(submit_copy(f.ctx, s.src, f.dst, 93, 0), DOCA_ERROR_INVALID_VALUE);
		assert_doca(submit_copy(f.ctx, f.src, s.dst, 94, 0), DOCA_ERROR_INVALID_VALUE);
		for (int i = 0; i < CREDITS; i++)
			assert_ok(submit_copy(f.ctx, f.src, f.dst, user++, 0));
		assert_doca(submit_copy(f.ctx, f.src, f.dst, 95, 0), DOCA_ERROR_AGAIN);
		for (uint64_t want = user - CREDITS; want < user; want++)
			expect_success_event(f.pe, want, LEN);
		expect_no_event_for(f.pe, 10);
	}
	stop_and_drain(s.ctx, f.pe);
	/* not RUNNING: the state's answer, after the handles' */
	assert_doca(submit_copy(s.ctx, s.src, s.dst, 96, 0), DOCA_ERROR_BAD_STATE);
	assert_doca(submit_copy(s.ctx, gone, s.dst, 97, 0), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_ctx_start(s.ctx));
	cr_assert_eq(pattern_mismatch(f.dst_bytes, LEN, f.seed), LEN);
	sibling_fini_with_fixture(&s, &f);
}

/* The copy's length from the fast check's one compare of the lengths
 * (engine/task.c, task_check_fast), the PE thread's single submits and a
 * burst of its guarded way alike: a longer destination copies the whole
 * source, an equal one too, a shorter one copies its own length with
 * ALLOW_PARTIAL (PARTIAL, TOO_BIG) and is refused without it (exactly
 * INVALID_VALUE; the burst accepts the tasks before it, nothing after). */
Test(submit_paths, the_pe_threads_copies_take_the_shorter_length_or_refuse)
{
	struct api_fixture f;
	struct doca_buf *short_src = NULL, *short_dst = NULL;

	fixture_init_started(&f, "sw0", LEN, 8);
	assert_ok(doca_buf_create(f.src_mem, 0, LEN / 4, &short_src));
	assert_ok(doca_buf_create(f.dst_mem, 0, LEN / 2, &short_dst));
	doca_pe_progress(f.pe); /* this thread now runs the PE */
	struct doca_task_desc descs[] = {
		{ .type = DOCA_TASK_COPY, .src = short_src, .dst = f.dst, .user_data.u64 = 1 },
		{ .type = DOCA_TASK_COPY, .src = f.src, .dst = f.dst, .user_data.u64 = 2 },
		{ .type = DOCA_TASK_COPY, .src = f.src, .dst = short_dst, .user_data.u64 = 3,
		  .flags = DOCA_TASK_FLAG_ALLOW_PARTIAL },
		{ .type = DOCA_TASK_COPY, .src = f.src, .dst = short_dst, .user_data.u64 = 4 },
		{ .type = DOCA_TASK_COPY, .src = short_src, .dst = f.dst, .user_data.u64 = 5 },
	};

	for (int burst = 0; burst < 2; burst++) {
		if (burst) {
			uint32_t accepted = 99;

			assert_doca(doca_task_submit_batch(f.ctx, descs, 5, &accepted), DOCA_ERROR_INVALID_VALUE);
			cr_assert_eq(accepted, 3);
		} else {
			for (int i = 0; i < 3; i++)
				assert_ok(doca_task_submit(f.ctx, &descs[i]));
			assert_doca(doca_task_submit(f.ctx, &descs[3]), DOCA_ERROR_INVALID_VALUE);
		}
		expect_success_event(f.pe, 1, LEN / 4);
		expect_success_event(f.pe, 2, LEN);
		expect_partial_event(f.pe, 3, LEN / 2);
		expect_no_event_for(f.pe, 10);
	}
	fini_copied_with(&f, short_src, short_dst);
}

/* A fixture, a sibling on its PE and the buffers every role refuses:
 * the refusal cases of a_bursts_buffer_refusals_are_exact_both_ways and
 * the_owners_single_submit_refuses_each_buffer_not_its_roles_exactly. */
#define REFUSAL_CASES 8
struct refusals {
	struct api_fixture f;
	struct api_sibling s;
	struct doca_buf *empty_src, *empty_dst;
	struct {
		struct doca_buf *src, *dst;
		doca_error_t rc;
	} cases[REFUSAL_CASES];
};

/* A source as destination and a destination as source (NOT_PERMITTED),
 * an empty source or destination, and either buffer of another context
 * (INVALID_VALUE), and a destroyed buffer's stale handle as either
 * (INVALID_VALUE). */
static void refusals_init(struct refusals *r)
{
	struct api_fixture *f = &r->f;
	struct doca_buf *gone = NULL;

	fixture_init_started(f, "sw0", LEN, 4);
	sibling_init(&r->s, f, 0);
	assert_ok(doca_buf_create(f->src_mem, 0, 0, &r->empty_src));
	assert_ok(doca_buf_create(f->dst_mem, 0, 0, &r->empty_dst));
	assert_ok(doca_buf_create(f->src_mem, 0, LEN, &gone));
	assert_ok(doca_buf_destroy(gone));
	const doca_error_t perm = DOCA_ERROR_NOT_PERMITTED, inval = DOCA_ERROR_INVALID_VALUE;
	struct doca_buf *src[REFUSAL_CASES] = { f->src, f->dst, r->empty_src, f->src, r->s.src, f->src, gone, f->src };
	struct doca_buf *dst[REFUSAL_CASES] = { f->src, f->dst, f->dst, r->empty_dst, f->dst, r->s.dst, f->dst, gone };

	for (int c = 0; c < REFUSAL_CASES; c++) {
		r->cases[c].src = src[c];
		r->cases[c].dst = dst[c];
		r->cases[c].rc = c < 2 ? perm : inval;
	}
}

static void refusals_fini(struct refusals *r)
{
	assert_ok(doca_buf_destroy(r->empty_src));
	assert_ok(doca_buf_destroy(r->empty_dst));
	sibling_fini_with_fixture(&r->s, &r->f);
}

/* The owner's single submit (the PE's thread, engine/task.c's
 * task_one_owner) compares each buffer's role word, src_ctx or dst_ctx,
 * with its context before the handle (task_buf_owned), and that one
 * compare is the buffer's context check and its role's checks: each of
 * refusals_init's cases (a buffer of another context on the same PE among
 * them) is refused exactly, with no event; a whole copy submitted after
 * them is the one event. */
Test(submit_paths, the_owners_single_submit_refuses_each_buffer_not_its_roles_exactly)
{
	struct refusals r;

	refusals_init(&r);
	doca_pe_progress(r.f.pe); /* this thread now runs the PE: the owner's way */
	for (int c = 0; c < REFUSAL_CASES; c++)
		cr_assert_eq(submit_copy(r.f.ctx, r.cases[c].src, r.cases[c].dst, 99, 0), r.cases[c].rc, "case %d", c);
	assert_ok(submit_copy(r.f.ctx, r.f.src, r.f.dst, 7, 0));
	expect_success_event(r.f.pe, 7, LEN);
	expect_no_event_for(r.f.pe, 5);
	refusals_fini(&r);
}

/* A burst of three: two whole copies, then the task under test. */
struct burst_of_three {
	struct api_fixture *f;
	struct doca_task_desc descs[3];
	uint32_t accepted;
	doca_error_t rc;
};

static void *burst_of_three_main(void *arg)
{
	struct burst_of_three *b = arg;

	b->rc = doca_task_submit_batch(b->f->ctx, b->descs, 3, &b->accepted);
	return NULL;
}

/* A burst of three tasks on @p f: two good ones, then one of @p src and
 * @p dst, made on this thread (@p guarded: the PE's, after its first reap)
 * or on another; the two first accepted and completed, the third refused
 * with no event. Returns the third's error. */
static doca_error_t odd_handle_burst(struct api_fixture *f, struct doca_buf *src, struct doca_buf *dst,
				     bool guarded, uint64_t user, int c)
{
	struct burst_of_three b = { .f = f, .accepted = 99 };

	for (int i = 0; i < 2; i++)
		b.descs[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = f->src, .dst = f->dst,
						      .user_data.u64 = user + (uint64_t)i };
	b.descs[2] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = src, .dst = dst, .user_data.u64 = 99 };
	if (guarded) {
		burst_of_three_main(&b);
	} else {
		pthread_t t;

		cr_assert_eq(pthread_create(&t, NULL, burst_of_three_main, &b), 0);
		cr_assert_eq(pthread_join(t, NULL), 0);
	}
	cr_assert_neq(b.rc, DOCA_SUCCESS, "case %d, guarded %d", c, guarded);
	cr_assert_eq(b.accepted, 2, "case %d, guarded %d", c, guarded);
	expect_success_event(f->pe, user, LEN);
	expect_success_event(f->pe, user + 1u, LEN);
	expect_no_event_for(f->pe, 5);
	return b.rc;
}

/* The fast check's one compare per buffer (engine/task.c,
 * task_check_fast: a buffer's src_ctx / dst_ctx, its context when it
 * passes every check naming it as a source / a destination, else NULL)
 * refuses exactly what the full checks do, in a burst from another
 * thread (unguarded) and from the PE's thread (under the guard): a
 * source as destination and a destination as source (NOT_PERMITTED),
 * an empty source or destination, and either buffer of another context
 * (INVALID_VALUE), and a destroyed buffer's stale handle as either
 * (INVALID_VALUE); the two tasks before it are accepted and complete,
 * nothing else comes. Under the guard the tasks' slots come from the
 * owner's stack (every slot was used once and freed before: a burst of
 * three pops three): the refusal ends the loop that pops them
 * (engine/task.c, task_pin_take_fill_guarded), and its answer comes from
 * the full checks after. The guarded round comes first: the first burst
 * from another thread makes the pool shared for the rest of the run
 * (engine/task_pool.c), and a shared pool's take is not the loop's pop. */
Test(submit_paths, a_bursts_buffer_refusals_are_exact_both_ways)
{
	struct refusals r;
	struct api_fixture *f = &r.f;
	uint64_t user = 0;

	refusals_init(&r);
	/* this thread runs the PE, and every slot is back on its stack */
	struct doca_task_desc warm[4];
	uint32_t accepted = 0;

	(void)doca_pe_progress(f->pe);
	for (int i = 0; i < 4; i++)
		warm[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = f->src, .dst = f->dst,
						   .user_data.u64 = user + (uint64_t)i };
	assert_ok(doca_task_submit_batch(f->ctx, warm, 4, &accepted));
	cr_assert_eq(accepted, 4);
	for (int i = 0; i < 4; i++)
		expect_success_event(f->pe, user + (uint64_t)i, LEN);
	user += 4u;
	for (int guarded = 1; guarded >= 0; guarded--) {
		for (int c = 0; c < REFUSAL_CASES; c++) {
			doca_error_t rc = odd_handle_burst(f, r.cases[c].src, r.cases[c].dst, guarded, user, c);

			/* (the first reap makes this thread the PE's: the
			 * guarded round's bursts take its guard) */
			cr_assert_eq(rc, r.cases[c].rc, "case %d, guarded %d: %d", c, guarded, (int)rc);
			user += 2u;
		}
	}
	refusals_fini(&r);
}

/* The burst's fill loop under the guard makes a buffer's address from its
 * handle with andn on a CPU with BMI1 (engine/task.c, task_buf_of_andn)
 * and with an and elsewhere (task_buf_of): either answers a handle that
 * names no buffer of this process as the unguarded burst's full checks
 * do. A NULL handle, handles of tag bits only (a generation, none of an
 * address's bits) and handles of another kind (the context, its PE, a
 * memory) as the third task's source or destination: the guarded burst
 * (the PE's thread, its three slots popped off the owner's stack in the
 * fill loop, engine/task.c task_pin_take_fill_guarded) gives the same
 * answer as the unguarded one (another thread's, which makes the pool
 * shared: so every guarded burst comes first), the two tasks before it
 * accepted and completed, no event for it. */
Test(submit_paths, a_guarded_bursts_odd_buffer_handles_are_refused_as_unguarded)
{
	struct api_fixture f;
	uint64_t user = 0;

	fixture_init_started(&f, "sw0", LEN, 4);
	struct doca_buf *odd[] = {
		NULL,
		(struct doca_buf *)(uintptr_t)1u,
		(struct doca_buf *)(uintptr_t)63u,
		(struct doca_buf *)((uintptr_t)1u << 48),
		(struct doca_buf *)(((uintptr_t)0xffffu << 48) | 63u),
		(struct doca_buf *)(void *)f.ctx,
		(struct doca_buf *)(void *)f.pe,
		(struct doca_buf *)(void *)f.src_mem,
	};
	enum { NODD = sizeof(odd) / sizeof(odd[0]) };
	doca_error_t rc[2][2 * NODD];
	struct doca_task_desc warm[4];
	uint32_t accepted = 0;

	/* which fill loop the guarded bursts meet: the andn one only on an
	 * x86-64 CPU with BMI1 (engine/task.c task_cpu_has_andn); say so
	 * where it is not the one tested */
#if defined(__x86_64__)
	if (!__builtin_cpu_supports("bmi"))
		cr_log_warn("no BMI1 on this CPU: the andn fill loop is not exercised here");
#endif
	/* this thread runs the PE, and every slot is used once and back on
	 * the owner's stack: a guarded burst of three then pops all three in
	 * the fill loop (its third task, the one under test, is checked
	 * there, not in the rest) */
	(void)doca_pe_progress(f.pe);
	for (int i = 0; i < 4; i++)
		warm[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = f.src, .dst = f.dst,
						   .user_data.u64 = user + (uint64_t)i };
	assert_ok(doca_task_submit_batch(f.ctx, warm, 4, &accepted));
	cr_assert_eq(accepted, 4);
	for (int i = 0; i < 4; i++)
		expect_success_event(f.pe, user + (uint64_t)i, LEN);
	user += 4u;
	for (int guarded = 1; guarded >= 0; guarded--)
		for (int c = 0; c < 2 * NODD; c++, user += 2u)
			rc[guarded][c] = odd_handle_burst(&f, c < NODD ? odd[c] : f.src, c < NODD ? f.dst : odd[c - NODD],
							  guarded, user, c);
	for (int c = 0; c < 2 * NODD; c++)
		cr_assert_eq(rc[1][c], rc[0][c], "case %d: guarded %d, unguarded %d", c, (int)rc[1][c], (int)rc[0][c]);
	fixture_fini(&f);
}
