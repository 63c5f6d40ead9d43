/*
 * stress/explore/scenario_stop_recount.c — the PE's parked owner submits
 * one task while another thread stops the context: the stop's second
 * count (engine/ctx_run.c, "The owner's submits"; a review).
 *
 * The owner's doca_task_submit takes no read-side section (engine/task.c,
 * task_one_owner): it looks at RUNNING under its brief guard, then takes
 * its credit. A stop that counts no credit out waits out the owner's brief
 * sections (runner_quiesce_fenced) and counts again. The schedule this
 * scenario is about: the owner saw RUNNING, the stop stored STOPPING,
 * counted 0 and began its wait, then the owner took its credit and left.
 * It is told by where the stopper stands when the submit returns: inside
 * runner_quiesce_wait (actors/runner.h), its second count not yet loaded
 * (its next hook point is the count's, engine/task_pool.c); it cannot be
 * there unless its first count was 0, and the task's credit is out now.
 * (A schedule where the stopper moved on between the owner's exit and the
 * submit's return is not told apart: it gets the general checks.) Then,
 * exactly: the submit DOCA_SUCCESS; the stop DOCA_ERROR_IN_PROGRESS; the
 * task's one event, flushed (DOCA_EVENT_STATUS_FAILURE, DOCA_ERROR_SHUTDOWN,
 * 0 bytes, its destination untouched: the turn finds the run stopping
 * first); the context STOPPING while the event is held, IDLE once it is
 * freed; the state callback sees RUNNING → STOPPING, then STOPPING → IDLE.
 * Every schedule: the submit DOCA_SUCCESS or DOCA_ERROR_BAD_STATE, the stop
 * DOCA_SUCCESS or DOCA_ERROR_IN_PROGRESS, every accepted task one event,
 * the reports RUNNING → IDLE (a stop that retired at once) or RUNNING →
 * STOPPING → IDLE.
 *
 * stop_recount_path is the same, and ends "invariant: path" when the
 * schedule is not that one: its pinned seed (stress/explore/meson.build)
 * shows the path taken, and with DOCA_EXPLORE_REVERT=stop_no_recount (no
 * second count) the stop retires the run under the task: IDLE at once,
 * DOCA_SUCCESS, the task never run (verdict "invariant").
 */
#include "scenario.h"

#include <string.h>

#define MAX_REPORTS 8u

static struct world w;
static pthread_t stopper;
static enum doca_ctx_state reports[MAX_REPORTS][2];
static atomic_uint nreports;

static void state_cb(struct doca_ctx *ctx, union doca_data user, enum doca_ctx_state prev,
		     enum doca_ctx_state next)
{
	(void)ctx;
	(void)user;
	unsigned i = atomic_fetch_add(&nreports, 1);

	if (i >= MAX_REPORTS)
		explore_end(VERDICT_INVARIANT, "reports: more than %u", MAX_REPORTS);
	reports[i][0] = prev;
	reports[i][1] = next;
}

/* The reports since the restart: @p n of them, prev/next pairs. */
static bool reports_are(unsigned n, const enum doca_ctx_state *expect)
{
	if (atomic_load(&nreports) != n + 1u) /* + 1: the restart's IDLE → RUNNING */
		return false;
	for (unsigned i = 0; i < n; i++)
		if (reports[i + 1u][0] != expect[2 * i] || reports[i + 1u][1] != expect[2 * i + 1u])
			return false;
	return true;
}

/* Is the stopper inside its wait for the owner's brief sections (its
 * last hook point in actors/runner.h: a stop reaches none elsewhere)? */
static bool stopper_waiting(void)
{
	const struct explore_thread *r = explore_thread_of(stopper);

	return r->state != THREAD_FINISHED && r->file != NULL && strstr(r->file, "actors/runner.h") != NULL;
}

static void stop_recount(bool path_only)
{
	static const enum doca_ctx_state at_once[] = { DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_IDLE };
	static const enum doca_ctx_state handed[] = { DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING,
						      DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE };

	world_open(&w, "sw0", 2, NULL);
	/* the state callback is set while IDLE: stop (no task: IDLE at once), set, start */
	EXPECT_OK(doca_ctx_stop(w.ctx));
	EXPECT_OK(doca_ctx_set_state_changed_cb(w.ctx, state_cb));
	EXPECT_OK(doca_ctx_start(w.ctx));
	(void)doca_pe_progress(w.pe); /* this thread runs the PE: its guard parked */
	world_stop_start(&w, &stopper);
	doca_error_t rc = world_submit(&w, 0);
	bool path = rc == DOCA_SUCCESS && stopper_waiting();

	EXPECT_IN(rc, 2, DOCA_SUCCESS, DOCA_ERROR_BAD_STATE);
	if (path_only && !path)
		explore_end(VERDICT_INVARIANT, "path: the submit %s, the stopper not in its wait",
			    doca_error_get_name(rc));
	world_stop_join(&w, stopper);
	if (!path) {
		world_progress_until_idle(&w);
		if (!reports_are(1, at_once) && !reports_are(2, handed))
			explore_end(VERDICT_INVARIANT, "reports: %u since the restart, not RUNNING → IDLE or RUNNING → STOPPING → IDLE",
				    atomic_load(&nreports) - 1u);
		world_close(&w);
		world_finish(&w);
		return;
	}
	if (w.stop_result != DOCA_ERROR_IN_PROGRESS)
		explore_end(VERDICT_INVARIANT, "stop: %s with the owner's task's credit out at its second count",
			    doca_error_get_name(w.stop_result));
	struct doca_event *ev = world_take_event(&w); /* checked and counted */
	const uint8_t *dst = w.data + WORLD_TASKS * WORLD_LEN;

	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_FAILURE ||
	    doca_event_get_error(ev) != DOCA_ERROR_SHUTDOWN || doca_event_get_bytes(ev) != 0)
		explore_end(VERDICT_INVARIANT, "events: the task of a stopping run was not flushed");
	for (unsigned i = 0; i < WORLD_LEN; i++)
		if (dst[i] != 0)
			explore_end(VERDICT_INVARIANT, "data: a flushed task wrote its destination");
	(void)world_progress(&w); /* nothing else to do: the event's credit is out */
	if (world_state(&w) != DOCA_CTX_STATE_STOPPING)
		explore_end(VERDICT_INVARIANT, "state: not STOPPING while the task's event is held");
	doca_event_free(ev);
	world_progress_until_idle(&w);
	if (!reports_are(2, handed))
		explore_end(VERDICT_INVARIANT, "reports: %u since the restart, not RUNNING → STOPPING → IDLE",
			    atomic_load(&nreports) - 1u);
	world_close(&w);
	world_finish(&w);
}

void scenario_stop_recount(void)
{
	stop_recount(false);
}

void scenario_stop_recount_path(void)
{
	stop_recount(true);
}
