/*
 * stress/explore/scenario_event_free.c — two threads free the same event at
 * once (event_double_free), neither of them the PE's thread. The README
 * promises the second caller is refused and nothing is corrupted:
 * afterwards the ctx's credits must be exact — with every credit back, a submitter gets exactly max_tasks tasks
 * accepted and then DOCA_ERROR_AGAIN — and every accepted task gets its one
 * event. With the claim's CAS undone (event_claim_load_store) both frees
 * can win: if both push the slot into the mailbox it is linked to itself
 * and the next drain never ends (a livelock), or, pushed into two shards,
 * it is drained twice and its second drain posts a freed slot (abort:
 * "device SQ full although credits bound it"); if one returns it straight
 * to the pool and the other through the mailbox, the credit comes back
 * twice (invariant: credits). The PE's thread keeps its runner guard
 * parked between calls (actors/runner.h) and a freer never revokes it, so
 * here both freers take the mailbox route.
 *
 * event_wrap_free: the same event freed at once by the PE's thread (the
 * owner's way: straight to the pool, the slot's gs the claim's CAS
 * stored) and by another thread (the mailbox: the turn stores the next
 * generation again), the slot at the generation's last value 2^22 - 1
 * (engine.h: its low 6 bits all 1, so the claim's increment carries
 * across the state's bits into bit 48, and out of bit 63). Whoever wins,
 * the slot's next handle must be generation 0's, its plain address, and
 * the credits and events exact as above. With the carry left out
 * (event_claim_no_carry) the owner's win stores generation 2^22 - 64:
 * the next handle is one the slot handed out 63 uses ago (invariant:
 * wrap).
 *
 * owner_claim_revoke (owner_claim_revoke_bulk: the owner frees with
 * doca_event_free_bulk): the PE's parked owner frees an event (its plain
 * claim, engine/event.c "The owner's plain claim") while another thread
 * progresses the PE, which revokes the parked guard if the owner is
 * outside it, parks it for itself, and frees the same event (the
 * application's double free) by the owner way too. Exactly one free
 * wins: the owner claims only inside its entered section, which the
 * revoker finds and waits for (busy), or after which its entry fails and
 * it claims by CAS after the outside protocol. With the claim made
 * before the entry (owner_claim_before_entry, the claim16 sketch's
 * order) the owner plain-loads HELD, the other thread revokes, parks and
 * frees plainly, and the owner's store wins too: the credit comes back
 * twice (abort "returned twice", or invariant: credits).
 *
 * owner_claim_set: the holder's half of the claim flag (actors/runner.h,
 * runner_claims_plain). Another thread frees one of the parked owner's
 * events first: its outside protocol turns the PE's claim flag SET. Then
 * it frees a second event, which the owner frees at the same time (the
 * application's double free): the owner, its section entered after SET,
 * must claim by CAS, so exactly one of the two frees wins and the other
 * is refused (counted stale once), and the credits are exact. With the
 * owner claiming plainly whatever the flag (holder_ignores_claims) the
 * outsider's CAS, which waits for nothing once the flag is SET, falls
 * between the owner's load and its store and both win (invariant: stale,
 * no free refused).
 *
 * two_pe_cross (the claim16 design's two-PE world): two PEs, each parked
 * by its own thread, one event of each in the application's hands; each
 * thread frees both, its own first, by one doca_event_free_bulk
 * (two_pe_cross_single: two doca_event_free calls). Each thread is the
 * owner of one event's PE and an outside claimer of the other's, whose
 * protocol waits out the other owner's brief section while that owner
 * may be waiting out ours: neither waits inside a brief section, so no
 * deadlock. Exactly one free of each event wins (two refused, counted
 * stale), and both contexts' credits are exact. With the outside
 * claimer's fence and wait left out (foreign_claim_no_wait) its CAS
 * falls between the other owner's plain load and store (a pinned seed).
 *
 * owner_claim_two_outside: two claimers outside the guard at once (the
 * rule for one that finds the claim flag SETTING, actors/runner.h
 * runner_claims_share). The parked owner frees its second event while
 * one other thread frees its first and another frees the second too (the
 * application's double free). The claimer that finds SETTING, stored by
 * the other, did not wait out the owner's section itself: it must run
 * its own fence and wait before its CAS. Exactly one free of the second
 * event wins (one refused, counted stale) and the credits are exact.
 * With SETTING taken for SET (claims_setting_as_set) the second
 * claimer's CAS can fall between the owner's plain load and its store,
 * while the first claimer waits for that section: both win.
 */
#include "scenario.h"

#include <sched.h>

#include "engine/engine.h"

#define MAX_TASKS 4u

static struct world w;
static unsigned credits_taken;
static doca_error_t credits_end;
static unsigned first_tag; /* submit_until_refused's first task */

static void *freer(void *ev)
{
	explore_name("freer");
	doca_event_free(ev);
	return NULL;
}

/* Not the PE's thread, so its tasks wait in the mailbox: the count is the
 * credits alone, whatever the device would do with a fifth descriptor. */
static void *submit_until_refused(void *unused)
{
	(void)unused;
	explore_name("submitter");
	credits_end = DOCA_SUCCESS;
	for (unsigned tag = first_tag; tag < WORLD_TASKS && credits_end == DOCA_SUCCESS; tag++) {
		credits_end = world_submit(&w, tag);
		credits_taken += credits_end == DOCA_SUCCESS;
	}
	return NULL;
}

/* The event of the one task in flight, taken on the PE's thread. */
static struct doca_event *take_event(void)
{
	struct doca_event *ev;

	while ((ev = doca_pe_get_event(w.pe)) == NULL) {
		(void)doca_pe_progress(w.pe);
		sched_yield();
	}
	world_event(&w, ev);
	return ev;
}

/* The world opened, and two events (tasks 0 and 1) taken on this
 * thread, which so parks the guard: its frees are the owner's. */
static void open_with_two_events(struct doca_event *evs[2])
{
	world_open(&w, "sw0", MAX_TASKS, NULL);
	EXPECT_OK(world_submit(&w, 0));
	evs[0] = take_event();
	EXPECT_OK(world_submit(&w, 1));
	evs[1] = take_event();
}

/* Every event freed (@p events of them so far): the credits exact (a
 * submitter from task @p first on gets max_tasks accepted, then AGAIN),
 * every accepted task's one event, then the world closed. */
static void credits_exact_then_close(unsigned first, unsigned events)
{
	pthread_t s;

	first_tag = first;
	if (pthread_create(&s, NULL, submit_until_refused, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	pthread_join(s, NULL);
	if (credits_taken != MAX_TASKS || credits_end != DOCA_ERROR_AGAIN)
		explore_end(VERDICT_INVARIANT,
			    "credits: %u tasks accepted, then %s, with max_tasks %u and every event freed",
			    credits_taken, doca_error_get_name(credits_end), MAX_TASKS);
	while (atomic_load(&w.events_total) < events + MAX_TASKS)
		if (world_progress(&w) == 0)
			sched_yield();
	EXPECT_OK(doca_ctx_stop(w.ctx));
	world_close(&w);
	world_finish(&w);
}

void scenario_event_double_free(void)
{
	pthread_t a, b;

	world_open(&w, "sw0", MAX_TASKS, NULL);
	EXPECT_OK(world_submit(&w, 0));
	struct doca_event *ev = take_event();

	if (pthread_create(&a, NULL, freer, ev) != 0 || pthread_create(&b, NULL, freer, ev) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	/* A free off the PE's thread comes back through the mailbox: one turn
	 * puts the credit back in the pool. */
	(void)doca_pe_progress(w.pe);
	credits_exact_then_close(1, 1);
}

void scenario_event_wrap_free(void)
{
	pthread_t b;

	world_open(&w, "sw0", MAX_TASKS, NULL);
	EXPECT_OK(world_submit(&w, 0));
	struct doca_event *first = take_event();
	struct doca_event *slot = handle_addr(first);

	doca_event_free(first); /* the slot back on top of its pool */
	atomic_store(&slot->gs, ev_gs(HANDLE_GEN_MASK, EV_FREE)); /* as after 2^22 - 1 uses */
	EXPECT_OK(world_submit(&w, 1));
	struct doca_event *last = take_event();

	if (last != handle_pack(slot, HANDLE_GEN_MASK))
		explore_end(VERDICT_HARNESS, "the task did not take the slot at its last generation");
	if (pthread_create(&b, NULL, freer, last) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	doca_event_free(last); /* the PE's thread: the owner's way */
	pthread_join(b, NULL);
	(void)doca_pe_progress(w.pe); /* a foreign win comes back through the mailbox */
	EXPECT_OK(world_submit(&w, 2));
	struct doca_event *next = take_event();

	if (next != handle_pack(slot, 0))
		explore_end(VERDICT_INVARIANT, "wrap: the slot's next handle has generation %u, not 0",
			    handle_gen(next));
	doca_event_free(next);
	credits_exact_then_close(3, 3);
}

static struct doca_event *revoke_ev;

/* Takes the PE from its parked owner (a progress revokes the guard when
 * the owner is outside it), so its free below is the new parked owner's. */
static void *revoker_freer(void *unused)
{
	(void)unused;
	explore_name("revoker");
	(void)doca_pe_progress(w.pe);
	doca_event_free(revoke_ev);
	return NULL;
}

static void owner_claim_revoke(bool bulk)
{
	pthread_t b;

	world_open(&w, "sw0", MAX_TASKS, NULL);
	EXPECT_OK(world_submit(&w, 0));
	revoke_ev = take_event(); /* this thread parks the guard: its free is the owner's */
	if (pthread_create(&b, NULL, revoker_freer, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	if (bulk)
		doca_event_free_bulk(&revoke_ev, 1);
	else
		doca_event_free(revoke_ev);
	pthread_join(b, NULL);
	(void)doca_pe_progress(w.pe); /* a free through the mailbox comes back */
	credits_exact_then_close(1, 1);
}

void scenario_owner_claim_revoke(void)
{
	owner_claim_revoke(false);
}

void scenario_owner_claim_revoke_bulk(void)
{
	owner_claim_revoke(true);
}

static struct doca_event *set_evs[2];
static atomic_bool set_first_freed;

/* Not the PE's thread: its first free sets the PE's claim flag (SET when
 * it returns), its second races the owner's free of the same event. */
static void *set_freer(void *unused)
{
	(void)unused;
	explore_name("freer");
	doca_event_free(set_evs[0]);
	atomic_store(&set_first_freed, true);
	/* the owner, spinning below us, goes first: the double win then
	 * takes one change point (the owner between its load and its store),
	 * not two */
	sched_yield();
	doca_event_free(set_evs[1]);
	return NULL;
}

void scenario_owner_claim_set(void)
{
	pthread_t b;

	open_with_two_events(set_evs);
	uint64_t stale0 = doca_stale_handle_count();

	if (pthread_create(&b, NULL, set_freer, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	/* the race starts with the flag SET: the freer's first free is over */
	while (!atomic_load(&set_first_freed))
		sched_yield();
	doca_event_free(set_evs[1]);
	pthread_join(b, NULL);
	uint64_t refused = doca_stale_handle_count() - stale0;

	if (refused != 1)
		explore_end(VERDICT_INVARIANT, "stale: %llu frees refused, not 1 (one event freed twice)",
			    (unsigned long long)refused);
	(void)doca_pe_progress(w.pe); /* the freer's wins come back through the mailbox */
	credits_exact_then_close(2, 2);
}

static struct world w2;         /* the second PE's world, parked by "owner b" */
static struct doca_event *cross_ev[2]; /* w's event, w2's */
static atomic_uint cross_ready; /* threads holding their PE's event */
static bool cross_single;       /* two_pe_cross_single */

/* Once both events are taken: free cross_ev[@p own], then the other, as
 * the scenario says. */
static void cross_free(unsigned own)
{
	atomic_fetch_add(&cross_ready, 1);
	while (atomic_load(&cross_ready) < 2)
		sched_yield();
	struct doca_event *evs[2] = { cross_ev[own], cross_ev[1u - own] };

	if (cross_single) {
		doca_event_free(evs[0]);
		doca_event_free(evs[1]);
	} else {
		doca_event_free_bulk(evs, 2);
	}
}

/* w2's thread: its progress revokes the opener's parked guard and parks
 * it for itself, so its free of w2's event is the owner's. */
static void *cross_owner_b(void *unused)
{
	(void)unused;
	explore_name("owner b");
	cross_ev[1] = world_take_event(&w2);
	cross_free(1);
	return NULL;
}

static void two_pe_cross(bool single)
{
	pthread_t b;

	cross_single = single;
	world_open(&w, "sw0", MAX_TASKS, NULL);
	world_open(&w2, "sw0", MAX_TASKS, NULL);
	EXPECT_OK(world_submit(&w, 0));
	EXPECT_OK(world_submit(&w2, 0));
	uint64_t stale0 = doca_stale_handle_count();

	if (pthread_create(&b, NULL, cross_owner_b, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	cross_ev[0] = world_take_event(&w); /* this thread parks w's guard */
	cross_free(0);
	pthread_join(b, NULL);
	uint64_t refused = doca_stale_handle_count() - stale0;

	if (refused != 2)
		explore_end(VERDICT_INVARIANT, "stale: %llu frees refused, not 2 (each event freed twice)",
			    (unsigned long long)refused);
	/* the other thread's wins come back through each PE's mailbox (w2's
	 * guard, its owner gone, revoked by our progress) */
	(void)doca_pe_progress(w.pe);
	(void)doca_pe_progress(w2.pe);
	world_end_with_exact_credits(&w, MAX_TASKS);
	world_end_with_exact_credits(&w2, MAX_TASKS);
}

void scenario_two_pe_cross(void)
{
	two_pe_cross(false);
}

void scenario_two_pe_cross_single(void)
{
	two_pe_cross(true);
}

static struct doca_event *two_evs[2];
static atomic_bool two_go;      /* the owner is about to free two_evs[1] */
static atomic_bool two_started; /* the first freer is about to free two_evs[0] */

/* The two freers start in this order once the owner is about to free:
 * the second claimer then finds SETTING, and the double win takes one
 * change point (the owner between its plain load and its store). Every
 * schedule after the flags is still the scheduler's. */
static void *two_freer_first(void *unused)
{
	(void)unused;
	explore_name("freer 1");
	while (!atomic_load(&two_go))
		sched_yield();
	atomic_store(&two_started, true);
	doca_event_free(two_evs[0]);
	return NULL;
}

static void *two_freer_second(void *unused)
{
	(void)unused;
	explore_name("freer 2");
	while (!atomic_load(&two_started))
		sched_yield();
	doca_event_free(two_evs[1]);
	return NULL;
}

void scenario_owner_claim_two_outside(void)
{
	pthread_t a, b;

	open_with_two_events(two_evs);
	uint64_t stale0 = doca_stale_handle_count();

	if (pthread_create(&a, NULL, two_freer_first, NULL) != 0 ||
	    pthread_create(&b, NULL, two_freer_second, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	atomic_store(&two_go, true);
	doca_event_free(two_evs[1]);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	uint64_t refused = doca_stale_handle_count() - stale0;

	if (refused != 1)
		explore_end(VERDICT_INVARIANT, "stale: %llu frees refused, not 1 (one event freed twice)",
			    (unsigned long long)refused);
	(void)doca_pe_progress(w.pe); /* the freers' wins come back through the mailbox */
	credits_exact_then_close(2, 2);
}
