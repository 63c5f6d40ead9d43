/*
 * libuv_service.c — doca-core as the offload backend of a libuv service.
 *
 *   ./libuv_service [--dev NAME] [--tasks N] [--max-tasks N] [--stop-at N]
 *
 * The PE's notification fd sits in a uv_poll_t: the loop thread progresses
 * the PE, checks every completed copy byte for byte and frees its event.
 * Four producer threads submit 64 B and 64 KiB copies into the one context;
 * when its task pool is empty they sleep in doca_task_submit_wait until a
 * credit returns (back-pressure without spinning). After --stop-at
 * completions the loop stops the context while the producers still submit:
 * they are refused (DOCA_ERROR_BAD_STATE), the accepted tasks complete or
 * are flushed, the state callback reports IDLE, the loop ends, and
 * everything is torn down in the documented order. Exit status 0 only if
 * every accepted task got exactly one event and every count matches.
 */
#include "example_common.h"

#include <pthread.h>
#include <uv.h>

#define PRODUCERS 4
#define SMALL_LEN 64u
#define LARGE_LEN (64u * 1024u)
#define WAIT_MS 10000 /* the longest a producer sleeps for a credit */

static const char about[] = "libuv loop with the PE fd in a uv_poll_t, 4 producers, back-pressure, stop under load";

/* One producer's copy slots: a free slot is taken before its task is
 * submitted and given back by the loop before the event is freed, so a
 * producer holding no more than max_tasks credits always finds one of its
 * max_tasks + 1 slots free. */
struct producer {
	struct service *s;
	int id;
	uv_thread_t thread;
	struct doca_mem *mem;                 /* READ | WRITE: every slot's src and dst */
	struct doca_buf **src_small, **src_large, **dst_small, **dst_large;
	uint8_t **src, **dst;                 /* CPU view of each slot */
	pthread_mutex_t lock;                 /* free[] and nfree: producer and loop */
	uint32_t *free;
	uint32_t nfree;
	/* written by the producer, read after the join */
	uint64_t accepted, refused, waited;
	doca_error_t refusal;                 /* why the last task was not accepted */
};

struct service {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	uv_loop_t loop;
	uv_poll_t pe_poll;
	struct producer prod[PRODUCERS];
	uint32_t slots;                       /* per producer: max_tasks + 1 */
	uint64_t tasks;                       /* per producer */
	uint64_t stop_at;
	/* the loop thread's own counts */
	uint64_t events, succeeded, flushed, wakeups, bytes_checked;
	bool stop_sent, idle;
};

/* user data of a task: producer (8 bits) | slot (24 bits) | task index (32 bits) */
static uint64_t task_user(int prod, uint32_t slot, uint64_t i)
{
	return (uint64_t)prod << 56 | (uint64_t)slot << 32 | i;
}

static void slot_put(struct producer *p, uint32_t slot)
{
	pthread_mutex_lock(&p->lock);
	p->free[p->nfree++] = slot;
	pthread_mutex_unlock(&p->lock);
}

static uint32_t slot_get(struct producer *p)
{
	uint32_t slot;

	pthread_mutex_lock(&p->lock);
	if (p->nfree == 0)
		example_fail("producer %d: no free slot although it holds at most max_tasks credits", p->id);
	slot = p->free[--p->nfree];
	pthread_mutex_unlock(&p->lock);
	return slot;
}

static void producer_main(void *arg)
{
	struct producer *p = arg;
	struct service *s = p->s;

	for (uint64_t i = 0; i < s->tasks; i++) {
		uint32_t slot = slot_get(p);
		bool large = i % 2 == 1;
		size_t len = large ? LARGE_LEN : SMALL_LEN;
		struct doca_task_desc desc = {
			.type = DOCA_TASK_COPY,
			.src = large ? p->src_large[slot] : p->src_small[slot],
			.dst = large ? p->dst_large[slot] : p->dst_small[slot],
			.user_data = { .u64 = task_user(p->id, slot, i) },
		};

		example_fill_pattern(p->src[slot], len, example_seed((uint64_t)p->id, i));
		memset(p->dst[slot], 0, len);
		doca_error_t err = doca_task_submit(s->ctx, &desc);

		if (err == DOCA_ERROR_AGAIN) { /* pool empty: sleep until a credit returns */
			p->waited++;
			err = doca_task_submit_wait(s->ctx, &desc, WAIT_MS);
		}
		if (err != DOCA_SUCCESS) {
			slot_put(p, slot);
			p->refused = s->tasks - i; /* this one and those never tried */
			p->refusal = err;
			return; /* BAD_STATE: the context was stopped */
		}
		p->accepted++;
	}
}

/* A completed copy: check it, give its slot back, free the event. */
static void handle_event(struct service *s, struct doca_event *ev)
{
	uint64_t user = doca_event_get_user_data(ev).u64;
	uint64_t i = user & 0xffffffffu;
	uint32_t slot = (uint32_t)(user >> 32) & 0xffffffu;
	int id = (int)(user >> 56);
	size_t len = i % 2 == 1 ? LARGE_LEN : SMALL_LEN;

	if (id >= PRODUCERS || slot >= s->slots || i >= s->tasks)
		example_fail("event with unknown user data %#llx", (unsigned long long)user);
	struct producer *p = &s->prod[id];

	if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS) {
		size_t bad = example_find_mismatch(p->dst[slot], len, example_seed((uint64_t)id, i));

		if (doca_event_get_bytes(ev) != len || bad != len)
			example_fail("producer %d task %llu: %zu bytes reported, byte %zu of %zu wrong", id,
				     (unsigned long long)i, doca_event_get_bytes(ev), bad, len);
		s->succeeded++;
		s->bytes_checked += len;
	} else if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_FAILURE &&
		   doca_event_get_error(ev) == DOCA_ERROR_SHUTDOWN) {
		s->flushed++; /* queued when the context stopped */
	} else {
		example_fail("producer %d task %llu: status %s, error %s", id, (unsigned long long)i,
			     example_status_name(doca_event_get_status(ev)),
			     doca_error_get_name(doca_event_get_error(ev)));
	}
	s->events++;
	slot_put(p, slot);
	doca_event_free(ev);
}

static void on_state(struct doca_ctx *ctx, union doca_data user, enum doca_ctx_state prev,
		     enum doca_ctx_state next)
{
	struct service *s = user.ptr;

	(void)ctx;
	(void)prev;
	if (next == DOCA_CTX_STATE_IDLE)
		s->idle = true;
}

/* The PE's fd is readable: clear, progress, reap, maybe stop, re-arm. */
static void on_pe_readable(uv_poll_t *handle, int status, int events)
{
	struct service *s = handle->data;
	struct doca_event *ev;

	(void)events;
	if (status < 0)
		example_fail("uv_poll: %s", uv_strerror(status));
	s->wakeups++;
	EXAMPLE_CHECK(doca_pe_clear_notification(s->pe));
	doca_pe_progress(s->pe);
	while ((ev = doca_pe_get_event(s->pe)) != NULL)
		handle_event(s, ev);
	if (!s->stop_sent && s->events >= s->stop_at) {
		/* under load: producers are submitting or asleep in submit_wait */
		doca_error_t err = doca_ctx_stop(s->ctx);

		if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
			example_fail("doca_ctx_stop: %s", doca_error_get_name(err));
		s->stop_sent = true;
	}
	if (s->idle) {
		uv_close((uv_handle_t *)handle, NULL); /* the loop ends */
		return;
	}
	EXAMPLE_CHECK(doca_pe_request_notification(s->pe));
}

static void producer_create(struct service *s, struct producer *p, int id)
{
	uint32_t n = s->slots;

	p->s = s;
	p->id = id;
	p->src_small = calloc(n, sizeof(*p->src_small));
	p->src_large = calloc(n, sizeof(*p->src_large));
	p->dst_small = calloc(n, sizeof(*p->dst_small));
	p->dst_large = calloc(n, sizeof(*p->dst_large));
	p->src = calloc(n, sizeof(*p->src));
	p->dst = calloc(n, sizeof(*p->dst));
	p->free = calloc(n, sizeof(*p->free));
	if (!p->src_small || !p->src_large || !p->dst_small || !p->dst_large || !p->src || !p->dst || !p->free)
		example_fail("out of memory");
	pthread_mutex_init(&p->lock, NULL);
	EXAMPLE_CHECK(doca_mem_create(s->ctx, (size_t)2 * n * LARGE_LEN,
				      DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &p->mem));
	for (uint32_t i = 0; i < n; i++) {
		size_t src = (size_t)2 * i * LARGE_LEN, dst = src + LARGE_LEN;

		EXAMPLE_CHECK(doca_buf_create(p->mem, src, SMALL_LEN, &p->src_small[i]));
		EXAMPLE_CHECK(doca_buf_create(p->mem, src, LARGE_LEN, &p->src_large[i]));
		EXAMPLE_CHECK(doca_buf_create(p->mem, dst, SMALL_LEN, &p->dst_small[i]));
		EXAMPLE_CHECK(doca_buf_create(p->mem, dst, LARGE_LEN, &p->dst_large[i]));
		p->src[i] = example_buf_data(p->src_large[i]);
		p->dst[i] = example_buf_data(p->dst_large[i]);
		p->free[p->nfree++] = n - 1 - i;
	}
}

static void producer_destroy(struct producer *p)
{
	for (uint32_t i = 0; i < p->s->slots; i++) {
		EXAMPLE_CHECK(doca_buf_destroy(p->src_small[i]));
		EXAMPLE_CHECK(doca_buf_destroy(p->src_large[i]));
		EXAMPLE_CHECK(doca_buf_destroy(p->dst_small[i]));
		EXAMPLE_CHECK(doca_buf_destroy(p->dst_large[i]));
	}
	EXAMPLE_CHECK(doca_mem_destroy(p->mem));
	pthread_mutex_destroy(&p->lock);
	free(p->src_small);
	free(p->src_large);
	free(p->dst_small);
	free(p->dst_large);
	free(p->src);
	free(p->dst);
	free(p->free);
}

int main(int argc, char **argv)
{
	unsigned long tasks = 2000, max_tasks = 16, stop_at = 0;
	struct example_opt opts[] = {
		{ "tasks", &tasks, "copies per producer, 64 B and 64 KiB alternating" },
		{ "max-tasks", &max_tasks, "the context's task pool (small: back-pressure)" },
		{ "stop-at", &stop_at, "completions before the stop under load (0: 3/4 of all)" },
	};
	const char *dev_name = example_parse_args(argc, argv, about, "sw0:engines=1", opts, 3);
	static struct service s;
	int fd;

	if (!tasks || tasks > UINT32_MAX || !max_tasks || max_tasks > 4096)
		example_fail("--tasks must be 1..2^32-1, --max-tasks 1..4096");
	s.tasks = tasks;
	s.slots = (uint32_t)max_tasks + 1;
	s.stop_at = stop_at ? stop_at : PRODUCERS * tasks * 3 / 4;
	printf("libuv_service: %d producers x %lu copies (64 B / 64 KiB) on \"%s\", pool of %lu, stop after %llu\n",
	       PRODUCERS, tasks, dev_name, max_tasks, (unsigned long long)s.stop_at);

	/* create: ctx, dev, memories and buffers, PE (the PE goes last at teardown) */
	EXAMPLE_CHECK(doca_ctx_create(&s.ctx));
	EXAMPLE_CHECK(doca_ctx_set_max_tasks(s.ctx, (uint32_t)max_tasks));
	EXAMPLE_CHECK(doca_ctx_set_user_data(s.ctx, (union doca_data){ .ptr = &s }));
	EXAMPLE_CHECK(doca_ctx_set_state_changed_cb(s.ctx, on_state));
	s.dev = example_open_dev(dev_name);
	EXAMPLE_CHECK(doca_ctx_set_dev(s.ctx, s.dev));
	for (int i = 0; i < PRODUCERS; i++)
		producer_create(&s, &s.prod[i], i);
	EXAMPLE_CHECK(doca_pe_create(&s.pe));
	EXAMPLE_CHECK(doca_pe_connect_ctx(s.pe, s.ctx));
	EXAMPLE_CHECK(doca_ctx_start(s.ctx));

	/* the PE's fd in the loop, armed before the first sleep */
	if (uv_loop_init(&s.loop) != 0)
		example_fail("uv_loop_init");
	EXAMPLE_CHECK(doca_pe_get_notification_handle(s.pe, &fd));
	if (uv_poll_init(&s.loop, &s.pe_poll, fd) != 0)
		example_fail("uv_poll_init on the PE's fd");
	s.pe_poll.data = &s;
	if (uv_poll_start(&s.pe_poll, UV_READABLE, on_pe_readable) != 0)
		example_fail("uv_poll_start on the PE's fd");
	EXAMPLE_CHECK(doca_pe_request_notification(s.pe));

	uint64_t t0 = example_now_ns();

	for (int i = 0; i < PRODUCERS; i++)
		if (uv_thread_create(&s.prod[i].thread, producer_main, &s.prod[i]) != 0)
			example_fail("uv_thread_create");
	if (uv_run(&s.loop, UV_RUN_DEFAULT) != 0)
		example_fail("uv_run ended with active handles");
	for (int i = 0; i < PRODUCERS; i++)
		if (uv_thread_join(&s.prod[i].thread) != 0)
			example_fail("uv_thread_join");
	double ms = (double)(example_now_ns() - t0) / 1e6;

	/* every count must match */
	uint64_t accepted = 0, refused = 0, waited = 0;

	for (int i = 0; i < PRODUCERS; i++) {
		struct producer *p = &s.prod[i];

		if (p->accepted + p->refused != s.tasks)
			example_fail("producer %d: %llu accepted + %llu refused != %llu", i,
				     (unsigned long long)p->accepted, (unsigned long long)p->refused,
				     (unsigned long long)s.tasks);
		if (p->refused != 0 && p->refusal != DOCA_ERROR_BAD_STATE)
			example_fail("producer %d refused with %s", i, doca_error_get_name(p->refusal));
		if (p->nfree != s.slots)
			example_fail("producer %d: %u of %u slots came back", i, p->nfree, s.slots);
		accepted += p->accepted;
		refused += p->refused;
		waited += p->waited;
	}
	if (!s.idle || example_ctx_state(s.ctx) != DOCA_CTX_STATE_IDLE)
		example_fail("the context is not IDLE after the loop");
	if (s.events != accepted || s.succeeded + s.flushed != s.events)
		example_fail("%llu accepted, %llu events (%llu succeeded, %llu flushed)",
			     (unsigned long long)accepted, (unsigned long long)s.events,
			     (unsigned long long)s.succeeded, (unsigned long long)s.flushed);
	if (s.events < s.stop_at || refused == 0)
		example_fail("the stop did not come under load (%llu events, %llu refused)",
			     (unsigned long long)s.events, (unsigned long long)refused);

	/* teardown in the documented order: the context is IDLE */
	if (uv_loop_close(&s.loop) != 0)
		example_fail("uv_loop_close");
	for (int i = 0; i < PRODUCERS; i++)
		producer_destroy(&s.prod[i]);
	EXAMPLE_CHECK(doca_dev_close(s.dev));
	EXAMPLE_CHECK(doca_ctx_destroy(s.ctx));
	EXAMPLE_CHECK(doca_pe_destroy(s.pe));

	printf("  accepted %llu, refused after the stop %llu; events %llu: %llu succeeded (every byte checked, %.1f MiB), %llu flushed\n",
	       (unsigned long long)accepted, (unsigned long long)refused, (unsigned long long)s.events,
	       (unsigned long long)s.succeeded, (double)s.bytes_checked / (1024.0 * 1024.0),
	       (unsigned long long)s.flushed);
	printf("  back-pressure: %llu submits found the pool empty and waited in doca_task_submit_wait\n",
	       (unsigned long long)waited);
	printf("  loop: %llu wake-ups of the uv_poll_t, %.1f ms\n", (unsigned long long)s.wakeups, ms);
	return EXIT_SUCCESS;
}
