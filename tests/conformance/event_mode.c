/*
 * tests/conformance/event_mode.c — event mode on the device under test: a PE
 * that sleeps on its notification fd between progress calls is woken for
 * every completion (for a verbs device, by the completion channel), and an
 * armed PE with nothing to do stays asleep; event callbacks.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>

#include "tests/conformance/conformance.h"

/* Wait for the fd to become readable: true, or false after timeout_ms. */
static bool wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do {
		n = poll(&p, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	cr_assert_geq(n, 0, "poll: %s", strerror(errno));
	return n == 1;
}

/*
 * The event-mode loop of an application: progress, take events, and when
 * there is nothing, arm and sleep. Every sleep must end within API_WAIT_MS.
 * Returns the number of sleeps.
 */
static unsigned int sleep_until_events(struct api_fixture *f, int fd, uint32_t n, uint8_t *outcome)
{
	unsigned int sleeps = 0;

	for (uint32_t got = 0; got < n;) {
		struct doca_event *ev;

		doca_pe_progress(f->pe);
		while ((ev = doca_pe_get_event(f->pe)) != NULL) {
			uint64_t user = doca_event_get_user_data(ev).u64;

			cr_assert_lt(user, n);
			cr_assert_eq(outcome[user], CONF_NO_EVENT, "second event for %llu",
				     (unsigned long long)user);
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
			outcome[user] = CONF_COPIED;
			doca_event_free(ev);
			got++;
		}
		if (got == n)
			break;
		assert_ok(doca_pe_request_notification(f->pe));
		cr_assert(wait_readable(fd, API_WAIT_MS),
			  "asleep for %d ms with %u of %u events missing: no wake-up", API_WAIT_MS,
			  n - got, n);
		assert_ok(doca_pe_clear_notification(f->pe));
		sleeps++;
	}
	return sleeps;
}

Test(conf_event_mode, a_sleeping_pe_is_woken_for_each_completion)
{
	struct api_fixture f;
	int fd;

	fixture_init_started(&f, conf_dev(), 4096, 0);
	assert_ok(doca_pe_get_notification_handle(f.pe, &fd));
	for (uint64_t i = 0; i < 32; i++) {
		uint8_t outcome[1] = { 0 };

		memset(f.dst_bytes, 0, f.len);
		conf_submit_ok(f.ctx, f.src, f.dst, 0);
		sleep_until_events(&f, fd, 1, outcome);
		cr_assert_eq(pattern_mismatch(f.dst_bytes, f.len, f.seed), f.len);
	}
	fixture_fini(&f);
}

Test(conf_event_mode, a_sleeping_pe_collects_a_batch)
{
	enum { N = 64 };
	struct api_fixture f;
	struct doca_buf *src[N], *dst[N];
	uint8_t outcome[N] = { 0 };
	int fd;

	fixture_init_started(&f, conf_dev(), N * 32, N);
	assert_ok(doca_pe_get_notification_handle(f.pe, &fd));
	for (uint32_t i = 0; i < N; i++) {
		assert_ok(doca_buf_create(f.src_mem, (size_t)i * 32, 32, &src[i]));
		assert_ok(doca_buf_create(f.dst_mem, (size_t)i * 32, 32, &dst[i]));
		conf_submit_ok(f.ctx, src[i], dst[i], i);
	}
	sleep_until_events(&f, fd, N, outcome);
	cr_assert_eq(memcmp(f.dst_bytes, f.src_bytes, f.len), 0);
	for (uint32_t i = 0; i < N; i++) {
		assert_ok(doca_buf_destroy(src[i]));
		assert_ok(doca_buf_destroy(dst[i]));
	}
	fixture_fini(&f);
}

Test(conf_event_mode, an_armed_pe_with_nothing_to_do_stays_asleep)
{
	struct api_fixture f;
	int fd;

	fixture_init_started(&f, conf_dev(), 256, 0);
	assert_ok(doca_pe_get_notification_handle(f.pe, &fd));
	fixture_copy_and_verify(&f);
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert_not(wait_readable(fd, 100), "woken with nothing to do");
	assert_ok(doca_pe_clear_notification(f.pe));
	fixture_fini(&f);
}

struct cb_log {
	uint32_t count;
	uint32_t seen; /* bit per user value */
};

static void record_event(struct doca_event *ev, union doca_data user)
{
	struct cb_log *log = user.ptr;
	uint64_t task = doca_event_get_user_data(ev).u64;

	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	cr_assert_lt(task, 32);
	cr_assert_not(log->seen & (1u << task), "second callback for task %llu",
		      (unsigned long long)task);
	log->seen |= 1u << task;
	log->count++;
}

Test(conf_event_mode, callbacks_receive_every_event_once)
{
	struct api_fixture f;
	struct cb_log log = { 0 };
	uint64_t deadline;

	fixture_init(&f, conf_dev(), 256, 16);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &log }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, record_event));
	assert_ok(doca_ctx_start(f.ctx));
	for (uint64_t i = 0; i < 16; i++)
		conf_submit_ok(f.ctx, f.src, f.dst, i);
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (log.count < 16) {
		doca_pe_progress(f.pe);
		cr_assert_null(doca_pe_get_event(f.pe), "callback contexts deliver no event to get_event");
		cr_assert_lt(now_ns(), deadline, "%u of 16 callbacks", log.count);
	}
	cr_assert_eq(log.seen, 0xffffu);
	fixture_fini(&f);
}

/* The armed PE's fd becomes readable within 2 s (else fail with @p why),
 * and the copy of task 0 then completes with every byte. */
static void assert_woken_for_the_copy(struct api_fixture *f, int fd, const char *why)
{
	uint8_t outcome[1] = { CONF_NO_EVENT };
	bool woke = wait_readable(fd, 2000);

	assert_ok(doca_pe_clear_notification(f->pe));
	cr_assert(woke, "%s", why);
	conf_reap(f->pe, 1, outcome, f->len, false);
	cr_assert_eq(outcome[0], CONF_COPIED);
	cr_assert_arr_eq(f->dst_bytes, f->src_bytes, f->len);
}

/* A context started while its PE is armed (the application sleeps in
 * epoll), then a task submitted: the PE is woken for its completion (a
 * verbs CQ raises nothing until it is armed). */
Test(conf_event_mode, a_ctx_started_while_armed_wakes_the_pe_for_its_completion)
{
	struct api_fixture f;
	int fd;

	fixture_init(&f, conf_dev(), 256, 0);
	assert_ok(doca_pe_get_notification_handle(f.pe, &fd));
	doca_pe_progress(f.pe); /* this thread runs the PE */
	assert_ok(doca_pe_request_notification(f.pe));
	assert_ok(doca_ctx_start(f.ctx));
	memset(f.dst_bytes, 0, f.len);
	conf_submit_ok(f.ctx, f.src, f.dst, 0);
	assert_woken_for_the_copy(&f, fd, "armed PE never woken for the completion of a ctx started while armed");
	fixture_fini(&f);
}

/* The same after a stop, the start coming while armed. */
Test(conf_event_mode, a_ctx_restarted_while_armed_wakes_the_pe)
{
	struct api_fixture f;
	int fd;

	fixture_init_started(&f, conf_dev(), 256, 0);
	assert_ok(doca_pe_get_notification_handle(f.pe, &fd));
	fixture_copy_and_verify(&f);
	stop_and_drain(f.ctx, f.pe);
	assert_ok(doca_pe_request_notification(f.pe));
	assert_ok(doca_ctx_start(f.ctx));
	memset(f.dst_bytes, 0, f.len);
	conf_submit_ok(f.ctx, f.src, f.dst, 0);
	assert_woken_for_the_copy(&f, fd, "armed PE never woken after a restart while armed");
	fixture_fini(&f);
}

static void *start_and_submit(void *arg)
{
	struct api_fixture *f = arg;

	if (doca_ctx_start(f->ctx) != DOCA_SUCCESS)
		return (void *)1;
	return submit_copy(f->ctx, f->src, f->dst, 0, 0) == DOCA_SUCCESS ? NULL : (void *)2;
}

/* The application thread sleeps armed; another thread starts the ctx and submits. */
Test(conf_event_mode, another_thread_starts_and_submits_while_the_pe_is_armed)
{
	struct api_fixture f;
	pthread_t t;
	void *rc;
	int fd;

	fixture_init(&f, conf_dev(), 256, 0);
	memset(f.dst_bytes, 0, f.len);
	assert_ok(doca_pe_get_notification_handle(f.pe, &fd));
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert_eq(pthread_create(&t, NULL, start_and_submit, &f), 0);
	pthread_join(t, &rc);
	cr_assert_null(rc);
	assert_woken_for_the_copy(&f, fd,
				  "armed PE never woken for another thread's task on a ctx started while armed");
	fixture_fini(&f);
}

/* An arming whose completion beat it (a verbs CQ stays armed) is followed
 * by a completion reaped by polling, which raises a channel event nobody
 * reads: the next arming with nothing to do still sleeps. */
Test(conf_event_mode, an_event_left_by_an_earlier_arming_does_not_wake_an_idle_pe)
{
	struct api_fixture f;
	struct doca_event *ev;
	int fd;

	fixture_init_started(&f, conf_dev(), 256, 0);
	assert_ok(doca_pe_get_notification_handle(f.pe, &fd));
	doca_pe_progress(f.pe);
	conf_submit_ok(f.ctx, f.src, f.dst, 0);
	sleep_ms(20); /* the device completes it before the arm */
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert(wait_readable(fd, 1000));
	assert_ok(doca_pe_clear_notification(f.pe));
	ev = wait_event(f.pe);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	cr_assert_eq(doca_event_get_user_data(ev).u64, 0);
	doca_event_free(ev);
	/* a second task, reaped by polling */
	conf_submit_ok(f.ctx, f.src, f.dst, 1);
	ev = wait_event(f.pe);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	cr_assert_eq(doca_event_get_user_data(ev).u64, 1);
	doca_event_free(ev);
	assert_ok(doca_pe_request_notification(f.pe));
	bool woke = wait_readable(fd, 100);
	assert_ok(doca_pe_clear_notification(f.pe));
	cr_assert_not(woke, "woken with nothing to do");
	fixture_fini(&f);
}
