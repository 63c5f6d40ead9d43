/*
 * stress/stress_churn.c — thousands of contexts started, stopped and
 * destroyed on a few PEs while other threads submit.
 *
 * Three PEs (two polled, one in event mode), each served by its own thread
 * that progresses it and frees every event. Two churner threads each keep
 * up to CHURN_IDLE idle started contexts (created, bound, connected to a
 * random PE, started; later stopped and destroyed, at random), so the PEs'
 * ready sets see contexts come and go by the thousand, and rebuild their
 * share of WORK_SLOTS working contexts (stop while submitters submit, wait
 * for IDLE, destroy buffers, memory, device handle and context, make a new
 * one on a random PE with a random task pool). Two submitter threads submit
 * to random working slots, racing those rebuilds: each task has a unique
 * tag, and a submit may only succeed (the task then gets exactly one event:
 * a copy of every byte, or a flush) or be refused with AGAIN, BAD_STATE or
 * INVALID_VALUE (the handles of a destroyed context or buffer are stale),
 * and a refused task gets no event.
 *
 * Checks at the end: every accepted tag had exactly one event and every
 * refused one none; every event was a success of `len` bytes or a flush;
 * every stop reached IDLE; every destroy succeeded (so no credit, buffer,
 * memory or device was left in use), the PEs were destroyed (no context
 * left connected) and as many contexts were destroyed as created. The
 * sanitizer builds add leak and race detection.
 *
 *   stress_churn [--seconds S] [--seed N] [--sabotage lost|dup]
 */
#include "stress_common.h"

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define NPES 3
#define CHURNERS 2
#define SUBMITTERS 2
#define WORK_SLOTS 16      /* working contexts, split between the churners */
#define CHURN_IDLE 1500    /* idle started contexts per churner, at most */
#define MAX_TAGS (1u << 22)
#define LEN 256u           /* bytes per copy */
#define IDLE_WAIT_NS 10000000000ull

static const char *const devs[] = { "sw0", "sw0:engines=1" };

struct work {
	_Atomic(struct doca_ctx *) ctx; /* NULL while being rebuilt */
	_Atomic(struct doca_buf *) src, dst;
	struct doca_dev *dev;           /* the churner's */
	struct doca_mem *mem;
};

struct idle {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
};

static struct {
	struct stress_opts opts;
	struct doca_pe *pe[NPES];
	struct doca_dev *anchor[2]; /* keep each device open (and its engine thread) */
	struct work work[WORK_SLOTS];
	_Atomic bool load;          /* submitters and churners go on */
	_Atomic bool serve;         /* PE threads go on */
	_Atomic uint32_t next_tag;
	_Atomic uint8_t *accepted;  /* per tag: 1 if its submit succeeded */
	_Atomic uint8_t *events;    /* per tag: events seen */
	_Atomic unsigned long n_accepted, n_again, n_bad_state, n_stale, n_ok, n_flushed;
	_Atomic unsigned long ctx_created, ctx_destroyed, rebuilds, sabotaged;
} W;

/* --sabotage lost|dup: the event whose check is dropped or doubled (its
 * index among the events seen), well inside a run rather than at its
 * start; and how long past --seconds a loaded host may take to reach it */
#define SABOTAGE_AT 1000
#define SABOTAGE_GRACE_S 60

/* The load goes on: until --seconds have passed and, in a sabotage run,
 * until the sabotage was made (a loaded host may see fewer than
 * SABOTAGE_AT events in a second; a run that never made it could not
 * fail, so its pass would say nothing), for at most SABOTAGE_GRACE_S
 * more. */
static bool load_goes_on(uint64_t start)
{
	uint64_t ran = stress_now_ns() - start;

	if (ran < (uint64_t)(W.opts.seconds * 1e9))
		return true;
	return W.opts.sabotage != SABOTAGE_NONE && atomic_load(&W.sabotaged) <= SABOTAGE_AT &&
	       ran < (uint64_t)((W.opts.seconds + SABOTAGE_GRACE_S) * 1e9);
}

static struct doca_ctx *ctx_make(struct rng *r, struct doca_dev **dev, uint32_t max_tasks)
{
	struct doca_ctx *ctx;

	STRESS_OK(doca_dev_open(devs[rng_below(r, 2)], dev));
	if (!STRESS_OK(doca_ctx_create(&ctx)))
		stress_fatal("doca_ctx_create failed");
	atomic_fetch_add(&W.ctx_created, 1);
	STRESS_OK(doca_ctx_set_dev(ctx, *dev));
	if (max_tasks != 0)
		STRESS_OK(doca_ctx_set_max_tasks(ctx, max_tasks));
	STRESS_OK(doca_pe_connect_ctx(W.pe[rng_below(r, NPES)], ctx));
	return ctx;
}

/* Stop (maybe while tasks are in flight) and wait until IDLE; then the
 * device handle goes and the context is destroyed. */
static void ctx_drop(struct doca_ctx *ctx, struct doca_dev *dev, struct doca_mem *mem,
		     struct doca_buf *src, struct doca_buf *dst)
{
	enum doca_ctx_state st;
	uint64_t deadline = stress_now_ns() + IDLE_WAIT_NS;

	stress_expect_in(doca_ctx_stop(ctx), "doca_ctx_stop", 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	while (STRESS_OK(doca_ctx_get_state(ctx, &st)) && st != DOCA_CTX_STATE_IDLE) {
		if (stress_now_ns() > deadline)
			stress_fatal("a stopped context never became IDLE");
		stress_sleep_us(50);
	}
	if (src != NULL) {
		STRESS_OK(doca_buf_destroy(src));
		STRESS_OK(doca_buf_destroy(dst));
		STRESS_OK(doca_mem_destroy(mem));
	}
	STRESS_OK(doca_dev_close(dev));
	if (STRESS_OK(doca_ctx_destroy(ctx)))
		atomic_fetch_add(&W.ctx_destroyed, 1);
}

/* A working context: a memory with a source and a destination window. */
static void work_build(struct work *w, struct rng *r)
{
	struct doca_buf *src, *dst;
	struct doca_ctx *ctx = ctx_make(r, &w->dev, 8 + rng_below(r, 57));
	void *base;

	STRESS_OK(doca_mem_create(ctx, 2 * LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &w->mem));
	STRESS_OK(doca_mem_get_addr(w->mem, &base));
	for (unsigned i = 0; i < LEN; i++)
		((unsigned char *)base)[i] = (unsigned char)(i * 7u + 1u);
	STRESS_OK(doca_buf_create(w->mem, 0, LEN, &src));
	STRESS_OK(doca_buf_create(w->mem, LEN, LEN, &dst));
	STRESS_OK(doca_ctx_start(ctx));
	atomic_store(&w->src, src);
	atomic_store(&w->dst, dst);
	atomic_store(&w->ctx, ctx);
}

static void work_drop(struct work *w)
{
	struct doca_ctx *ctx = atomic_exchange(&w->ctx, NULL);

	/* submitters may still hold the handles: from here on they are stale */
	ctx_drop(ctx, w->dev, w->mem, atomic_load(&w->src), atomic_load(&w->dst));
}

static void *churner_main(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	struct idle *idle = calloc(CHURN_IDLE, sizeof(*idle));
	unsigned n = 0;
	struct rng r;

	if (idle == NULL)
		stress_fatal("out of memory");
	rng_init(&r, W.opts.seed, 10 + id);
	while (atomic_load(&W.load)) {
		unsigned pick = rng_below(&r, 1000);

		if (pick < 8) { /* rebuild one of our working contexts */
			struct work *w = &W.work[id + CHURNERS * rng_below(&r, WORK_SLOTS / CHURNERS)];

			work_drop(w);
			work_build(w, &r);
			atomic_fetch_add(&W.rebuilds, 1);
		} else if (pick < 600 && n < CHURN_IDLE) {
			idle[n].ctx = ctx_make(&r, &idle[n].dev, 0);
			STRESS_OK(doca_ctx_start(idle[n].ctx));
			n++;
		} else if (n > 0) {
			unsigned k = rng_below(&r, n);

			ctx_drop(idle[k].ctx, idle[k].dev, NULL, NULL, NULL);
			idle[k] = idle[--n];
		}
	}
	while (n > 0) {
		n--;
		ctx_drop(idle[n].ctx, idle[n].dev, NULL, NULL, NULL);
	}
	free(idle);
	return NULL;
}

/* A tag refused with AGAIN is tried again (it still must get no event
 * unless a later submit of it succeeds); one refused otherwise is final. */
static void *submitter_main(void *arg)
{
	uint32_t tag = MAX_TAGS;
	struct rng r;

	rng_init(&r, W.opts.seed, 20 + (uintptr_t)arg);
	while (atomic_load(&W.load)) {
		struct work *w = &W.work[rng_below(&r, WORK_SLOTS)];
		struct doca_ctx *ctx = atomic_load(&w->ctx);

		if (tag >= MAX_TAGS && (tag = atomic_fetch_add(&W.next_tag, 1)) >= MAX_TAGS) {
			atomic_store(&W.next_tag, MAX_TAGS);
			stress_sleep_us(1000);
			continue;
		}
		struct doca_task_desc desc = {
			.type = DOCA_TASK_COPY,
			.src = atomic_load(&w->src),
			.dst = atomic_load(&w->dst),
			.user_data = { .u64 = tag },
		};
		doca_error_t err = ctx != NULL ? doca_task_submit(ctx, &desc) : DOCA_ERROR_BAD_STATE;
		bool tag_done = false;

		if (err != DOCA_ERROR_AGAIN)
			tag_done = true;
		if (err == DOCA_SUCCESS) {
			atomic_store(&W.accepted[tag], 1);
			atomic_fetch_add(&W.n_accepted, 1);
		} else if (err == DOCA_ERROR_AGAIN) {
			atomic_fetch_add(&W.n_again, 1);
			sched_yield(); /* its PE's thread frees the credits */
		} else if (err == DOCA_ERROR_BAD_STATE) {
			atomic_fetch_add(&W.n_bad_state, 1);
		} else if (err == DOCA_ERROR_INVALID_VALUE) {
			atomic_fetch_add(&W.n_stale, 1); /* a handle of a destroyed object */
		} else {
			stress_violation("doca_task_submit returned %s", doca_error_get_name(err));
		}
		if (tag_done)
			tag = MAX_TAGS;
	}
	return NULL;
}

static void event_check(struct doca_event *ev)
{
	uint64_t tag = doca_event_get_user_data(ev).u64;
	enum doca_event_status st = doca_event_get_status(ev);
	doca_error_t err = doca_event_get_error(ev);
	size_t bytes = doca_event_get_bytes(ev);
	unsigned times = 1;

	if (tag >= MAX_TAGS) {
		stress_violation("an event with tag %llu, never submitted", (unsigned long long)tag);
		doca_event_free(ev);
		return;
	}
	if (st == DOCA_EVENT_STATUS_SUCCESS && err == DOCA_SUCCESS && bytes == LEN)
		atomic_fetch_add(&W.n_ok, 1);
	else if (st == DOCA_EVENT_STATUS_FAILURE && err == DOCA_ERROR_SHUTDOWN && bytes == 0)
		atomic_fetch_add(&W.n_flushed, 1);
	else
		stress_violation("tag %llu: status %d, %s, %zu bytes", (unsigned long long)tag, (int)st,
				 doca_error_get_name(err), bytes);
	if (W.opts.sabotage != SABOTAGE_NONE && atomic_fetch_add(&W.sabotaged, 1) == SABOTAGE_AT)
		times = W.opts.sabotage == SABOTAGE_LOST ? 0 : 2;
	for (unsigned i = 0; i < times; i++)
		atomic_fetch_add(&W.events[tag], 1);
	doca_event_free(ev);
}

static uint32_t pe_reap(struct doca_pe *pe)
{
	struct doca_event *evs[64];
	uint32_t n = doca_pe_get_events(pe, evs, 64);

	for (uint32_t i = 0; i < n; i++)
		event_check(evs[i]);
	return n;
}

/* PE i's thread: polled (0, 1) or event mode (2), until told to quit. */
static void *pe_main(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;
	struct doca_pe *pe = W.pe[i];
	int fd;

	STRESS_OK(doca_pe_get_notification_handle(pe, &fd));
	while (atomic_load(&W.serve)) {
		uint32_t n = doca_pe_progress(pe);

		n += pe_reap(pe);
		if (n != 0 || i != 2)
			continue;
		STRESS_OK(doca_pe_request_notification(pe));
		struct pollfd p = { .fd = fd, .events = POLLIN };

		(void)poll(&p, 1, 10);
		STRESS_OK(doca_pe_clear_notification(pe));
	}
	return NULL;
}

static void check_tags(void)
{
	uint32_t n = atomic_load(&W.next_tag);
	unsigned long bad = 0;

	for (uint32_t t = 0; t < n && t < MAX_TAGS; t++) {
		unsigned want = atomic_load(&W.accepted[t]), got = atomic_load(&W.events[t]);

		if (want != got && bad++ < 10)
			stress_violation("tag %u: %s, %u events", t, want ? "accepted" : "refused", got);
	}
	if (bad > 10)
		stress_violation("... %lu tags in all with a wrong number of events", bad);
	if (atomic_load(&W.n_accepted) == 0)
		stress_violation("no task was accepted: the run proved nothing");
	if (atomic_load(&W.ctx_created) != atomic_load(&W.ctx_destroyed))
		stress_violation("%lu contexts created, %lu destroyed", atomic_load(&W.ctx_created),
				 atomic_load(&W.ctx_destroyed));
}

int main(int argc, char **argv)
{
	pthread_t pes[NPES], churners[CHURNERS], subs[SUBMITTERS];
	uint64_t start = stress_now_ns();
	struct rng r;

	/* no data kind: this program checks no data */
	stress_parse_kinds(argc, argv, &W.opts, STRESS_KIND(SABOTAGE_LOST) | STRESS_KIND(SABOTAGE_DUP));
	W.accepted = calloc(MAX_TAGS, 1);
	W.events = calloc(MAX_TAGS, 1);
	if (W.accepted == NULL || W.events == NULL)
		stress_fatal("out of memory");
	rng_init(&r, W.opts.seed, 1);
	for (unsigned i = 0; i < 2; i++)
		STRESS_OK(doca_dev_open(devs[i], &W.anchor[i]));
	atomic_store(&W.serve, true);
	atomic_store(&W.load, true);
	for (unsigned i = 0; i < NPES; i++) {
		STRESS_OK(doca_pe_create(&W.pe[i]));
		if (pthread_create(&pes[i], NULL, pe_main, (void *)(uintptr_t)i) != 0)
			stress_fatal("pthread_create failed");
	}
	for (unsigned i = 0; i < WORK_SLOTS; i++)
		work_build(&W.work[i], &r);
	for (unsigned i = 0; i < CHURNERS; i++)
		if (pthread_create(&churners[i], NULL, churner_main, (void *)(uintptr_t)i) != 0)
			stress_fatal("pthread_create failed");
	for (unsigned i = 0; i < SUBMITTERS; i++)
		if (pthread_create(&subs[i], NULL, submitter_main, (void *)(uintptr_t)i) != 0)
			stress_fatal("pthread_create failed");
	while (load_goes_on(start))
		stress_sleep_us(10000);
	atomic_store(&W.load, false);
	for (unsigned i = 0; i < SUBMITTERS; i++)
		pthread_join(subs[i], NULL);
	for (unsigned i = 0; i < CHURNERS; i++)
		pthread_join(churners[i], NULL);
	for (unsigned i = 0; i < WORK_SLOTS; i++)
		work_drop(&W.work[i]);
	atomic_store(&W.serve, false);
	for (unsigned i = 0; i < NPES; i++) {
		pthread_join(pes[i], NULL);
		STRESS_OK(doca_pe_destroy(W.pe[i]));
	}
	for (unsigned i = 0; i < 2; i++)
		STRESS_OK(doca_dev_close(W.anchor[i]));
	check_tags();
	printf("  accepted %lu → events: %lu ok, %lu flushed; refused: %lu AGAIN, %lu BAD_STATE, %lu stale\n",
	       atomic_load(&W.n_accepted), atomic_load(&W.n_ok), atomic_load(&W.n_flushed),
	       atomic_load(&W.n_again), atomic_load(&W.n_bad_state), atomic_load(&W.n_stale));
	printf("  %lu contexts created and destroyed, %lu working-context rebuilds\n",
	       atomic_load(&W.ctx_destroyed), atomic_load(&W.rebuilds));
	printf("stress_churn: %s seed=%llu %.1fs accepted=%lu violations=%lu\n",
	       stress_violation_count() ? "FAIL" : "PASS", (unsigned long long)W.opts.seed,
	       (double)(stress_now_ns() - start) / 1e9, atomic_load(&W.n_accepted), stress_violation_count());
	free(W.accepted);
	free(W.events);
	return stress_violation_count() ? 1 : 0;
}
