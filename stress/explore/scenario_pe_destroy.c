/*
 * stress/explore/scenario_pe_destroy.c — doca_pe_destroy while a waker may
 * still be about to write the PE's eventfd. The application tears
 * everything down the moment the library lets it, then opens fds of its
 * own: whatever the library still writes must not land in them.
 *
 * pe_destroy_after_stop: the application holds one event with the PE armed
 * while another thread stops the ctx (doca_ctx_stop hands the rest of the
 * stop to the PE and wakes it); the application frees the event, finishes
 * the stop in doca_pe_progress, destroys ctx, device and PE.
 *
 * pe_destroy_engine_wake: the application stops the ctx while a task is on
 * a sw engine thread, arms the PE and polls it; the engine thread wakes
 * the PE after putting the completion in the CQ, and the application reaps
 * it without waiting for the fd, finishes the stop and destroys everything.
 */
#include "scenario.h"

#include <sched.h>

static struct world w;
/* Progress until the first ready event, which is kept (not freed). */
static struct doca_event *take_event(void)
{
	struct doca_event *ev;

	for (;;) {
		(void)doca_pe_progress(w.pe);
		if ((ev = doca_pe_get_event(w.pe)) != NULL)
			break;
		sched_yield();
	}
	world_event(&w, ev);
	return ev;
}

void scenario_pe_destroy_after_stop(void)
{
	pthread_t t;

	world_open(&w, "sw0", 2, NULL);
	EXPECT_OK(world_submit(&w, 0));
	struct doca_event *ev = take_event();

	EXPECT_OK(doca_pe_request_notification(w.pe));
	world_stop_start(&w, &t);
	while (world_state(&w) == DOCA_CTX_STATE_RUNNING)
		sched_yield();
	doca_event_free(ev);
	world_progress_until_idle(&w);
	world_close(&w);
	world_stop_join(&w, t);
	world_finish(&w);
}

void scenario_pe_destroy_engine_wake(void)
{
	world_open(&w, "sw0:engines=1", 2, NULL);
	EXPECT_OK(world_submit(&w, 0));
	(void)doca_pe_progress(w.pe); /* posts it: the engine thread runs it from now on */
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	EXPECT_OK(doca_pe_request_notification(w.pe));
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
