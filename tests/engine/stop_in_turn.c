/* tests/engine/stop_in_turn.c — a doca_ctx_stop that could deadlock on a
 * report under way never waits for it (engine/ctx_run.c, "Report order").
 *
 * A state callback runs under its context's report lock. The one reporting
 * RUNNING (inside doca_ctx_start, on the application's thread) submits with
 * doca_task_submit_wait, max_tasks 1: the second submit waits for the
 * credit of the first task, which only the PE's turn returns, after that
 * task's event callback. That callback stops the context. Had the stop
 * waited for the report lock, the turn would never come back: the second
 * submit would wait for ever (here: until its timeout).
 *
 * Second case: two contexts whose RUNNING callbacks, running together on
 * two threads, each stop the other's context (each holds its own report
 * lock and wants the other's). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "../api/common.h"

#define WAIT_MS 3000

/* What a callback saw, in order (callbacks run on other threads than the
 * test's: they record, the test's thread asserts; n counts past 8 too). */
struct seen {
	int n;
	enum doca_ctx_state prev[8], next[8];
	bool on_pe_thread[8];
};

static void seen_add(struct seen *s, enum doca_ctx_state prev, enum doca_ctx_state next, bool on_pe)
{
	if (s->n < 8) {
		s->prev[s->n] = prev;
		s->next[s->n] = next;
		s->on_pe_thread[s->n] = on_pe;
	}
	s->n++;
}

/* ---- an event callback's stop while the RUNNING report waits for its PE ---- */

static struct api_fixture f;
static struct doca_task_desc f_desc;
static doca_error_t f_wait[2] = { -1, -1 };
static doca_error_t f_stop = -1;
static enum doca_ctx_state f_after_stop = (enum doca_ctx_state)-1;
static doca_error_t f_get_state = -1;
static struct seen f_seen;
static _Atomic int f_events;
static _Atomic bool f_done, f_stopped;
static pthread_t f_pe_thread;

static void f_on_state(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev, enum doca_ctx_state next)
{
	(void)ctx;
	(void)ud;
	seen_add(&f_seen, prev, next, pthread_equal(pthread_self(), f_pe_thread));
	if (next != DOCA_CTX_STATE_RUNNING)
		return;
	for (unsigned i = 0; i < 2; i++)
		f_wait[i] = doca_task_submit_wait(f.ctx, &f_desc, WAIT_MS);
}

static void f_on_event(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
	if (atomic_fetch_add(&f_events, 1) != 0)
		return;
	f_stop = doca_ctx_stop(f.ctx);
	f_get_state = doca_ctx_get_state(f.ctx, &f_after_stop);
	atomic_store(&f_stopped, true);
}

static void *f_progress(void *arg)
{
	(void)arg;
	while (!atomic_load(&f_done))
		(void)doca_pe_progress(f.pe);
	return NULL;
}

Test(stop_in_turn, an_event_callbacks_stop_does_not_wait_for_a_report_under_way)
{
	enum doca_ctx_state st = DOCA_CTX_STATE_RUNNING;

	fixture_init(&f, "sw0", 4096, 1);
	assert_ok(doca_ctx_set_event_cb(f.ctx, f_on_event));
	assert_ok(doca_ctx_set_state_changed_cb(f.ctx, f_on_state));
	f_desc = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = f.src, .dst = f.dst };
	cr_assert_eq(pthread_create(&f_pe_thread, NULL, f_progress, NULL), 0);

	assert_ok(doca_ctx_start(f.ctx));
	cr_assert_eq(f_wait[0], DOCA_SUCCESS, "submit_wait 1: %s", doca_error_get_name(f_wait[0]));
	/* the stop left RUNNING while the second submit waited: refused, promptly */
	cr_assert_eq(f_wait[1], DOCA_ERROR_BAD_STATE, "submit_wait 2: %s", doca_error_get_name(f_wait[1]));
	/* (the waiter may wake before the stop's grace period is over) */
	while (!atomic_load(&f_stopped))
		sched_yield();
	/* the stop made inside the turn: STOPPING at once (the report came later) */
	cr_assert_eq(f_stop, DOCA_ERROR_IN_PROGRESS, "stop in the event callback: %s", doca_error_get_name(f_stop));
	assert_ok(f_get_state);
	cr_assert_eq(f_after_stop, DOCA_CTX_STATE_STOPPING);
	while (st != DOCA_CTX_STATE_IDLE)
		assert_ok(doca_ctx_get_state(f.ctx, &st));
	atomic_store(&f_done, true);
	pthread_join(f_pe_thread, NULL);

	cr_assert_eq(atomic_load(&f_events), 1, "one task accepted, one event");
	/* every transition reported once, in order; the put-off RUNNING →
	 * STOPPING and STOPPING → IDLE by the PE's thread */
	cr_assert_eq(f_seen.n, 3);
	cr_assert(f_seen.prev[0] == DOCA_CTX_STATE_IDLE && f_seen.next[0] == DOCA_CTX_STATE_RUNNING &&
		  !f_seen.on_pe_thread[0]);
	cr_assert(f_seen.prev[1] == DOCA_CTX_STATE_RUNNING && f_seen.next[1] == DOCA_CTX_STATE_STOPPING &&
		  f_seen.on_pe_thread[1]);
	cr_assert(f_seen.prev[2] == DOCA_CTX_STATE_STOPPING && f_seen.next[2] == DOCA_CTX_STATE_IDLE &&
		  f_seen.on_pe_thread[2]);
	fixture_fini(&f);
}

/* ---- two RUNNING callbacks, each stopping the other's context ---- */

static struct api_fixture a;
static struct api_sibling b;
static pthread_barrier_t ab_barrier;
static doca_error_t a_stop_b = -1, b_stop_a = -1;
static struct seen a_seen, b_seen;

static void ab_on_state(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev, enum doca_ctx_state next)
{
	bool is_a = ctx == a.ctx;

	(void)ud;
	seen_add(is_a ? &a_seen : &b_seen, prev, next, false);
	if (next != DOCA_CTX_STATE_RUNNING)
		return;
	/* both reports under way (each thread holds its context's report lock) */
	pthread_barrier_wait(&ab_barrier);
	if (is_a)
		a_stop_b = doca_ctx_stop(b.ctx);
	else
		b_stop_a = doca_ctx_stop(a.ctx);
	/* ... and still, while the other stops this one */
	pthread_barrier_wait(&ab_barrier);
}

static void *start_b(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)doca_ctx_start(b.ctx);
}

Test(stop_in_turn, two_state_callbacks_stopping_each_others_context)
{
	void *b_start;
	pthread_t t;

	fixture_init_started(&a, "sw0", 4096, 0);
	sibling_init(&b, &a, 0);
	stop_and_drain(b.ctx, a.pe);
	stop_and_drain(a.ctx, a.pe);
	assert_ok(doca_ctx_set_state_changed_cb(a.ctx, ab_on_state));
	assert_ok(doca_ctx_set_state_changed_cb(b.ctx, ab_on_state));
	cr_assert_eq(pthread_barrier_init(&ab_barrier, NULL, 2), 0);

	cr_assert_eq(pthread_create(&t, NULL, start_b, NULL), 0);
	assert_ok(doca_ctx_start(a.ctx));
	pthread_join(t, &b_start);
	cr_assert_eq((doca_error_t)(intptr_t)b_start, DOCA_SUCCESS);
	/* each stop found the other's report under way: put off, STOPPING */
	cr_assert_eq(a_stop_b, DOCA_ERROR_IN_PROGRESS, "%s", doca_error_get_name(a_stop_b));
	cr_assert_eq(b_stop_a, DOCA_ERROR_IN_PROGRESS, "%s", doca_error_get_name(b_stop_a));
	assert_state(a.ctx, DOCA_CTX_STATE_STOPPING);
	assert_state(b.ctx, DOCA_CTX_STATE_STOPPING);
	progress_until_state(a.pe, a.ctx, DOCA_CTX_STATE_IDLE);
	progress_until_state(a.pe, b.ctx, DOCA_CTX_STATE_IDLE);
	for (int i = 0; i < 2; i++) {
		struct seen *s = i == 0 ? &a_seen : &b_seen;

		/* (the callbacks were set after the setup's run) */
		cr_assert_eq(s->n, 3, "ctx %c: %d reports", 'a' + i, s->n);
		cr_assert(s->prev[0] == DOCA_CTX_STATE_IDLE && s->next[0] == DOCA_CTX_STATE_RUNNING);
		cr_assert(s->prev[1] == DOCA_CTX_STATE_RUNNING && s->next[1] == DOCA_CTX_STATE_STOPPING);
		cr_assert(s->prev[2] == DOCA_CTX_STATE_STOPPING && s->next[2] == DOCA_CTX_STATE_IDLE);
	}
	pthread_barrier_destroy(&ab_barrier);
	sibling_fini_with_fixture(&b, &a);
}
