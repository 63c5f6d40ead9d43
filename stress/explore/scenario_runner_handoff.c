/*
 * stress/explore/scenario_runner_handoff.c — two threads take turns
 * running one PE (runner_handoff). Each runs an application's polling
 * loop (progress, take every event, free it) until every task has its
 * event, so the runner guard is parked by one thread, revoked by the
 * other, taken back and parked again (actors/runner.h). The guard checks
 * itself in this build (a second holder aborts the schedule) and the
 * world checks exactly one event per task. (The parking generation's
 * defect — a revoker that read a parked word, slept through its owner
 * giving the guard up and parking it again, and then won its CAS while the
 * owner entered unseen — was found by tests/api/event_free.c's two
 * reapers, not here: it needs the revoker to stop for a whole turn of the
 * other thread inside one call, deeper than these schedules go.)
 */
#include "scenario.h"

#include <pthread.h>
#include <sched.h>

#include "actors/runner.h"

#define TASKS 3u

static struct world w;

static void *reaper(void *arg)
{
	explore_name(arg != NULL ? "reaper 1" : "reaper 0");
	while (atomic_load(&w.events_total) < TASKS)
		if (world_progress(&w) == 0)
			sched_yield();
	return NULL;
}

void scenario_runner_handoff(void)
{
	pthread_t t[2];

	world_open(&w, "sw0", TASKS, NULL);
	for (unsigned tag = 0; tag < TASKS; tag++)
		EXPECT_OK(world_submit(&w, tag));
	if (pthread_create(&t[0], NULL, reaper, NULL) != 0 ||
	    pthread_create(&t[1], NULL, reaper, (void *)1) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/* IN_PROGRESS: a free made while the other reaper held the guard
	 * returns its credit through the mailbox, at the next turn */
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

/*
 * runner_revoke — the guard alone (actors/runner.h): a thread parks it and
 * enters it again and again by its owner way, while another thread takes
 * it (revoking the parked word, or by a CAS once it is free) and gives it
 * back. Each holder adds to a count in two steps with a hook point
 * between, so two holders at once lose an update ("invariant: count"), if
 * the guard's own check (a second holder aborts) has not ended the
 * schedule first. The revert switch unpark_ignores_mark lets the owner
 * enter its word marked by a revoker that found it outside: the revoker's
 * CAS then makes a second holder.
 */
#define OWNER_ENTRIES 4u
#define REVOKER_ENTRIES 2u

static struct runner guard;
static unsigned guarded_count; /* written only under the guard */
static _Atomic unsigned guard_entered;

static void guarded_add(void)
{
	unsigned v = guarded_count;

	EXPLORE_POINT(ATOMIC);
	guarded_count = v + 1u;
	atomic_fetch_add(&guard_entered, 1u);
}

static void *guard_owner(void *arg)
{
	(void)arg;
	explore_name("owner");
	while (runner_enter(&guard) != RUNNER_ENTERED)
		sched_yield(); /* the revoker holds it: wait, then park it */
	guarded_add();
	runner_exit_park(&guard);
	for (unsigned i = 0; i < OWNER_ENTRIES; i++) {
		enum runner_entry e = runner_enter(&guard);

		if (e == RUNNER_NESTED)
			explore_end(VERDICT_INVARIANT, "the owner's entry NESTED outside its sections");
		if (e != RUNNER_ENTERED)
			continue; /* the other thread holds it */
		guarded_add();
		if (i % 2u == 0)
			runner_exit(&guard);
		else
			runner_exit_park(&guard);
	}
	return NULL;
}

static void *guard_revoker(void *arg)
{
	(void)arg;
	explore_name("revoker");
	for (unsigned i = 0; i < REVOKER_ENTRIES; i++) {
		enum runner_entry e = runner_enter(&guard);

		if (e == RUNNER_NESTED)
			explore_end(VERDICT_INVARIANT, "the revoker's entry NESTED");
		if (e != RUNNER_ENTERED)
			continue; /* the owner is inside */
		guarded_add();
		runner_exit(&guard);
	}
	return NULL;
}

/* The guard of runner_revoke and its count, for a scenario whose owner
 * enters another way (stress/explore/scenario_guard11.c). */
struct runner *runner_guard(void)
{
	return &guard;
}

void runner_guard_add(void)
{
	guarded_add();
}

/* runner_revoke with @p owner as its owner thread. */
void runner_guard_run(void *(*owner)(void *))
{
	pthread_t t[2];

	runner_reset(&guard);
	guarded_count = 0;
	atomic_store(&guard_entered, 0u);
	if (pthread_create(&t[0], NULL, owner, NULL) != 0 ||
	    pthread_create(&t[1], NULL, guard_revoker, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (guarded_count != atomic_load(&guard_entered))
		explore_end(VERDICT_INVARIANT, "count: %u entries, %u counted", atomic_load(&guard_entered),
			    guarded_count);
	if (atomic_load(&guard.revoke) != 0)
		explore_end(VERDICT_INVARIANT, "revoke: %u revokers left counted", atomic_load(&guard.revoke));
}

void scenario_runner_revoke(void)
{
	runner_guard_run(guard_owner);
}
