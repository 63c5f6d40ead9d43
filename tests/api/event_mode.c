/*
 * tests/api/event_mode.c — the PE's event mode (notification fd: constant,
 * armed by doca_pe_request_notification, readable on ready events or
 * mailbox work, reset by doca_pe_clear_notification; epoll waiters woken by
 * engine-thread completions) and worker mode (doca_pe_run_on_cpu).
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* poll() the fd for readability: 1 readable, 0 timed out. */
static int fd_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do {
		n = poll(&p, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	cr_assert_geq(n, 0, "poll failed: %s", strerror(errno));
	if (n == 1)
		cr_assert(p.revents & POLLIN, "fd has revents 0x%x without POLLIN", p.revents);
	return n;
}

static int pe_fd(struct doca_pe *pe)
{
	int fd = -1;

	assert_ok(doca_pe_get_notification_handle(pe, &fd));
	cr_assert_geq(fd, 0, "notification fd %d", fd);
	return fd;
}

Test(event_mode, notification_fd_is_valid_and_constant)
{
	struct api_fixture f;
	int fd, again;

	fixture_init(&f, "sw0", 256, 0);
	fd = pe_fd(f.pe);
	cr_assert_neq(fcntl(fd, F_GETFD), -1, "fd %d is not open", fd);
	again = pe_fd(f.pe);
	cr_assert_eq(again, fd, "fd changed from %d to %d", fd, again);
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(doca_pe_request_notification(f.pe));
	fixture_copy_and_verify(&f);
	assert_ok(doca_pe_clear_notification(f.pe));
	again = pe_fd(f.pe);
	cr_assert_eq(again, fd, "fd changed from %d to %d after work", fd, again);
	fixture_fini(&f);
}

Test(event_mode, each_pe_has_its_own_fd)
{
	struct doca_pe *a = NULL, *b = NULL;

	assert_ok(doca_pe_create(&a));
	assert_ok(doca_pe_create(&b));
	cr_assert_neq(pe_fd(a), pe_fd(b), "two PEs share a notification fd");
	assert_ok(doca_pe_destroy(a));
	assert_ok(doca_pe_destroy(b));
}

Test(event_mode, armed_fd_with_nothing_pending_is_not_readable)
{
	struct api_fixture f;
	struct doca_pe *lonely = NULL;

	assert_ok(doca_pe_create(&lonely));
	assert_ok(doca_pe_request_notification(lonely));
	cr_assert_eq(fd_readable(pe_fd(lonely), 50), 0, "empty PE's armed fd is readable");
	assert_ok(doca_pe_clear_notification(lonely));
	assert_ok(doca_pe_destroy(lonely));

	fixture_init_started(&f, "sw0", 256, 0);
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert_eq(fd_readable(pe_fd(f.pe), 50), 0, "armed fd readable with nothing pending");
	/* Progress with nothing to do does not make it readable either. */
	cr_assert_eq(doca_pe_progress(f.pe), 0, "events from nowhere");
	cr_assert_eq(fd_readable(pe_fd(f.pe), 20), 0, "armed fd readable with nothing pending");
	assert_ok(doca_pe_clear_notification(f.pe));
	fixture_fini(&f);
}

/* Inline: a submission is work that needs a progress call; clear resets the fd. */
Test(event_mode, armed_fd_becomes_readable_on_submit_and_clear_resets_it)
{
	struct api_fixture f;
	int fd;

	fixture_init_started(&f, "sw0", 256, 0);
	fd = pe_fd(f.pe);
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert_eq(fd_readable(fd, 0), 0, "readable before any work");
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	cr_assert_eq(fd_readable(fd, 1000), 1, "armed fd not readable after a submission");
	assert_ok(doca_pe_clear_notification(f.pe));
	cr_assert_eq(fd_readable(fd, 0), 0, "fd still readable after clear");
	expect_success_event(f.pe, 1, 256);
	cr_assert_eq(fd_readable(fd, 0), 0, "fd readable after the event was reaped");
	fixture_fini(&f);
}

/* Arming when an event is already ready makes the fd readable at once. */
Test(event_mode, request_with_event_ready_is_readable_at_once)
{
	struct api_fixture f;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	int fd;

	fixture_init_started(&f, "sw0", 256, 0);
	fd = pe_fd(f.pe);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	while (doca_pe_progress(f.pe) == 0)
		cr_assert_lt(now_ns(), deadline, "no completion");
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert_eq(fd_readable(fd, 0), 1, "armed with an event ready, fd not readable");
	assert_ok(doca_pe_clear_notification(f.pe));
	cr_assert_eq(fd_readable(fd, 0), 0, "clear did not reset the fd");
	expect_success_event(f.pe, 1, 256);
	fixture_fini(&f);
}

/* ---- a thread blocked in epoll_wait wakes for an engine-thread completion ---- */

struct epoll_waiter {
	int fd;
	int timeout_ms;
	int result;
	int err;
	uint64_t woke_ns;
	atomic_int waiting;
};

static void *epoll_waiter_main(void *arg)
{
	struct epoll_waiter *w = arg;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	w->result = -1;
	if (ep < 0) {
		w->err = errno;
		return NULL;
	}
	ev.data.fd = w->fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, w->fd, &ev) != 0) {
		w->err = errno;
		close(ep);
		return NULL;
	}
	atomic_store(&w->waiting, 1);
	do {
		w->result = epoll_wait(ep, &out, 1, w->timeout_ms);
	} while (w->result < 0 && errno == EINTR);
	w->err = w->result < 0 ? errno : 0;
	w->woke_ns = now_ns();
	close(ep);
	return NULL;
}

Test(event_mode, epoll_waiter_wakes_for_completion_made_by_engine_thread)
{
	struct api_fixture f;
	struct epoll_waiter w;
	pthread_t th;
	uint64_t t_submit;
	struct doca_event *ev;

	memset(&w, 0, sizeof(w));
	fixture_init_started(&f, "sw0:engines=1,delay_us=100000", 4096, 0);
	w.fd = pe_fd(f.pe);
	w.timeout_ms = 5000;
	t_submit = now_ns();
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 7, 0));
	/* This progress hands the task to the engine; it completes ~100 ms later. */
	cr_assert_eq(doca_pe_progress(f.pe), 0, "delayed task completed at once");
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert_eq(fd_readable(w.fd, 0), 0, "fd readable while the engine still holds the task");
	cr_assert_eq(pthread_create(&th, NULL, epoll_waiter_main, &w), 0, "pthread_create");
	cr_assert_eq(pthread_join(th, NULL), 0, "pthread_join");
	cr_assert_eq(w.result, 1, "epoll_wait returned %d (errno %d): the waiter was not woken", w.result, w.err);
	cr_assert_geq(w.woke_ns - t_submit, 90000000ull, "woke after %llu us, before the completion could exist",
		      (unsigned long long)((w.woke_ns - t_submit) / 1000));
	assert_ok(doca_pe_clear_notification(f.pe));
	cr_assert_eq(fd_readable(w.fd, 0), 0, "clear did not reset the fd");
	ev = wait_event(f.pe);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
	cr_assert_eq(doca_event_get_user_data(ev).u64, 7, "user data");
	doca_event_free(ev);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 4096, f.seed), 4096, "copy differs");
	fixture_fini(&f);
}

/* A submission from another thread wakes an armed, sleeping PE owner. */
struct submitter {
	struct api_fixture *f;
	unsigned delay_ms;
	doca_error_t rc;
};

static void *submitter_main(void *arg)
{
	struct submitter *s = arg;

	sleep_ms(s->delay_ms);
	s->rc = submit_copy(s->f->ctx, s->f->src, s->f->dst, 55, 0);
	return NULL;
}

Test(event_mode, submit_from_another_thread_wakes_armed_fd)
{
	struct api_fixture f;
	struct submitter s = { .f = &f, .delay_ms = 30, .rc = DOCA_ERROR_UNKNOWN };
	pthread_t th;
	int fd;

	fixture_init_started(&f, "sw0", 512, 0);
	fd = pe_fd(f.pe);
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert_eq(pthread_create(&th, NULL, submitter_main, &s), 0, "pthread_create");
	cr_assert_eq(fd_readable(fd, 5000), 1, "a submission from another thread did not wake the fd");
	cr_assert_eq(pthread_join(th, NULL), 0, "pthread_join");
	assert_ok(s.rc);
	assert_ok(doca_pe_clear_notification(f.pe));
	expect_success_event(f.pe, 55, 512);
	fixture_fini(&f);
}

/* The canonical event loop (arm, sleep in epoll, clear, progress) never loses a wakeup. */
static void event_loop(const char *dev_name, int n_tasks)
{
	struct api_fixture f;
	int ep, fd, events = 0, submitted = 0, sleeps = 0;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	uint64_t deadline = now_ns() + 10ull * 1000000000ull;

	fixture_init_started(&f, dev_name, 1024, 8);
	fd = pe_fd(f.pe);
	ep = epoll_create1(EPOLL_CLOEXEC);
	cr_assert_geq(ep, 0, "epoll_create1");
	ev.data.fd = fd;
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0, "epoll_ctl");
	while (events < n_tasks) {
		struct doca_event *e;
		int reaped = 0;

		while (submitted < n_tasks &&
		       submit_copy(f.ctx, f.src, f.dst, (uint64_t)submitted, 0) == DOCA_SUCCESS)
			submitted++;
		doca_pe_progress(f.pe);
		while ((e = doca_pe_get_event(f.pe)) != NULL) {
			cr_assert_eq(doca_event_get_status(e), DOCA_EVENT_STATUS_SUCCESS, "status");
			doca_event_free(e);
			events++;
			reaped++;
		}
		if (reaped == 0 && events < n_tasks) {
			int n;

			assert_ok(doca_pe_request_notification(f.pe));
			n = epoll_wait(ep, &out, 1, 2000);
			cr_assert_eq(n, 1, "epoll_wait returned %d with %d of %d events: lost wakeup", n, events,
				     n_tasks);
			assert_ok(doca_pe_clear_notification(f.pe));
			sleeps++;
		}
		cr_assert_lt(now_ns(), deadline, "%d of %d events", events, n_tasks);
	}
	close(ep);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 1024, f.seed), 1024, "copy differs");
	fixture_fini(&f);
}

Test(event_mode, event_loop_with_epoll_completes_every_task_inline)
{
	event_loop("sw0", 64);
}

/* Inline with a delay: a posted descriptor waiting for its time is device work needing progress. */
Test(event_mode, event_loop_with_epoll_completes_every_task_inline_delayed)
{
	event_loop("sw0:delay_us=20000", 4);
}

Test(event_mode, event_loop_with_epoll_completes_every_task_engine)
{
	event_loop("sw0:engines=1", 64);
}

Test(event_mode, event_loop_with_epoll_completes_every_task_engine_delayed)
{
	event_loop("sw0:engines=1,delay_us=20000", 4);
}

/* ---- worker mode ---- */

struct worker_env {
	atomic_int events;
	atomic_int successes;
};

/* fixture_init on sw0 with @p cb as the event callback (user data @p ud),
 * started, its PE handed to a worker on no particular CPU. */
static void fixture_init_worker(struct api_fixture *f, size_t len, uint32_t max_tasks, doca_event_cb_t cb,
				void *ud)
{
	fixture_init(f, "sw0", len, max_tasks);
	assert_ok(doca_ctx_set_user_data(f->ctx, (union doca_data){ .ptr = ud }));
	assert_ok(doca_ctx_set_event_cb(f->ctx, cb));
	assert_ok(doca_ctx_start(f->ctx));
	assert_ok(doca_pe_run_on_cpu(f->pe, -1));
}

static void worker_event_cb(struct doca_event *ev, union doca_data ud)
{
	struct worker_env *env = ud.ptr;

	if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS)
		atomic_fetch_add(&env->successes, 1);
	atomic_fetch_add(&env->events, 1);
}

Test(event_mode, worker_runs_pe_and_delivers_every_event_through_callback)
{
	enum { N = 200 };
	struct api_fixture f;
	struct worker_env env;
	int submitted = 0;
	uint64_t deadline = now_ns() + 10ull * 1000000000ull;

	atomic_init(&env.events, 0);
	atomic_init(&env.successes, 0);
	fixture_init_worker(&f, 256, 16, worker_event_cb, &env);
	assert_doca(doca_pe_run_on_cpu(f.pe, -1), DOCA_ERROR_BAD_STATE);
	/* The application may not progress a PE handed to a worker. */
	cr_assert_eq(doca_pe_progress(f.pe), 0, "progress of a worker's PE was not refused");
	while (atomic_load(&env.events) < N) {
		if (submitted < N) {
			doca_error_t rc = submit_copy(f.ctx, f.src, f.dst, (uint64_t)submitted, 0);

			if (rc == DOCA_SUCCESS)
				submitted++;
			else
				assert_doca(rc, DOCA_ERROR_AGAIN);
		}
		cr_assert_lt(now_ns(), deadline, "%d of %d events", atomic_load(&env.events), N);
	}
	assert_ok(doca_pe_stop_run(f.pe));
	assert_doca(doca_pe_stop_run(f.pe), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(atomic_load(&env.events), N, "%d events for %d tasks", atomic_load(&env.events), N);
	cr_assert_eq(atomic_load(&env.successes), N, "%d successes", atomic_load(&env.successes));
	/* Back in the application's hands. */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 999, 0));
	while (atomic_load(&env.events) < N + 1) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "no event after stop_run");
	}
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 256, f.seed), 256, "copy differs");
	fixture_fini(&f);
}

/* The worker's CPUs, as its event callback sees them. */
struct worker_cpus_env {
	atomic_int events;
	cpu_set_t cpus;
	int rc;
};

static void record_worker_cpus(struct doca_event *ev, union doca_data ud)
{
	struct worker_cpus_env *env = ud.ptr;

	(void)ev;
	env->rc = pthread_getaffinity_np(pthread_self(), sizeof(env->cpus), &env->cpus);
	atomic_fetch_add(&env->events, 1); /* (seq_cst: publishes cpus and rc) */
}

/* cpu -1 is "no pinning": the worker may run on every CPU the process may,
 * whatever the calling thread's own pinning (as sw0's engine threads). */
Test(event_mode, worker_without_cpu_does_not_inherit_the_callers_pinning)
{
	cpu_set_t process, both;
	struct worker_cpus_env env = { .rc = -1 };
	struct api_fixture f;

	pin_to_first_cpu(&process);
	atomic_init(&env.events, 0);
	fixture_init_worker(&f, 64, 4, record_worker_cpus, &env);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	for (uint64_t deadline = now_ns() + API_WAIT_MS * 1000000ull; atomic_load(&env.events) == 0;)
		cr_assert_lt(now_ns(), deadline, "no event from the worker");
	assert_ok(doca_pe_stop_run(f.pe));
	cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(process), &process), 0);
	fixture_fini(&f);
	cr_assert_eq(env.rc, 0, "pthread_getaffinity_np on the worker: %d", env.rc);
	CPU_AND(&both, &env.cpus, &process);
	cr_assert(CPU_EQUAL(&both, &process),
		  "the worker may run on %d CPU(s), the process on %d: it kept the caller's pinning",
		  CPU_COUNT(&env.cpus), CPU_COUNT(&process));
}

Test(event_mode, worker_rejects_bad_cpu_and_destroy_while_running)
{
	struct doca_pe *pe = NULL;

	assert_ok(doca_pe_create(&pe));
	assert_doca(doca_pe_run_on_cpu(pe, 100000), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_run_on_cpu(pe, -2), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_stop_run(pe), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_pe_run_on_cpu(pe, 0));
	assert_doca(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	assert_ok(doca_pe_stop_run(pe));
	assert_ok(doca_pe_destroy(pe));
}

/* The worker's own callbacks may not stop the worker. */
struct stop_from_worker_env {
	struct doca_pe *pe;
	atomic_int calls;
	atomic_int rc;
};

static void stop_run_in_cb(struct doca_event *ev, union doca_data ud)
{
	struct stop_from_worker_env *env = ud.ptr;

	(void)ev;
	atomic_store(&env->rc, (int)doca_pe_stop_run(env->pe));
	atomic_fetch_add(&env->calls, 1);
}

Test(event_mode, stop_run_from_worker_callback_is_not_permitted)
{
	struct api_fixture f;
	struct stop_from_worker_env env;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	atomic_init(&env.calls, 0);
	atomic_init(&env.rc, (int)DOCA_ERROR_UNKNOWN);
	fixture_init(&f, "sw0", 64, 0);
	env.pe = f.pe;
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, stop_run_in_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(doca_pe_run_on_cpu(f.pe, -1));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	while (atomic_load(&env.calls) == 0) {
		sleep_ms(1);
		cr_assert_lt(now_ns(), deadline, "the worker delivered no event");
	}
	assert_doca((doca_error_t)atomic_load(&env.rc), DOCA_ERROR_NOT_PERMITTED);
	/* The worker still runs: a second event is delivered, then the application stops it. */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 2, 0));
	while (atomic_load(&env.calls) < 2) {
		sleep_ms(1);
		cr_assert_lt(now_ns(), deadline, "the worker stopped after a refused stop_run");
	}
	assert_ok(doca_pe_stop_run(f.pe));
	fixture_fini(&f);
}

/* A stop from the application thread while a worker runs the PE: the worker finishes it. */
Test(event_mode, stop_while_worker_runs_pe_reaches_idle_with_every_event_delivered)
{
	enum { N = 40 };
	struct api_fixture f;
	struct worker_env env;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	enum doca_ctx_state st;
	doca_error_t rc;

	atomic_init(&env.events, 0);
	atomic_init(&env.successes, 0);
	fixture_init(&f, "sw0:engines=1,delay_us=2000", 64, N);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &env }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, worker_event_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(doca_pe_run_on_cpu(f.pe, -1));
	for (int i = 0; i < N; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	sleep_ms(5);
	rc = doca_ctx_stop(f.ctx);
	cr_assert(rc == DOCA_ERROR_IN_PROGRESS || rc == DOCA_SUCCESS, "doca_ctx_stop returned %s",
		  doca_error_get_name(rc));
	for (;;) {
		assert_ok(doca_ctx_get_state(f.ctx, &st));
		if (st == DOCA_CTX_STATE_IDLE)
			break;
		cr_assert_eq(st, DOCA_CTX_STATE_STOPPING, "state %s", state_name(st));
		cr_assert_lt(now_ns(), deadline, "the worker never finished the stop");
		sleep_ms(1);
	}
	assert_ok(doca_pe_stop_run(f.pe));
	cr_assert_eq(atomic_load(&env.events), N, "%d events for %d accepted tasks", atomic_load(&env.events), N);
	fixture_fini(&f);
}

/* ---- the last credit of a STOPPING context wakes an armed PE ---- */

static struct doca_event *held_event;

static void *free_held(void *unused)
{
	(void)unused;
	doca_event_free(held_event);
	return NULL;
}

/* One event held, the ctx stopped (STOPPING: the event holds it), the PE
 * armed; then the event is freed, by the thread that ran the PE's last turn
 * (@p other false) or by another: the stop needs a progress call, so the
 * fd must become readable, and a progress then brings the ctx to IDLE. */
static void stopping_last_free_wakes(const char *dev_name, bool other)
{
	struct api_fixture f;
	enum doca_ctx_state st;
	int fd;

	fixture_init_started(&f, dev_name, 64, 0);
	fd = pe_fd(f.pe);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 7, 0));
	held_event = wait_event(f.pe);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(doca_pe_progress(f.pe), 0, "an event while the only one is held");
	assert_ok(doca_ctx_get_state(f.ctx, &st));
	cr_assert_eq(st, DOCA_CTX_STATE_STOPPING, "state %d with an event held", st);
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert_eq(fd_readable(fd, 0), 0, "readable before the last free");
	if (other) {
		pthread_t t;

		cr_assert_eq(pthread_create(&t, NULL, free_held, NULL), 0, "pthread_create");
		cr_assert_eq(pthread_join(t, NULL), 0, "pthread_join");
	} else {
		doca_event_free(held_event);
	}
	cr_assert_eq(fd_readable(fd, API_WAIT_MS), 1, "the last free of a stopping ctx did not wake the PE");
	assert_ok(doca_pe_clear_notification(f.pe));
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
}

Test(event_mode, stopping_last_free_on_the_pe_thread_wakes_inline)
{
	stopping_last_free_wakes("sw0", false);
}

Test(event_mode, stopping_last_free_on_the_pe_thread_wakes_engine)
{
	stopping_last_free_wakes("sw0:engines=1", false);
}

Test(event_mode, stopping_last_free_on_another_thread_wakes_inline)
{
	stopping_last_free_wakes("sw0", true);
}
