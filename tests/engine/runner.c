/* tests/engine/runner.c — at most one thread runs a PE; others are refused
 * and change nothing: progress, event mode's arm and clear, destroying one
 * PE twice at once (decided under the guard); a free from another thread is
 * never refused. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "tests/api/common.h"
#include "tests/api/trap.h"

struct fixture {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_mem *mem;
	struct doca_buf *src, *dst;
	struct doca_pe *pe;
};

static void fixture_up_with(struct fixture *f, doca_event_cb_t cb)
{
	cr_assert_eq(doca_ctx_create(&f->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_event_cb(f->ctx, cb), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("sw0", &f->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(f->ctx, f->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_create(f->ctx, 8192, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &f->mem),
		     DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(f->mem, 0, 4096, &f->src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(f->mem, 4096, 4096, &f->dst), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&f->pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(f->pe, f->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(f->ctx), DOCA_SUCCESS);
}

static void fixture_up(struct fixture *f)
{
	fixture_up_with(f, NULL);
}

static void fixture_down(struct fixture *f)
{
	cr_assert_eq(doca_ctx_stop(f->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(f->src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(f->dst), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_destroy(f->mem), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(f->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(f->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(f->pe), DOCA_SUCCESS);
}

struct holder {
	struct doca_pe *pe;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int phase; /* 1: holding the guard, 2: told to release */
};

static void *hold_runner(void *arg)
{
	struct holder *h = arg;

	cr_assert_eq(runner_enter(&h->pe->runner), RUNNER_ENTERED);
	pthread_mutex_lock(&h->lock);
	h->phase = 1;
	pthread_cond_broadcast(&h->cond);
	while (h->phase != 2)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	runner_exit(&h->pe->runner);
	return NULL;
}

Test(runner, a_second_thread_is_refused_and_nothing_changes)
{
	struct fixture f;
	struct holder h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct doca_task_desc desc;
	pthread_t t;

	fixture_up(&f);
	memset(&desc, 0, sizeof(desc));
	desc.type = DOCA_TASK_COPY;
	desc.src = f.src;
	desc.dst = f.dst;
	memset(handle_deref(f.src)->data, 0x5a, 4096);
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS);

	h.pe = f.pe;
	pthread_create(&t, NULL, hold_runner, &h);
	pthread_mutex_lock(&h.lock);
	while (h.phase != 1)
		pthread_cond_wait(&h.cond, &h.lock);
	pthread_mutex_unlock(&h.lock);

	cr_assert_eq(doca_pe_progress(f.pe), 0, "refused while another thread runs the PE");
	uint32_t n = 7;

	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_ERROR_IN_USE);
	cr_assert_eq(n, 0);
	cr_assert_null(doca_pe_get_event(f.pe));
	cr_assert_eq(((uint8_t *)handle_deref(f.dst)->data)[0], 0, "the copy did not run");
	cr_assert_eq(doca_pe_destroy(f.pe), DOCA_ERROR_IN_USE);

	pthread_mutex_lock(&h.lock);
	h.phase = 2;
	pthread_cond_broadcast(&h.cond);
	pthread_mutex_unlock(&h.lock);
	pthread_join(t, NULL);

	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_SUCCESS);
	cr_assert_eq(n, 1);
	struct doca_event *ev = doca_pe_get_event(f.pe);

	cr_assert_not_null(ev);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	cr_assert_eq(memcmp(handle_deref(f.src)->data, handle_deref(f.dst)->data, 4096), 0);
	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_SUCCESS, "an idle turn is not a refusal");
	cr_assert_eq(n, 0);
	doca_event_free(ev);
	fixture_down(&f);
}

static int nested_result = -1;
static doca_error_t nested_try = DOCA_SUCCESS;
static uint32_t nested_events = 7;

static void progress_from_callback(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	nested_result = (int)doca_pe_progress(ud.ptr);
	nested_try = doca_pe_try_progress(ud.ptr, &nested_events);
}

Test(runner, progress_from_inside_a_callback_is_refused)
{
	struct fixture f;
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY };

	cr_assert_eq(doca_ctx_create(&f.ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&f.pe), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_event_cb(f.ctx, progress_from_callback), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = f.pe }), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("sw0", &f.dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(f.ctx, f.dev), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_create(f.ctx, 8192, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &f.mem),
		     DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(f.mem, 0, 4096, &f.src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(f.mem, 4096, 4096, &f.dst), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(f.pe, f.ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(f.ctx), DOCA_SUCCESS);
	desc.src = f.src;
	desc.dst = f.dst;
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_progress(f.pe), 1);
	cr_assert_eq(nested_result, 0);
	cr_assert_eq(nested_try, DOCA_ERROR_NOT_PERMITTED);
	cr_assert_eq(nested_events, 0);
	fixture_down(&f);
}

static void ignore_event(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
}

Test(runner, try_progress_names_each_refusal)
{
	struct fixture f;
	uint32_t n = 7;

	fixture_up_with(&f, ignore_event);
	cr_assert_eq(doca_pe_try_progress(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(n, 0);
	cr_assert_eq(doca_pe_try_progress(f.pe, NULL), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_try_progress((struct doca_pe *)f.ctx, &n), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_run_on_cpu(f.pe, -1), DOCA_SUCCESS);
	n = 7;
	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_ERROR_BAD_STATE, "a worker runs the PE");
	cr_assert_eq(n, 0);
	cr_assert_eq(doca_pe_stop_run(f.pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_SUCCESS);
	fixture_down(&f);
}

static void wait_phase(struct holder *h, int phase)
{
	pthread_mutex_lock(&h->lock);
	while (h->phase != phase)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
}

static void set_phase(struct holder *h, int phase)
{
	pthread_mutex_lock(&h->lock);
	h->phase = phase;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* Arming and clearing belong to the runner: refused while another thread
 * runs the PE, and the refused call neither arms, fires nor clears. */
Test(runner, notification_arm_and_clear_are_refused_while_another_thread_runs_the_pe)
{
	struct fixture f;
	struct holder h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY };
	pthread_t t;
	int fd;

	fixture_up(&f);
	cr_assert_eq(doca_pe_get_notification_handle(f.pe, &fd), DOCA_SUCCESS);
	desc.src = f.src;
	desc.dst = f.dst;
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS); /* pending work */

	h.pe = f.pe;
	pthread_create(&t, NULL, hold_runner, &h);
	wait_phase(&h, 1);
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_ERROR_IN_USE);
	cr_assert_eq(atomic_load(&f.pe->armed), PE_DISARMED, "the refused arm armed nothing");
	cr_assert(!fd_readable(fd), "the refused arm fired nothing");
	set_phase(&h, 2);
	pthread_join(t, NULL);

	/* Armed by the runner with work pending: fires at once. */
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	cr_assert(fd_readable(fd));
	h.phase = 0;
	pthread_create(&t, NULL, hold_runner, &h);
	wait_phase(&h, 1);
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_ERROR_IN_USE);
	cr_assert(fd_readable(fd), "the refused clear drained nothing");
	cr_assert_eq(atomic_load(&f.pe->armed), PE_FIRED, "the refused clear disarmed nothing");
	set_phase(&h, 2);
	pthread_join(t, NULL);
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_SUCCESS);
	cr_assert(!fd_readable(fd));

	cr_assert_eq(doca_pe_progress(f.pe), 1);
	struct doca_event *ev = doca_pe_get_event(f.pe);

	cr_assert_not_null(ev);
	doca_event_free(ev);
	fixture_down(&f);
}

static void *free_event(void *ev)
{
	doca_event_free(ev);
	return NULL;
}

static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/*
 * A free on a thread that cannot take the guard (a submit holds it briefly)
 * is not refused: the credit travels through the run's mailbox and is back
 * after the next turn, not before. A second free of the same event is then
 * refused, logged and counted, and changes nothing.
 */
Test(runner, a_free_off_the_pe_thread_returns_through_the_mailbox, .init = cr_redirect_stderr)
{
	struct fixture f;
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY };
	char log[4096];
	pthread_t t;

	setenv("DOCA_LOG_LEVEL", "error", 1);
	fixture_up(&f);
	desc.src = f.src;
	desc.dst = f.dst;
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_progress(f.pe), 1);
	struct doca_event *ev = doca_pe_get_event(f.pe);
	struct ctx_run *run = handle_deref(f.ctx)->run;
	uint64_t stale = doca_stale_handle_count();

	cr_assert_not_null(ev);
	cr_assert_eq(runner_enter_brief(&f.pe->runner), RUNNER_ENTERED);
	pthread_create(&t, NULL, free_event, ev);
	pthread_join(t, NULL);
	runner_exit(&f.pe->runner);
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size - 1, "not back before a turn");
	cr_assert(!mailbox_idle(&run->mbox), "the credit waits in the mailbox");
	cr_assert_eq(atomic_load(&handle_deref(f.src)->users), 1, "still pinned until it is back");

	doca_event_free(ev);
	read_redirected_stderr(log, sizeof(log));
	cr_assert_eq(count_of(log, "doca_event_free: event already freed (a stale or double free)"), 1,
		     "log: \"%s\"", log);
	cr_assert_eq(doca_stale_handle_count(), stale + 1);
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size - 1, "the refusal changed nothing");

	cr_assert_eq(doca_pe_progress(f.pe), 0, "a returned credit is no event");
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size, "credits: %u of %u",
		     task_pool_free(&run->pool), run->pool.size);
	cr_assert_eq(atomic_load(&handle_deref(f.src)->users), 0, "source pins");
	cr_assert_eq(atomic_load(&handle_deref(f.dst)->users), 0, "destination pins");

	/* The pool still bounds what is outstanding: size tasks, then AGAIN. */
	for (uint32_t i = 0; i < run->pool.size; i++)
		cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS, "task %u", i);
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_ERROR_AGAIN);
	for (uint32_t done = 0; done < run->pool.size;) {
		doca_pe_progress(f.pe);
		while ((ev = doca_pe_get_event(f.pe)) != NULL) {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
			doca_event_free(ev);
			done++;
		}
	}
	fixture_down(&f);
}

struct destroyer {
	struct doca_pe *pe;
	doca_error_t rc;
};

static void *destroy_pe_trapped(void *arg)
{
	struct destroyer *d = arg;

	trap_arm(TRAP_YIELD, TRAP_THIS_THREAD);
	d->rc = doca_pe_destroy(d->pe);
	return NULL;
}

/*
 * Two threads destroy one PE. The second is parked inside the guard's wait,
 * past the handle check made before the guard, while the first destroys the
 * PE; then it takes the guard and must find the PE dead (a read-side section
 * here keeps the memory, as any reader's would). It is refused: one destroy,
 * one deferred free, each fd closed once.
 */
Test(runner, two_threads_destroying_one_pe_destroy_it_once)
{
	struct destroyer d = { .rc = DOCA_ERROR_UNKNOWN };
	pthread_t t;

	cr_assert_eq(doca_pe_create(&d.pe), DOCA_SUCCESS);
	cr_assert_eq(runner_enter_brief(&d.pe->runner), RUNNER_ENTERED);
	pthread_create(&t, NULL, destroy_pe_trapped, &d);
	trap_wait_parked(TRAP_YIELD);
	runner_exit(&d.pe->runner);
	doca_rcu_read_lock();
	cr_assert_eq(doca_pe_destroy(d.pe), DOCA_SUCCESS);
	trap_release(TRAP_YIELD);
	pthread_join(t, NULL);
	doca_rcu_read_unlock();
	cr_assert_eq(d.rc, DOCA_ERROR_INVALID_VALUE, "the second destroy returned %s",
		     doca_error_get_name(d.rc));
}
