/*
 * tests/exit/exit_app.c — what an application sees at exit: no library
 * thread after the last destroy, a warning per kind of object it forgot,
 * and (with DOCA_CORE_ALLOCATOR=libc) its leaks visible to valgrind.
 *
 *   exit_app clean   copies on sw0 in polling mode and on sw0:engines=1 with
 *                    a worker and callbacks, full teardown in the README's
 *                    order, twice; after each teardown the library's
 *                    threads must end (the reclaimer once it has run the
 *                    last deferred frees: exit 1 if a second thread is
 *                    still there after 30 s) and the library logs nothing
 *   exit_app quick   one polling copy on sw0, full teardown, and return from
 *                    main at once: the reclaimer that the context's stop
 *                    started (the teardown's first deferred free) is
 *                    still young when the process's exit-time checks run
 *                    (tests/exit/lsan_exit_loop.sh)
 *   exit_app forget  one polling copy on sw0, the buffers destroyed, the
 *                    context stopped, and the 1 MiB memory, the device, the
 *                    context and the PE never destroyed
 *
 * Public API only. Run by tests/exit/meson.build, under valgrind and
 * without, with the exact expectations written there.
 */
#include <doca_core.h>

#include <dirent.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MEM_LEN (1024u * 1024u)
#define COPY_LEN 4096u
#define COPIES 64u
#define WAIT_NS (30ull * 1000000000ull)

static void check(doca_error_t got, const char *call, int line)
{
	if (got == DOCA_SUCCESS)
		return;
	fprintf(stderr, "exit_app:%d: %s returned %s\n", line, call, doca_error_get_name(got));
	exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wait_until(const _Atomic uint32_t *counter, uint32_t want, const char *what)
{
	uint64_t deadline = now_ns() + WAIT_NS;

	while (atomic_load(counter) != want) {
		if (now_ns() > deadline) {
			fprintf(stderr, "exit_app: %s: %u of %u\n", what, atomic_load(counter), want);
			exit(1);
		}
		struct timespec tick = { .tv_nsec = 100000 };

		nanosleep(&tick, NULL);
	}
}

struct app {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_mem *mem;
	struct doca_buf *src, *dst;
	struct doca_pe *pe;
	_Atomic uint32_t events; /* worker mode: events seen by the callback */
	_Atomic uint32_t idle;   /* the state callback saw IDLE */
};

static void on_event(struct doca_event *ev, union doca_data ud)
{
	struct app *app = ud.ptr;

	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS) {
		fprintf(stderr, "exit_app: a copy failed: %s\n",
			doca_error_get_name(doca_event_get_error(ev)));
		exit(1);
	}
	atomic_fetch_add(&app->events, 1);
}

static void on_state(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
		     enum doca_ctx_state next)
{
	struct app *app = ud.ptr;

	(void)ctx;
	(void)prev;
	if (next == DOCA_CTX_STATE_IDLE)
		atomic_store(&app->idle, 1);
}

static void setup(struct app *app, const char *dev_name, bool callbacks)
{
	memset(app, 0, sizeof(*app));
	CHECK(doca_ctx_create(&app->ctx));
	CHECK(doca_dev_open(dev_name, &app->dev));
	CHECK(doca_ctx_set_dev(app->ctx, app->dev));
	CHECK(doca_ctx_set_user_data(app->ctx, (union doca_data){ .ptr = app }));
	if (callbacks) {
		CHECK(doca_ctx_set_event_cb(app->ctx, on_event));
		CHECK(doca_ctx_set_state_changed_cb(app->ctx, on_state));
	}
	CHECK(doca_mem_create(app->ctx, MEM_LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE,
			      &app->mem));
	CHECK(doca_buf_create(app->mem, 0, COPY_LEN, &app->src));
	CHECK(doca_buf_create(app->mem, COPY_LEN, COPY_LEN, &app->dst));
	CHECK(doca_pe_create(&app->pe));
	CHECK(doca_pe_connect_ctx(app->pe, app->ctx));
	CHECK(doca_ctx_start(app->ctx));
}

static void submit_one(struct app *app)
{
	struct doca_task_desc task = { .type = DOCA_TASK_COPY, .src = app->src, .dst = app->dst };

	CHECK(doca_task_submit(app->ctx, &task));
}

/* Polling mode: submit, progress, reap and free, one copy at a time. */
static void copies_polling(struct app *app, uint32_t copies)
{
	for (uint32_t i = 0; i < copies; i++) {
		uint64_t deadline = now_ns() + WAIT_NS;
		struct doca_event *ev = NULL;

		submit_one(app);
		while (ev == NULL) {
			doca_pe_progress(app->pe);
			ev = doca_pe_get_event(app->pe);
			if (ev == NULL && now_ns() > deadline) {
				fprintf(stderr, "exit_app: no event for copy %u\n", i);
				exit(1);
			}
		}
		if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS) {
			fprintf(stderr, "exit_app: copy %u failed\n", i);
			exit(1);
		}
		doca_event_free(ev);
	}
}

/* The README's teardown order: stop (every event freed), buffers, memory,
 * device, context, and the PE last. */
static void teardown(struct app *app)
{
	CHECK(doca_buf_destroy(app->dst));
	CHECK(doca_buf_destroy(app->src));
	CHECK(doca_mem_destroy(app->mem));
	CHECK(doca_dev_close(app->dev));
	CHECK(doca_ctx_destroy(app->ctx));
	CHECK(doca_pe_destroy(app->pe));
}

static void run_polling(uint32_t copies)
{
	struct app app;

	setup(&app, "sw0", false);
	copies_polling(&app, copies);
	CHECK(doca_ctx_stop(app.ctx));
	teardown(&app);
}

static void run_worker(void)
{
	struct app app;

	setup(&app, "sw0:engines=1", true);
	CHECK(doca_pe_run_on_cpu(app.pe, -1));
	for (uint32_t i = 0; i < COPIES; i++) {
		submit_one(&app);
		wait_until(&app.events, i + 1, "worker-mode events");
	}
	doca_error_t err = doca_ctx_stop(app.ctx);

	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		check(err, "doca_ctx_stop(worker mode)", __LINE__);
	wait_until(&app.idle, 1, "the context to reach IDLE");
	CHECK(doca_pe_stop_run(app.pe));
	teardown(&app);
}

static unsigned threads_alive(void)
{
	DIR *d = opendir("/proc/self/task");
	unsigned n = 0;

	if (d == NULL) {
		perror("exit_app: /proc/self/task");
		exit(1);
	}
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The reclaimer ends after the frees the last destroy queued (one grace
 * period): wait for that, with a deadline. */
static void expect_one_thread(const char *when)
{
	uint64_t deadline = now_ns() + WAIT_NS;
	unsigned n;

	while ((n = threads_alive()) != 1) {
		if (now_ns() > deadline) {
			fprintf(stderr, "exit_app: %u threads alive %s, expected 1\n", n, when);
			exit(1);
		}
		struct timespec tick = { .tv_nsec = 100000 };

		nanosleep(&tick, NULL);
	}
}

static void run_forget(void)
{
	struct app app;

	setup(&app, "sw0", false);
	copies_polling(&app, 1);
	CHECK(doca_ctx_stop(app.ctx));
	CHECK(doca_buf_destroy(app.dst));
	CHECK(doca_buf_destroy(app.src));
	/* the memory, the device, the context and the PE are forgotten */
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "clean") == 0) {
		run_polling(COPIES);
		run_worker();
		expect_one_thread("after the last destroy");
		/* and a second life: the library starts again on demand */
		run_polling(COPIES);
		run_worker();
		expect_one_thread("after the second teardown");
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "quick") == 0) {
		run_polling(1);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "forget") == 0) {
		run_forget();
		return 0;
	}
	fprintf(stderr, "usage: exit_app clean|quick|forget\n");
	return 2;
}
