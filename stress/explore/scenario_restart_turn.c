/*
 * stress/explore/scenario_restart_turn.c — a context stopped and started
 * again while its PE's thread runs turns (restart_turn).
 *
 * A thread progresses the PE while the application runs one task, then three times stops the context with nothing outstanding,
 * starts it again and runs a task. Each of those must be copied: a turn that
 * loaded the state STOPPING of the first run, then the second run,
 * flushed the new run, and every task of it ended SHUTDOWN (found by a
 * review).
 */
#include "scenario.h"

#include <string.h>

#include "engine/engine.h"

#define ROUNDS 1u

static struct world w;
static atomic_bool done;

static void *progresser(void *unused)
{
	(void)unused;
	explore_name("progresser");
	while (!atomic_load(&done))
		if (world_progress(&w) == 0)
			sched_yield();
	return NULL;
}

/* Yield until @p total events were taken by the progresser. */
static void until_events(unsigned total)
{
	while (atomic_load(&w.events_total) < total)
		sched_yield();
}

/* Queue the context for a visit with nothing to do, as an engine thread's
 * completion signal does when it comes after the turn that reaped it (the
 * way a turn visits an idle context being stopped). */
static void late_signal(void)
{
	doca_rcu_read_lock(); /* the signal's rule (engine/pe_ready.c) */
	pe_ready_signal_wake(w.pe, handle_deref(w.ctx));
	doca_rcu_read_unlock();
}

void scenario_restart_turn(void)
{
	pthread_t t;

	world_open(&w, "sw0:engines=1", 2, NULL);
	if (pthread_create(&t, NULL, progresser, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	EXPECT_OK(world_submit(&w, 0));
	until_events(1);
	for (unsigned round = 1; round <= ROUNDS; round++) {
		late_signal();
		EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
		while (world_state(&w) != DOCA_CTX_STATE_IDLE)
			sched_yield();
		EXPECT_OK(doca_ctx_start(w.ctx));
		EXPECT_OK(world_submit(&w, round));
		until_events(round + 1);
		if (memcmp(w.data + (WORLD_TASKS + round) * WORLD_LEN, w.data + round * WORLD_LEN, WORLD_LEN) != 0)
			explore_end(VERDICT_INVARIANT,
				    "events: round %u: the restarted context's task was not copied (flushed by a turn of the old run)",
				    round);
	}
	atomic_store(&done, true);
	pthread_join(t, NULL);
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
