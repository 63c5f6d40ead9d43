/*
 * stress/explore/scenario_cb_destroy.c — a destroy inside the event
 * callback of a task naming the buffer (engine/buf.c,
 * buf_destroy_in_callback), racing a destroy of the same buffer on another
 * thread and a submission naming it from a third (unguarded pins).
 * Invariants: of the two destroys exactly one succeeds (the other gets
 * INVALID_VALUE, or IN_USE while the third thread's task pins it and then
 * retries); no callback of a task naming the buffer runs after a destroy
 * succeeded outside its own callback; every accepted task has its event;
 * the memory's destroy succeeds at the end (no lost or doubled count).
 */
#include "scenario.h"

#include <sched.h>

static struct world w;
static atomic_int successes, cb_calls;
static atomic_bool destroyed_outside;

static void cb(struct doca_event *ev, union doca_data ud)
{
	(void)ud;
	if (atomic_load(&destroyed_outside))
		explore_end(VERDICT_INVARIANT, "callback of a task naming a buffer destroyed on another thread");
	world_event(&w, ev);
	if (atomic_fetch_add(&cb_calls, 1) == 0) {
		doca_error_t rc = doca_buf_destroy(w.src[0]);

		if (rc == DOCA_SUCCESS)
			atomic_fetch_add(&successes, 1);
		else if (rc != DOCA_ERROR_IN_USE && rc != DOCA_ERROR_INVALID_VALUE)
			explore_end(VERDICT_INVARIANT, "result: in-callback destroy returned %s",
				    doca_error_get_name(rc));
	}
}

static void *destroyer(void *unused)
{
	doca_error_t rc;

	(void)unused;
	explore_name("destroyer");
	while ((rc = doca_buf_destroy(w.src[0])) == DOCA_ERROR_IN_USE)
		sched_yield();
	if (rc == DOCA_SUCCESS) {
		atomic_store(&destroyed_outside, true);
		atomic_fetch_add(&successes, 1);
	} else if (rc != DOCA_ERROR_INVALID_VALUE) {
		explore_end(VERDICT_INVARIANT, "result: destroy returned %s", doca_error_get_name(rc));
	}
	return NULL;
}

static void *submitter(void *unused)
{
	(void)unused;
	explore_name("submitter");
	doca_error_t rc = world_submit(&w, 0);

	if (rc != DOCA_SUCCESS && rc != DOCA_ERROR_INVALID_VALUE && rc != DOCA_ERROR_AGAIN)
		explore_end(VERDICT_INVARIANT, "result: foreign submit returned %s", doca_error_get_name(rc));
	return NULL;
}

static void *first_submitter(void *unused)
{
	(void)unused;
	explore_name("first");
	EXPECT_OK(world_submit(&w, 0));
	return NULL;
}

static void cb_destroy(bool shared)
{
	pthread_t d, s;

	world_open(&w, "sw0", 4, cb);
	(void)doca_pe_progress(w.pe); /* this thread runs the PE: its guard parked */
	if (shared) { /* the callback's task pinned from another thread (users) */
		if (pthread_create(&s, NULL, first_submitter, NULL) != 0)
			explore_end(VERDICT_HARNESS, "pthread_create");
		pthread_join(s, NULL);
	} else {
		EXPECT_OK(world_submit(&w, 0)); /* guarded pins */
	}
	if (pthread_create(&d, NULL, destroyer, NULL) != 0 || pthread_create(&s, NULL, submitter, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	/* a second task naming the buffer, under the guard, racing the destroys */
	doca_error_t rc = world_submit(&w, 0);

	if (rc != DOCA_SUCCESS && rc != DOCA_ERROR_INVALID_VALUE && rc != DOCA_ERROR_AGAIN)
		explore_end(VERDICT_INVARIANT, "result: guarded submit returned %s", doca_error_get_name(rc));
	while (atomic_load(&cb_calls) == 0) {
		(void)doca_pe_progress(w.pe);
		sched_yield();
	}
	pthread_join(s, NULL);
	while (atomic_load(&w.events_total) < atomic_load(&w.accepted_total))
		if (doca_pe_progress(w.pe) == 0)
			sched_yield();
	pthread_join(d, NULL);
	if (atomic_load(&successes) != 1)
		explore_end(VERDICT_INVARIANT, "result: %d destroys of one buffer succeeded", atomic_load(&successes));
	EXPECT_OK(doca_ctx_stop(w.ctx));
	while (world_state(&w) != DOCA_CTX_STATE_IDLE)
		if (doca_pe_progress(w.pe) == 0)
			sched_yield();
	EXPECT_IN(doca_buf_destroy(w.src[0]), 1, DOCA_ERROR_INVALID_VALUE);
	EXPECT_OK(doca_buf_create(w.mem, 0, WORLD_LEN, &w.src[0]));
	world_close(&w);
	world_finish(&w);
}

void scenario_cb_destroy(void)
{
	cb_destroy(false);
}

void scenario_cb_destroy_shared(void)
{
	cb_destroy(true);
}
