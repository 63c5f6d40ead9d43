/*
 * stress/explore/scenario_stale_get.c — a PE's parked owner getting its
 * events while another thread destroys the PE and a new PE reuses its
 * memory (stale_get).
 *
 * A thread progresses a PE (its guard is then parked for that thread) and
 * gets its events, the getter's owner way that takes no read-side section
 * (engine/pe.c, pe_get); the application destroys the PE meanwhile (an
 * application bug: the calls after the destroy must be refused as stale,
 * never touch the new PE), waits for its memory to be freed, creates a
 * PE, which gets the same cell (engine/cells.c hands the last freed one
 * out first), and progresses it from its own thread only: every one of
 * those calls must succeed, and no call on either PE finds an event (none
 * has a context). The owner's way is sound only when the thread enters
 * its own parked word; the planted bug
 * (DOCA_EXPLORE_REVERT=pe_get_any_entry_outside_section) lets every other
 * entry skip the section too: a getter that checked its handle, was
 * preempted across the destroy, the grace period and the new create,
 * then took the new PE's guard in the cell, made the new PE's progress on
 * its own thread IN_USE until it saw its handle stale.
 */
#include "scenario.h"

static struct doca_pe *old;
static doca_error_t owner_progress;
static unsigned owner_events;

static void *owner(void *unused)
{
	struct doca_event *evs[4];
	uint32_t n;

	(void)unused;
	explore_name("owner");
	owner_progress = doca_pe_try_progress(old, &n); /* parks the guard for this thread */
	for (int i = 0; i < 2; i++) {
		if (doca_pe_get_event(old) != NULL)
			owner_events++;
		owner_events += doca_pe_get_events(old, evs, 4);
	}
	return NULL;
}

void scenario_stale_get(void)
{
	pthread_t t;
	struct doca_pe *pe = world_pe_reused_under(&old, owner, &t);

	world_pe_progress_alone(pe, 3, true);
	world_pe_stale_end(pe, t, "a progress", &owner_progress);
	if (owner_events != 0)
		explore_end(VERDICT_INVARIANT, "result: %u events got from a PE without contexts", owner_events);
}
