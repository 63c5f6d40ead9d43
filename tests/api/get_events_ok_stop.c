/*
 * tests/api/get_events_ok_stop.c — doca_pe_get_events_ok while a stop
 * flushes: each flushed event (FAILURE, DOCA_ERROR_SHUTDOWN) ends a call
 * with has_error and stays first in line until doca_pe_get_event takes
 * it; a loop that reaps so gets every event exactly once and the context
 * reaches IDLE.
 */
#include "common.h"

#include <stdbool.h>

enum { TASKS = 6 };

/* One reaping step of a loop built on doca_pe_get_events_ok: the
 * successes in a burst, a failure alone. Adds what it took to
 * *succeeded and *flushed; false if it took nothing. */
static bool reap_ok_then_failure(struct doca_pe *pe, uint32_t *succeeded, uint32_t *flushed)
{
	struct doca_event *evs[TASKS];
	bool has_error = false;
	uint32_t n = doca_pe_get_events_ok(pe, evs, TASKS, &has_error);

	for (uint32_t i = 0; i < n; i++)
		cr_assert_eq(doca_event_get_status(evs[i]), DOCA_EVENT_STATUS_SUCCESS, "only successes in a burst");
	doca_event_free_bulk(evs, n);
	*succeeded += n;
	if (!has_error)
		return n != 0;
	struct doca_event *ev = doca_pe_get_event(pe);

	cr_assert_not_null(ev, "has_error: a failed event is next in line");
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE);
	cr_assert_eq(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN, "flushed by the stop");
	doca_event_free(ev);
	*flushed += 1;
	return true;
}

/* Submit TASKS tasks on @p dev_name, stop, and reap with
 * reap_ok_then_failure until IDLE: exactly TASKS events, @p want_flushed
 * of them flushed (or any number, for -1). */
static void stop_and_reap_ok(const char *dev_name, int want_flushed)
{
	struct api_fixture f;
	uint32_t succeeded = 0, flushed = 0;
	enum doca_ctx_state s = DOCA_CTX_STATE_RUNNING;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	fixture_init_started(&f, dev_name, 64, TASKS);
	for (uint32_t i = 0; i < TASKS; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	(void)doca_pe_progress(f.pe); /* posted: on the device */
	doca_error_t rc = doca_ctx_stop(f.ctx);

	cr_assert(rc == DOCA_ERROR_IN_PROGRESS || (want_flushed < 0 && rc == DOCA_SUCCESS), "stop: %s",
		  doca_error_get_name(rc));
	while (s != DOCA_CTX_STATE_IDLE && now_ns() < deadline) {
		(void)doca_pe_progress(f.pe);
		while (reap_ok_then_failure(f.pe, &succeeded, &flushed))
			;
		assert_ok(doca_ctx_get_state(f.ctx, &s));
	}
	cr_assert_eq(s, DOCA_CTX_STATE_IDLE);
	cr_assert_eq(succeeded + flushed, TASKS, "every task's one event");
	if (want_flushed >= 0)
		cr_assert_eq(flushed, (uint32_t)want_flushed);
	fixture_fini(&f);
}

/* Inline sw0 with a delay: the tasks wait on the device when the stop
 * comes, so all of them are flushed (none has executed). */
Test(get_events_ok_stop, a_stops_flushed_events_each_end_a_call_and_are_taken_one_by_one)
{
	stop_and_reap_ok("sw0:delay_us=1000000", TASKS);
}

/* An engine thread: the stop races the executions, so successes and
 * flushed events mix in the ready list; each still comes exactly once. */
Test(get_events_ok_stop, successes_and_flushed_events_mixed_each_come_once)
{
	for (int round = 0; round < 50; round++)
		stop_and_reap_ok("sw0:engines=1", -1);
}
