/*
 * tests/api/backpressure.c — waiting for credits without spinning: many
 * producers blocked in doca_task_submit_wait on a small pool (each task
 * accepted exactly once), the exact timeout error while the pool stays
 * empty, a stop waking a blocked submitter with BAD_STATE, the credit
 * notification fd readable only once a credit returns, and refused calls
 * (NULL handles, an IDLE context, the PE's own callback) changing nothing.
 */
#include "common.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct doca_task_desc copy_desc(struct api_fixture *f, uint64_t user)
{
	return (struct doca_task_desc){
		.type = DOCA_TASK_COPY,
		.src = f->src,
		.dst = f->dst,
		.user_data = { .u64 = user },
	};
}

/* poll(fd, 0): whether the fd is readable now. */
static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, 0);

	cr_assert_geq(n, 0, "poll failed");
	return n == 1 && (p.revents & POLLIN) != 0;
}

/* Exactly @p n more tasks are accepted, then DOCA_ERROR_AGAIN: the pool had
 * n free credits. Leaves the pool empty. */
static void expect_free_credits(struct api_fixture *f, uint32_t n, uint64_t user_base)
{
	for (uint32_t i = 0; i < n; i++)
		assert_ok(submit_copy(f->ctx, f->src, f->dst, user_base + i, 0));
	assert_doca(submit_copy(f->ctx, f->src, f->dst, user_base + n, 0), DOCA_ERROR_AGAIN);
}

/* Reap and free exactly @p n events whose user data is user_base + 0..n-1,
 * then see no further event. */
static void reap_exactly(struct api_fixture *f, uint32_t n, uint64_t user_base)
{
	for (uint32_t i = 0; i < n; i++) {
		struct doca_event *ev = wait_event(f->pe);

		cr_assert_eq(doca_event_get_user_data(ev).u64, user_base + i, "event %u has user data %llu", i,
			     (unsigned long long)doca_event_get_user_data(ev).u64);
		doca_event_free(ev);
	}
	expect_no_event_for(f->pe, 10);
}

/* ---- many producers, one small pool ---- */

enum { PRODUCERS = 8, PER_PRODUCER = 1500, SMALL_POOL = 4 };

struct producer {
	struct api_fixture *f;
	uint64_t id;
	uint32_t accepted;
	doca_error_t bad_rc; /* the first result other than SUCCESS */
	atomic_int *finished; /* producers that returned */
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;

	for (uint32_t i = 0; i < PER_PRODUCER; i++) {
		struct doca_task_desc d = copy_desc(p->f, p->id * PER_PRODUCER + i);
		/* a lost wake shows as TIME_OUT, not as a hang */
		doca_error_t rc = doca_task_submit_wait(p->f->ctx, &d, API_WAIT_MS);

		if (rc != DOCA_SUCCESS) {
			p->bad_rc = rc;
			break;
		}
		p->accepted++;
	}
	atomic_fetch_add(p->finished, 1);
	return NULL;
}

static void start_producers(struct api_fixture *f, struct producer *p, pthread_t *th, atomic_int *finished)
{
	atomic_store(finished, 0);
	for (int i = 0; i < PRODUCERS; i++) {
		p[i] = (struct producer){ .f = f, .id = (uint64_t)i, .bad_rc = DOCA_SUCCESS, .finished = finished };
		cr_assert_eq(pthread_create(&th[i], NULL, producer_main, &p[i]), 0, "pthread_create");
	}
}

/* After every producer returned (their finished count read). */
static bool any_failed(const struct producer *p)
{
	for (int i = 0; i < PRODUCERS; i++)
		if (p[i].bad_rc != DOCA_SUCCESS)
			return true;
	return false;
}

static void join_producers(struct producer *p, pthread_t *th)
{
	for (int i = 0; i < PRODUCERS; i++) {
		cr_assert_eq(pthread_join(th[i], NULL), 0, "pthread_join");
		cr_assert_eq(p[i].bad_rc, DOCA_SUCCESS, "producer %d got %s after %u tasks", i,
			     doca_error_get_name(p[i].bad_rc), p[i].accepted);
		cr_assert_eq(p[i].accepted, PER_PRODUCER, "producer %d: %u accepted", i, p[i].accepted);
	}
}

static void many_producers_polling(const char *dev_name)
{
	struct api_fixture f;
	struct producer p[PRODUCERS];
	pthread_t th[PRODUCERS];
	const uint32_t total = PRODUCERS * PER_PRODUCER;
	uint8_t *seen = calloc(total, 1);
	uint32_t events = 0;
	atomic_int finished;
	uint64_t deadline = now_ns() + 30ull * 1000000000ull;

	cr_assert_not_null(seen, "calloc");
	fixture_init_started(&f, dev_name, 64, SMALL_POOL);
	start_producers(&f, p, th, &finished);
	while (events < total) {
		struct doca_event *ev;
		/* a producer gave up: join_producers says how */
		if (atomic_load(&finished) == PRODUCERS && any_failed(p))
			break;
		doca_pe_progress(f.pe);
		while ((ev = doca_pe_get_event(f.pe)) != NULL) {
			uint64_t user = doca_event_get_user_data(ev).u64;

			cr_assert_lt(user, total, "event for an unknown task %llu", (unsigned long long)user);
			cr_assert_eq(seen[user], 0, "second event for task %llu", (unsigned long long)user);
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "task %llu failed",
				     (unsigned long long)user);
			seen[user] = 1;
			events++;
			doca_event_free(ev);
		}
		cr_assert_lt(now_ns(), deadline, "%u of %u events after 30 s", events, total);
	}
	join_producers(p, th);
	expect_no_event_for(f.pe, 10);
	cr_assert_eq(events, total, "%u events for %u tasks", events, total);
	/* every credit came back */
	expect_free_credits(&f, SMALL_POOL, 0);
	reap_exactly(&f, SMALL_POOL, 0);
	fixture_fini(&f);
	free(seen);
}

Test(backpressure, eight_producers_block_on_a_pool_of_4_each_task_accepted_once_inline)
{
	many_producers_polling("sw0");
}

Test(backpressure, eight_producers_block_on_a_pool_of_4_each_task_accepted_once_engines)
{
	many_producers_polling("sw0:engines=1");
}

/* Worker mode: events freed by the worker after each callback. */
struct worker_seen {
	atomic_uint events;
	atomic_uchar *seen;
	atomic_uint duplicates;
};

static void count_event_cb(struct doca_event *ev, union doca_data ctx_user_data)
{
	struct worker_seen *w = ctx_user_data.ptr;
	uint64_t user = doca_event_get_user_data(ev).u64;

	if (user >= PRODUCERS * PER_PRODUCER || atomic_exchange(&w->seen[user], 1) != 0 ||
	    doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS)
		atomic_fetch_add(&w->duplicates, 1);
	atomic_fetch_add(&w->events, 1);
}

Test(backpressure, eight_producers_block_while_a_worker_frees_each_task_accepted_once)
{
	struct api_fixture f;
	struct producer p[PRODUCERS];
	pthread_t th[PRODUCERS];
	const uint32_t total = PRODUCERS * PER_PRODUCER;
	struct worker_seen w = { .seen = calloc(total, 1) };
	atomic_int finished;
	uint64_t deadline = now_ns() + 30ull * 1000000000ull;

	cr_assert_not_null(w.seen, "calloc");
	fixture_init(&f, "sw0:engines=1", 64, SMALL_POOL);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &w }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, count_event_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(doca_pe_run_on_cpu(f.pe, -1));
	start_producers(&f, p, th, &finished);
	join_producers(p, th);
	while (atomic_load(&w.events) < total) {
		cr_assert_lt(now_ns(), deadline, "%u of %u events after 30 s", atomic_load(&w.events), total);
		sleep_ms(1);
	}
	assert_ok(doca_pe_stop_run(f.pe));
	cr_assert_eq(atomic_load(&w.events), total, "%u events for %u tasks", atomic_load(&w.events), total);
	cr_assert_eq(atomic_load(&w.duplicates), 0, "%u events duplicated, unknown or failed",
		     atomic_load(&w.duplicates));
	/* the worker freed every event: the whole pool is free again */
	expect_free_credits(&f, SMALL_POOL, 0);
	fixture_fini(&f);
	cr_assert_eq(atomic_load(&w.events), total + SMALL_POOL, "events after the check: %u",
		     atomic_load(&w.events));
	free(w.seen);
}

/* ---- timeout ---- */

Test(backpressure, timeout_returns_time_out_while_the_pool_stays_empty)
{
	struct api_fixture f;
	struct doca_task_desc d;

	/* inline device, never progressed: the one event cannot come back */
	fixture_init_started(&f, "sw0", 64, 1);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	d = copy_desc(&f, 2);
	uint64_t t0 = now_ns();

	assert_doca(doca_task_submit_wait(f.ctx, &d, 50), DOCA_ERROR_TIME_OUT);
	uint64_t waited_ms = (now_ns() - t0) / 1000000u;

	cr_assert_geq(waited_ms, 50, "returned TIME_OUT after %llu ms, before the timeout",
		      (unsigned long long)waited_ms);
	assert_doca(doca_task_submit_wait(f.ctx, &d, 0), DOCA_ERROR_TIME_OUT);
	/* nothing was accepted: one event (task 1), then the pool is free */
	reap_exactly(&f, 1, 1);
	expect_free_credits(&f, 1, 10);
	reap_exactly(&f, 1, 10);
	fixture_fini(&f);
}

/* ---- stop wakes a blocked submitter ---- */

struct blocked {
	struct api_fixture *f;
	doca_error_t first_rc; /* published by the store of tid */
	atomic_int tid;
	doca_error_t rc;       /* read after the join */
};

static void *blocked_main(void *arg)
{
	struct blocked *b = arg;
	struct doca_task_desc d = copy_desc(b->f, 99);

	/* first call of this thread: its one-time set-up (RCU registration,
	 * submit slot) is done before it blocks below */
	b->first_rc = doca_task_submit(b->f->ctx, &d);
	atomic_store(&b->tid, (int)syscall(SYS_gettid));
	if (b->first_rc == DOCA_ERROR_AGAIN)
		b->rc = doca_task_submit_wait(b->f->ctx, &d, 2 * API_WAIT_MS); /* a lost wake: TIME_OUT */
	return NULL;
}

/* Until thread @p tid sleeps in a futex (blocked: its call cannot return
 * without a wake); the test fails after API_WAIT_MS. */
static void wait_until_blocked_in_futex(int tid)
{
	char path[64], line[128];
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	for (;;) {
		FILE *fp = fopen(path, "r");

		cr_assert_not_null(fp, "cannot open %s", path);
		bool in_futex = fgets(line, sizeof(line), fp) != NULL &&
				strncmp(line, "202 ", 4) == 0; /* SYS_futex on x86_64 */
		fclose(fp);
		if (in_futex)
			return;
		cr_assert_lt(now_ns(), deadline, "the submitter did not block within %d ms (%s)", API_WAIT_MS,
			     line);
		sleep_ms(1);
	}
}

/* A thread whose first submit found the pool empty, asleep in
 * doca_task_submit_wait when this returns. */
static void start_blocked(struct blocked *b, pthread_t *th)
{
	cr_assert_eq(pthread_create(th, NULL, blocked_main, b), 0, "pthread_create");
	while (atomic_load(&b->tid) == 0)
		sched_yield();
	assert_doca(b->first_rc, DOCA_ERROR_AGAIN);
	wait_until_blocked_in_futex(atomic_load(&b->tid));
}

Test(backpressure, stop_wakes_a_blocked_submitter_with_bad_state)
{
	struct api_fixture f;
	struct blocked b = { .f = &f };
	pthread_t th;

	cr_assert_eq(SYS_futex, 202, "this test reads x86_64 syscall numbers");
	fixture_init_started(&f, "sw0", 64, 1);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	start_blocked(&b, &th);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	cr_assert_eq(pthread_join(th, NULL), 0, "pthread_join");
	assert_doca(b.rc, DOCA_ERROR_BAD_STATE);
	/* the blocked task got nothing: only task 1's event (flushed or done) */
	struct doca_event *ev = wait_event(f.pe);

	cr_assert_eq(doca_event_get_user_data(ev).u64, 1, "event of task %llu",
		     (unsigned long long)doca_event_get_user_data(ev).u64);
	doca_event_free(ev);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	cr_assert_null(doca_pe_get_event(f.pe), "an event for the refused task");
	fixture_fini(&f);
}

/* A sleeper woken by a stop may run only after a new start: its task must
 * not land in the new run (an embedding found it accepted there in about
 * three rounds of four). Each round: the pool of 1 is held by an event,
 * the sleeper blocks, the context stops, goes IDLE and starts again before
 * the sleeper is joined. */
#define RESTART_ROUNDS 20

Test(backpressure, a_sleeper_is_refused_when_its_run_stopped_even_if_a_new_one_started)
{
	struct api_fixture f;

	cr_assert_eq(SYS_futex, 202, "this test reads x86_64 syscall numbers");
	fixture_init_started(&f, "sw0", 64, 1);
	for (int round = 0; round < RESTART_ROUNDS; round++) {
		struct blocked b = { .f = &f };
		pthread_t th;

		assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
		struct doca_event *ev = wait_event(f.pe); /* held: the pool is empty */

		start_blocked(&b, &th);
		assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
		doca_event_free(ev);
		progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
		assert_ok(doca_ctx_start(f.ctx));
		cr_assert_eq(pthread_join(th, NULL), 0, "pthread_join");
		assert_doca(b.rc, DOCA_ERROR_BAD_STATE);
		expect_no_event_for(f.pe, 5); /* nothing of the refused task in the new run */
	}
	fixture_fini(&f);
}

/* A bulk free returning n credits wakes n blocked submitters, not one:
 * with one wake per return, two of three slept on with credits free until
 * their timeout (found by a review), then found a credit and returned
 * SUCCESS, 2 * API_WAIT_MS late; so the joins must end well before that. */
Test(backpressure, a_bulk_free_of_3_credits_wakes_3_blocked_submitters)
{
	enum { N = 3 };
	struct api_fixture f;
	struct blocked b[N];
	struct doca_event *evs[N];
	pthread_t th[N];
	uint32_t got = 0;

	cr_assert_eq(SYS_futex, 202, "this test reads x86_64 syscall numbers");
	fixture_init_started(&f, "sw0", 64, N);
	for (uint32_t i = 0; i < N; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	while (got < N) {
		(void)doca_pe_progress(f.pe);
		got += doca_pe_get_events(f.pe, evs + got, N - got);
	}
	for (int i = 0; i < N; i++) {
		b[i] = (struct blocked){ .f = &f };
		cr_assert_eq(pthread_create(&th[i], NULL, blocked_main, &b[i]), 0, "pthread_create");
		while (atomic_load(&b[i].tid) == 0)
			sched_yield();
		assert_doca(b[i].first_rc, DOCA_ERROR_AGAIN);
		wait_until_blocked_in_futex(atomic_load(&b[i].tid));
	}
	uint64_t t0 = now_ns();

	doca_event_free_bulk(evs, N); /* on the PE's thread: one return of 3 credits */
	for (int i = 0; i < N; i++) {
		cr_assert_eq(pthread_join(th[i], NULL), 0, "pthread_join");
		assert_doca(b[i].rc, DOCA_SUCCESS);
	}
	cr_assert_lt(now_ns() - t0, (uint64_t)API_WAIT_MS * 1000000u,
		     "the submitters got in only when their sleep timed out (%llu ms): not woken",
		     (unsigned long long)((now_ns() - t0) / 1000000u));
	for (int i = 0; i < N; i++) {
		struct doca_event *ev = wait_event(f.pe);

		cr_assert_eq(doca_event_get_user_data(ev).u64, 99, "event of task %llu",
			     (unsigned long long)doca_event_get_user_data(ev).u64);
		doca_event_free(ev);
	}
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f);
}

/* ---- the credit notification fd ---- */

Test(backpressure, credit_fd_becomes_readable_only_when_a_credit_returns)
{
	struct api_fixture f;
	int fd = -1, again = -2;

	fixture_init_started(&f, "sw0", 64, 2);
	assert_ok(doca_ctx_get_credit_notification_handle(f.ctx, &fd));
	cr_assert_geq(fd, 0, "fd %d", fd);
	assert_ok(doca_ctx_get_credit_notification_handle(f.ctx, &again));
	cr_assert_eq(again, fd, "a second call gave fd %d, the first %d", again, fd);

	expect_free_credits(&f, 2, 0);
	assert_ok(doca_ctx_request_credit_notification(f.ctx));
	cr_assert(!fd_readable(fd), "readable with the pool empty");
	struct doca_event *ev = wait_event(f.pe);

	/* ready but not freed: the credit is still out */
	cr_assert(!fd_readable(fd), "readable before the event was freed");
	doca_event_free(ev);
	cr_assert(fd_readable(fd), "not readable after a credit returned");
	assert_ok(doca_ctx_request_credit_notification(f.ctx)); /* fired: no change */
	cr_assert(fd_readable(fd), "a second request reset the fd");
	assert_ok(doca_ctx_clear_credit_notification(f.ctx));
	cr_assert(!fd_readable(fd), "readable after clear");
	doca_event_free(wait_event(f.pe));
	cr_assert(!fd_readable(fd), "readable while disarmed");

	/* armed with a credit free: readable at once */
	assert_ok(doca_ctx_request_credit_notification(f.ctx));
	cr_assert(fd_readable(fd), "armed with free credits but not readable");
	assert_ok(doca_ctx_clear_credit_notification(f.ctx));
	cr_assert(!fd_readable(fd), "readable after clear");

	/* leaving RUNNING fires it too */
	expect_free_credits(&f, 2, 10);
	assert_ok(doca_ctx_request_credit_notification(f.ctx));
	cr_assert(!fd_readable(fd), "readable with the pool empty");
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	cr_assert(fd_readable(fd), "not readable after the context left RUNNING");
	assert_ok(doca_ctx_clear_credit_notification(f.ctx));
	fixture_fini(&f);
}

/* ---- returns of ring tasks ---- */

struct ring_filler {
	struct api_fixture *f;
	uint32_t n;
	doca_error_t err; /* the first submit that did not succeed */
};

static void *ring_filler_main(void *arg)
{
	struct ring_filler *s = arg;

	s->err = DOCA_SUCCESS;
	for (uint32_t i = 0; i < s->n && s->err == DOCA_SUCCESS; i++)
		s->err = submit_copy(s->f->ctx, s->f->src, s->f->dst, i, 0);
	return NULL;
}

/* Every credit out in ring tasks (another thread's submits): a sleeper in
 * doca_task_submit_wait and the armed credit fd are woken by the return
 * of a ring task's credit on the PE's thread, as by an owner task's. */
Test(backpressure, a_ring_tasks_return_wakes_a_blocked_submitter_and_the_credit_fd)
{
	enum { N = 2 };
	struct api_fixture f;
	struct ring_filler filler = { .f = &f, .n = N };
	struct blocked b = { .f = &f };
	pthread_t th;
	int fd = -1;

	cr_assert_eq(SYS_futex, 202, "this test reads x86_64 syscall numbers");
	fixture_init_started(&f, "sw0", 64, N);
	(void)doca_pe_progress(f.pe); /* this thread is the PE's */
	assert_ok(doca_ctx_get_credit_notification_handle(f.ctx, &fd));
	cr_assert_eq(pthread_create(&th, NULL, ring_filler_main, &filler), 0, "pthread_create");
	cr_assert_eq(pthread_join(th, NULL), 0, "pthread_join");
	assert_ok(filler.err);
	assert_ok(doca_ctx_request_credit_notification(f.ctx));
	cr_assert(!fd_readable(fd), "readable with every credit in ring tasks");
	start_blocked(&b, &th);
	struct doca_event *ev = wait_event(f.pe); /* a ring task's, fed by a turn */

	cr_assert_lt(doca_event_get_user_data(ev).u64, N, "event of task %llu",
		     (unsigned long long)doca_event_get_user_data(ev).u64);
	cr_assert(!fd_readable(fd), "readable before the event was freed");
	uint64_t t0 = now_ns();

	doca_event_free(ev);
	cr_assert(fd_readable(fd), "not readable after a ring task's credit returned");
	cr_assert_eq(pthread_join(th, NULL), 0, "pthread_join");
	assert_doca(b.rc, DOCA_SUCCESS);
	cr_assert_lt(now_ns() - t0, (uint64_t)API_WAIT_MS * 1000000u,
		     "the submitter got in only when its sleep timed out (%llu ms): not woken",
		     (unsigned long long)((now_ns() - t0) / 1000000u));
	assert_ok(doca_ctx_clear_credit_notification(f.ctx));
	for (int i = 0; i < N; i++) /* the other ring task's and the sleeper's (99) */
		doca_event_free(wait_event(f.pe));
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f);
}

/* ---- refused calls change nothing ---- */

Test(backpressure, null_and_wrong_handles_are_refused_and_change_nothing)
{
	struct api_fixture f;
	struct doca_task_desc d;
	int fd = 7;

	fixture_init_started(&f, "sw0", 64, 2);
	d = copy_desc(&f, 1);
	assert_doca(doca_task_submit_wait(NULL, &d, -1), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_task_submit_wait(f.ctx, NULL, -1), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_task_submit_wait((struct doca_ctx *)f.pe, &d, -1), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_get_credit_notification_handle(NULL, &fd), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(fd, 7, "a refused call wrote fd %d", fd);
	assert_doca(doca_ctx_get_credit_notification_handle(f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_get_credit_notification_handle((struct doca_ctx *)f.pe, &fd),
		    DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_request_credit_notification(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_request_credit_notification((struct doca_ctx *)f.pe), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_clear_credit_notification(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_clear_credit_notification((struct doca_ctx *)f.pe), DOCA_ERROR_INVALID_VALUE);
	/* a task with a bad buffer: submit's own error, not a wait */
	d.src = (struct doca_buf *)f.pe;
	assert_doca(doca_task_submit_wait(f.ctx, &d, -1), DOCA_ERROR_INVALID_VALUE);
	expect_no_event_for(f.pe, 10);
	expect_free_credits(&f, 2, 0);
	reap_exactly(&f, 2, 0);
	fixture_fini(&f);
}

Test(backpressure, an_idle_context_is_refused_at_once_with_bad_state)
{
	struct api_fixture f;
	struct doca_task_desc d;

	fixture_init(&f, "sw0", 64, 1);
	d = copy_desc(&f, 1);
	assert_doca(doca_task_submit_wait(f.ctx, &d, -1), DOCA_ERROR_BAD_STATE);
	assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_ctx_start(f.ctx));
	expect_no_event_for(f.pe, 10);
	expect_free_credits(&f, 1, 0);
	reap_exactly(&f, 1, 0);
	fixture_fini(&f);
}

/* Inside the PE's own callback the call would wait for itself: refused,
 * even with credits free. */
struct in_callback {
	struct api_fixture *f;
	int calls;
	doca_error_t rc;
};

static void submit_wait_in_cb(struct doca_event *ev, union doca_data ctx_user_data)
{
	struct in_callback *c = ctx_user_data.ptr;
	struct doca_task_desc d = copy_desc(c->f, 1000);

	(void)ev;
	if (c->calls++ == 0)
		c->rc = doca_task_submit_wait(c->f->ctx, &d, -1);
}

Test(backpressure, the_pes_own_callback_is_refused_with_not_permitted_and_nothing_changes)
{
	struct api_fixture f;
	struct in_callback c = { .f = &f, .rc = DOCA_SUCCESS };

	fixture_init(&f, "sw0", 64, 4);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &c }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, submit_wait_in_cb));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	while (c.calls == 0) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "no callback within %d ms", API_WAIT_MS);
	}
	assert_doca(c.rc, DOCA_ERROR_NOT_PERMITTED);
	/* the refused task got no event, and took no credit: all 4 are free */
	for (int i = 0; i < 20; i++)
		doca_pe_progress(f.pe);
	cr_assert_eq(c.calls, 1, "%d callbacks, expected 1", c.calls);
	expect_free_credits(&f, 4, 10);
	while (c.calls < 5) {
		doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline + (uint64_t)API_WAIT_MS * 1000000ull, "%d callbacks", c.calls);
	}
	for (int i = 0; i < 20; i++)
		doca_pe_progress(f.pe);
	cr_assert_eq(c.calls, 5, "%d callbacks, expected 5", c.calls);
	fixture_fini(&f);
}
