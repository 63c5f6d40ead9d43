/* tests/engine/worker.c — per-core PE workers: completions through
 * callbacks, the stop handshake, misuse refusals, and ~0 CPU when idle. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"

#define TASKS 200

static _Atomic int completed;
static _Atomic int stop_run_result = -1;

static void count_event(struct doca_event *ev, union doca_data ud)
{
	(void)ud;
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	atomic_fetch_add(&completed, 1);
}

static void stop_run_from_callback(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	atomic_store(&stop_run_result, doca_pe_stop_run(ud.ptr));
	atomic_fetch_add(&completed, 1);
}

struct rig {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_mem *mem;
	struct doca_buf *src, *dst;
	struct doca_pe *pe;
};

static void rig_up(struct rig *r, doca_event_cb_t cb, const char *dev)
{
	cr_assert_eq(doca_ctx_create(&r->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&r->pe), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_event_cb(r->ctx, cb), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_user_data(r->ctx, (union doca_data){ .ptr = r->pe }), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open(dev, &r->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(r->ctx, r->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_create(r->ctx, 8192, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &r->mem),
		     DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(r->mem, 0, 4096, &r->src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(r->mem, 4096, 4096, &r->dst), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(r->pe, r->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(r->ctx), DOCA_SUCCESS);
	atomic_store(&completed, 0);
}

static void rig_down(struct rig *r)
{
	cr_assert_eq(doca_ctx_stop(r->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(r->src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(r->dst), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_destroy(r->mem), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(r->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(r->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(r->pe), DOCA_SUCCESS);
}

static void submit_one(struct rig *r)
{
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY, .src = r->src, .dst = r->dst };
	doca_error_t err;

	while ((err = doca_task_submit(r->ctx, &desc)) == DOCA_ERROR_AGAIN)
		sched_yield();
	cr_assert_eq(err, DOCA_SUCCESS);
}

static void wait_completed(int n)
{
	for (int i = 0; i < 5000 && atomic_load(&completed) < n; i++)
		usleep(1000);
	cr_assert_eq(atomic_load(&completed), n);
}

/* The worker has spun down and armed the PE to sleep (a loaded machine
 * may take long: wait for it rather than for a fixed time). */
static void wait_armed(struct rig *r)
{
	for (int i = 0; i < 10000 && atomic_load(&handle_deref(r->pe)->armed) != PE_ARMED; i++)
		usleep(1000);
	cr_assert_eq(atomic_load(&handle_deref(r->pe)->armed), PE_ARMED, "the worker never went to sleep");
}

static double thread_cpu_seconds(pthread_t t)
{
	clockid_t clock;
	struct timespec ts;

	cr_assert_eq(pthread_getcpuclockid(t, &clock), 0);
	cr_assert_eq(clock_gettime(clock, &ts), 0);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(worker, completes_tasks_through_callbacks_then_hands_the_pe_back)
{
	struct rig r;

	rig_up(&r, count_event, "sw0:engines=1");
	cr_assert_eq(doca_pe_run_on_cpu(r.pe, 0), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_run_on_cpu(r.pe, 0), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(doca_pe_progress(r.pe), 0, "the application may not progress a worker's PE");
	cr_assert_eq(doca_pe_destroy(r.pe), DOCA_ERROR_IN_USE);
	for (int i = 0; i < TASKS; i++)
		submit_one(&r);
	wait_completed(TASKS);
	cr_assert_eq(doca_pe_stop_run(r.pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_stop_run(r.pe), DOCA_ERROR_BAD_STATE);
	submit_one(&r);
	while (atomic_load(&completed) < TASKS + 1)
		(void)doca_pe_progress(r.pe);
	cr_assert_eq(atomic_load(&completed), TASKS + 1);
	rig_down(&r);
}

Test(worker, an_idle_worker_costs_almost_no_cpu)
{
	struct rig r;

	rig_up(&r, count_event, "sw0");
	cr_assert_eq(doca_pe_run_on_cpu(r.pe, -1), DOCA_SUCCESS);
	submit_one(&r);
	wait_completed(1);
	wait_armed(&r);
	double before = thread_cpu_seconds(handle_deref(r.pe)->worker.thread);

	sleep(1);
	double used = thread_cpu_seconds(handle_deref(r.pe)->worker.thread) - before;

	cr_assert_lt(used, 0.02, "idle worker used %.4f s of CPU in 1 s", used);
	submit_one(&r);
	wait_completed(2); /* and it still wakes for new work */
	cr_assert_eq(doca_pe_stop_run(r.pe), DOCA_SUCCESS);
	rig_down(&r);
}

Test(worker, stop_run_from_its_own_callback_is_refused)
{
	struct rig r;

	rig_up(&r, stop_run_from_callback, "sw0");
	cr_assert_eq(doca_pe_run_on_cpu(r.pe, -1), DOCA_SUCCESS);
	submit_one(&r);
	wait_completed(1);
	cr_assert_eq(atomic_load(&stop_run_result), DOCA_ERROR_NOT_PERMITTED);
	cr_assert_eq(doca_pe_stop_run(r.pe), DOCA_SUCCESS);
	rig_down(&r);
}

Test(worker, a_cpu_that_does_not_exist_is_refused)
{
	struct doca_pe *pe;

	cr_assert_eq(doca_pe_create(&pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_run_on_cpu(pe, 100000), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_run_on_cpu(pe, -2), DOCA_ERROR_INVALID_VALUE);
	/* one past the last CPU the machine has: the kernel refuses the pin */
	cr_assert_eq(doca_pe_run_on_cpu(pe, (int)sysconf(_SC_NPROCESSORS_CONF)), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_run_on_cpu(NULL, 0), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_stop_run(pe), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(doca_pe_destroy(pe), DOCA_SUCCESS);
}

/* A start bound to fail (a CPU the kernel refuses) shows nothing to other
 * threads while it is under way: their calls on the PE behave as without
 * a worker (a review counted 2 % of them refused as if one ran it). */
struct failing_starts {
	struct doca_pe *pe;
	_Atomic int done;
	int refused_otherwise; /* results other than INVALID_VALUE */
};

static void *start_on_a_cpu_the_kernel_refuses(void *arg)
{
	struct failing_starts *f = arg;

	for (int i = 0; i < 3000; i++)
		if (doca_pe_run_on_cpu(f->pe, CPU_SETSIZE - 1) != DOCA_ERROR_INVALID_VALUE)
			f->refused_otherwise++;
	atomic_store(&f->done, 1);
	return NULL;
}

Test(worker, a_failing_start_is_not_seen_by_other_threads)
{
	struct failing_starts f = { 0 };
	pthread_t th;
	unsigned long calls = 0, refused = 0;
	uint32_t n;

	if (sysconf(_SC_NPROCESSORS_CONF) >= CPU_SETSIZE)
		cr_skip_test("CPU %d exists here", CPU_SETSIZE - 1);
	cr_assert_eq(doca_pe_create(&f.pe), DOCA_SUCCESS);
	cr_assert_eq(pthread_create(&th, NULL, start_on_a_cpu_the_kernel_refuses, &f), 0);
	while (!atomic_load(&f.done)) {
		calls++;
		if (doca_pe_try_progress(f.pe, &n) != DOCA_SUCCESS)
			refused++;
	}
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(f.refused_otherwise, 0, "a start on CPU %d did not fail with INVALID_VALUE",
		     CPU_SETSIZE - 1);
	cr_assert_eq(refused, 0, "%lu of %lu progress calls refused during failing starts", refused, calls);
	cr_assert_eq(doca_pe_stop_run(f.pe), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(doca_pe_destroy(f.pe), DOCA_SUCCESS);
}

/* A worker's event callback stops its context while the application's
 * doca_ctx_stop reports STOPPING and its state callback would stop the
 * worker: the join would wait for the worker, the worker for the report
 * (a review's deadlock). doca_pe_stop_run refuses in a state callback;
 * the stop then completes and the worker stops outside it. */
static _Atomic int stopping_cb_calls, idle_reports, state_cb_stop_run = -1;
static struct rig *deadlock_rig;

static void stop_ctx_from_worker(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
	if (atomic_fetch_add(&stopping_cb_calls, 1) == 0) {
		usleep(100 * 1000); /* the application's stop reports meanwhile */
		doca_error_t err = doca_ctx_stop(deadlock_rig->ctx);

		cr_assert(err == DOCA_ERROR_IN_PROGRESS, "the worker's stop: %s", doca_error_get_name(err));
	}
	atomic_fetch_add(&completed, 1);
}

static void stop_worker_from_state_cb(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
				      enum doca_ctx_state next)
{
	(void)ctx;
	(void)ud;
	(void)prev;
	if (next == DOCA_CTX_STATE_STOPPING)
		atomic_store(&state_cb_stop_run, doca_pe_stop_run(deadlock_rig->pe));
	if (next == DOCA_CTX_STATE_IDLE)
		atomic_fetch_add(&idle_reports, 1);
}

Test(worker, stop_run_from_a_state_callback_is_refused_not_a_deadlock, .timeout = 30)
{
	struct rig r;
	struct doca_task_desc desc;
	enum doca_ctx_state st;

	rig_up(&r, stop_ctx_from_worker, "sw0");
	deadlock_rig = &r;
	cr_assert_eq(doca_ctx_stop(r.ctx), DOCA_SUCCESS); /* the state callback is set while IDLE */
	cr_assert_eq(doca_ctx_set_state_changed_cb(r.ctx, stop_worker_from_state_cb), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(r.ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_run_on_cpu(r.pe, -1), DOCA_SUCCESS);
	desc = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst };
	cr_assert_eq(doca_task_submit(r.ctx, &desc), DOCA_SUCCESS);
	while (atomic_load(&stopping_cb_calls) == 0)
		usleep(1000);
	cr_assert_eq(doca_ctx_stop(r.ctx), DOCA_ERROR_IN_PROGRESS);
	cr_assert_eq(atomic_load(&state_cb_stop_run), DOCA_ERROR_NOT_PERMITTED);
	for (int i = 0; i < 10000 && atomic_load(&idle_reports) == 0; i++)
		usleep(1000);
	cr_assert_eq(doca_ctx_get_state(r.ctx, &st), DOCA_SUCCESS);
	cr_assert_eq(st, DOCA_CTX_STATE_IDLE, "the worker finished the stop");
	cr_assert_eq(atomic_load(&completed), 1);
	cr_assert_eq(doca_pe_stop_run(r.pe), DOCA_SUCCESS, "outside the callback the worker stops");
	cr_assert_eq(doca_ctx_set_state_changed_cb(r.ctx, NULL), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(r.ctx), DOCA_SUCCESS); /* rig_down stops it */
	rig_down(&r);
}

/* The caller's own affinity is not the process's: a thread pinned to CPU 0
 * may hand a PE to a worker on CPU 1. */
Test(worker, a_pinned_caller_may_start_a_worker_on_another_cpu)
{
	struct doca_pe *pe;
	cpu_set_t mine, only0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("needs two online CPUs");
	cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
	if (!CPU_ISSET(0, &mine) || !CPU_ISSET(1, &mine))
		cr_skip_test("needs CPUs 0 and 1 in this process's set");
	CPU_ZERO(&only0);
	CPU_SET(0, &only0);
	cr_assert_eq(sched_setaffinity(0, sizeof(only0), &only0), 0);
	cr_assert_eq(doca_pe_create(&pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_run_on_cpu(pe, 1), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_stop_run(pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(pe), DOCA_SUCCESS);
	cr_assert_eq(sched_setaffinity(0, sizeof(mine), &mine), 0);
}

/* Arming and clearing are the worker's: the application's clear would
 * leave the sleeping worker unwoken for good (its next task's callback
 * would never come). Refused, changing nothing. */
Test(worker, the_application_may_not_arm_or_clear_a_worker_pe)
{
	struct rig r;

	rig_up(&r, count_event, "sw0");
	cr_assert_eq(doca_pe_run_on_cpu(r.pe, -1), DOCA_SUCCESS);
	wait_armed(&r);
	cr_assert_eq(doca_pe_clear_notification(r.pe), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(doca_pe_request_notification(r.pe), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(atomic_load(&handle_deref(r.pe)->armed), PE_ARMED, "the worker's arming stands");
	submit_one(&r);
	wait_completed(1);
	cr_assert_eq(doca_pe_stop_run(r.pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_clear_notification(r.pe), DOCA_SUCCESS, "the PE is the application's again");
	rig_down(&r);
}

static _Atomic int run_on_cpu_result = -1;

static void run_on_cpu_from_callback(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	atomic_store(&run_on_cpu_result, doca_pe_run_on_cpu(ud.ptr, -1));
	atomic_fetch_add(&completed, 1);
}

/* A callback of the PE's own worker: a worker runs it already (BAD_STATE,
 * as from any other thread; it answered NOT_PERMITTED, found by a review),
 * and the worker goes on delivering. */
Test(worker, run_on_cpu_from_its_workers_callback_is_bad_state)
{
	struct rig r;

	rig_up(&r, run_on_cpu_from_callback, "sw0");
	cr_assert_eq(doca_pe_run_on_cpu(r.pe, -1), DOCA_SUCCESS);
	submit_one(&r);
	wait_completed(1);
	cr_assert_eq(atomic_load(&run_on_cpu_result), DOCA_ERROR_BAD_STATE);
	submit_one(&r);
	wait_completed(2);
	cr_assert_eq(atomic_load(&run_on_cpu_result), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(doca_pe_stop_run(r.pe), DOCA_SUCCESS, "the one worker stops");
	cr_assert_eq(doca_pe_stop_run(r.pe), DOCA_ERROR_BAD_STATE, "and no other was started");
	rig_down(&r);
}

/* The application's own progress call runs the PE: a worker started from
 * its callback would run it too. Refused, nothing changed. */
Test(worker, run_on_cpu_from_a_callback_of_a_progress_call_is_refused)
{
	struct rig r;

	rig_up(&r, run_on_cpu_from_callback, "sw0");
	submit_one(&r);
	while (atomic_load(&completed) < 1)
		(void)doca_pe_progress(r.pe);
	cr_assert_eq(atomic_load(&run_on_cpu_result), DOCA_ERROR_NOT_PERMITTED);
	cr_assert_eq(doca_pe_stop_run(r.pe), DOCA_ERROR_BAD_STATE, "no worker was started");
	rig_down(&r);
}
