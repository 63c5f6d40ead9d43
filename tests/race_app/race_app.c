/*
 * tests/race_app/race_app.c — an application that embeds doca-core, written
 * the way a user's own race test is: built with clang -fsanitize=thread
 * against the plain (uninstrumented, jemalloc) library, or run under
 * Valgrind's Helgrind or DRD. Public API only.
 *
 *   race_app MODE [ROUNDS]
 *
 * Two producer threads own four slots each (a source and a destination
 * buffer). A producer waits until its slot is free, fills the source, clears
 * the destination, submits a copy and goes on to its next slot; it touches a
 * slot again only after the reaper has checked the copy and released the
 * slot. Every eighth round it destroys the slot's buffers and makes new ones
 * over the same bytes. The first producer's memory is the application's own
 * (malloc, freed by the application at the end), the second's is made by the
 * library. At the end the main thread submits once more into every slot and
 * stops the context at once, so a stop flushes tasks in flight, then tears
 * everything down. The application's own hand-offs use a mutex and a
 * condition variable, which every one of the tools understands (Valgrind's
 * do not understand C11 atomics).
 *
 * Correct by the library's contract, so the clean modes must get no report:
 *   poll         main thread reaps: doca_pe_progress + doca_pe_get_event
 *                (device sw0:engines=1: the copy runs on an engine thread)
 *   poll-inline  the same on sw0 (the copy runs inside doca_pe_progress)
 *   poll-fab0    the same on fab0 (local memories: the copy runs when the
 *                descriptor is doorbelled)
 *   event        main thread sleeps on the notification handle
 *   worker       a worker thread (doca_pe_run_on_cpu) delivers the events to
 *                a callback, which checks and releases the slot
 *   burst        no producers: the main thread submits 64 copies at once on
 *                sw0:engines=1 and reaps them with the burst calls, so the
 *                software device's rings grow past their first segment
 *                (one thread makes a segment, another frees it)
 * Deliberately racy, so they must be reported at the racing line:
 *   race-dst     the first producer writes a destination while its copy is
 *                in flight (write_dst_in_flight)
 *   race-src     it writes a source while its copy is in flight
 *                (write_src_in_flight)
 * The racy modes use sw0:engines=1,delay_us=2000, so the task really is in
 * flight when the producer writes, on its last copy. A happens-before
 * detector misses a race when a chain of synchronisation happens to lead
 * from the racing access to the other one: here another submission's
 * hand-off, or the producer's own thread exit (its key destructors take
 * locks), could carry the write to the device before the copy. So after the
 * racing write the producer synchronises with nothing until the copy has
 * been reaped: it waits on a relaxed atomic flag, which orders nothing.
 */
#include "example_common.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define PRODUCERS 2u
#define SLOTS 4u          /* per producer */
#define LEN 256u          /* bytes per copy */
#define RECREATE_EVERY 8u /* rounds between new buffers for a slot */
#define ROUNDS_DEFAULT 60u

#define BURST 64u         /* burst mode: copies in flight at once */

enum mode {
	MODE_POLL,
	MODE_POLL_INLINE,
	MODE_EVENT,
	MODE_WORKER,
	MODE_RACE_DST,
	MODE_RACE_SRC,
	MODE_BURST,
	MODE_POLL_FAB0,
};

struct slot {
	struct doca_mem *mem;
	size_t offset;        /* of the source; the destination follows it */
	struct doca_buf *src, *dst;
	uint8_t *src_data, *dst_data;
	uint64_t seed;        /* of the copy in flight: the producer writes it before submitting */
	bool flushed_ok;      /* the final, stopped round: FAILURE/SHUTDOWN allowed */
	bool raced;           /* racy modes: the copy the producer races with */
	bool busy;            /* app->lock: from the producer's submit to the reaper's release */
};

struct app {
	enum mode mode;
	unsigned rounds;
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_mem *mems[PRODUCERS];
	void *own_region; /* producer 0's memory: the application's malloc */
	struct slot slots[PRODUCERS][SLOTS];
	pthread_mutex_t lock;
	pthread_cond_t released; /* a slot was released */
	unsigned long reaped;    /* lock */
	uint64_t start_ns;
	atomic_bool raced_copy_reaped; /* relaxed only: it must order nothing */
};

/* The deliberate races: each is the only statement of its function, so a
 * report that names the function names the line. */
static __attribute__((noinline)) void write_dst_in_flight(struct slot *s)
{
	s->dst_data[LEN / 2] = 0xa5;
}

static __attribute__((noinline)) void write_src_in_flight(struct slot *s)
{
	s->src_data[LEN / 2] = 0x5a;
}

static void slot_buffers_create(struct slot *s)
{
	void *data;

	EXAMPLE_CHECK(doca_buf_create(s->mem, s->offset, LEN, &s->src));
	EXAMPLE_CHECK(doca_buf_create(s->mem, s->offset + LEN, LEN, &s->dst));
	EXAMPLE_CHECK(doca_buf_get_data(s->src, &data));
	s->src_data = data;
	EXAMPLE_CHECK(doca_buf_get_data(s->dst, &data));
	s->dst_data = data;
}

/* A buffer's destroy succeeds once the event of its last task has been
 * freed (IN_USE until then), and that free happens before it: whatever the
 * reaper did with the buffer's bytes before freeing the event is ordered
 * before what we do after, with no synchronisation of our own. */
static void buf_destroy_after_event(struct app *app, struct doca_buf *buf)
{
	doca_error_t err;

	while ((err = doca_buf_destroy(buf)) == DOCA_ERROR_IN_USE) {
		sched_yield();
		example_check_deadline(app->start_ns, "the last event of a buffer to be freed");
	}
	EXAMPLE_CHECK(err);
}

/* The next copy's bytes (before its submit). */
static void slot_fill(struct slot *s, uint64_t seed)
{
	example_fill_pattern(s->src_data, LEN, seed);
	memset(s->dst_data, 0, LEN);
	s->seed = seed;
}

static void submit(struct app *app, struct slot *s)
{
	struct doca_task_desc desc = {
		.type = DOCA_TASK_COPY,
		.src = s->src,
		.dst = s->dst,
		.user_data = { .ptr = s },
	};
	doca_error_t err;

	pthread_mutex_lock(&app->lock);
	s->busy = true;
	pthread_mutex_unlock(&app->lock);
	while ((err = doca_task_submit(app->ctx, &desc)) == DOCA_ERROR_AGAIN) {
		sched_yield();
		example_check_deadline(app->start_ns, "room in the task pool");
	}
	EXAMPLE_CHECK(err);
}

/* The reaper's check of the slot's last copy is done. */
static void slot_wait_free(struct app *app, struct slot *s)
{
	pthread_mutex_lock(&app->lock);
	while (s->busy)
		pthread_cond_wait(&app->released, &app->lock);
	pthread_mutex_unlock(&app->lock);
}

struct producer {
	struct app *app;
	unsigned id;
	pthread_t thread;
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	struct app *app = p->app;

	for (unsigned r = 0; r < app->rounds; r++) {
		for (unsigned i = 0; i < SLOTS; i++) {
			struct slot *s = &app->slots[p->id][i];

			uint64_t seed = example_seed(p->id * SLOTS + i, r);

			if (r != 0 && r % RECREATE_EVERY == 0) {
				/* New buffers over the same bytes, refilled before we
				 * wait for the reaper: only the destroys order its
				 * reads of the last copy before these writes. */
				buf_destroy_after_event(app, s->src);
				buf_destroy_after_event(app, s->dst);
				slot_buffers_create(s);
				slot_fill(s, seed);
				slot_wait_free(app, s);
			} else {
				slot_wait_free(app, s);
				slot_fill(s, seed);
			}
			bool race = (app->mode == MODE_RACE_DST || app->mode == MODE_RACE_SRC) &&
				    p->id == 0 && i == SLOTS - 1 && r == app->rounds - 1;

			s->raced = race;
			submit(app, s);
			if (race) {
				if (app->mode == MODE_RACE_DST)
					write_dst_in_flight(s);
				else
					write_src_in_flight(s);
				while (!atomic_load_explicit(&app->raced_copy_reaped, memory_order_relaxed))
					sched_yield();
			}
		}
	}
	return NULL;
}

/* The reaper, on whichever thread the event is handed to: check the copy
 * and return its slot. */
static struct slot *check_event(struct doca_event *ev)
{
	struct slot *s = doca_event_get_user_data(ev).ptr;
	enum doca_event_status status = doca_event_get_status(ev);

	if (status == DOCA_EVENT_STATUS_SUCCESS) {
		size_t bad = example_find_mismatch(s->dst_data, LEN, s->seed);

		if (doca_event_get_bytes(ev) != LEN || bad != LEN || memcmp(s->src_data, s->dst_data, LEN))
			example_fail("copy of seed %llx: %zu bytes, first bad byte %zu",
				     (unsigned long long)s->seed, doca_event_get_bytes(ev), bad);
	} else if (!s->flushed_ok || status != DOCA_EVENT_STATUS_FAILURE ||
		   doca_event_get_error(ev) != DOCA_ERROR_SHUTDOWN) {
		example_fail("copy of seed %llx: status %s, error %s", (unsigned long long)s->seed,
			     example_status_name(status), doca_error_get_name(doca_event_get_error(ev)));
	}
	return s;
}

/* The slot's copy is checked: its producer may use it again. */
static void slot_release(struct app *app, struct slot *s)
{
	if (s->raced)
		atomic_store_explicit(&app->raced_copy_reaped, true, memory_order_relaxed);
	pthread_mutex_lock(&app->lock);
	if (!s->busy)
		example_fail("an event for a slot with no copy in flight");
	s->busy = false;
	app->reaped++;
	pthread_cond_broadcast(&app->released);
	pthread_mutex_unlock(&app->lock);
}

/* Worker mode; the library frees the event when this returns. */
static void event_cb(struct doca_event *ev, union doca_data ctx_user_data)
{
	slot_release(ctx_user_data.ptr, check_event(ev));
}

/* Poll and event modes: reap on this thread until @p done says so. */
static void reap_until(struct app *app, bool (*done)(struct app *app))
{
	int fd;

	EXAMPLE_CHECK(doca_pe_get_notification_handle(app->pe, &fd));
	while (!done(app)) {
		uint32_t n = doca_pe_progress(app->pe);
		struct doca_event *ev;

		while ((ev = doca_pe_get_event(app->pe)) != NULL) {
			struct slot *s = check_event(ev);

			doca_event_free(ev);
			slot_release(app, s);
			n++;
		}
		if (n == 0 && app->mode == MODE_EVENT && !done(app)) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			EXAMPLE_CHECK(doca_pe_request_notification(app->pe));
			if (poll(&pfd, 1, -1) < 0)
				example_fail("poll on the notification handle failed");
			EXAMPLE_CHECK(doca_pe_clear_notification(app->pe));
		}
		example_check_deadline(app->start_ns, "the events");
	}
}

static unsigned long total_tasks(const struct app *app)
{
	return (unsigned long)app->rounds * SLOTS * PRODUCERS;
}

static bool all_reaped(struct app *app)
{
	pthread_mutex_lock(&app->lock);
	bool all = app->reaped == total_tasks(app);

	pthread_mutex_unlock(&app->lock);
	return all;
}

static bool ctx_idle(struct app *app)
{
	return example_ctx_state(app->ctx) == DOCA_CTX_STATE_IDLE;
}

static void setup(struct app *app)
{
	static const char *const devs[] = {
		[MODE_POLL] = "sw0:engines=1",
		[MODE_POLL_INLINE] = "sw0",
		[MODE_EVENT] = "sw0:engines=1",
		[MODE_WORKER] = "sw0:engines=1",
		[MODE_RACE_DST] = "sw0:engines=1,delay_us=2000",
		[MODE_RACE_SRC] = "sw0:engines=1,delay_us=2000",
		[MODE_POLL_FAB0] = "fab0",
	};
	size_t region = (size_t)SLOTS * 2 * LEN;

	EXAMPLE_CHECK(doca_ctx_create(&app->ctx));
	EXAMPLE_CHECK(doca_dev_open(devs[app->mode], &app->dev));
	EXAMPLE_CHECK(doca_ctx_set_dev(app->ctx, app->dev));
	app->own_region = malloc(region);
	if (app->own_region == NULL)
		example_fail("out of memory");
	EXAMPLE_CHECK(doca_mem_create_from(app->ctx, app->own_region, region,
					   DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &app->mems[0]));
	EXAMPLE_CHECK(doca_mem_create(app->ctx, region, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE,
				      &app->mems[1]));
	for (unsigned p = 0; p < PRODUCERS; p++) {
		for (unsigned i = 0; i < SLOTS; i++) {
			struct slot *s = &app->slots[p][i];

			s->mem = app->mems[p];
			s->offset = (size_t)i * 2 * LEN;
			slot_buffers_create(s);
		}
	}
	EXAMPLE_CHECK(doca_pe_create(&app->pe));
	EXAMPLE_CHECK(doca_pe_connect_ctx(app->pe, app->ctx));
	if (app->mode == MODE_WORKER) {
		EXAMPLE_CHECK(doca_ctx_set_user_data(app->ctx, (union doca_data){ .ptr = app }));
		EXAMPLE_CHECK(doca_ctx_set_event_cb(app->ctx, event_cb));
		EXAMPLE_CHECK(doca_pe_run_on_cpu(app->pe, -1));
	}
	EXAMPLE_CHECK(doca_ctx_start(app->ctx));
}

/* One more copy in every slot, then stop at once: the tasks the device has
 * not started are flushed. Wait until the context is IDLE. */
static void stop_with_tasks_in_flight(struct app *app)
{
	doca_error_t err;

	for (unsigned p = 0; p < PRODUCERS; p++) {
		for (unsigned i = 0; i < SLOTS; i++) {
			struct slot *s = &app->slots[p][i];

			slot_wait_free(app, s);
			slot_fill(s, example_seed(p * SLOTS + i, app->rounds));
			s->flushed_ok = true;
			submit(app, s);
		}
	}
	err = doca_ctx_stop(app->ctx);
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		example_fail("doca_ctx_stop: %s", doca_error_get_name(err));
	if (app->mode == MODE_WORKER) {
		while (!ctx_idle(app)) {
			sched_yield();
			example_check_deadline(app->start_ns, "the stop to finish");
		}
	} else {
		reap_until(app, ctx_idle);
	}
}

static void *buffers_destroyer(void *arg)
{
	struct app *app = arg;

	for (unsigned p = 0; p < PRODUCERS; p++) {
		for (unsigned i = 0; i < SLOTS; i++) {
			buf_destroy_after_event(app, app->slots[p][i].src);
			buf_destroy_after_event(app, app->slots[p][i].dst);
		}
	}
	return NULL;
}

/* In the seed's order. Another thread destroys the buffers while this one
 * destroys each memory as soon as it is no longer IN_USE and frees the
 * application's region, before anything else synchronises it with the
 * reaper (a worker's callbacks) or that thread: only the library's edges
 * order the reaper's reads before the free. */
static void teardown(struct app *app)
{
	pthread_t destroyer;
	doca_error_t err;

	if (pthread_create(&destroyer, NULL, buffers_destroyer, app) != 0)
		example_fail("pthread_create failed");
	for (unsigned p = 0; p < PRODUCERS; p++) {
		while ((err = doca_mem_destroy(app->mems[p])) == DOCA_ERROR_IN_USE) {
			sched_yield();
			example_check_deadline(app->start_ns, "the buffers to be destroyed");
		}
		EXAMPLE_CHECK(err);
	}
	free(app->own_region); /* after its memory's destroy, as the contract allows */
	pthread_join(destroyer, NULL);
	pthread_mutex_lock(&app->lock);
	for (unsigned p = 0; p < PRODUCERS; p++)
		for (unsigned i = 0; i < SLOTS; i++)
			if (app->slots[p][i].busy)
				example_fail("the context went IDLE but slot %u/%u got no event", p, i);
	pthread_mutex_unlock(&app->lock);
	if (app->mode == MODE_WORKER)
		EXAMPLE_CHECK(doca_pe_stop_run(app->pe));
	EXAMPLE_CHECK(doca_dev_close(app->dev));
	EXAMPLE_CHECK(doca_ctx_destroy(app->ctx));
	EXAMPLE_CHECK(doca_pe_destroy(app->pe));
}

static enum mode parse_mode(const char *name)
{
	static const char *const names[] = {
		[MODE_POLL] = "poll",	      [MODE_POLL_INLINE] = "poll-inline",
		[MODE_EVENT] = "event",	      [MODE_WORKER] = "worker",
		[MODE_RACE_DST] = "race-dst", [MODE_RACE_SRC] = "race-src",
		[MODE_BURST] = "burst",	      [MODE_POLL_FAB0] = "poll-fab0",
	};

	for (size_t m = 0; m < sizeof(names) / sizeof(names[0]); m++)
		if (strcmp(name, names[m]) == 0)
			return (enum mode)m;
	example_fail("unknown mode '%s' (poll, poll-inline, event, worker, race-dst, race-src, burst, "
		     "poll-fab0)",
		     name);
}

/* Burst mode: @p rounds bursts of BURST copies, each submitted at once
 * and reaped with doca_pe_get_events + doca_event_free_bulk, every byte
 * checked. @return the copies checked. */
static unsigned long burst_mode(unsigned rounds, uint64_t start_ns)
{
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct example_slots slots;
	struct doca_task_desc descs[BURST];
	struct doca_event *evs[BURST];
	unsigned long checked = 0;
	uint32_t accepted;
	doca_error_t err;

	EXAMPLE_CHECK(doca_ctx_create(&ctx));
	EXAMPLE_CHECK(doca_dev_open("sw0:engines=1", &dev));
	EXAMPLE_CHECK(doca_ctx_set_dev(ctx, dev));
	example_slots_create(ctx, BURST, LEN, &slots);
	EXAMPLE_CHECK(doca_pe_create(&pe));
	EXAMPLE_CHECK(doca_pe_connect_ctx(pe, ctx));
	EXAMPLE_CHECK(doca_ctx_start(ctx));
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < BURST; i++) {
			example_slots_fill(&slots, i, example_seed(i, r));
			descs[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY,
							    .src = slots.src[i],
							    .dst = slots.dst[i],
							    .user_data = { .u64 = i } };
		}
		EXAMPLE_CHECK(doca_task_submit_batch(ctx, descs, BURST, &accepted));
		if (accepted != BURST)
			example_fail("%u of %u copies accepted", accepted, BURST);
		for (unsigned done = 0; done < BURST;) {
			uint32_t n;

			doca_pe_progress(pe);
			n = doca_pe_get_events(pe, evs, BURST);
			for (uint32_t k = 0; k < n; k++) {
				uint64_t i = doca_event_get_user_data(evs[k]).u64;

				if (i >= BURST || doca_event_get_status(evs[k]) != DOCA_EVENT_STATUS_SUCCESS ||
				    doca_event_get_bytes(evs[k]) != LEN)
					example_fail("burst copy %llu: status %s, %zu bytes", (unsigned long long)i,
						     example_status_name(doca_event_get_status(evs[k])),
						     doca_event_get_bytes(evs[k]));
				example_slots_verify(&slots, i, example_seed(i, r));
				checked++;
			}
			doca_event_free_bulk(evs, n);
			done += n;
			example_check_deadline(start_ns, "a burst's events");
		}
	}
	err = doca_ctx_stop(ctx); /* nothing in flight: at once, or at the next progress */
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		example_fail("doca_ctx_stop: %s", doca_error_get_name(err));
	while (example_ctx_state(ctx) != DOCA_CTX_STATE_IDLE) {
		doca_pe_progress(pe);
		if (doca_pe_get_event(pe) != NULL)
			example_fail("an event after every copy was reaped");
		example_check_deadline(start_ns, "the stop to finish");
	}
	example_slots_destroy(&slots);
	EXAMPLE_CHECK(doca_dev_close(dev));
	EXAMPLE_CHECK(doca_ctx_destroy(ctx));
	EXAMPLE_CHECK(doca_pe_destroy(pe));
	return checked;
}

int main(int argc, char **argv)
{
	static struct app app;
	struct producer producers[PRODUCERS];

	if (argc < 2 || argc > 3)
		example_fail("usage: %s MODE [ROUNDS]", argv[0]);
	app.mode = parse_mode(argv[1]);
	app.rounds = argc == 3 ? (unsigned)strtoul(argv[2], NULL, 10) : ROUNDS_DEFAULT;
	if (app.rounds < 2)
		example_fail("ROUNDS must be at least 2");
	app.start_ns = example_now_ns();
	if (app.mode == MODE_BURST) {
		unsigned long checked = burst_mode(app.rounds, app.start_ns);

		printf("race_app burst: %lu copies checked in bursts of %u, torn down\n", checked, BURST);
		return checked == (unsigned long)app.rounds * BURST ? 0 : 1;
	}
	pthread_mutex_init(&app.lock, NULL);
	pthread_cond_init(&app.released, NULL);
	setup(&app);
	for (unsigned p = 0; p < PRODUCERS; p++) {
		producers[p] = (struct producer){ .app = &app, .id = p };
		if (pthread_create(&producers[p].thread, NULL, producer_main, &producers[p]) != 0)
			example_fail("pthread_create failed");
	}
	if (app.mode == MODE_WORKER) {
		pthread_mutex_lock(&app.lock);
		while (app.reaped != total_tasks(&app))
			pthread_cond_wait(&app.released, &app.lock);
		pthread_mutex_unlock(&app.lock);
	} else {
		reap_until(&app, all_reaped);
	}
	for (unsigned p = 0; p < PRODUCERS; p++)
		pthread_join(producers[p].thread, NULL);
	stop_with_tasks_in_flight(&app);
	teardown(&app);
	pthread_cond_destroy(&app.released);
	pthread_mutex_destroy(&app.lock);
	printf("race_app %s: %lu copies checked, stopped with tasks in flight, torn down\n", argv[1],
	       total_tasks(&app));
	return 0;
}
