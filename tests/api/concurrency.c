/*
 * tests/api/concurrency.c — the threading contract seen through the public
 * API: submissions from many threads, a stop racing submitters (no accepted
 * task lost, none accepted after the stop returned), a second thread refused
 * while another runs the PE, and refused event frees (twice, or inside a
 * callback) that return no extra credit.
 */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- many submitting threads ---- */

enum { SUBMITTERS = 4, PER_THREAD = 300 };

struct submit_thread {
	struct api_fixture *f;
	int id;
	atomic_int *accepted_total;
	int unexpected;          /* an error other than AGAIN */
	doca_error_t unexpected_rc;
};

static void *submit_many_main(void *arg)
{
	struct submit_thread *t = arg;
	uint64_t deadline = now_ns() + 10ull * 1000000000ull;

	for (int i = 0; i < PER_THREAD && now_ns() < deadline;) {
		uint64_t user = (uint64_t)t->id * PER_THREAD + (uint64_t)i;
		doca_error_t rc = submit_copy(t->f->ctx, t->f->src, t->f->dst, user, 0);

		if (rc == DOCA_SUCCESS) {
			atomic_fetch_add(t->accepted_total, 1);
			i++;
		} else if (rc == DOCA_ERROR_AGAIN) {
			sched_yield(); /* let the PE's thread reap on 2 cores */
		} else {
			t->unexpected++;
			t->unexpected_rc = rc;
			break;
		}
	}
	return NULL;
}

static void many_submitters(const char *dev_name)
{
	struct api_fixture f;
	struct submit_thread t[SUBMITTERS];
	pthread_t th[SUBMITTERS];
	atomic_int accepted;
	uint8_t *seen = calloc(SUBMITTERS * PER_THREAD, 1);
	int events = 0;
	uint64_t deadline = now_ns() + 15ull * 1000000000ull;

	cr_assert_not_null(seen, "calloc");
	atomic_init(&accepted, 0);
	fixture_init_started(&f, dev_name, 256, 64);
	for (int i = 0; i < SUBMITTERS; i++) {
		t[i] = (struct submit_thread){ .f = &f, .id = i, .accepted_total = &accepted };
		cr_assert_eq(pthread_create(&th[i], NULL, submit_many_main, &t[i]), 0, "pthread_create");
	}
	while (events < SUBMITTERS * PER_THREAD) {
		struct doca_event *ev;

		doca_pe_progress(f.pe);
		while ((ev = doca_pe_get_event(f.pe)) != NULL) {
			uint64_t user = doca_event_get_user_data(ev).u64;

			cr_assert_lt(user, (uint64_t)SUBMITTERS * PER_THREAD, "user data");
			cr_assert_eq(seen[user], 0, "second event for task %llu", (unsigned long long)user);
			seen[user] = 1;
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
			doca_event_free(ev);
			events++;
		}
		cr_assert_lt(now_ns(), deadline, "%d of %d events (%d accepted)", events, SUBMITTERS * PER_THREAD,
			     atomic_load(&accepted));
	}
	for (int i = 0; i < SUBMITTERS; i++) {
		cr_assert_eq(pthread_join(th[i], NULL), 0, "pthread_join");
		cr_assert_eq(t[i].unexpected, 0, "submitter %d got %s", i, doca_error_get_name(t[i].unexpected_rc));
	}
	cr_assert_eq(atomic_load(&accepted), SUBMITTERS * PER_THREAD, "accepted");
	expect_no_event_for(f.pe, 20);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 256, f.seed), 256, "copy differs");
	fixture_fini(&f);
	free(seen);
}

Test(concurrency, four_submitting_threads_each_task_gets_exactly_one_event_inline)
{
	many_submitters("sw0");
}

Test(concurrency, four_submitting_threads_each_task_gets_exactly_one_event_engines)
{
	many_submitters("sw0:engines=2");
}

/* ---- a stop racing submitters ---- */

struct racer {
	struct api_fixture *f;
	int id;
	atomic_int *stop_returned;
	int accepted;
	int accepted_after_stop; /* SUCCESS for a call begun after doca_ctx_stop returned */
	int unexpected;
	doca_error_t unexpected_rc;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	uint64_t deadline = now_ns() + 10ull * 1000000000ull;
	uint64_t n = 0;

	while (now_ns() < deadline) {
		int stopped_before = atomic_load(r->stop_returned);
		doca_error_t rc = submit_copy(r->f->ctx, r->f->src, r->f->dst, ((uint64_t)r->id << 32) | n, 0);

		if (rc == DOCA_SUCCESS) {
			r->accepted++;
			n++;
			if (stopped_before)
				r->accepted_after_stop++;
		} else if (rc == DOCA_ERROR_BAD_STATE) {
			if (stopped_before)
				break;
		} else if (rc == DOCA_ERROR_AGAIN) {
			sched_yield();
		} else {
			r->unexpected++;
			r->unexpected_rc = rc;
			break;
		}
	}
	return NULL;
}

static void stop_races_submitters(const char *dev_name)
{
	enum { RACERS = 3 };
	struct api_fixture f;
	struct racer r[RACERS];
	pthread_t th[RACERS];
	atomic_int stop_returned;
	int events = 0, accepted = 0, shutdowns = 0;
	uint64_t t_stop, deadline;
	doca_error_t rc;
	enum doca_ctx_state st;

	atomic_init(&stop_returned, 0);
	fixture_init_started(&f, dev_name, 128, 32);
	for (int i = 0; i < RACERS; i++) {
		r[i] = (struct racer){ .f = &f, .id = i, .stop_returned = &stop_returned };
		cr_assert_eq(pthread_create(&th[i], NULL, racer_main, &r[i]), 0, "pthread_create");
	}
	/* Run for a while, reaping, then stop in the middle of the storm. */
	t_stop = now_ns() + 30000000ull;
	while (now_ns() < t_stop) {
		struct doca_event *ev;

		doca_pe_progress(f.pe);
		while ((ev = doca_pe_get_event(f.pe)) != NULL) {
			doca_event_free(ev);
			events++;
		}
	}
	rc = doca_ctx_stop(f.ctx);
	atomic_store(&stop_returned, 1);
	cr_assert(rc == DOCA_SUCCESS || rc == DOCA_ERROR_IN_PROGRESS, "doca_ctx_stop returned %s",
		  doca_error_get_name(rc));
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	for (;;) {
		struct doca_event *ev;

		doca_pe_progress(f.pe);
		while ((ev = doca_pe_get_event(f.pe)) != NULL) {
			if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS) {
				assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
				shutdowns++;
			}
			doca_event_free(ev);
			events++;
		}
		assert_ok(doca_ctx_get_state(f.ctx, &st));
		if (st == DOCA_CTX_STATE_IDLE)
			break;
		cr_assert_lt(now_ns(), deadline, "ctx stayed %s", state_name(st));
	}
	for (int i = 0; i < RACERS; i++) {
		cr_assert_eq(pthread_join(th[i], NULL), 0, "pthread_join");
		cr_assert_eq(r[i].unexpected, 0, "racer %d got %s", i, doca_error_get_name(r[i].unexpected_rc));
		cr_assert_eq(r[i].accepted_after_stop, 0, "racer %d: %d submissions accepted after stop returned", i,
			     r[i].accepted_after_stop);
		accepted += r[i].accepted;
	}
	cr_assert_gt(accepted, 0, "nothing was accepted before the stop");
	cr_assert_eq(events, accepted, "%d events for %d accepted tasks (%d flushed)", events, accepted, shutdowns);
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f);
}

Test(concurrency, stop_racing_submitters_loses_no_accepted_task_inline)
{
	stop_races_submitters("sw0");
}

Test(concurrency, stop_racing_submitters_loses_no_accepted_task_engine)
{
	stop_races_submitters("sw0:engines=1");
}

/* ---- a second thread is refused while another runs the PE ---- */

struct blocking_env {
	struct api_fixture *f;
	atomic_int in_cb;
	atomic_int release;
	int cb_calls;
};

static void blocking_event_cb(struct doca_event *ev, union doca_data ud)
{
	struct blocking_env *env = ud.ptr;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	(void)ev;
	env->cb_calls++;
	atomic_store(&env->in_cb, 1);
	while (!atomic_load(&env->release) && now_ns() < deadline)
		sleep_ms(1);
}

struct intruder {
	struct doca_pe *pe;
	struct blocking_env *env;
	uint32_t progress_rc;
	struct doca_event *get_event_rc;
	doca_error_t destroy_rc;
	int saw_cb;
};

static void *intruder_main(void *arg)
{
	struct intruder *in = arg;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	while (!atomic_load(&in->env->in_cb) && now_ns() < deadline)
		sleep_ms(1);
	in->saw_cb = atomic_load(&in->env->in_cb);
	in->progress_rc = doca_pe_progress(in->pe);
	in->get_event_rc = doca_pe_get_event(in->pe);
	in->destroy_rc = doca_pe_destroy(in->pe);
	atomic_store(&in->env->release, 1);
	return NULL;
}

Test(concurrency, second_thread_is_refused_while_another_runs_the_pe)
{
	struct api_fixture f, g;
	struct blocking_env env;
	struct intruder in;
	pthread_t th;
	struct doca_ctx *g_ctx;
	struct doca_event *ev;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	memset(&env, 0, sizeof(env));
	atomic_init(&env.in_cb, 0);
	atomic_init(&env.release, 0);
	env.f = &f;
	fixture_init(&f, "sw0", 128, 0);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, blocking_event_cb));
	assert_ok(doca_ctx_start(f.ctx));

	/* g: a second ctx on the same PE, without callback, with an event ready. */
	memset(&g, 0, sizeof(g));
	assert_ok(doca_ctx_create(&g.ctx));
	g_ctx = g.ctx;
	assert_ok(doca_ctx_set_dev(g.ctx, f.dev));
	assert_ok(doca_pe_connect_ctx(f.pe, g.ctx));
	assert_ok(doca_mem_create(g.ctx, 128, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &g.src_mem));
	assert_ok(doca_buf_create(g.src_mem, 0, 64, &g.src));
	assert_ok(doca_buf_create(g.src_mem, 64, 64, &g.dst));
	assert_ok(doca_ctx_start(g.ctx));
	assert_ok(submit_copy(g.ctx, g.src, g.dst, 1, 0));
	while (doca_pe_progress(f.pe) == 0)
		cr_assert_lt(now_ns(), deadline, "no completion for g");

	memset(&in, 0, sizeof(in));
	in.pe = f.pe;
	in.env = &env;
	in.get_event_rc = (struct doca_event *)&in; /* any non-NULL value */
	in.destroy_rc = DOCA_ERROR_UNKNOWN;
	in.progress_rc = 12345;
	cr_assert_eq(pthread_create(&th, NULL, intruder_main, &in), 0, "pthread_create");
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 2, 0));
	while (env.cb_calls == 0) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "no callback for f");
	}
	cr_assert_eq(pthread_join(th, NULL), 0, "pthread_join");
	cr_assert(in.saw_cb, "the intruder ran before the callback blocked");
	cr_assert_eq(in.progress_rc, 0, "a second thread's doca_pe_progress returned %u", in.progress_rc);
	cr_assert_null(in.get_event_rc, "a second thread took an event while another ran the PE");
	assert_doca(in.destroy_rc, DOCA_ERROR_IN_USE);

	/* The owner still has g's event. */
	ev = doca_pe_get_event(f.pe);
	cr_assert_not_null(ev, "g's ready event was lost");
	cr_assert_eq(doca_event_get_ctx(ev), g_ctx, "event ctx");
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
	doca_event_free(ev);

	stop_and_drain(g.ctx, f.pe);
	assert_ok(doca_buf_destroy(g.src));
	assert_ok(doca_buf_destroy(g.dst));
	assert_ok(doca_mem_destroy(g.src_mem));
	/* f's dev is shared: unbind g by destroying it after f's teardown closes the dev. */
	stop_and_drain(f.ctx, f.pe);
	assert_ok(doca_buf_destroy(f.src));
	assert_ok(doca_buf_destroy(f.dst));
	assert_ok(doca_mem_destroy(f.src_mem));
	assert_ok(doca_mem_destroy(f.dst_mem));
	f.src = f.dst = NULL;
	f.src_mem = f.dst_mem = NULL;
	assert_ok(doca_dev_close(f.dev));
	f.dev = NULL;
	assert_ok(doca_ctx_destroy(g_ctx));
	fixture_fini(&f);
}

/* ---- a free on another thread releases the buffers at once ---- */

struct submit_one {
	struct api_fixture *f;
	doca_error_t rc;
};

static void *submit_one_main(void *arg)
{
	struct submit_one *s = arg;

	s->rc = submit_copy(s->f->ctx, s->f->src, s->f->dst, 1, 0);
	return NULL;
}

struct free_then_destroy {
	struct doca_event *ev;
	struct doca_buf *src, *dst;
	doca_error_t src_rc, dst_rc;
};

static void *free_then_destroy_main(void *arg)
{
	struct free_then_destroy *t = arg;

	doca_event_free(t->ev);
	t->src_rc = doca_buf_destroy(t->src);
	t->dst_rc = doca_buf_destroy(t->dst);
	return NULL;
}

/* The PE's thread keeps its guard between calls, so another thread's free
 * cannot take it and sends the credit through the mailbox; the buffers
 * must still be free of the task when the free returns. They stayed in
 * use until the PE's next turn (found by an embedding: about 8 % of its
 * destroys got IN_USE). Both kinds of pins: submitted from another thread
 * (counted in the buffers), and from the PE's thread (the guard holder's
 * own count). */
static void free_elsewhere_then_destroy(bool from_pe_thread)
{
	struct api_fixture f;
	struct free_then_destroy t = { .src_rc = DOCA_ERROR_UNKNOWN, .dst_rc = DOCA_ERROR_UNKNOWN };
	pthread_t th;

	fixture_init_started(&f, "sw0", 64, 2);
	cr_assert_eq(doca_pe_progress(f.pe), 0, "an event before any task"); /* this thread runs the PE */
	if (from_pe_thread) {
		assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	} else {
		struct submit_one s = { .f = &f, .rc = DOCA_ERROR_UNKNOWN };

		cr_assert_eq(pthread_create(&th, NULL, submit_one_main, &s), 0);
		cr_assert_eq(pthread_join(th, NULL), 0);
		assert_ok(s.rc);
	}
	t.ev = wait_event(f.pe);
	t.src = f.src;
	t.dst = f.dst;
	cr_assert_eq(pthread_create(&th, NULL, free_then_destroy_main, &t), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	assert_ok(t.src_rc);
	assert_ok(t.dst_rc);
	f.src = f.dst = NULL;
	/* the credit came back through the mailbox: both credits, then AGAIN */
	struct doca_buf *s2, *d2;

	assert_ok(doca_buf_create(f.src_mem, 0, 64, &s2));
	assert_ok(doca_buf_create(f.dst_mem, 0, 64, &d2));
	(void)doca_pe_progress(f.pe);
	assert_ok(submit_copy(f.ctx, s2, d2, 2, 0));
	assert_ok(submit_copy(f.ctx, s2, d2, 3, 0));
	assert_doca(submit_copy(f.ctx, s2, d2, 4, 0), DOCA_ERROR_AGAIN);
	expect_success_event(f.pe, 2, 64);
	expect_success_event(f.pe, 3, 64);
	f.src = s2;
	f.dst = d2;
	fixture_fini(&f);
}

Test(concurrency, a_buffer_can_be_destroyed_right_after_a_free_on_another_thread_guarded_pins)
{
	free_elsewhere_then_destroy(true);
}

Test(concurrency, a_buffer_can_be_destroyed_right_after_a_free_on_another_thread_shared_pins)
{
	free_elsewhere_then_destroy(false);
}

/* ---- refused frees return no credit ---- */

Test(concurrency, double_event_free_is_refused_and_returns_one_credit)
{
	struct api_fixture f;
	struct doca_event *a, *b;

	fixture_init_started(&f, "sw0", 64, 2);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 2, 0));
	a = wait_event(f.pe);
	b = wait_event(f.pe);
	doca_event_free(a);
	doca_event_free(a); /* refused with a log line */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 3, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 4, 0), DOCA_ERROR_AGAIN);
	doca_event_free(b);
	expect_success_event(f.pe, 3, 64);
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f);
}

struct free_in_cb_env {
	struct api_fixture *f;
	int calls;
	doca_error_t resubmit_rc;
};

static void free_in_cb(struct doca_event *ev, union doca_data ud)
{
	struct free_in_cb_env *env = ud.ptr;

	env->calls++;
	if (env->calls == 1) {
		doca_event_free(ev); /* refused: the engine frees it after the callback */
		env->resubmit_rc = submit_copy(env->f->ctx, env->f->src, env->f->dst, 2, 0);
	}
}

Test(concurrency, event_free_inside_callback_is_refused)
{
	struct api_fixture f;
	struct free_in_cb_env env = { .f = &f, .resubmit_rc = DOCA_ERROR_UNKNOWN };
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	fixture_init(&f, "sw0", 64, 1);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, free_in_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	while (env.calls == 0) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "no callback");
	}
	/* The refused free returned no credit: the one credit was still held. */
	assert_doca(env.resubmit_rc, DOCA_ERROR_AGAIN);
	expect_no_event_for(f.pe, 10);
	cr_assert_eq(env.calls, 1, "%d callbacks", env.calls);
	/* After the callback the engine freed it: exactly one credit back. */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 3, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 4, 0), DOCA_ERROR_AGAIN);
	while (env.calls < 2) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "no second callback");
	}
	fixture_fini(&f);
}
