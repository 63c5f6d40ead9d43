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

#include "engine/engine.h"
#include "hw/hw_module.h"
#include "hw/sw/sw.h"

static struct hw_ops fake_ops;
static _Atomic bool inject_fatal;

static uint32_t fake_poll(struct hw_qp *qp, struct hw_cqe *cqes, uint32_t max)
{
	uint32_t n = hw_sw_ops.poll(qp, cqes, max);

	if (n != 0 && atomic_exchange(&inject_fatal, false))
		cqes[0].fatal = true;
	return n;
}

static doca_error_t fake_open(const char *name, const char *params, struct hw_dev **out)
{
	if (strcmp(name, "fk0") != 0)
		return DOCA_ERROR_NOT_FOUND;
	return hw_sw_ops.open("sw0", params, out);
}

static doca_error_t fake_qp_create(struct hw_dev *dev, const struct hw_qp_attr *attr, struct hw_qp **qp)
{
	doca_error_t err = hw_sw_ops.qp_create(dev, attr, qp);

	if (err == DOCA_SUCCESS)
		(*qp)->ops = &fake_ops;
	return err;
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

Test(fatal_stop, a_failed_runs_stop_leaves_the_next_run_running)
{
	struct doca_dev *dev;
	struct doca_mem *mem;
	struct doca_buf *src, *dst;
	struct doca_pe *pe;
	pthread_t t;

	fake_ops = hw_sw_ops;
	fake_ops.name = "verbs";
	fake_ops.open = fake_open;
	fake_ops.qp_create = fake_qp_create;
	fake_ops.poll = fake_poll;
	hw_module_preload("verbs", &fake_ops);
	doca_log_set_handler(hold_handler, NULL);

	cr_assert_eq(doca_ctx_create(&g_ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&pe), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_event_cb(g_ctx, on_event), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("fk0:engines=1", &dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(g_ctx, dev), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_create(g_ctx, 8192, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem),
		     DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(mem, 0, 4096, &src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(mem, 4096, 4096, &dst), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(pe, g_ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(g_ctx), DOCA_SUCCESS);
	cr_assert_eq(pthread_create(&t, NULL, other, NULL), 0);

	struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = src, .dst = dst };

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
	cr_assert_eq(doca_buf_destroy(src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(dst), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_destroy(mem), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(g_ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(pe), DOCA_SUCCESS);
}
