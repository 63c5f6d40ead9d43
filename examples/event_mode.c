/*
 * event_mode.c — event-driven progress: instead of spinning on
 * doca_pe_progress, sleep in epoll_wait on the PE's notification fd.
 *
 *   ./event_mode [--dev NAME] [--tasks N] [--batch N] [--len N]
 *
 * The event-mode loop of doca_pe.h:
 *   progress + drain events → request notification → epoll_wait → clear.
 * Copies are submitted in batches; a batch is submitted only when the previous
 * one has completed, so the program sleeps at least once per batch. Every
 * destination is checked against its source. It reports the wake-ups and
 * how many of them found no event (few should: the PE wakes for
 * completions, not to move tasks; a clear that races a wake-up can leave
 * the fd readable once more, which is such a wake-up).
 */
#include "example_common.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#define WAIT_MS 10000 /* longest sleep before the PE is declared stuck */

static const char about[] = "wait for completions with epoll on the PE's notification fd";

struct app {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct example_slots slots;
	bool *done;          /* per task: its event was seen */
	size_t tasks;
	size_t submitted;
	size_t completed;
	unsigned long wakeups;
	unsigned long empty_wakeups; /* their progress + get_event found nothing */
	unsigned long progress_calls;
};

static void submit_batch(struct app *app, size_t batch)
{
	size_t end = app->submitted + batch;

	if (end > app->tasks)
		end = app->tasks;
	for (; app->submitted < end; app->submitted++)
		EXAMPLE_CHECK(example_slots_submit(app->ctx, &app->slots, app->submitted, app->submitted));
}

static void handle_event(struct app *app, struct doca_event *ev)
{
	uint64_t i = doca_event_get_user_data(ev).u64;

	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS)
		example_fail("copy %llu: status %s, error %s", (unsigned long long)i,
			     example_status_name(doca_event_get_status(ev)),
			     doca_error_get_name(doca_event_get_error(ev)));
	if (i >= app->submitted || app->done[i])
		example_fail("unexpected or duplicate event for copy %llu", (unsigned long long)i);
	if (doca_event_get_bytes(ev) != app->slots.len)
		example_fail("copy %llu: %zu bytes instead of %zu", (unsigned long long)i,
			     doca_event_get_bytes(ev), app->slots.len);
	example_slots_verify(&app->slots, i, i);
	app->done[i] = true;
	app->completed++;
}

/* @return how many events it handled. */
static size_t progress_and_drain(struct app *app)
{
	struct doca_event *ev;
	size_t n = 0;

	doca_pe_progress(app->pe);
	app->progress_calls++;
	while ((ev = doca_pe_get_event(app->pe))) {
		handle_event(app, ev);
		doca_event_free(ev);
		n++;
	}
	return n;
}

/* Arm the fd, sleep until the PE has something to do, disarm. */
static void sleep_until_notified(struct app *app, int epfd)
{
	struct epoll_event out;
	int n;

	EXAMPLE_CHECK(doca_pe_request_notification(app->pe));
	do
		n = epoll_wait(epfd, &out, 1, WAIT_MS);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		example_fail("epoll_wait: %s", strerror(errno));
	if (n == 0)
		example_fail("no notification within %d ms although %zu copies are outstanding", WAIT_MS,
			     app->submitted - app->completed);
	app->wakeups++;
	EXAMPLE_CHECK(doca_pe_clear_notification(app->pe));
}

static int make_epoll(struct doca_pe *pe)
{
	struct epoll_event in = { .events = EPOLLIN };
	int fd, epfd = epoll_create1(EPOLL_CLOEXEC);

	if (epfd < 0)
		example_fail("epoll_create1: %s", strerror(errno));
	EXAMPLE_CHECK(doca_pe_get_notification_handle(pe, &fd));
	in.data.fd = fd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &in))
		example_fail("epoll_ctl: %s", strerror(errno));
	return epfd;
}

static void setup(struct app *app, const char *dev_name, size_t len)
{
	EXAMPLE_CHECK(doca_ctx_create(&app->ctx));
	app->dev = example_open_dev(dev_name);
	EXAMPLE_CHECK(doca_ctx_set_dev(app->ctx, app->dev));
	example_slots_create(app->ctx, app->tasks, len, &app->slots);
	for (size_t i = 0; i < app->tasks; i++)
		example_slots_fill(&app->slots, i, i);
	app->done = calloc(app->tasks, sizeof(*app->done));
	if (!app->done)
		example_fail("out of memory");
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
	free(app->done);
}

int main(int argc, char **argv)
{
	unsigned long tasks = 256, batch = 32, len = 4096;
	struct example_opt opts[] = {
		{ "tasks", &tasks, "number of copies" },
		{ "batch", &batch, "copies submitted per batch (at most 1024)" },
		{ "len", &len, "bytes per copy" },
	};
	const char *dev_name = example_parse_args(argc, argv, about, "sw0:engines=1", opts, 3);
	struct app app = { .tasks = tasks };
	uint64_t start;
	double ms;
	int epfd;

	if (!tasks || !batch || batch > DOCA_CTX_DEFAULT_MAX_TASKS || !len)
		example_fail("--tasks, --len and --batch must be positive, --batch at most %u",
			     DOCA_CTX_DEFAULT_MAX_TASKS);
	printf("event_mode: %lu copies of %lu bytes on \"%s\", in batches of %lu\n", tasks, len, dev_name,
	       batch);
	setup(&app, dev_name, len);
	epfd = make_epoll(app.pe);

	start = example_now_ns();
	for (bool woken = false;; woken = true) {
		if (progress_and_drain(&app) == 0 && woken)
			app.empty_wakeups++;
		if (app.completed == app.tasks)
			break;
		if (app.completed == app.submitted)
			submit_batch(&app, batch);
		sleep_until_notified(&app, epfd);
	}
	ms = (double)(example_now_ns() - start) / 1e6;

	close(epfd);
	teardown(&app);
	if (app.wakeups == 0)
		example_fail("the program never slept: event mode was not exercised");
	printf("  completions: %zu of %zu, all SUCCESS, every destination verified\n", app.completed,
	       app.tasks);
	printf("  wakeups: %lu from epoll_wait (%lu found no event), %lu progress calls, "
	       "%.2f completions per wakeup\n",
	       app.wakeups, app.empty_wakeups, app.progress_calls,
	       (double)app.completed / (double)app.wakeups);
	printf("  elapsed: %.2f ms\n", ms);
	return EXIT_SUCCESS;
}
