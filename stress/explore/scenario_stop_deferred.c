/*
 * stress/explore/scenario_stop_deferred.c — an event callback stops its
 * context while the RUNNING report waits for that callback's turn
 * (stop_deferred).
 *
 * max_tasks 1. The application starts the context; its state callback,
 * reporting RUNNING under the report lock, submits with
 * doca_task_submit_wait twice: the second waits for the credit of the
 * first, which only the PE's turn (on the progresser's thread) returns,
 * after the first task's event callback. That callback stops the context.
 * A third thread stops it too once the RUNNING report is under way (it
 * waits for the report lock, as any stop outside a callback does).
 *
 * The contract (include/doca_ctx.h, engine/ctx_run.c's file comment): the
 * stop inside the turn does not wait for the report under way: it is put
 * off (IN_PROGRESS, the context STOPPING at once), and the PE reports
 * RUNNING → STOPPING on a later turn, then STOPPING → IDLE. So: the
 * second submit_wait is refused with BAD_STATE; one task, one event; the
 * state callback sees IDLE → RUNNING, RUNNING → STOPPING, STOPPING → IDLE,
 * each once, in that order, never two at once; the third thread's stop
 * returns IN_PROGRESS (STOPPING) or BAD_STATE (IDLE, every report made);
 * the context ends IDLE. A stop in the turn that waited for the report
 * lock (stop_in_turn_waits) never came back: a deadlock.
 *
 * stop_deferred_armed: the same with the PE in event mode, its task on a
 * sw engine thread: once the report is under way the progresser sleeps on
 * the notification fd for ever whenever a turn found nothing, so a
 * put-off report (or the stop's end) that wakes nobody is a deadlock.
 */
#include "scenario.h"

#include <sched.h>
#include <sys/epoll.h>

#define MAX_REPORTS 8

static struct world w;
static atomic_bool done, reporting;
static doca_error_t wait_result[2] = { DOCA_ERROR_UNKNOWN, DOCA_ERROR_UNKNOWN };
static doca_error_t turn_stop = DOCA_ERROR_UNKNOWN, other_stop = DOCA_ERROR_UNKNOWN;
static enum doca_ctx_state after_turn_stop, after_other_stop;
static unsigned reports_at_other_stop;
static atomic_uint in_report, nreports;
static enum doca_ctx_state seen_prev[MAX_REPORTS], seen_next[MAX_REPORTS];

static void on_state(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev, enum doca_ctx_state next)
{
	(void)ctx;
	(void)ud;
	if (atomic_fetch_add(&in_report, 1) != 0)
		explore_end(VERDICT_INVARIANT, "reports: %d -> %d reported while another report ran", (int)prev,
			    (int)next);
	unsigned n = atomic_fetch_add(&nreports, 1);

	if (n >= MAX_REPORTS)
		explore_end(VERDICT_INVARIANT, "reports: more than %d", MAX_REPORTS);
	seen_prev[n] = prev;
	seen_next[n] = next;
	if (next == DOCA_CTX_STATE_RUNNING) {
		atomic_store(&reporting, true);
		/* the second waits for the first's credit: the turn's */
		for (unsigned tag = 0; tag < 2; tag++)
			wait_result[tag] = world_submit_wait(&w, tag, -1);
	} else {
		sched_yield(); /* a report that takes a while */
	}
	atomic_fetch_sub(&in_report, 1);
}

static void on_event(struct doca_event *ev, union doca_data ud)
{
	bool first = atomic_load(&w.events_total) == 0;

	world_event_cb(ev, ud);
	if (!first)
		return;
	turn_stop = doca_ctx_stop(w.ctx);
	after_turn_stop = world_state(&w);
}

static void *progresser(void *unused)
{
	(void)unused;
	explore_name("progresser");
	while (!atomic_load(&done))
		if (doca_pe_progress(w.pe) == 0)
			sched_yield();
	return NULL;
}

/* The event-mode loop: once the RUNNING report is under way, the PE
 * sleeps for ever when a turn found nothing: what is left (the task, its
 * event, the put-off report, the stop) must wake it. */
static void *armed_progresser(void *unused)
{
	struct epoll_event ev;
	int epfd;

	(void)unused;
	explore_name("progresser");
	EXPECT_OK(doca_pe_get_notification_handle(w.pe, &epfd));
	for (;;) {
		uint32_t n = doca_pe_progress(w.pe);

		if (atomic_load(&nreports) == 3) /* STOPPING -> IDLE: by that turn */
			break;
		if (n != 0)
			continue;
		EXPECT_OK(doca_pe_request_notification(w.pe));
		(void)epoll_wait(epfd, &ev, 1, atomic_load(&reporting) ? -1 : 1);
		EXPECT_OK(doca_pe_clear_notification(w.pe));
	}
	return NULL;
}

static void *stopper(void *unused)
{
	(void)unused;
	explore_name("stopper");
	while (!atomic_load(&reporting))
		sched_yield();
	other_stop = doca_ctx_stop(w.ctx);
	reports_at_other_stop = atomic_load(&nreports);
	after_other_stop = world_state(&w);
	return NULL;
}

static void stop_deferred(const char *dev, void *(*progress)(void *))
{
	static const enum doca_ctx_state want[3][2] = {
		{ DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING },
		{ DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING },
		{ DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE },
	};
	pthread_t t[2];

	world_open(&w, dev, 1, on_event);
	/* nothing ever submitted: IDLE at once, then the callback to watch */
	EXPECT_OK(doca_ctx_stop(w.ctx));
	EXPECT_OK(doca_ctx_set_state_changed_cb(w.ctx, on_state));
	if (pthread_create(&t[0], NULL, progress, NULL) != 0 ||
	    pthread_create(&t[1], NULL, stopper, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	EXPECT_OK(doca_ctx_start(w.ctx));
	EXPECT_OK(wait_result[0]);
	if (wait_result[1] != DOCA_ERROR_BAD_STATE)
		explore_end(VERDICT_INVARIANT, "result: the second submit_wait returned %s, not BAD_STATE",
			    doca_error_get_name(wait_result[1]));
	pthread_join(t[1], NULL);
	while (world_state(&w) != DOCA_CTX_STATE_IDLE)
		sched_yield();
	atomic_store(&done, true);
	pthread_join(t[0], NULL);

	/* the turn's stop found the RUNNING report under way: put off */
	if (turn_stop != DOCA_ERROR_IN_PROGRESS || after_turn_stop != DOCA_CTX_STATE_STOPPING)
		explore_end(VERDICT_INVARIANT, "result: the stop in the turn returned %s, then state %d",
			    doca_error_get_name(turn_stop), (int)after_turn_stop);
	/* the other stop waited for the RUNNING report: STOPPING, or IDLE
	 * with every report made (it held the report lock) */
	if (!(other_stop == DOCA_ERROR_IN_PROGRESS && reports_at_other_stop >= 1) &&
	    !(other_stop == DOCA_ERROR_BAD_STATE && reports_at_other_stop == 3 &&
	      after_other_stop == DOCA_CTX_STATE_IDLE))
		explore_end(VERDICT_INVARIANT, "result: the other stop returned %s after %u reports, then state %d",
			    doca_error_get_name(other_stop), reports_at_other_stop, (int)after_other_stop);
	if (atomic_load(&nreports) != 3)
		explore_end(VERDICT_INVARIANT, "reports: %u, not 3", atomic_load(&nreports));
	for (unsigned i = 0; i < 3; i++)
		if (seen_prev[i] != want[i][0] || seen_next[i] != want[i][1])
			explore_end(VERDICT_INVARIANT, "reports: report %u was %d -> %d", i, (int)seen_prev[i],
				    (int)seen_next[i]);
	if (atomic_load(&w.accepted_total) != 1 || atomic_load(&w.events_total) != 1)
		explore_end(VERDICT_INVARIANT, "events: %u accepted, %u events, not 1 and 1",
			    atomic_load(&w.accepted_total), atomic_load(&w.events_total));
	world_close(&w);
	world_finish(&w);
}

void scenario_stop_deferred(void)
{
	stop_deferred("sw0", progresser);
}

void scenario_stop_deferred_armed(void)
{
	stop_deferred("sw0:engines=1", armed_progresser);
}
