/* tests/engine/fatal_stop.c — the stop a failed queue pair makes
 * (ctx_stop_on_fatal) is the failed run's: a run started after that run
 * ended must not be stopped by it.
 *
 * A device ("fk0": the sw backend standing in for the verbs module, its
 * first completion marked fatal) fails run 1. The PE's turn delivers the
 * event through the callback, returns its credit, then stops the context
 * "for the fatal completion". Between the two, the PE's thread is held
 * (here: in the log handler called with that very message, standing in for
 * a preemption), and another thread stops the context (nothing outstanding:
 * RUNNING → IDLE, DOCA_SUCCESS) and starts it again: run 2, healthy. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "hw/sw/sw.h"
#include "tests/engine/fk_device.h"

static _Atomic bool inject_fatal;

static uint32_t fake_poll(struct hw_qp *qp, struct hw_cqe *cqes, uint32_t max)
{
	uint32_t n = hw_sw_ops.poll(qp, cqes, max);

	if (n != 0 && atomic_exchange(&inject_fatal, false))
		cqes[0].fatal = true;
	return n;
}

static struct doca_ctx *g_ctx;
static _Atomic int events;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int phase; /* 0 idle, 1 the PE is held, 2 the other thread is done */
static doca_error_t other_stop = -1, other_start = -1;

static void on_event(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
	atomic_fetch_add(&events, 1);
}

/* The PE's thread, about to stop the ctx for the fatal completion: held
 * until the other thread has stopped and restarted it. */
static void hold_handler(enum doca_log_level level, const char *msg, void *user)
{
	(void)level;
	(void)user;
	if (strstr(msg, "device queue pair failed") == NULL)
		return;
	pthread_mutex_lock(&m);
	phase = 1;
	pthread_cond_broadcast(&cv);
	while (phase != 2)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
}

static void *other(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	while (phase != 1)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	other_stop = doca_ctx_stop(g_ctx);
	other_start = doca_ctx_start(g_ctx);
	pthread_mutex_lock(&m);
	phase = 2;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
	return NULL;
}

/* What a test opens on fk0 besides its ctx and PE. */
struct fk_objects {
	struct doca_dev *dev;
	struct doca_mem *mem;
	struct doca_buf *src, *dst;
};

/* Register fk0, then bind it to @p ctx (made by the caller, with its
 * callbacks), make a memory and two buffers, connect @p pe. */
static void fk_open(struct fk_objects *o, struct doca_ctx *ctx, struct doca_pe *pe)
{
	fk_install();
	fk_ops.poll = fake_poll;
	cr_assert_eq(doca_ctx_set_event_cb(ctx, on_event), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("fk0:engines=1", &o->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(ctx, o->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_create(ctx, 8192, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &o->mem),
		     DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(o->mem, 0, 4096, &o->src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(o->mem, 4096, 4096, &o->dst), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
}

/* The ctx is IDLE: destroy everything in order. */
static void fk_close(struct fk_objects *o, struct doca_ctx *ctx, struct doca_pe *pe)
{
	cr_assert_eq(doca_buf_destroy(o->src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(o->dst), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_destroy(o->mem), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(o->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(pe), DOCA_SUCCESS);
}

Test(fatal_stop, a_failed_runs_stop_leaves_the_next_run_running)
{
	struct fk_objects o;
	struct doca_pe *pe;
	pthread_t t;

	doca_log_set_handler(hold_handler, NULL);
	cr_assert_eq(doca_ctx_create(&g_ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&pe), DOCA_SUCCESS);
	fk_open(&o, g_ctx, pe);
	cr_assert_eq(doca_ctx_start(g_ctx), DOCA_SUCCESS);
	cr_assert_eq(pthread_create(&t, NULL, other, NULL), 0);

	struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = o.src, .dst = o.dst };

	atomic_store(&inject_fatal, true);
	cr_assert_eq(doca_task_submit(g_ctx, &d), DOCA_SUCCESS);
	while (atomic_load(&events) == 0)
		(void)doca_pe_progress(pe);
	pthread_join(t, NULL);
	doca_log_set_handler(NULL, NULL);

	/* the other thread's stop found nothing outstanding; its start made run 2 */
	cr_assert_eq(other_stop, DOCA_SUCCESS, "stop: %s", doca_error_get_name(other_stop));
	cr_assert_eq(other_start, DOCA_SUCCESS, "start: %s", doca_error_get_name(other_start));

	enum doca_ctx_state st;

	cr_assert_eq(doca_ctx_get_state(g_ctx, &st), DOCA_SUCCESS);
	cr_assert_eq(st, DOCA_CTX_STATE_RUNNING,
		     "run 2 (no failure of its own) was stopped by run 1's fatal completion: state %d", st);
	cr_assert_eq(doca_task_submit(g_ctx, &d), DOCA_SUCCESS, "run 2 takes tasks");
	while (atomic_load(&events) < 2)
		(void)doca_pe_progress(pe);

	/* nothing outstanding: the stop is immediate */
	cr_assert_eq(doca_ctx_stop(g_ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_get_state(g_ctx, &st), DOCA_SUCCESS);
	cr_assert_eq(st, DOCA_CTX_STATE_IDLE);
	fk_close(&o, g_ctx, pe);
}

/* ---- the fatal stop never waits for a report under way ----
 *
 * A state callback runs under its context's report lock. The one that
 * reports RUNNING (inside doca_ctx_start, on the application's thread)
 * submits three tasks with doca_task_submit_wait, max_tasks 1, while
 * another thread progresses the PE. The first task's completion is fatal:
 * its event returns the credit the second submit waits for; then the turn
 * stops the context for the failure. Had it waited for the report lock,
 * no turn would ever run again, the second task would never complete and
 * the third submit would wait for its credit for ever (here: until its
 * timeout). The turn puts the stop off instead (a later turn makes it, the
 * failed run's tasks flushed meanwhile). */

#define WAIT_MS 5000

static struct doca_ctx *r_ctx;
static struct doca_pe *r_pe;
static struct doca_task_desc r_desc;
static doca_error_t r_wait[3] = { -1, -1, -1 };
static _Atomic bool r_done;

static void on_state_submit(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
			    enum doca_ctx_state next)
{
	(void)ctx;
	(void)ud;
	(void)prev;
	if (next != DOCA_CTX_STATE_RUNNING)
		return;
	for (unsigned i = 0; i < 3; i++)
		r_wait[i] = doca_task_submit_wait(r_ctx, &r_desc, WAIT_MS);
}

static void *progress_until_done(void *arg)
{
	(void)arg;
	while (!atomic_load(&r_done))
		(void)doca_pe_progress(r_pe);
	return NULL;
}

Test(fatal_stop, the_stop_does_not_wait_for_a_report_under_way, .timeout = 60)
{
	struct fk_objects o;
	enum doca_ctx_state st = DOCA_CTX_STATE_RUNNING;
	pthread_t t;

	cr_assert_eq(doca_ctx_create(&r_ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&r_pe), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_max_tasks(r_ctx, 1), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_state_changed_cb(r_ctx, on_state_submit), DOCA_SUCCESS);
	fk_open(&o, r_ctx, r_pe);
	r_desc = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = o.src, .dst = o.dst };
	atomic_store(&inject_fatal, true);
	cr_assert_eq(pthread_create(&t, NULL, progress_until_done, NULL), 0);

	cr_assert_eq(doca_ctx_start(r_ctx), DOCA_SUCCESS);
	for (unsigned i = 0; i < 3; i++)
		cr_assert_eq(r_wait[i], DOCA_SUCCESS, "submit_wait %u in the RUNNING callback: %s", i + 1,
			     doca_error_get_name(r_wait[i]));
	/* the failed run is stopped by a later turn: every task gets its event */
	while (atomic_load(&events) < 3 || st != DOCA_CTX_STATE_IDLE)
		cr_assert_eq(doca_ctx_get_state(r_ctx, &st), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&events), 3);
	atomic_store(&r_done, true);
	pthread_join(t, NULL);
	fk_close(&o, r_ctx, r_pe);
}

/* ---- a fatal completion among polled events without a callback ----
 *
 * A running context with no event callback hands its polled events to the
 * ready list as the turn completes them (engine/pe_progress.c,
 * turn_link_polled); a fatal completion among them sends the visit the
 * record's way instead, which reads the turn's done[] (turn_unlink_polled
 * fills it). Eight tasks complete on the engine before the PE polls,
 * and the third completion of the first poll that takes three or more
 * (seven or eight at once: the first may come alone) is made fatal. Each
 * event comes out once, in order, with its copy's status, and the context
 * stops for the failure. */

#define LISTED_TASKS 8u

static _Atomic bool inject_third;
static _Atomic uint32_t injected_of; /* the poll's count when it injected (0: none did) */

static uint32_t fatal_third_poll(struct hw_qp *qp, struct hw_cqe *cqes, uint32_t max)
{
	uint32_t n = hw_sw_ops.poll(qp, cqes, max);

	if (n >= 3 && atomic_exchange(&inject_third, false)) {
		cqes[2].fatal = true;
		atomic_store(&injected_of, n);
	}
	return n;
}

Test(fatal_stop, a_fatal_completion_among_polled_events_without_a_callback_delivers_each_once_in_order)
{
	struct fk_objects o;
	struct doca_pe *pe;
	struct doca_ctx *ctx;
	struct doca_task_desc d[LISTED_TASKS];
	uint32_t accepted = 0, got = 0;
	enum doca_ctx_state st = DOCA_CTX_STATE_RUNNING;

	cr_assert_eq(doca_ctx_create(&ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&pe), DOCA_SUCCESS);
	fk_open(&o, ctx, pe);
	fk_ops.poll = fatal_third_poll;
	cr_assert_eq(doca_ctx_set_event_cb(ctx, NULL), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(ctx), DOCA_SUCCESS);
	for (uint32_t i = 0; i < LISTED_TASKS; i++)
		d[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = o.src, .dst = o.dst,
						.user_data = { .u64 = i } };
	atomic_store(&inject_third, true);
	cr_assert_eq(doca_task_submit_batch(ctx, d, LISTED_TASKS, &accepted), DOCA_SUCCESS);
	cr_assert_eq(accepted, LISTED_TASKS);
	/* the engine completes all eight before the first poll */
	struct timespec pause = { .tv_nsec = 200 * 1000 * 1000 };

	nanosleep(&pause, NULL);
	for (int spins = 0; got < LISTED_TASKS && spins < 10000000; spins++) {
		struct doca_event *ev;

		(void)doca_pe_progress(pe);
		while ((ev = doca_pe_get_event(pe)) != NULL) {
			cr_assert_lt(got, LISTED_TASKS, "more events than tasks");
			cr_assert_eq(doca_event_get_user_data(ev).u64, got, "event %u came out as %llu", got,
				     (unsigned long long)doca_event_get_user_data(ev).u64);
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "event %u", got);
			doca_event_free(ev);
			got++;
		}
	}
	cr_assert_eq(got, LISTED_TASKS);
	cr_assert_geq(atomic_load(&injected_of), 3u, "no poll took three or more");
	/* the failure stops the context; nothing is outstanding */
	for (int spins = 0; st != DOCA_CTX_STATE_IDLE && spins < 10000000; spins++) {
		(void)doca_pe_progress(pe);
		cr_assert_eq(doca_ctx_get_state(ctx, &st), DOCA_SUCCESS);
	}
	cr_assert_eq(st, DOCA_CTX_STATE_IDLE, "the fatal completion stopped the context: state %d", st);
	fk_close(&o, ctx, pe);
}

/* ---- a failed run whose stop is put off flushes what its watched
 * rings hold ----
 *
 * The watch (engine/ring.c): a producer whose SP ring the PE watches
 * announces nothing. The RUNNING state callback (thread A, holding the
 * report lock, so the fatal stop is put off) submits task 1; a turn feeds
 * it (the ring watched) and its completion is fatal. Then A submits task
 * 2, its ring still watched: no announce. The failed run's turns flush
 * it at once, the stop still put off (A still in the callback); had a
 * turn cleared the bit and flushed only what was announced, task 2 would
 * wait for the stop, and a callback waiting for its credit would never
 * let the stop come. */

static struct doca_ctx *w_ctx;
static struct doca_pe *w_pe;
static struct doca_task_desc w_desc;
static int w_phase; /* 1 task 1 in, 2 submit task 2, 3 task 2 in, 4 return (under m) */
static doca_error_t w_submit[2] = { -1, -1 };
static _Atomic uint64_t w_user;
static _Atomic doca_error_t w_error;

static void w_on_event(struct doca_event *ev, union doca_data ud)
{
	(void)ud;
	atomic_store(&w_user, doca_event_get_user_data(ev).u64);
	atomic_store(&w_error, doca_event_get_error(ev));
	atomic_fetch_add(&events, 1);
}

static void w_wait_phase(int want)
{
	pthread_mutex_lock(&m);
	while (w_phase < want)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
}

static void w_set_phase(int to)
{
	pthread_mutex_lock(&m);
	w_phase = to;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
}

static void w_on_state(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev, enum doca_ctx_state next)
{
	(void)ctx;
	(void)ud;
	(void)prev;
	if (next != DOCA_CTX_STATE_RUNNING)
		return;
	w_desc.user_data.u64 = 1;
	w_submit[0] = doca_task_submit(w_ctx, &w_desc);
	w_set_phase(1);
	w_wait_phase(2);
	w_desc.user_data.u64 = 2;
	w_submit[1] = doca_task_submit(w_ctx, &w_desc);
	w_set_phase(3);
	w_wait_phase(4);
}

static void *w_start(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)doca_ctx_start(w_ctx);
}

Test(fatal_stop, a_failed_runs_flush_takes_a_watched_rings_unannounced_task_while_its_stop_is_put_off,
     .timeout = 60)
{
	struct fk_objects o;
	enum doca_ctx_state st;
	pthread_t t;
	void *started;

	cr_assert_eq(doca_ctx_create(&w_ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&w_pe), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_state_changed_cb(w_ctx, w_on_state), DOCA_SUCCESS);
	fk_open(&o, w_ctx, w_pe);
	cr_assert_eq(doca_ctx_set_event_cb(w_ctx, w_on_event), DOCA_SUCCESS);
	w_desc = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = o.src, .dst = o.dst };
	(void)doca_pe_progress(w_pe); /* this thread is the PE's: A is foreign */
	atomic_store(&inject_fatal, true);
	cr_assert_eq(pthread_create(&t, NULL, w_start, NULL), 0);
	w_wait_phase(1);
	cr_assert_eq(w_submit[0], DOCA_SUCCESS);
	/* a turn between the engine's steps (10 ms): the completion comes
	 * long before WATCH_IDLE empty looks end the watch */
	while (atomic_load(&events) == 0) {
		(void)doca_pe_progress(w_pe);
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	struct ctx_run *run = handle_deref(w_ctx)->run; /* A waits in the callback: the run stays */

	cr_assert(run->fatal, "task 1's completion was not fatal");
	cr_assert(!atomic_load(&run->stopping), "the stop was not put off");
	cr_assert_neq(atomic_load(&run->ring_watch), 0, "the turn that fed task 1 did not watch its ring");
	w_set_phase(2);
	w_wait_phase(3);
	cr_assert_eq(w_submit[1], DOCA_SUCCESS, "a failed run not yet stopping takes tasks: %s",
		     doca_error_get_name(w_submit[1]));
	cr_assert_eq(atomic_load(&run->mbox.summary), 0, "task 2's producer announced: its ring is not watched");
	for (unsigned i = 0; i < 1000 && atomic_load(&events) < 2; i++)
		(void)doca_pe_progress(w_pe);
	cr_assert_eq(atomic_load(&events), 2, "task 2 was not flushed while the stop was put off");
	cr_assert_eq(atomic_load(&w_user), 2u);
	cr_assert_eq(atomic_load(&w_error), DOCA_ERROR_SHUTDOWN, "task 2: %s",
		     doca_error_get_name(atomic_load(&w_error)));
	cr_assert_eq(doca_ctx_get_state(w_ctx, &st), DOCA_SUCCESS);
	cr_assert_eq(st, DOCA_CTX_STATE_RUNNING, "the stop came while the callback held the report lock");
	w_set_phase(4);
	cr_assert_eq(pthread_join(t, &started), 0);
	cr_assert_eq((doca_error_t)(uintptr_t)started, DOCA_SUCCESS);
	/* the callback returned: a later turn stops the failed run */
	for (unsigned i = 0; i < 100000 && st != DOCA_CTX_STATE_IDLE; i++) {
		(void)doca_pe_progress(w_pe);
		cr_assert_eq(doca_ctx_get_state(w_ctx, &st), DOCA_SUCCESS);
	}
	cr_assert_eq(st, DOCA_CTX_STATE_IDLE);
	cr_assert_eq(atomic_load(&events), 2);
	fk_close(&o, w_ctx, w_pe);
}
