/*
 * tests/api/ctx_state.c — the context state machine and DESIGN.md §4 "Stop
 * semantics": stop/start in every state, asynchronous stop with flush,
 * IDLE reached only inside doca_pe_progress once every event is freed,
 * state-changed callback sequences and the thread/call reporting them,
 * event callbacks (resubmit, stop, teardown from inside callbacks).
 */
#include "common.h"

#include <pthread.h>
#include <string.h>

/* ---- stop / start in each state ---- */

Test(ctx_state, new_ctx_is_idle)
{
	struct doca_ctx *ctx = NULL;

	assert_ok(doca_ctx_create(&ctx));
	assert_state(ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_ctx_destroy(ctx));
}

Test(ctx_state, stop_on_idle_ctx_is_bad_state)
{
	struct api_fixture f;
	struct doca_ctx *bare = NULL;

	assert_ok(doca_ctx_create(&bare));
	assert_doca(doca_ctx_stop(bare), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_ctx_destroy(bare));

	fixture_init(&f, "sw0", 4096, 0);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_BAD_STATE);
	assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(doca_ctx_stop(f.ctx));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_BAD_STATE);
	assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
}

Test(ctx_state, start_on_running_ctx_is_bad_state)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_doca(doca_ctx_start(f.ctx), DOCA_ERROR_BAD_STATE);
	assert_state(f.ctx, DOCA_CTX_STATE_RUNNING);
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(ctx_state, stop_and_start_on_stopping_ctx_are_in_progress_and_bad_state)
{
	struct api_fixture f;
	struct doca_event *ev;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_doca(doca_ctx_start(f.ctx), DOCA_ERROR_BAD_STATE);
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	ev = wait_event(f.pe);
	doca_event_free(ev);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_BAD_STATE);
	fixture_fini(&f);
}

Test(ctx_state, stop_with_nothing_outstanding_is_success_and_idle_at_once)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 4096, 0);
	fixture_copy_and_verify(&f);
	assert_ok(doca_ctx_stop(f.ctx));
	assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
}

/* An unreaped event (ready, never taken) is outstanding; its result is kept. */
Test(ctx_state, stop_with_unreaped_event_is_in_progress_and_keeps_its_success)
{
	struct api_fixture f;
	struct doca_event *ev;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	while (doca_pe_progress(f.pe) == 0)
		cr_assert_lt(now_ns(), deadline, "no completion");
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	ev = wait_event(f.pe);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "a completed task was turned into %d",
		     doca_event_get_status(ev));
	assert_ok(doca_event_get_error(ev));
	cr_assert_eq(doca_event_get_bytes(ev), 4096, "bytes");
	doca_event_free(ev);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 4096, f.seed), 4096, "copy differs");
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
}

/* An event taken but not freed still holds the ctx in STOPPING. */
Test(ctx_state, stop_with_reaped_but_unfreed_event_is_in_progress)
{
	struct api_fixture f;
	struct doca_event *ev;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	ev = wait_event(f.pe);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	for (int i = 0; i < 20; i++)
		doca_pe_progress(f.pe);
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	doca_event_free(ev);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
}

/* ---- flush: tasks not started complete FAILURE + SHUTDOWN ---- */

/* Inline: tasks submitted but never progressed are still in the mailbox. */
Test(ctx_state, stop_inline_flushes_every_unprogressed_task_with_shutdown)
{
	enum { N = 5 };
	struct api_fixture f;
	unsigned seen = 0;

	fixture_init_started(&f, "sw0", 4096, 0);
	for (int i = 0; i < N; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	for (int i = 0; i < N; i++) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t user = doca_event_get_user_data(ev).u64;

		cr_assert_lt(user, N, "unexpected user data");
		cr_assert_eq(seen & (1u << user), 0, "second event for task %llu", (unsigned long long)user);
		seen |= 1u << user;
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE, "flushed task status %d",
			     doca_event_get_status(ev));
		assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
		cr_assert_eq(doca_event_get_bytes(ev), 0, "a flushed task processed %zu bytes",
			     doca_event_get_bytes(ev));
		cr_assert_eq(doca_event_get_type(ev), DOCA_TASK_COPY, "type");
		cr_assert_eq(doca_event_get_ctx(ev), f.ctx, "ctx");
		doca_event_free(ev);
	}
	cr_assert_eq(bytes_mismatch(f.dst_bytes, 4096, 0), 4096, "a flushed task wrote its destination");
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f);
}

/* Inline: a task progressed before the stop completes normally; later ones are flushed. */
Test(ctx_state, stop_inline_completes_started_task_and_flushes_queued_ones)
{
	struct api_fixture f;
	struct doca_buf *win[3];
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	int got = 0;

	fixture_init(&f, "sw0", 3 * 1024, 0);
	for (int i = 0; i < 3; i++)
		assert_ok(doca_buf_create(f.dst_mem, (size_t)i * 1024, 1024, &win[i]));
	assert_ok(doca_buf_destroy(f.src));
	assert_ok(doca_buf_create(f.src_mem, 0, 1024, &f.src));
	assert_ok(doca_ctx_start(f.ctx));

	assert_ok(submit_copy(f.ctx, f.src, win[0], 0, 0));
	while (doca_pe_progress(f.pe) == 0)
		cr_assert_lt(now_ns(), deadline, "no completion");
	assert_ok(submit_copy(f.ctx, f.src, win[1], 1, 0));
	assert_ok(submit_copy(f.ctx, f.src, win[2], 2, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	while (got < 3) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t user = doca_event_get_user_data(ev).u64;

		if (user == 0) {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "started task");
			assert_ok(doca_event_get_error(ev));
			cr_assert_eq(doca_event_get_bytes(ev), 1024, "bytes");
		} else {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE, "queued task %llu",
				     (unsigned long long)user);
			assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
		}
		doca_event_free(ev);
		got++;
	}
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 1024, f.seed), 1024, "started task's copy differs");
	cr_assert_eq(bytes_mismatch(f.dst_bytes + 1024, 2048, 0), 2048, "a flushed task wrote its destination");
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	expect_no_event_for(f.pe, 10);
	for (int i = 0; i < 3; i++)
		assert_ok(doca_buf_destroy(win[i]));
	fixture_fini(&f);
}

/* The two stops below must not wait for a copy's delay: each is bounded by
 * half of it, wide enough for a loaded machine to stall that long without
 * the engine being wrong (the second test waits one delay for its started
 * copy). */
#define STOP_DELAY_US "2000000"
#define STOP_BOUND_NS 1000000000ull

/*
 * Inline with delay_us: descriptors posted but not yet due are still in the
 * SQ, so a stop flushes them at once instead of waiting for the delay.
 */
Test(ctx_state, stop_inline_with_delay_flushes_posted_tasks_without_waiting)
{
	struct api_fixture f;
	uint64_t t0;

	fixture_init_started(&f, "sw0:delay_us=" STOP_DELAY_US, 4096, 0);
	for (int i = 0; i < 3; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	cr_assert_eq(doca_pe_progress(f.pe), 0, "a delayed task completed at once");
	t0 = now_ns();
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	for (int i = 0; i < 3; i++) {
		struct doca_event *ev = wait_event(f.pe);

		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE,
			     "task %llu, posted but not yet executed, completed with status %d error %s after %llu ms",
			     (unsigned long long)doca_event_get_user_data(ev).u64, doca_event_get_status(ev),
			     doca_error_get_name(doca_event_get_error(ev)),
			     (unsigned long long)((now_ns() - t0) / 1000000));
		assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
		doca_event_free(ev);
	}
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	cr_assert_lt(now_ns() - t0, STOP_BOUND_NS, "the stop waited for the delay: %llu ms",
		     (unsigned long long)((now_ns() - t0) / 1000000));
	cr_assert_eq(bytes_mismatch(f.dst_bytes, 4096, 0), 4096, "a flushed task wrote its destination");
	fixture_fini(&f);
}

/*
 * Engine thread with delay: the stop returns at once (asynchronous); tasks
 * still in the mailbox are flushed; the one handed to the engine completes
 * either normally (started) or as flushed (still in the SQ) — never lost,
 * never doubled, and its destination matches its outcome.
 */
Test(ctx_state, stop_with_engine_is_asynchronous_and_flushes_mailbox_tasks)
{
	struct api_fixture f;
	struct doca_buf *win[3];
	int got = 0;
	unsigned seen = 0;
	uint64_t t0;

	fixture_init(&f, "sw0:engines=1,delay_us=" STOP_DELAY_US, 3 * 512, 0);
	for (int i = 0; i < 3; i++)
		assert_ok(doca_buf_create(f.dst_mem, (size_t)i * 512, 512, &win[i]));
	assert_ok(doca_buf_destroy(f.src));
	assert_ok(doca_buf_create(f.src_mem, 0, 512, &f.src));
	assert_ok(doca_ctx_start(f.ctx));

	assert_ok(submit_copy(f.ctx, f.src, win[0], 0, 0));
	cr_assert_eq(doca_pe_progress(f.pe), 0, "a delayed task completed at once");
	sleep_ms(30);
	assert_ok(submit_copy(f.ctx, f.src, win[1], 1, 0));
	assert_ok(submit_copy(f.ctx, f.src, win[2], 2, 0));
	t0 = now_ns();
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	cr_assert_lt(now_ns() - t0, STOP_BOUND_NS, "doca_ctx_stop blocked for %llu ms (delay 2 s)",
		     (unsigned long long)((now_ns() - t0) / 1000000));
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	while (got < 3) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t user = doca_event_get_user_data(ev).u64;

		cr_assert_lt(user, 3, "user data");
		cr_assert_eq(seen & (1u << user), 0, "second event for task %llu", (unsigned long long)user);
		seen |= 1u << user;
		if (user == 0 && doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS) {
			cr_assert_eq(doca_event_get_bytes(ev), 512, "bytes");
			cr_assert_eq(pattern_mismatch(f.dst_bytes, 512, f.seed), 512, "started copy differs");
		} else {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE, "task %llu status %d",
				     (unsigned long long)user, doca_event_get_status(ev));
			assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
			cr_assert_eq(bytes_mismatch(f.dst_bytes + user * 512, 512, 0), 512,
				     "flushed task %llu wrote its destination", (unsigned long long)user);
		}
		doca_event_free(ev);
		got++;
	}
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	expect_no_event_for(f.pe, 10);
	for (int i = 0; i < 3; i++)
		assert_ok(doca_buf_destroy(win[i]));
	fixture_fini(&f);
}

/* Many tasks on two engine threads, stopped midway: exactly one event each. */
struct half_submit {
	struct api_fixture *f;
	struct doca_buf **win;
	int from, to;
	doca_error_t rc;
};

static void *submit_half_main(void *arg)
{
	struct half_submit *h = arg;

	h->rc = DOCA_SUCCESS;
	for (int i = h->from; i < h->to && h->rc == DOCA_SUCCESS; i++)
		h->rc = submit_copy(h->f->ctx, h->f->src, h->win[i], (uint64_t)i, 0);
	return NULL;
}

Test(ctx_state, stop_midway_with_two_engines_gives_every_task_exactly_one_event)
{
	enum { N = 200, W = 64 };
	struct api_fixture f;
	struct doca_buf *win[N];
	uint8_t seen[N];
	int got = 0, flushed = 0;

	memset(seen, 0, sizeof(seen));
	fixture_init(&f, "sw0:engines=2", N * W, 256);
	for (int i = 0; i < N; i++)
		assert_ok(doca_buf_create(f.dst_mem, (size_t)i * W, W, &win[i]));
	assert_ok(doca_buf_destroy(f.src));
	assert_ok(doca_buf_create(f.src_mem, 0, W, &f.src));
	assert_ok(doca_ctx_start(f.ctx));
	for (int i = 0; i <= N / 2; i++)
		assert_ok(submit_copy(f.ctx, f.src, win[i], (uint64_t)i, 0));
	doca_pe_progress(f.pe);
	/* The rest from another thread: it goes through the mailbox (only the
	 * PE's own thread posts straight to the device), where the stop finds it. */
	struct half_submit rest = { .f = &f, .win = win, .from = N / 2 + 1, .to = N };
	pthread_t th;

	cr_assert_eq(pthread_create(&th, NULL, submit_half_main, &rest), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	assert_ok(rest.rc);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	while (got < N) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t user = doca_event_get_user_data(ev).u64;

		cr_assert_lt(user, N, "user data");
		cr_assert_eq(seen[user], 0, "second event for task %llu", (unsigned long long)user);
		seen[user] = 1;
		if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS) {
			cr_assert_eq(pattern_mismatch(f.dst_bytes + user * W, W, f.seed), W, "copy %llu differs",
				     (unsigned long long)user);
		} else {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE, "status");
			assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
			cr_assert_eq(bytes_mismatch(f.dst_bytes + user * W, W, 0), W, "flushed task %llu wrote",
				     (unsigned long long)user);
			flushed++;
		}
		doca_event_free(ev);
		got++;
	}
	/* The second half was never drained from the mailbox before the stop. */
	cr_assert_geq(flushed, N / 2 - 1, "only %d tasks flushed", flushed);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	expect_no_event_for(f.pe, 10);
	for (int i = 0; i < N; i++)
		assert_ok(doca_buf_destroy(win[i]));
	fixture_fini(&f);
}

/* ---- IDLE only inside doca_pe_progress once every event is freed ---- */

Test(ctx_state, stopping_ctx_becomes_idle_only_inside_progress_after_last_event_freed)
{
	struct api_fixture f;
	struct state_log log;
	struct doca_event *a, *b;

	memset(&log, 0, sizeof(log));
	fixture_init(&f, "sw0", 4096, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &log }));
	assert_ok(doca_ctx_set_state_changed_cb(f.ctx, record_state_cb));
	assert_ok(tracked_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 2, 0));
	assert_doca(tracked_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	a = wait_event(f.pe);
	b = wait_event(f.pe);
	for (int i = 0; i < 10; i++)
		tracked_progress(f.pe);
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	doca_event_free(a);
	for (int i = 0; i < 10; i++)
		tracked_progress(f.pe);
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	doca_event_free(b);
	/* Freed, but no progress yet: the transition belongs to doca_pe_progress. */
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	cr_assert_eq(log.count, 2, "%d transitions before the last progress", log.count);
	tracked_progress(f.pe);
	assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
	cr_assert_eq(log.count, 3, "%d transitions", log.count);
	cr_assert_eq(log.rec[2].prev, DOCA_CTX_STATE_STOPPING, "prev %s", state_name(log.rec[2].prev));
	cr_assert_eq(log.rec[2].next, DOCA_CTX_STATE_IDLE, "next %s", state_name(log.rec[2].next));
	cr_assert_eq(log.rec[2].where, WHERE_PROGRESS, "STOPPING->IDLE reported outside doca_pe_progress");
	fixture_fini(&f);
}

/* ---- state-changed callback sequences ---- */

static void check_record(const struct state_log *log, int i, enum doca_ctx_state prev, enum doca_ctx_state next,
			 int where)
{
	static const char *const where_names[] = { "the test", "doca_ctx_start", "doca_ctx_stop",
						   "doca_pe_progress" };

	cr_assert_gt(log->count, i, "transition %d missing (only %d)", i, log->count);
	cr_assert(log->rec[i].prev == prev && log->rec[i].next == next, "transition %d is %s->%s, expected %s->%s",
		  i, state_name(log->rec[i].prev), state_name(log->rec[i].next), state_name(prev), state_name(next));
	cr_assert_eq(log->rec[i].observed, next, "inside the callback the ctx was %s, expected %s",
		     state_name(log->rec[i].observed), state_name(next));
	cr_assert_eq(log->rec[i].where, where, "transition %s->%s reported inside %s, expected inside %s",
		     state_name(prev), state_name(next), where_names[log->rec[i].where], where_names[where]);
	cr_assert_eq(log->rec[i].user, (uint64_t)(uintptr_t)log, "callback got the wrong user data");
}

Test(ctx_state, state_cb_sequence_start_then_stop_with_nothing_outstanding)
{
	struct api_fixture f;
	struct state_log log;

	memset(&log, 0, sizeof(log));
	fixture_init(&f, "sw0", 4096, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &log }));
	assert_ok(doca_ctx_set_state_changed_cb(f.ctx, record_state_cb));
	assert_ok(tracked_start(f.ctx));
	cr_assert_eq(log.count, 1, "%d transitions reported by start", log.count);
	check_record(&log, 0, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING, WHERE_START);
	for (int i = 0; i < 5; i++)
		tracked_progress(f.pe);
	cr_assert_eq(log.count, 1, "progress reported a transition");
	assert_ok(tracked_stop(f.ctx));
	cr_assert_eq(log.count, 2, "%d transitions", log.count);
	check_record(&log, 1, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_IDLE, WHERE_STOP);
	for (int i = 0; i < 5; i++)
		tracked_progress(f.pe);
	cr_assert_eq(log.count, 2, "transitions after IDLE");
	fixture_fini(&f);
}

Test(ctx_state, state_cb_sequence_stop_with_task_outstanding)
{
	struct api_fixture f;
	struct state_log log;
	uint64_t deadline;

	memset(&log, 0, sizeof(log));
	fixture_init(&f, "sw0", 4096, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &log }));
	assert_ok(doca_ctx_set_state_changed_cb(f.ctx, record_state_cb));
	assert_ok(tracked_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_doca(tracked_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	cr_assert_eq(log.count, 2, "%d transitions", log.count);
	check_record(&log, 0, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING, WHERE_START);
	check_record(&log, 1, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING, WHERE_STOP);
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (log.count < 3) {
		struct doca_event *ev;

		tracked_progress(f.pe);
		while ((ev = doca_pe_get_event(f.pe)) != NULL)
			doca_event_free(ev);
		cr_assert_lt(now_ns(), deadline, "no STOPPING->IDLE transition");
	}
	cr_assert_eq(log.count, 3, "%d transitions", log.count);
	check_record(&log, 2, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE, WHERE_PROGRESS);
	/* A second round reports the same sequence again. */
	assert_ok(tracked_start(f.ctx));
	check_record(&log, 3, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING, WHERE_START);
	fixture_copy_and_verify(&f);
	assert_ok(tracked_stop(f.ctx));
	check_record(&log, 4, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_IDLE, WHERE_STOP);
	cr_assert_eq(log.count, 5, "%d transitions", log.count);
	fixture_fini(&f);
}

/* A state callback on RUNNING may submit. */
struct submit_on_running_env {
	struct state_log log; /* first: record_state_cb's view */
	struct api_fixture *f;
	doca_error_t rc;
	int calls;
};

static void submit_on_running_cb(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
				 enum doca_ctx_state next)
{
	struct submit_on_running_env *env = ud.ptr;

	record_state_cb(ctx, ud, prev, next);
	if (next == DOCA_CTX_STATE_RUNNING) {
		env->calls++;
		env->rc = submit_copy(ctx, env->f->src, env->f->dst, 77, 0);
	}
}

Test(ctx_state, submit_from_running_state_cb_is_accepted)
{
	struct api_fixture f;
	struct submit_on_running_env env;

	memset(&env, 0, sizeof(env));
	env.f = &f;
	env.rc = DOCA_ERROR_UNKNOWN;
	fixture_init(&f, "sw0", 4096, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_state_changed_cb(f.ctx, submit_on_running_cb));
	assert_ok(tracked_start(f.ctx));
	cr_assert_eq(env.calls, 1, "RUNNING reported %d times", env.calls);
	assert_ok(env.rc);
	expect_success_event(f.pe, 77, 4096);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 4096, f.seed), 4096, "copy differs");
	fixture_fini(&f);
}

/* DESIGN.md §4: a callback must not call doca_pe_progress (refused), a
 * state callback reported inside doca_ctx_start or doca_ctx_stop too. */
struct progress_in_report_env {
	struct api_fixture *f;
	doca_error_t submit_rc, progress_rc[2];
	uint32_t events[2];
	int calls;
};

static void progress_in_report_cb(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
				  enum doca_ctx_state next)
{
	struct progress_in_report_env *env = ud.ptr;

	(void)prev;
	if (env->calls >= 2)
		return;
	if (next == DOCA_CTX_STATE_RUNNING)
		env->submit_rc = submit_copy(ctx, env->f->src, env->f->dst, 78, 0);
	env->events[env->calls] = 99;
	env->progress_rc[env->calls] = doca_pe_try_progress(env->f->pe, &env->events[env->calls]);
	env->calls++;
}

Test(ctx_state, progress_from_a_state_callback_of_start_or_stop_is_refused)
{
	struct api_fixture f;
	struct progress_in_report_env env = { .f = &f, .submit_rc = DOCA_ERROR_UNKNOWN };

	fixture_init(&f, "sw0", 4096, 4);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_state_changed_cb(f.ctx, progress_in_report_cb));
	assert_ok(doca_ctx_start(f.ctx));
	cr_assert_eq(env.calls, 1, "RUNNING reported %d times", env.calls);
	assert_ok(env.submit_rc);
	assert_doca(env.progress_rc[0], DOCA_ERROR_NOT_PERMITTED);
	cr_assert_eq(env.events[0], 0u, "a refused progress reports %u events", env.events[0]);
	/* the refusal ran no turn: the inline copy is still undone, no event ready */
	cr_assert_eq(bytes_mismatch(f.dst_bytes, 4096, 0), 4096u, "the copy ran inside the refused call");
	cr_assert_null(doca_pe_get_event(f.pe), "an event was made ready by the refused call");
	expect_success_event(f.pe, 78, 4096);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 4096, f.seed), 4096u, "copy differs");
	assert_ok(doca_ctx_stop(f.ctx));
	cr_assert_eq(env.calls, 2, "IDLE reported %d times", env.calls);
	assert_doca(env.progress_rc[1], DOCA_ERROR_NOT_PERMITTED);
	cr_assert_eq(env.events[1], 0u, "a refused progress reports %u events", env.events[1]);
	enum doca_ctx_state st;

	assert_ok(doca_ctx_get_state(f.ctx, &st));
	cr_assert_eq(st, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
}

/* ---- event callbacks ---- */

struct event_env {
	struct state_log log; /* first: record_state_cb's view */
	struct api_fixture *f;
	int events;
	int target;             /* resubmit until this many events */
	int successes;
	int shutdowns;
	doca_error_t resubmit_rc;
	doca_error_t stop_rc;
	enum doca_ctx_state state_in_cb;
	uint32_t progress_in_cb;
	uint64_t users_seen;    /* bitmap of user data */
	bool saw_wrong_user_data;
};

static void count_event_cb(struct doca_event *ev, union doca_data ud)
{
	struct event_env *env = ud.ptr;
	uint64_t user = doca_event_get_user_data(ev).u64;

	env->events++;
	if (user < 64)
		env->users_seen |= 1ull << user;
	if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS)
		env->successes++;
	else if (doca_event_get_error(ev) == DOCA_ERROR_SHUTDOWN)
		env->shutdowns++;
}

Test(ctx_state, event_cb_receives_every_event_and_get_event_none)
{
	struct api_fixture f;
	struct event_env env;
	uint64_t deadline;
	uint32_t delivered = 0;

	memset(&env, 0, sizeof(env));
	env.f = &f;
	fixture_init(&f, "sw0", 4096, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, count_event_cb));
	assert_ok(doca_ctx_start(f.ctx));
	for (int i = 0; i < 5; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (env.events < 5) {
		delivered += tracked_progress(f.pe);
		cr_assert_null(doca_pe_get_event(f.pe), "an event of a ctx with a callback came through get_event");
		cr_assert_lt(now_ns(), deadline, "only %d callbacks", env.events);
	}
	cr_assert_eq(delivered, 5, "doca_pe_progress reported %u deliveries for 5 callbacks", delivered);
	expect_no_event_for(f.pe, 10);
	cr_assert_eq(env.events, 5, "%d callbacks", env.events);
	cr_assert_eq(env.successes, 5, "%d successes", env.successes);
	cr_assert_eq(env.users_seen, 0x1f, "user data seen %llx", (unsigned long long)env.users_seen);
	/* The engine freed the events: the ctx stops at once. */
	assert_ok(doca_ctx_stop(f.ctx));
	fixture_fini(&f);
}

Test(ctx_state, set_event_cb_null_restores_get_event)
{
	struct api_fixture f;
	struct event_env env;

	memset(&env, 0, sizeof(env));
	fixture_init(&f, "sw0", 4096, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, count_event_cb));
	assert_ok(doca_ctx_set_event_cb(f.ctx, NULL));
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	cr_assert_eq(env.events, 0, "the cleared callback ran");
	fixture_fini(&f);
}

static void resubmit_event_cb(struct doca_event *ev, union doca_data ud)
{
	struct event_env *env = ud.ptr;

	count_event_cb(ev, ud);
	if (env->events < env->target) {
		doca_error_t rc = submit_copy(env->f->ctx, env->f->src, env->f->dst, (uint64_t)env->events, 0);

		if (rc != DOCA_SUCCESS)
			env->resubmit_rc = rc;
	}
}

Test(ctx_state, resubmit_from_event_cb_chains_exactly_target_tasks)
{
	struct api_fixture f;
	struct event_env env;
	uint64_t deadline;

	memset(&env, 0, sizeof(env));
	env.f = &f;
	env.target = 100;
	fixture_init(&f, "sw0", 256, 2);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, resubmit_event_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 0, 0));
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (env.events < env.target) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "only %d callbacks", env.events);
	}
	assert_ok(env.resubmit_rc);
	expect_no_event_for(f.pe, 10);
	cr_assert_eq(env.events, 100, "%d callbacks", env.events);
	cr_assert_eq(env.successes, 100, "%d successes", env.successes);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 256, f.seed), 256, "copy differs");
	fixture_fini(&f);
}

/* An event in its callback still holds its credit: with one credit, resubmit is AGAIN. */
Test(ctx_state, resubmit_from_event_cb_with_single_credit_is_again)
{
	struct api_fixture f;
	struct event_env env;
	uint64_t deadline;

	memset(&env, 0, sizeof(env));
	env.f = &f;
	env.target = 2;
	fixture_init(&f, "sw0", 256, 1);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, resubmit_event_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 0, 0));
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (env.events < 1) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "no callback");
	}
	assert_doca(env.resubmit_rc, DOCA_ERROR_AGAIN);
	expect_no_event_for(f.pe, 10);
	cr_assert_eq(env.events, 1, "%d callbacks", env.events);
	/* After the callback returned the credit is back. */
	env.target = 0;
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (env.events < 2) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "no callback");
	}
	fixture_fini(&f);
}

static int nested_depth, nested_max_depth;

static void progress_in_event_cb(struct doca_event *ev, union doca_data ud)
{
	struct event_env *env = ud.ptr;

	nested_depth++;
	if (nested_depth > nested_max_depth)
		nested_max_depth = nested_depth;
	count_event_cb(ev, ud);
	if (env->events == 1)
		env->progress_in_cb = doca_pe_progress(env->f->pe);
	nested_depth--;
}

/* doca_pe_progress from inside a callback is refused (returns 0, runs nothing). */
Test(ctx_state, progress_from_event_cb_is_refused)
{
	struct api_fixture f;
	struct event_env env;
	uint64_t deadline;

	memset(&env, 0, sizeof(env));
	env.f = &f;
	env.progress_in_cb = 12345;
	nested_depth = nested_max_depth = 0;
	fixture_init(&f, "sw0", 256, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, progress_in_event_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 0, 0));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (env.events < 2) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "only %d callbacks", env.events);
	}
	cr_assert_eq(env.progress_in_cb, 0, "nested doca_pe_progress returned %u", env.progress_in_cb);
	cr_assert_eq(nested_max_depth, 1, "a callback ran inside a callback");
	cr_assert_eq(env.events, 2, "%d callbacks", env.events);
	fixture_fini(&f);
}

/* Stop from the callback of the last outstanding task: IN_PROGRESS, IDLE right after. */
static void stop_in_event_cb(struct doca_event *ev, union doca_data ud)
{
	struct event_env *env = ud.ptr;

	count_event_cb(ev, ud);
	if (env->events == 1) {
		env->stop_rc = doca_ctx_stop(env->f->ctx);
		assert_ok(doca_ctx_get_state(env->f->ctx, &env->state_in_cb));
	}
}

Test(ctx_state, stop_from_last_task_event_cb_is_in_progress_then_idle_after_callback)
{
	struct api_fixture f;
	struct event_env env;
	uint64_t deadline;

	memset(&env, 0, sizeof(env));
	env.f = &f;
	env.stop_rc = DOCA_ERROR_UNKNOWN;
	fixture_init(&f, "sw0", 4096, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, stop_in_event_cb));
	assert_ok(doca_ctx_set_state_changed_cb(f.ctx, record_state_cb));
	assert_ok(tracked_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 0, 0));
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (env.events < 1) {
		tracked_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "no callback");
	}
	assert_doca(env.stop_rc, DOCA_ERROR_IN_PROGRESS);
	cr_assert_eq(env.state_in_cb, DOCA_CTX_STATE_STOPPING, "state inside the callback %s",
		     state_name(env.state_in_cb));
	/* The event was freed when the callback returned; IDLE within that same progress call. */
	assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
	cr_assert_eq(env.log.count, 3, "%d transitions", env.log.count);
	check_record(&env.log, 0, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING, WHERE_START);
	/* doca_ctx_stop was called inside doca_pe_progress (from the callback). */
	check_record(&env.log, 1, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING, WHERE_PROGRESS);
	check_record(&env.log, 2, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE, WHERE_PROGRESS);
	cr_assert_eq(env.successes, 1, "the task did not succeed");
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 4096, f.seed), 4096, "copy differs");
	fixture_fini(&f);
}

/* Resubmit then stop from a callback: the resubmitted tasks were never started: flushed. */
static void resubmit_then_stop_cb(struct doca_event *ev, union doca_data ud)
{
	struct event_env *env = ud.ptr;

	count_event_cb(ev, ud);
	if (env->events == 1) {
		env->resubmit_rc = submit_copy(env->f->ctx, env->f->src, env->f->dst, 1, 0);
		if (env->resubmit_rc == DOCA_SUCCESS)
			env->resubmit_rc = submit_copy(env->f->ctx, env->f->src, env->f->dst, 2, 0);
		env->stop_rc = doca_ctx_stop(env->f->ctx);
	}
}

Test(ctx_state, stop_from_event_cb_flushes_tasks_resubmitted_before_it)
{
	struct api_fixture f;
	struct event_env env;

	memset(&env, 0, sizeof(env));
	env.f = &f;
	env.stop_rc = DOCA_ERROR_UNKNOWN;
	fixture_init(&f, "sw0", 4096, 4);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, resubmit_then_stop_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 0, 0));
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(env.resubmit_rc);
	assert_doca(env.stop_rc, DOCA_ERROR_IN_PROGRESS);
	cr_assert_eq(env.events, 3, "%d callbacks for 3 tasks", env.events);
	cr_assert_eq(env.successes, 1, "%d successes", env.successes);
	cr_assert_eq(env.shutdowns, 2, "%d flushed", env.shutdowns);
	cr_assert_eq(env.users_seen, 0x7, "user data seen %llx", (unsigned long long)env.users_seen);
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f);
}

/* ---- full teardown from inside the IDLE state callback ---- */

struct teardown_env {
	struct api_fixture *f;
	int idle_calls;
	doca_error_t rc[7];
};

static void teardown_on_idle_cb(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
				enum doca_ctx_state next)
{
	struct teardown_env *env = ud.ptr;
	struct api_fixture *f = env->f;

	(void)prev;
	if (next != DOCA_CTX_STATE_IDLE)
		return;
	env->idle_calls++;
	env->rc[0] = doca_buf_destroy(f->src);
	env->rc[1] = doca_buf_destroy(f->dst);
	env->rc[2] = doca_mem_destroy(f->src_mem);
	env->rc[3] = doca_mem_destroy(f->dst_mem);
	env->rc[4] = doca_dev_close(f->dev);
	env->rc[5] = doca_ctx_destroy(ctx);
	env->rc[6] = DOCA_SUCCESS;
}

static void check_teardown(const struct teardown_env *env)
{
	static const char *const steps[] = { "buf_destroy(src)", "buf_destroy(dst)", "mem_destroy(src)",
					     "mem_destroy(dst)", "dev_close", "ctx_destroy", "-" };

	cr_assert_eq(env->idle_calls, 1, "IDLE reported %d times", env->idle_calls);
	for (int i = 0; i < 7; i++)
		cr_assert_eq(env->rc[i], DOCA_SUCCESS, "%s inside the IDLE callback returned %s", steps[i],
			     doca_error_get_name(env->rc[i]));
}

Test(ctx_state, full_teardown_from_idle_state_cb_inside_progress)
{
	struct api_fixture f;
	struct teardown_env env;
	struct doca_pe *pe;
	uint64_t deadline;

	memset(&env, 0, sizeof(env));
	env.f = &f;
	for (int i = 0; i < 7; i++)
		env.rc[i] = DOCA_ERROR_UNKNOWN;
	fixture_init(&f, "sw0:engines=1", 4096, 0);
	pe = f.pe;
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_state_changed_cb(f.ctx, teardown_on_idle_cb));
	assert_ok(doca_ctx_start(f.ctx));
	for (int i = 0; i < 4; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (env.idle_calls == 0) {
		struct doca_event *ev;

		doca_pe_progress(pe);
		while ((ev = doca_pe_get_event(pe)) != NULL)
			doca_event_free(ev);
		cr_assert_lt(now_ns(), deadline, "never IDLE");
	}
	check_teardown(&env);
	/* The PE keeps working after its ctx was destroyed inside it. */
	for (int i = 0; i < 5; i++)
		cr_assert_eq(doca_pe_progress(pe), 0, "events after teardown");
	cr_assert_null(doca_pe_get_event(pe), "event after teardown");
	assert_ok(doca_pe_destroy(pe));
}

Test(ctx_state, full_teardown_from_idle_state_cb_inside_stop)
{
	struct api_fixture f;
	struct teardown_env env;
	struct doca_pe *pe;

	memset(&env, 0, sizeof(env));
	env.f = &f;
	for (int i = 0; i < 7; i++)
		env.rc[i] = DOCA_ERROR_UNKNOWN;
	fixture_init(&f, "sw0", 4096, 0);
	pe = f.pe;
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_state_changed_cb(f.ctx, teardown_on_idle_cb));
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	assert_ok(doca_ctx_stop(f.ctx));
	check_teardown(&env);
	cr_assert_eq(doca_pe_progress(pe), 0, "events after teardown");
	assert_ok(doca_pe_destroy(pe));
}

/* A buffer is in use until the event of its task is freed, but its own
 * task's callback may destroy it: it goes with the event. */
struct buf_in_cb_env {
	struct api_fixture *f;
	int calls;
	doca_error_t destroy_in_cb;
};

static void destroy_buf_in_cb(struct doca_event *ev, union doca_data ud)
{
	struct buf_in_cb_env *env = ud.ptr;

	(void)ev;
	env->calls++;
	env->destroy_in_cb = doca_buf_destroy(env->f->dst);
}

Test(ctx_state, buf_destroy_inside_its_tasks_event_cb_succeeds)
{
	struct api_fixture f;
	struct buf_in_cb_env env = { .f = &f, .destroy_in_cb = DOCA_ERROR_UNKNOWN };
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	fixture_init(&f, "sw0", 64, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, destroy_buf_in_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	while (env.calls == 0) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "no callback");
	}
	assert_doca(env.destroy_in_cb, DOCA_SUCCESS);
	assert_doca(doca_buf_destroy(f.dst), DOCA_ERROR_INVALID_VALUE); /* already gone */
	f.dst = NULL;
	fixture_fini(&f);
}
