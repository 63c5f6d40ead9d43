/*
 * stress/explore/scenario_guard11.c — owner_way_revoke: the guard alone
 * (actors/runner.h), its owner entering it by the owner ways' entry
 * (runner_owner_enter: push, light half, one look at the owner word),
 * while another thread revokes it and takes it. The owner parks the guard
 * (runner_enter, runner_exit_park), then enters by its owner way again
 * and again from depth 0 with its own record, as doca_pe_get_event,
 * doca_event_free and the owner's submit do, and leaves as they do
 * (runner_exit_unparked_first); an entry that fails takes the general
 * entry, as their slow ways do, and parks again. runner_revoke's
 * revoker and count (scenario_runner_handoff.c): two holders at once lose
 * an update ("invariant: count"), if the guard's own check (a second
 * holder aborts) has not ended the schedule first. The revert
 * switch owner_way_looks_before_push moves the entry's look before its
 * push and drops the one after it: a revoker between the two marks the
 * word, finds the owner's list empty and takes the guard, and the owner
 * enters on the word it loaded before (actors/runner.c, "One look after
 * the push").
 */
#include "scenario.h"

#include <pthread.h>
#include <sched.h>

#include "actors/runner.h"

#define OWNER_ENTRIES 4u

static void *way_owner(void *arg)
{
	struct runner *guard = runner_guard();

	(void)arg;
	explore_name("owner");
	while (runner_enter(guard) != RUNNER_ENTERED)
		sched_yield(); /* the revoker holds it: wait, then park it */
	runner_guard_add();
	runner_exit_park(guard);
	/* the owner ways' t at depth 0 (runner_me_owner_way with the flag:
	 * the record itself, whatever the flag is in this build) */
	struct runner_thread *t = runner_me;

	if (t == NULL || t->depth != 0)
		explore_end(VERDICT_HARNESS, "the owner has no record at depth 0");
	for (unsigned i = 0; i < OWNER_ENTRIES; i++) {
		const void *cur;

		EXPLORE_POINT(GUARD); /* (the callers' point before the entry) */
		if (runner_owner_enter(guard, t, i % 2u == 0, i % 2u != 0, &cur)) {
			runner_guard_add();
			runner_exit_unparked_first(guard, cur, t);
			continue;
		}
		enum runner_entry e = runner_enter(guard);

		if (e == RUNNER_NESTED)
			explore_end(VERDICT_INVARIANT, "the owner's entry NESTED outside its sections");
		if (e != RUNNER_ENTERED)
			continue; /* the other thread holds it */
		runner_guard_add();
		runner_exit_park(guard); /* parked again, for the next owner way */
	}
	return NULL;
}

/* runner_revoke's revoker and checks (scenario_runner_handoff.c) */
void scenario_owner_way_revoke(void)
{
	runner_guard_run(way_owner);
}
