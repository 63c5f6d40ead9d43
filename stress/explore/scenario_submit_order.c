/*
 * stress/explore/scenario_submit_order.c — one thread's tasks reach the
 * device in its submission order (submit_order; a review's scenario).
 *
 * Two submitters, four tasks each, into a context of max_tasks = 8 (no
 * refusal) on a sw engine that executes and completes in post order,
 * while the application runs the event-mode loop and frees every event at
 * once. The submitters meet the PE armed (a direct post from any thread),
 * running (the mailbox) and arming (the brief feed); their tasks must
 * complete in the order each submitted them.
 */
#include "scenario.h"

#define PER_SUBMITTER 4u

static struct world w;
static atomic_uint submitters_done;

static void *submitter(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;

	explore_name(id ? "submitter 1" : "submitter 0");
	for (unsigned i = 0; i < PER_SUBMITTER; i++)
		EXPECT_OK(world_submit(&w, id * PER_SUBMITTER + i));
	atomic_fetch_add(&submitters_done, 1);
	return NULL;
}

/* Each submitter's tasks complete in its order (@p arg: int last[2]). */
static void check_order(const struct doca_event *ev, void *arg)
{
	int *last = arg;
	unsigned tag = (unsigned)doca_event_get_user_data(ev).u64;
	unsigned who = tag / PER_SUBMITTER;

	if (tag >= 2 * PER_SUBMITTER)
		return;
	if ((int)(tag % PER_SUBMITTER) <= last[who])
		explore_end(VERDICT_INVARIANT, "order: submitter %u's task %u completed after its task %d", who,
			    tag % PER_SUBMITTER, last[who]);
	last[who] = (int)(tag % PER_SUBMITTER);
}

void scenario_submit_order(void)
{
	pthread_t t[2];
	int epfd;
	int last[2] = { -1, -1 }; /* each submitter's last task completed */

	atomic_store(&submitters_done, 0);
	world_open(&w, "sw0:engines=1", 2 * PER_SUBMITTER, NULL);
	EXPECT_OK(doca_pe_get_notification_handle(w.pe, &epfd));
	(void)doca_pe_progress(w.pe);
	EXPECT_OK(doca_pe_request_notification(w.pe));
	EXPECT_OK(doca_pe_clear_notification(w.pe));
	if (pthread_create(&t[0], NULL, submitter, (void *)0) != 0 ||
	    pthread_create(&t[1], NULL, submitter, (void *)1) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	world_event_loop(&w, epfd, &submitters_done, 2, check_order, last);
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	EXPECT_OK(doca_ctx_stop(w.ctx));
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
