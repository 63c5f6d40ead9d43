/*
 * async_stop.c — stopping a context while tasks are in flight.
 *
 *   ./async_stop [--dev NAME] [--tasks N] [--waves N] [--wave-us N] [--len N]
 *
 * On a slow device ("sw0:engines=1,delay_us=2000": every copy completes at
 * least 2 ms after it was posted) the program submits its copies in waves
 * (8 waves, 200 µs apart), so that when the first copy completes the later
 * ones are at different stages. From that first completion's event callback
 * it calls doca_ctx_stop, which returns DOCA_ERROR_IN_PROGRESS: copies the
 * device had already started complete normally, the others are flushed
 * (FAILURE, DOCA_ERROR_SHUTDOWN). The state-changed callback reports each
 * transition, and the one reporting IDLE tears the context down. The program
 * checks that every submitted copy got exactly one event.
 */
#include "example_common.h"

static const char about[] = "stop a context from an event callback while copies are in flight";

struct app {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct example_slots slots;
	uint64_t t0_ns;
	size_t submitted;
	size_t wave_size;       /* copies per wave */
	unsigned *events_of;    /* per copy: events received */
	char *outcome;          /* per copy: 'S' completed, 'F' flushed, '.' none yet */
	size_t events;
	size_t completed;
	size_t flushed;
	bool stop_called;
	doca_error_t stop_result;
	bool saw_stopping;
	bool torn_down;         /* the IDLE callback destroyed everything but the PE */
};

static double elapsed_ms(const struct app *app)
{
	return (double)(example_now_ns() - app->t0_ns) / 1e6;
}

/* The first completion stops the context, with its siblings still in flight. */
static void stop_from_callback(struct app *app, size_t first)
{
	struct doca_task_desc late = {
		.type = DOCA_TASK_COPY, .src = app->slots.src[0], .dst = app->slots.dst[0],
	};
	doca_error_t late_result;

	app->stop_called = true;
	printf("[%8.3f ms] first completion (copy %zu) → doca_ctx_stop from its callback\n",
	       elapsed_ms(app), first);
	app->stop_result = doca_ctx_stop(app->ctx);
	printf("[%8.3f ms] doca_ctx_stop → %s (%zu of %zu copies still outstanding)\n", elapsed_ms(app),
	       doca_error_get_name(app->stop_result), app->submitted - app->events, app->submitted);
	if (app->stop_result != DOCA_ERROR_IN_PROGRESS)
		example_fail("stop with copies outstanding returned %s, expected DOCA_ERROR_IN_PROGRESS",
			     doca_error_get_name(app->stop_result));
	late_result = doca_task_submit(app->ctx, &late);
	printf("[%8.3f ms] doca_task_submit after the stop → %s\n", elapsed_ms(app),
	       doca_error_get_name(late_result));
	if (late_result != DOCA_ERROR_BAD_STATE)
		example_fail("a submission after the stop returned %s, expected DOCA_ERROR_BAD_STATE",
			     doca_error_get_name(late_result));
}

static void on_event(struct doca_event *ev, union doca_data ctx_user_data)
{
	struct app *app = ctx_user_data.ptr;
	size_t i = (size_t)doca_event_get_user_data(ev).u64;
	enum doca_event_status status = doca_event_get_status(ev);
	doca_error_t error = doca_event_get_error(ev);

	if (i >= app->submitted)
		example_fail("event for copy %zu, which was never submitted", i);
	if (++app->events_of[i] != 1)
		example_fail("copy %zu got a second event", i);
	app->events++;
	if (status == DOCA_EVENT_STATUS_SUCCESS && error == DOCA_SUCCESS) {
		if (doca_event_get_bytes(ev) != app->slots.len)
			example_fail("copy %zu: %zu bytes", i, doca_event_get_bytes(ev));
		example_slots_verify(&app->slots, i, i);
		app->outcome[i] = 'S';
		app->completed++;
	} else if (status == DOCA_EVENT_STATUS_FAILURE && error == DOCA_ERROR_SHUTDOWN) {
		if (!app->stop_called)
			example_fail("copy %zu flushed although no stop was requested", i);
		app->outcome[i] = 'F';
		app->flushed++;
	} else {
		example_fail("copy %zu: unexpected status %s, error %s", i,
			     example_status_name(status), doca_error_get_name(error));
	}
	if (!app->stop_called)
		stop_from_callback(app, i);
}

/* From the IDLE callback: every event is freed, so the children may go. */
static void teardown_from_idle(struct app *app)
{
	if (app->events != app->submitted)
		example_fail("IDLE reported after %zu events for %zu copies", app->events, app->submitted);
	example_slots_destroy(&app->slots);
	EXAMPLE_CHECK(doca_dev_close(app->dev));
	EXAMPLE_CHECK(doca_ctx_destroy(app->ctx));
	app->ctx = NULL;
	app->dev = NULL;
	app->torn_down = true;
	printf("[%8.3f ms] IDLE callback: buffers, memory, device and context destroyed\n",
	       elapsed_ms(app));
}

static void on_state(struct doca_ctx *ctx, union doca_data ctx_user_data, enum doca_ctx_state prev,
		     enum doca_ctx_state next)
{
	struct app *app = ctx_user_data.ptr;

	printf("[%8.3f ms] state: %s → %s\n", elapsed_ms(app), example_state_name(prev),
	       example_state_name(next));
	if (ctx != app->ctx)
		example_fail("state callback for a context that is not ours");
	if (next == DOCA_CTX_STATE_STOPPING)
		app->saw_stopping = true;
	if (next == DOCA_CTX_STATE_IDLE && app->stop_called)
		teardown_from_idle(app);
}

static void setup(struct app *app, const char *dev_name, size_t tasks, size_t len)
{
	EXAMPLE_CHECK(doca_ctx_create(&app->ctx));
	app->dev = example_open_dev(dev_name);
	EXAMPLE_CHECK(doca_ctx_set_dev(app->ctx, app->dev));
	EXAMPLE_CHECK(doca_ctx_set_user_data(app->ctx, (union doca_data){ .ptr = app }));
	EXAMPLE_CHECK(doca_ctx_set_event_cb(app->ctx, on_event));
	EXAMPLE_CHECK(doca_ctx_set_state_changed_cb(app->ctx, on_state));
	example_slots_create(app->ctx, tasks, len, &app->slots);
	for (size_t i = 0; i < tasks; i++)
		example_slots_fill(&app->slots, i, i);
	app->events_of = calloc(tasks, sizeof(*app->events_of));
	app->outcome = malloc(tasks + 1);
	if (!app->events_of || !app->outcome)
		example_fail("out of memory");
	memset(app->outcome, '.', tasks);
	app->outcome[tasks] = '\0';
	EXAMPLE_CHECK(doca_pe_create(&app->pe));
	EXAMPLE_CHECK(doca_pe_connect_ctx(app->pe, app->ctx));
}

/* Submit one wave of copies; false once the stop has come (nothing more is submitted). */
static bool submit_wave(struct app *app, size_t tasks)
{
	size_t first = app->submitted;

	if (app->stop_called || app->submitted == tasks)
		return false;
	while (app->submitted < tasks && app->submitted - first < app->wave_size) {
		EXAMPLE_CHECK(example_slots_submit(app->ctx, &app->slots, app->submitted, app->submitted));
		app->submitted++;
	}
	printf("[%8.3f ms] copies %zu..%zu submitted\n", elapsed_ms(app), first, app->submitted - 1);
	return true;
}

static void run(struct app *app, size_t tasks, uint64_t wave_ns)
{
	uint64_t start, next_wave;

	app->t0_ns = example_now_ns();
	EXAMPLE_CHECK(doca_ctx_start(app->ctx));
	start = next_wave = example_now_ns();
	while (!app->torn_down) {
		if (example_now_ns() >= next_wave) {
			submit_wave(app, tasks);
			next_wave += wave_ns;
		}
		doca_pe_progress(app->pe);
		example_check_deadline(start, "the context to stop");
	}
	/* A few more turns: any second event for a copy would show up here. */
	for (int i = 0; i < 1000; i++)
		doca_pe_progress(app->pe);
	EXAMPLE_CHECK(doca_pe_destroy(app->pe));
}

static void report(const struct app *app, size_t planned)
{
	printf("\noutcome per copy, one wave per line (S completed, F flushed):\n");
	for (size_t i = 0; i < app->submitted; i += app->wave_size)
		printf("  copies %3zu..: %.*s\n", i, (int)app->wave_size, app->outcome + i);
	printf("submitted %zu, events %zu: %zu completed (data verified), %zu flushed with "
	       "DOCA_ERROR_SHUTDOWN\n",
	       app->submitted, app->events, app->completed, app->flushed);
	if (app->submitted < planned)
		printf("(%zu copies were never submitted: the stop came first)\n",
		       planned - app->submitted);
	if (!app->saw_stopping)
		example_fail("the RUNNING → STOPPING transition was never reported");
	for (size_t i = 0; i < app->submitted; i++)
		if (app->events_of[i] != 1)
			example_fail("copy %zu got %u events", i, app->events_of[i]);
	if (app->events != app->submitted || app->completed + app->flushed != app->submitted)
		example_fail("event count %zu does not match %zu submitted copies", app->events,
			     app->submitted);
	if (!app->flushed)
		printf("note: the device had started every copy before the stop, none was flushed\n");
	printf("every submitted copy got exactly one event\n");
}

int main(int argc, char **argv)
{
	unsigned long tasks = 64, waves = 8, wave_us = 200, len = 4096;
	struct example_opt opts[] = {
		{ "tasks", &tasks, "number of copies (at most 1024)" },
		{ "waves", &waves, "submitted in this many waves" },
		{ "wave-us", &wave_us, "microseconds between waves" },
		{ "len", &len, "bytes per copy" },
	};
	const char *dev_name =
		example_parse_args(argc, argv, about, "sw0:engines=1,delay_us=2000", opts, 4);
	struct app app = { 0 };

	if (tasks < 2 || tasks > DOCA_CTX_DEFAULT_MAX_TASKS || !waves || waves > tasks || !len)
		example_fail("--tasks must be 2..%u, --waves 1..tasks, --len positive",
			     DOCA_CTX_DEFAULT_MAX_TASKS);
	app.wave_size = (tasks + waves - 1) / waves;
	printf("async_stop: %lu copies of %lu bytes on \"%s\" in %lu waves %lu µs apart,\n"
	       "stopped from the callback of the first completion\n\n",
	       tasks, len, dev_name, waves, wave_us);
	setup(&app, dev_name, tasks, len);
	run(&app, tasks, (uint64_t)wave_us * 1000u);
	report(&app, tasks);
	free(app.events_of);
	free(app.outcome);
	return EXIT_SUCCESS;
}
