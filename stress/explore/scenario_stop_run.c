/*
 * stress/explore/scenario_stop_run.c — worker threads: doca_pe_run_on_cpu
 * and doca_pe_stop_run racing each other, tasks and event callbacks.
 *
 * stop_run_from_callback: PE A runs on a worker; the first event callback
 * of A's ctx starts a worker for PE B (doca_pe_run_on_cpu(B), which the
 * header allows from a callback for another PE) while the application
 * stops A's worker. Every order must end: the callback's call returns
 * SUCCESS, the application's stop returns SUCCESS, nothing hangs.
 *
 * run_on_cpu_stop_run: a worker runs the PE and delivers callbacks while a
 * submitter submits and two threads stop the worker at once: exactly one
 * stop returns SUCCESS, the other DOCA_ERROR_BAD_STATE; restarted, the
 * worker delivers every remaining event.
 *
 * stop_run_recycled_id: a worker runs one task and is stopped (joined);
 * glibc gives its thread id to the next thread created, the stopper, which
 * calls doca_pe_stop_run until it stops the worker the application starts
 * again meanwhile. The stopper is not the worker: DOCA_ERROR_BAD_STATE
 * (none yet), then SUCCESS, never NOT_PERMITTED. worker_is_self
 * compared the thread id the starter's pthread_create had not stored yet
 * (a data race): the joined worker's, the stopper's own.
 */
#include "scenario.h"

#include <sched.h>

static struct world w;
static struct doca_pe *pe_b;
static doca_error_t cb_result = DOCA_ERROR_UNKNOWN;
static doca_error_t stop_result[2];
static doca_error_t submit_result[3];

static void cb_start_b(struct doca_event *ev, union doca_data ud)
{
	bool first = atomic_load(&w.events_total) == 0;

	world_event_cb(ev, ud);
	if (first)
		cb_result = doca_pe_run_on_cpu(pe_b, -1);
}

void scenario_stop_run_from_callback(void)
{
	world_open(&w, "sw0", 2, cb_start_b);
	EXPECT_OK(doca_pe_create(&pe_b));
	EXPECT_OK(doca_pe_run_on_cpu(w.pe, -1));
	EXPECT_OK(world_submit(&w, 0));
	EXPECT_OK(doca_pe_stop_run(w.pe));
	/* the worker may have stopped before delivering: deliver here then */
	while (atomic_load(&w.events_total) == 0) {
		(void)doca_pe_progress(w.pe);
		sched_yield();
	}
	EXPECT_OK(cb_result);
	EXPECT_OK(doca_pe_stop_run(pe_b));
	EXPECT_OK(doca_ctx_stop(w.ctx));
	world_close(&w);
	EXPECT_OK(doca_pe_destroy(pe_b));
	world_finish(&w);
}

static void *submitter(void *unused)
{
	(void)unused;
	explore_name("submitter");
	for (unsigned tag = 0; tag < 3; tag++)
		submit_result[tag] = world_submit(&w, tag);
	return NULL;
}

static void *second_stopper(void *unused)
{
	(void)unused;
	explore_name("stopper");
	stop_result[1] = doca_pe_stop_run(w.pe);
	return NULL;
}

void scenario_run_on_cpu_stop_run(void)
{
	pthread_t sub, stop;

	world_open(&w, "sw0", 3, world_event_cb);
	EXPECT_OK(doca_pe_run_on_cpu(w.pe, -1));
	if (pthread_create(&sub, NULL, submitter, NULL) != 0 ||
	    pthread_create(&stop, NULL, second_stopper, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	stop_result[0] = doca_pe_stop_run(w.pe);
	pthread_join(sub, NULL);
	pthread_join(stop, NULL);
	/* three tasks, three credits, callbacks free them: never refused */
	for (unsigned tag = 0; tag < 3; tag++)
		EXPECT_OK(submit_result[tag]);
	if ((stop_result[0] == DOCA_SUCCESS) == (stop_result[1] == DOCA_SUCCESS))
		explore_end(VERDICT_INVARIANT, "result: two racing doca_pe_stop_run returned %s and %s",
			    doca_error_get_name(stop_result[0]), doca_error_get_name(stop_result[1]));
	/* the loser: BAD_STATE once the winner is done, IN_PROGRESS while it joins */
	EXPECT_IN(stop_result[0] == DOCA_SUCCESS ? stop_result[1] : stop_result[0], 2,
		  DOCA_ERROR_BAD_STATE, DOCA_ERROR_IN_PROGRESS);
	EXPECT_OK(doca_pe_run_on_cpu(w.pe, -1));
	while (atomic_load(&w.events_total) < 3)
		sched_yield();
	EXPECT_OK(doca_pe_stop_run(w.pe));
	EXPECT_OK(doca_ctx_stop(w.ctx));
	world_close(&w);
	world_finish(&w);
}

static pthread_t first_worker; /* recorded by the first worker's callback */
static doca_error_t recycled_result = DOCA_ERROR_UNKNOWN;

static void cb_note_thread(struct doca_event *ev, union doca_data ud)
{
	first_worker = pthread_self();
	world_event_cb(ev, ud);
}

static void *recycled_stopper(void *unused)
{
	(void)unused;
	explore_name("stopper");
	if (!pthread_equal(pthread_self(), first_worker))
		explore_end(VERDICT_HARNESS, "the stopper did not get the joined worker's thread id");
	/* until it stops the new worker: BAD_STATE while there is none */
	while ((recycled_result = doca_pe_stop_run(w.pe)) == DOCA_ERROR_BAD_STATE)
		sched_yield();
	return NULL;
}

void scenario_stop_run_recycled_id(void)
{
	pthread_t stop;

	world_open(&w, "sw0", 1, cb_note_thread);
	EXPECT_OK(doca_pe_run_on_cpu(w.pe, -1));
	EXPECT_OK(world_submit(&w, 0));
	while (atomic_load(&w.events_total) == 0)
		sched_yield();
	EXPECT_OK(doca_pe_stop_run(w.pe)); /* joined: its stack, and id, are glibc's to hand out */
	if (pthread_create(&stop, NULL, recycled_stopper, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	EXPECT_OK(doca_pe_run_on_cpu(w.pe, -1));
	pthread_join(stop, NULL);
	EXPECT_OK(recycled_result);
	EXPECT_OK(doca_ctx_stop(w.ctx));
	world_close(&w);
	world_finish(&w);
}
