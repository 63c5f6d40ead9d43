/*
 * stress/explore/scenario_event_wake.c — event mode's wake-up savings with
 * a sw engine thread (event_wake).
 *
 * Two submitters on their own threads submit three copies each into a
 * context of max_tasks = 2 while the application runs the loop of
 * doca_pe.h and frees every event at once, so credits come back, the
 * device drains to nothing again and again, and the submitters meet the
 * PE armed, arming and running: they post straight to the device, feed
 * the mailbox under the brief guard, or skip the wake-up because a
 * completion is owed (engine/pe_notify.c). A refused submission
 * (DOCA_ERROR_AGAIN) is not retried. Every accepted task gets exactly one
 * event, and a wait for a completion that is due never sleeps forever (a
 * lost wake-up is a deadlock here).
 */
#include "scenario.h"

#define MAX_TASKS 2u
#define PER_SUBMITTER 3u

static struct world w;
static atomic_uint submitters_done;

static void *submitter(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;

	explore_name(id ? "submitter 1" : "submitter 0");
	for (unsigned i = 0; i < PER_SUBMITTER; i++)
		EXPECT_IN(world_submit(&w, id * PER_SUBMITTER + i), 2, DOCA_SUCCESS, DOCA_ERROR_AGAIN);
	atomic_fetch_add(&submitters_done, 1);
	return NULL;
}

void scenario_event_wake(void)
{
	pthread_t t[2];
	int epfd;

	atomic_store(&submitters_done, 0);
	world_open(&w, "sw0:engines=1", MAX_TASKS, NULL);
	EXPECT_OK(doca_pe_get_notification_handle(w.pe, &epfd));
	(void)doca_pe_progress(w.pe); /* this thread runs the PE */
	/* The first arming waits for a grace period (engine/pe_notify.c): as
	 * in an application's loop, it comes before the submitters do. */
	EXPECT_OK(doca_pe_request_notification(w.pe));
	EXPECT_OK(doca_pe_clear_notification(w.pe));
	if (pthread_create(&t[0], NULL, submitter, (void *)0) != 0 ||
	    pthread_create(&t[1], NULL, submitter, (void *)1) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	world_event_loop(&w, epfd, &submitters_done, 2, NULL, NULL);
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	EXPECT_OK(doca_ctx_stop(w.ctx));
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
