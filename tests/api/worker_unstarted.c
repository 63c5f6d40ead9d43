/*
 * tests/api/worker_unstarted.c — doca_pe_stop_run does not wait for a
 * worker thread the scheduler has not run yet.
 *
 * Under load a new worker pinned to a CPU can wait a long time for its
 * first time slice. A stop that joined it stalled whoever stopped the
 * worker to progress the PE itself; in the stress programs the submitters
 * spinning on that PE's tasks were what starved the worker, so its contexts
 * stayed STOPPING for good. Here the trap (trap.h) holds the new worker
 * before its first instruction of ours for as long as the test likes: the
 * stop must return, the caller must be able to finish the context's stop
 * on its own thread, and the held thread must never run a turn.
 */
#include "common.h"
#include "trap.h"

#include <pthread.h>
#include <stdatomic.h>

struct seen {
	atomic_uint events;
	atomic_uint elsewhere; /* events delivered on another thread than the test's */
	doca_error_t error;
	enum doca_event_status status;
	pthread_t test_thread;
};

static void count_event(struct doca_event *ev, union doca_data ud)
{
	struct seen *s = ud.ptr;

	if (!pthread_equal(pthread_self(), s->test_thread))
		atomic_fetch_add(&s->elsewhere, 1);
	s->status = doca_event_get_status(ev);
	s->error = doca_event_get_error(ev);
	atomic_fetch_add(&s->events, 1);
}

Test(worker_unstarted, stop_run_returns_and_the_caller_finishes_the_stop, .timeout = 60)
{
	struct api_fixture f;
	struct seen s = { .error = DOCA_ERROR_UNKNOWN, .test_thread = pthread_self() };

	fixture_init(&f, "sw0", 64, 4);
	assert_ok(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = &s }));
	assert_ok(doca_ctx_set_event_cb(f.ctx, count_event));
	assert_ok(doca_ctx_start(f.ctx));
	trap_arm(TRAP_THREAD_START, TRAP_OTHER_THREADS);
	assert_ok(doca_pe_run_on_cpu(f.pe, -1));
	trap_wait_parked(TRAP_THREAD_START); /* the worker exists and has not run */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 7, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS); /* the task is out */

	/* Joining the held worker would wait until the trap gives up (a crash). */
	assert_ok(doca_pe_stop_run(f.pe));
	assert_doca(doca_pe_stop_run(f.pe), DOCA_ERROR_BAD_STATE);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	cr_assert_eq(atomic_load(&s.events), 1, "events: %u", atomic_load(&s.events));
	cr_assert_eq(atomic_load(&s.elsewhere), 0, "an event was delivered off the test's thread");
	cr_assert_eq(s.status, DOCA_EVENT_STATUS_FAILURE);
	assert_doca(s.error, DOCA_ERROR_SHUTDOWN); /* flushed: no turn posted it */

	/* Let the held thread run: it must leave without a turn. */
	trap_release(TRAP_THREAD_START);
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 8, 0));
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	while (atomic_load(&s.events) != 2) {
		cr_assert_lt(now_ns(), deadline, "the second task never completed");
		(void)doca_pe_progress(f.pe);
	}
	cr_assert_eq(atomic_load(&s.elsewhere), 0, "the released thread ran a turn");
	cr_assert_eq(s.status, DOCA_EVENT_STATUS_SUCCESS);
	assert_ok(s.error);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, f.len, f.seed), f.len, "dst does not hold the copy");

	/* A worker started afterwards works as before; the PE's destroy joins the held one. */
	assert_ok(doca_pe_run_on_cpu(f.pe, -1));
	assert_ok(doca_pe_stop_run(f.pe));
	fixture_fini(&f);
}
