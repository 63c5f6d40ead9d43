/*
 * stress/explore/scenario_submit_stop.c — submit / stop / event mode with a
 * sw engine thread (submit_stop).
 *
 * Two submitters race for max_tasks = 3 credits while a third thread stops
 * the ctx; the application runs the PE in event mode (epoll on the
 * notification fd) and keeps every event until both submitters are done,
 * so credits only go out: a submitter's last result is DOCA_ERROR_AGAIN
 * only when exactly max_tasks tasks were accepted in all, or
 * DOCA_ERROR_BAD_STATE once the stop began. Every accepted task gets
 * exactly one event (its copy, or flushed by the stop), the ctx reaches
 * IDLE, and a wait for a completion that is due never sleeps forever (a
 * lost wake-up is a deadlock here).
 */
#include "scenario.h"

#define MAX_TASKS 3u
#define PER_SUBMITTER 4u

static struct world w;
static doca_error_t last[2];
static unsigned taken[2];
static atomic_uint submitters_done;

static void *submitter(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;

	explore_name(id ? "submitter 1" : "submitter 0");
	last[id] = DOCA_SUCCESS;
	for (unsigned i = 0; i < PER_SUBMITTER && last[id] == DOCA_SUCCESS; i++) {
		last[id] = world_submit(&w, id * PER_SUBMITTER + i);
		taken[id] += last[id] == DOCA_SUCCESS;
	}
	atomic_fetch_add(&submitters_done, 1);
	return NULL;
}

void scenario_submit_stop(void)
{
	struct doca_event *held[WORLD_TASKS];
	unsigned nheld = 0;
	pthread_t t[3];
	int epfd;

	world_open(&w, "sw0:engines=1", MAX_TASKS, NULL);
	EXPECT_OK(doca_pe_get_notification_handle(w.pe, &epfd));
	if (pthread_create(&t[0], NULL, submitter, (void *)0) != 0 ||
	    pthread_create(&t[1], NULL, submitter, (void *)1) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	world_stop_start(&w, &t[2]);
	for (;;) {
		struct doca_event *ev;
		uint32_t n = doca_pe_progress(w.pe);

		while ((ev = doca_pe_get_event(w.pe)) != NULL) {
			world_event(&w, ev);
			held[nheld++] = ev;
		}
		if (atomic_load(&submitters_done) == 2) {
			while (nheld > 0)
				doca_event_free(held[--nheld]);
			if (world_state(&w) == DOCA_CTX_STATE_IDLE)
				break;
		}
		if (n == 0)
			world_wait_notification(&w, epfd);
	}
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	world_stop_join(&w, t[2]);
	for (unsigned id = 0; id < 2; id++)
		EXPECT_IN(last[id], 2, DOCA_ERROR_AGAIN, DOCA_ERROR_BAD_STATE);
	if (taken[0] + taken[1] > MAX_TASKS ||
	    ((last[0] == DOCA_ERROR_AGAIN || last[1] == DOCA_ERROR_AGAIN) &&
	     taken[0] + taken[1] != MAX_TASKS))
		explore_end(VERDICT_INVARIANT, "credits: %u + %u tasks accepted (last %s, %s), max_tasks %u",
			    taken[0], taken[1], doca_error_get_name(last[0]),
			    doca_error_get_name(last[1]), MAX_TASKS);
	world_close(&w);
	world_finish(&w);
}
