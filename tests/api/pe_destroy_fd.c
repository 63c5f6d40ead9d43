/*
 * tests/api/pe_destroy_fd.c — a wake-up still under way when the PE is
 * destroyed lands in the PE's own eventfd, never in a file the application
 * opened since (issue 11, defect 1).
 *
 * The waker is parked (trap.h) between its ARMED → FIRED exchange and its
 * write, inside its RCU read-side section, while the application reaps,
 * finishes the stop, destroys every object and opens eventfds of its own.
 * Had the PE closed its fds at destroy, the lowest free numbers, the PE's
 * eventfd among them, would now be the application's, and the resumed write
 * would make one of them readable. The waker is either the thread whose
 * doca_ctx_stop hands the stop to the PE, or a device engine thread whose
 * started task completes during the stop.
 */
#include "common.h"
#include "trap.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define APP_FDS 8

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* The application's files, opened once the PE is gone. */
static void open_app_eventfds(int *fds)
{
	for (int i = 0; i < APP_FDS; i++) {
		fds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		cr_assert_geq(fds[i], 0, "eventfd: %s", strerror(errno));
	}
}

/* None of them was written; close them. */
static void expect_app_eventfds_untouched(int *fds, int woken)
{
	for (int i = 0; i < APP_FDS; i++) {
		uint64_t count = 0;
		ssize_t n = read(fds[i], &count, sizeof(count));

		cr_expect_eq(n, -1, "the application's eventfd %d%s received a write of %llu after doca_pe_destroy",
			     fds[i], fds[i] == woken ? " (the PE's old eventfd number)" : "",
			     (unsigned long long)count);
		cr_expect_eq(errno, EAGAIN, "read: %s", strerror(errno));
		close(fds[i]);
	}
}

struct stopper {
	struct doca_ctx *ctx;
	doca_error_t rc;
};

/* Stop the ctx with the wake-up of the hand-over parked before its write. */
static void *stop_with_trapped_wake(void *arg)
{
	struct stopper *s = arg;

	trap_arm(TRAP_EVENTFD_WRITE, TRAP_THIS_THREAD);
	s->rc = doca_ctx_stop(s->ctx);
	return NULL;
}

Test(pe_destroy_fd, stop_handing_over_wakes_the_pe_not_the_next_file, .timeout = 30)
{
	struct api_fixture f;
	struct stopper s;
	pthread_t t;
	int fds[APP_FDS], pe_fd;

	fixture_init_started(&f, "sw0", 64, 4);
	assert_ok(doca_pe_get_notification_handle(f.pe, &pe_fd));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	struct doca_event *ev = wait_event(f.pe); /* held: the stop cannot finish at once */

	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert(!fd_readable(pe_fd), "armed with nothing pending: not readable");

	s = (struct stopper){ .ctx = f.ctx, .rc = DOCA_ERROR_UNKNOWN };
	cr_assert_eq(pthread_create(&t, NULL, stop_with_trapped_wake, &s), 0);
	trap_wait_parked(TRAP_EVENTFD_WRITE);
	int woken = trap_fd();

	doca_event_free(ev);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f); /* every object, the PE last */
	open_app_eventfds(fds);

	trap_release(TRAP_EVENTFD_WRITE);
	cr_assert_eq(trap_write_result(), (ssize_t)sizeof(uint64_t), "the parked wake-up wrote into an open eventfd");
	pthread_join(t, NULL);
	assert_doca(s.rc, DOCA_ERROR_IN_PROGRESS);
	expect_app_eventfds_untouched(fds, woken);
}

Test(pe_destroy_fd, engine_thread_completion_wakes_the_pe_not_the_next_file, .timeout = 30)
{
	struct api_fixture f;
	int fds[APP_FDS], pe_fd;

	/* The engine takes the task (started: a stop does not flush it), then
	 * idles for its delay outside its read-side section: park it there.
	 * The delay outlasts any scheduling hiccup before the engine looks at
	 * the task; released, the engine's clock is past it (trap.h). */
	fixture_init_started(&f, "sw0:engines=1,delay_us=10000000", 64, 4);
	assert_ok(doca_pe_get_notification_handle(f.pe, &pe_fd));
	trap_arm(TRAP_NANOSLEEP, TRAP_OTHER_THREADS);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	cr_assert_eq(doca_pe_progress(f.pe), 0, "posted, not completed");
	trap_wait_parked(TRAP_NANOSLEEP);

	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_ok(doca_pe_request_notification(f.pe));
	cr_assert(!fd_readable(pe_fd), "armed with nothing pending: not readable");
	/* The completion's wake-up, inside the engine's read-side section. */
	trap_arm(TRAP_EVENTFD_WRITE, TRAP_OTHER_THREADS);
	trap_release(TRAP_NANOSLEEP);
	trap_wait_parked(TRAP_EVENTFD_WRITE);
	cr_assert(pthread_equal(trap_thread(TRAP_NANOSLEEP), trap_thread(TRAP_EVENTFD_WRITE)),
		  "the engine thread both took the task and woke the PE");
	int woken = trap_fd();

	struct doca_event *ev = wait_event(f.pe);

	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "started before the stop");
	doca_event_free(ev);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
	open_app_eventfds(fds);

	trap_release(TRAP_EVENTFD_WRITE);
	cr_assert_eq(trap_write_result(), (ssize_t)sizeof(uint64_t), "the parked wake-up wrote into an open eventfd");
	expect_app_eventfds_untouched(fds, woken);
}
