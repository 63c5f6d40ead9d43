/*
 * tests/api/common.c — shared helpers of the public-API test suite.
 */
#include "common.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/redirect.h>

volatile int api_where = WHERE_TEST;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void pin_to_first_cpu(cpu_set_t *process)
{
	cpu_set_t caller;
	int first = -1;

	cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof(*process), process), 0);
	if (CPU_COUNT(process) < 2)
		cr_skip_test("one CPU: nothing to inherit");
	for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, process))
			first = c;
	CPU_ZERO(&caller);
	CPU_SET(first, &caller);
	cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(caller), &caller), 0);
}

void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int count_open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(dir, "cannot open /proc/self/fd");
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] != '.')
			n++;
	}
	closedir(dir);
	return n - 1; /* the directory stream itself */
}

int count_open_fds_settled(int limit)
{
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	int n;

	while ((n = count_open_fds()) > limit && now_ns() < deadline)
		sleep_ms(1);
	return n;
}

const char *state_name(enum doca_ctx_state s)
{
	switch (s) {
	case DOCA_CTX_STATE_IDLE:
		return "IDLE";
	case DOCA_CTX_STATE_STARTING:
		return "STARTING";
	case DOCA_CTX_STATE_RUNNING:
		return "RUNNING";
	case DOCA_CTX_STATE_STOPPING:
		return "STOPPING";
	}
	return "(invalid state)";
}

/* xorshift32: cheap, deterministic, every byte position depends on the seed. */
static uint32_t pattern_next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

void fill_pattern(void *p, size_t len, uint32_t seed)
{
	uint8_t *b = p;
	uint32_t x = seed * 2654435761u + 1u;

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(pattern_next(&x) >> 24);
}

size_t pattern_mismatch(const void *p, size_t len, uint32_t seed)
{
	const uint8_t *b = p;
	uint32_t x = seed * 2654435761u + 1u;

	for (size_t i = 0; i < len; i++) {
		if (b[i] != (uint8_t)(pattern_next(&x) >> 24))
			return i;
	}
	return len;
}

size_t bytes_mismatch(const void *p, size_t len, uint8_t value)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++) {
		if (b[i] != value)
			return i;
	}
	return len;
}

doca_error_t tracked_start(struct doca_ctx *ctx)
{
	doca_error_t rc;

	api_where = WHERE_START;
	rc = doca_ctx_start(ctx);
	api_where = WHERE_TEST;
	return rc;
}

doca_error_t tracked_stop(struct doca_ctx *ctx)
{
	doca_error_t rc;

	api_where = WHERE_STOP;
	rc = doca_ctx_stop(ctx);
	api_where = WHERE_TEST;
	return rc;
}

uint32_t tracked_progress(struct doca_pe *pe)
{
	uint32_t n;

	api_where = WHERE_PROGRESS;
	n = doca_pe_progress(pe);
	api_where = WHERE_TEST;
	return n;
}

void record_state_cb(struct doca_ctx *ctx, union doca_data ctx_user_data, enum doca_ctx_state prev,
		     enum doca_ctx_state next)
{
	struct state_log *log = ctx_user_data.ptr;
	struct state_record *r;

	cr_assert_not_null(log, "state callback got no user data");
	cr_assert_lt(log->count, STATE_LOG_MAX, "too many state transitions");
	r = &log->rec[log->count++];
	r->prev = prev;
	r->next = next;
	r->where = api_where;
	r->user = ctx_user_data.u64;
	r->observed = (enum doca_ctx_state)-1;
	assert_ok(doca_ctx_get_state(ctx, &r->observed));
}

void fixture_init(struct api_fixture *f, const char *dev_name, size_t len, uint32_t max_tasks)
{
	void *addr = NULL;

	memset(f, 0, sizeof(*f));
	f->len = len;
	f->seed = 0x5eed;
	assert_ok(doca_ctx_create(&f->ctx));
	cr_assert_not_null(f->ctx, "doca_ctx_create gave NULL");
	if (max_tasks != 0)
		assert_ok(doca_ctx_set_max_tasks(f->ctx, max_tasks));
	assert_ok(doca_dev_open(dev_name, &f->dev));
	cr_assert_not_null(f->dev, "doca_dev_open gave NULL");
	assert_ok(doca_ctx_set_dev(f->ctx, f->dev));
	assert_ok(doca_pe_create(&f->pe));
	cr_assert_not_null(f->pe, "doca_pe_create gave NULL");
	assert_ok(doca_pe_connect_ctx(f->pe, f->ctx));

	assert_ok(doca_mem_create(f->ctx, len, DOCA_ACCESS_FLAG_READ, &f->src_mem));
	assert_ok(doca_mem_get_addr(f->src_mem, &addr));
	cr_assert_not_null(addr, "source memory has no address");
	f->src_bytes = addr;
	assert_ok(doca_mem_create(f->ctx, len, DOCA_ACCESS_FLAG_WRITE, &f->dst_mem));
	assert_ok(doca_mem_get_addr(f->dst_mem, &addr));
	cr_assert_not_null(addr, "destination memory has no address");
	f->dst_bytes = addr;
	cr_assert_eq(bytes_mismatch(f->dst_bytes, len, 0), len, "doca_mem_create did not zero the memory");

	assert_ok(doca_buf_create(f->src_mem, 0, len, &f->src));
	assert_ok(doca_buf_create(f->dst_mem, 0, len, &f->dst));
	fill_pattern(f->src_bytes, len, f->seed);
}

void fixture_init_started(struct api_fixture *f, const char *dev_name, size_t len, uint32_t max_tasks)
{
	fixture_init(f, dev_name, len, max_tasks);
	assert_ok(doca_ctx_start(f->ctx));
	assert_state(f->ctx, DOCA_CTX_STATE_RUNNING);
}

/* An event a stop drained: done (its status agrees with its error), or
 * flushed by the stop (FAILURE with SHUTDOWN and no bytes). */
static void assert_drained_event(const struct doca_event *ev)
{
	enum doca_event_status st = doca_event_get_status(ev);
	doca_error_t err = doca_event_get_error(ev);

	cr_assert_neq(doca_event_get_ctx(ev), NULL, "a drained event names no context");
	if (st == DOCA_EVENT_STATUS_SUCCESS)
		cr_assert_eq(err, DOCA_SUCCESS, "a successful event carries %s", doca_error_get_name(err));
	else if (st == DOCA_EVENT_STATUS_PARTIAL || st == DOCA_EVENT_STATUS_FAILURE)
		cr_assert_neq(err, DOCA_SUCCESS, "a failed event carries DOCA_SUCCESS");
	else
		cr_assert_fail("a drained event has status %d", (int)st);
	if (err == DOCA_ERROR_SHUTDOWN)
		cr_assert(st == DOCA_EVENT_STATUS_FAILURE && doca_event_get_bytes(ev) == 0,
			  "a flushed event has status %d and %zu bytes", (int)st, doca_event_get_bytes(ev));
}

void stop_and_drain(struct doca_ctx *ctx, struct doca_pe *pe)
{
	enum doca_ctx_state s;
	doca_error_t rc;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	assert_ok(doca_ctx_get_state(ctx, &s));
	if (s == DOCA_CTX_STATE_RUNNING) {
		rc = doca_ctx_stop(ctx);
		cr_assert(rc == DOCA_SUCCESS || rc == DOCA_ERROR_IN_PROGRESS,
			  "doca_ctx_stop returned %s", doca_error_get_name(rc));
	}
	for (;;) {
		struct doca_event *ev;

		assert_ok(doca_ctx_get_state(ctx, &s));
		if (s == DOCA_CTX_STATE_IDLE)
			return;
		cr_assert_eq(s, DOCA_CTX_STATE_STOPPING, "ctx in state %s while draining", state_name(s));
		doca_pe_progress(pe);
		while ((ev = doca_pe_get_event(pe)) != NULL) {
			assert_drained_event(ev);
			doca_event_free(ev);
		}
		cr_assert_lt(now_ns(), deadline, "ctx did not reach IDLE within %d ms", API_WAIT_MS);
	}
}

void fixture_fini(struct api_fixture *f)
{
	stop_and_drain(f->ctx, f->pe);
	if (f->src != NULL)
		assert_ok(doca_buf_destroy(f->src));
	if (f->dst != NULL)
		assert_ok(doca_buf_destroy(f->dst));
	if (f->src_mem != NULL)
		assert_ok(doca_mem_destroy(f->src_mem));
	if (f->dst_mem != NULL)
		assert_ok(doca_mem_destroy(f->dst_mem));
	if (f->dev != NULL)
		assert_ok(doca_dev_close(f->dev));
	assert_ok(doca_ctx_destroy(f->ctx));
	assert_ok(doca_pe_destroy(f->pe));
	memset(f, 0, sizeof(*f));
}

doca_error_t submit_copy(struct doca_ctx *ctx, struct doca_buf *src, struct doca_buf *dst, uint64_t user,
			 uint32_t flags)
{
	struct doca_task_desc desc = {
		.type = DOCA_TASK_COPY,
		.src = src,
		.dst = dst,
		.user_data = { .u64 = user },
		.flags = flags,
	};

	return doca_task_submit(ctx, &desc);
}

struct doca_event *wait_event(struct doca_pe *pe)
{
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	struct doca_event *ev;

	for (;;) {
		ev = doca_pe_get_event(pe);
		if (ev != NULL)
			return ev;
		doca_pe_progress(pe);
		ev = doca_pe_get_event(pe);
		if (ev != NULL)
			return ev;
		cr_assert_lt(now_ns(), deadline, "no event within %d ms", API_WAIT_MS);
	}
}

void expect_success_event(struct doca_pe *pe, uint64_t user, size_t bytes)
{
	assert_success_event(wait_event(pe), user, bytes);
}

void assert_success_event(struct doca_event *ev, uint64_t user, size_t bytes)
{
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "event status %d, error %s",
		     (int)doca_event_get_status(ev), doca_error_get_name(doca_event_get_error(ev)));
	assert_ok(doca_event_get_error(ev));
	cr_assert_eq(doca_event_get_bytes(ev), bytes, "event bytes %zu, expected %zu", doca_event_get_bytes(ev),
		     bytes);
	cr_assert_eq(doca_event_get_user_data(ev).u64, user, "event user data %llu, expected %llu",
		     (unsigned long long)doca_event_get_user_data(ev).u64, (unsigned long long)user);
	doca_event_free(ev);
}

void expect_no_event_for(struct doca_pe *pe, unsigned ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;

	do {
		uint32_t n = doca_pe_progress(pe);

		cr_assert_eq(n, 0, "doca_pe_progress made %u events ready, expected none", n);
		cr_assert_null(doca_pe_get_event(pe), "an event appeared, expected none");
	} while (now_ns() < end);
}

void progress_until_state(struct doca_pe *pe, struct doca_ctx *ctx, enum doca_ctx_state state)
{
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	enum doca_ctx_state s;

	for (;;) {
		assert_ok(doca_ctx_get_state(ctx, &s));
		if (s == state)
			return;
		cr_assert_lt(now_ns(), deadline, "ctx stayed %s, expected %s within %d ms", state_name(s),
			     state_name(state), API_WAIT_MS);
		doca_pe_progress(pe);
	}
}

void fixture_copy_and_verify(struct api_fixture *f)
{
	static uint32_t round;
	uint64_t user = 0xC0FFEE00ull + ++round;

	f->seed += 7;
	fill_pattern(f->src_bytes, f->len, f->seed);
	memset(f->dst_bytes, 0, f->len);
	assert_ok(submit_copy(f->ctx, f->src, f->dst, user, 0));
	expect_success_event(f->pe, user, f->len);
	cr_assert_eq(pattern_mismatch(f->dst_bytes, f->len, f->seed), f->len,
		     "destination differs from source at byte %zu", pattern_mismatch(f->dst_bytes, f->len, f->seed));
}

void sibling_init(struct api_sibling *s, struct api_fixture *a, uint32_t max_tasks)
{
	*s = (struct api_sibling){ 0 };
	assert_ok(doca_ctx_create(&s->ctx));
	if (max_tasks != 0)
		assert_ok(doca_ctx_set_max_tasks(s->ctx, max_tasks));
	assert_ok(doca_ctx_set_dev(s->ctx, a->dev));
	assert_ok(doca_pe_connect_ctx(a->pe, s->ctx));
	assert_ok(doca_mem_create(s->ctx, 128, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &s->mem));
	assert_ok(doca_buf_create(s->mem, 0, 64, &s->src));
	assert_ok(doca_buf_create(s->mem, 64, 64, &s->dst));
	assert_ok(doca_ctx_start(s->ctx));
}

void sibling_fini_with_fixture(struct api_sibling *s, struct api_fixture *a)
{
	siblings_fini_with_fixture(s, 1, a);
}

void siblings_fini_with_fixture(struct api_sibling *s, uint32_t n, struct api_fixture *a)
{
	for (uint32_t i = 0; i < n; i++) {
		stop_and_drain(s[i].ctx, a->pe);
		assert_ok(doca_buf_destroy(s[i].src));
		assert_ok(doca_buf_destroy(s[i].dst));
		assert_ok(doca_mem_destroy(s[i].mem));
	}
	stop_and_drain(a->ctx, a->pe);
	assert_ok(doca_buf_destroy(a->src));
	assert_ok(doca_buf_destroy(a->dst));
	assert_ok(doca_mem_destroy(a->src_mem));
	assert_ok(doca_mem_destroy(a->dst_mem));
	a->src = a->dst = NULL;
	a->src_mem = a->dst_mem = NULL;
	assert_ok(doca_dev_close(a->dev));
	a->dev = NULL;
	for (uint32_t i = 0; i < n; i++)
		assert_ok(doca_ctx_destroy(s[i].ctx));
	fixture_fini(a);
}

void read_redirected_stderr(char *text, size_t cap)
{
	int fd = fileno(cr_get_redirected_stderr());
	size_t used = 0;

	fflush(stderr);
	cr_assert_neq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), -1, "fcntl");
	for (;;) {
		ssize_t n = read(fd, text + used, cap - 1 - used);

		if (n <= 0)
			break;
		used += (size_t)n;
	}
	text[used] = '\0';
}
