/*
 * mt_submit.c — many threads submitting into one context while one thread
 * progresses its PE.
 *
 *   ./mt_submit [--dev NAME] [--threads N] [--tasks N] [--window N] [--len N]
 *
 * doca_task_submit may be called from any thread, concurrently and without
 * locks; the PE is run by one thread (here: main), which reaps and frees the
 * events. Each submitter owns a window of buffer slots and reuses a slot only
 * after main has verified its copy and released it. When the context's task
 * pool is momentarily empty, submit says DOCA_ERROR_AGAIN and the submitter
 * retries. Prints the throughput (pattern fill and verification included).
 */
#include "example_common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static const char about[] = "several threads submit into one context, one thread progresses the PE";

struct app {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct example_slots slots;   /* threads * window slots */
	size_t threads;
	size_t tasks;                 /* per thread */
	size_t window;                /* slots per thread */
	atomic_bool *busy;            /* per slot: a copy is outstanding */
	size_t *slot_task;            /* per slot: the task number in it (written before submit) */
	size_t *done_per_thread;      /* main only */
	atomic_ulong retries;         /* DOCA_ERROR_AGAIN seen by submitters */
	uint64_t start_ns;
};

struct submitter {
	struct app *app;
	size_t id;
	pthread_t thread;
};

/* Wait until main has released @p slot. */
static void wait_slot_free(struct app *app, size_t slot)
{
	while (atomic_load_explicit(&app->busy[slot], memory_order_acquire)) {
		sched_yield();
		example_check_deadline(app->start_ns, "a slot to be released");
	}
}

static void submit_with_retry(struct app *app, size_t slot, uint64_t tag)
{
	doca_error_t err;

	while ((err = example_slots_submit(app->ctx, &app->slots, slot, tag)) == DOCA_ERROR_AGAIN) {
		atomic_fetch_add_explicit(&app->retries, 1, memory_order_relaxed);
		sched_yield();
		example_check_deadline(app->start_ns, "room in the task pool");
	}
	EXAMPLE_CHECK(err);
}

static void *submitter_main(void *arg)
{
	struct submitter *s = arg;
	struct app *app = s->app;

	for (size_t n = 0; n < app->tasks; n++) {
		size_t slot = s->id * app->window + n % app->window;

		wait_slot_free(app, slot);
		example_slots_fill(&app->slots, slot, example_seed(s->id, n));
		app->slot_task[slot] = n;
		atomic_store_explicit(&app->busy[slot], true, memory_order_relaxed);
		submit_with_retry(app, slot, (uint64_t)slot);
	}
	return NULL;
}

/* On the PE thread: check one event, free it, release its slot. */
static void handle_event(struct app *app, struct doca_event *ev)
{
	size_t slot = (size_t)doca_event_get_user_data(ev).u64;
	size_t thread = slot / app->window;

	if (slot >= app->slots.count || !atomic_load_explicit(&app->busy[slot], memory_order_relaxed))
		example_fail("event for slot %zu, which has no copy outstanding", slot);
	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS ||
	    doca_event_get_bytes(ev) != app->slots.len)
		example_fail("slot %zu: status %s, error %s", slot,
			     example_status_name(doca_event_get_status(ev)),
			     doca_error_get_name(doca_event_get_error(ev)));
	example_slots_verify(&app->slots, slot, example_seed(thread, app->slot_task[slot]));
	doca_event_free(ev);
	app->done_per_thread[thread]++;
	atomic_store_explicit(&app->busy[slot], false, memory_order_release);
}

static void progress_until_done(struct app *app)
{
	size_t total = app->threads * app->tasks, done = 0;
	struct doca_event *ev;

	while (done < total) {
		doca_pe_progress(app->pe);
		while ((ev = doca_pe_get_event(app->pe))) {
			handle_event(app, ev);
			done++;
		}
		example_check_deadline(app->start_ns, "the completions");
	}
}

static void setup(struct app *app, const char *dev_name, size_t len)
{
	size_t slots = app->threads * app->window;

	EXAMPLE_CHECK(doca_ctx_create(&app->ctx));
	app->dev = example_open_dev(dev_name);
	EXAMPLE_CHECK(doca_ctx_set_dev(app->ctx, app->dev));
	example_slots_create(app->ctx, slots, len, &app->slots);
	app->busy = calloc(slots, sizeof(*app->busy));
	app->slot_task = calloc(slots, sizeof(*app->slot_task));
	app->done_per_thread = calloc(app->threads, sizeof(*app->done_per_thread));
	if (!app->busy || !app->slot_task || !app->done_per_thread)
		example_fail("out of memory");
	for (size_t i = 0; i < slots; i++)
		atomic_init(&app->busy[i], false);
	atomic_init(&app->retries, 0);
	EXAMPLE_CHECK(doca_pe_create(&app->pe));
	EXAMPLE_CHECK(doca_pe_connect_ctx(app->pe, app->ctx));
	EXAMPLE_CHECK(doca_ctx_start(app->ctx));
}

static void teardown(struct app *app)
{
	EXAMPLE_CHECK(doca_ctx_stop(app->ctx));
	example_slots_destroy(&app->slots);
	EXAMPLE_CHECK(doca_dev_close(app->dev));
	EXAMPLE_CHECK(doca_ctx_destroy(app->ctx));
	EXAMPLE_CHECK(doca_pe_destroy(app->pe));
	free(app->busy);
	free(app->slot_task);
	free(app->done_per_thread);
}

static void report(const struct app *app, double seconds)
{
	size_t total = app->threads * app->tasks;

	for (size_t t = 0; t < app->threads; t++)
		if (app->done_per_thread[t] != app->tasks)
			example_fail("thread %zu: %zu completions for %zu copies", t,
				     app->done_per_thread[t], app->tasks);
	printf("  %zu copies completed and verified (%zu per thread), %lu AGAIN retries\n", total,
	       app->tasks, (unsigned long)atomic_load(&app->retries));
	printf("  %.3f s: %.0f copies/s, %.1f MB/s\n", seconds, (double)total / seconds,
	       (double)total * (double)app->slots.len / seconds / 1e6);
}

int main(int argc, char **argv)
{
	unsigned long threads = 8, tasks = 5000, window = 32, len = 1024;
	struct example_opt opts[] = {
		{ "threads", &threads, "submitting threads" },
		{ "tasks", &tasks, "copies per thread" },
		{ "window", &window, "copies in flight per thread" },
		{ "len", &len, "bytes per copy" },
	};
	const char *dev_name = example_parse_args(argc, argv, about, "sw0", opts, 4);
	struct app app = { .threads = threads, .tasks = tasks, .window = window };
	struct submitter *subs;
	double seconds;

	if (!threads || threads > 256 || !tasks || !window || !len)
		example_fail("--threads must be 1..256, --tasks, --window and --len positive");
	printf("mt_submit: %lu threads × %lu copies of %lu bytes into one context on \"%s\"\n", threads,
	       tasks, len, dev_name);
	setup(&app, dev_name, len);
	subs = calloc(threads, sizeof(*subs));
	if (!subs)
		example_fail("out of memory");

	app.start_ns = example_now_ns();
	for (size_t t = 0; t < threads; t++) {
		subs[t] = (struct submitter){ .app = &app, .id = t };
		if (pthread_create(&subs[t].thread, NULL, submitter_main, &subs[t]))
			example_fail("pthread_create failed");
	}
	progress_until_done(&app);
	seconds = (double)(example_now_ns() - app.start_ns) / 1e9;
	for (size_t t = 0; t < threads; t++)
		if (pthread_join(subs[t].thread, NULL) != 0)
			example_fail("pthread_join failed");

	report(&app, seconds);
	teardown(&app);
	free(subs);
	return EXIT_SUCCESS;
}
