/*
 * stress/explore/scenario_pool_share_again.c — the exact AGAIN while the
 * task pool turns shared (pool_share_again).
 *
 * The owner thread runs the PE (its progress parks the runner guard),
 * submits its tasks and frees the events on its own thread, each free
 * returning its credit before the call returns (the guard is parked for
 * it); one event at a time it hands to a freer thread instead. A foreign
 * thread submits meanwhile, never progressing: its first take finds the
 * guard parked and turns the pool shared. The freer's frees go around the
 * parked guard (the mailbox; the owner's next turn puts the credit back),
 * or straight to the pool when they find the guard free.
 *
 * What is checked: every DOCA_ERROR_AGAIN, on any thread, comes while all
 * MAX_TASKS credits are really out, counted as stress/stress_mixed.c does:
 * `hi`'s low half counts tasks that may hold a credit (added before the
 * submit, taken off after a refusal, once the owner's free of its event
 * returned, or for the freer's, after a turn of the owner's that began
 * after its free returned and during which the freer had no free under
 * way), its high half the returns. A call refused with AGAIN during which
 * no credit returned saw only tasks that held or may hold one, so hi after
 * it must be at least MAX_TASKS plus its own refused task; every owner
 * AGAIN is checked (returns are counted on its thread), a foreign one when
 * no return raced it. An owner's credit that comes back after its free
 * returned (the free went around the guard, through the mailbox, to be
 * put back by a later turn) shows as an AGAIN with fewer out. At the end
 * exactly MAX_TASKS submits are accepted and the next is AGAIN.
 *
 * quiesce_again_buf and quiesce_again_stop: the same three threads and
 * checks, and a fourth that quiesces the owner's brief sections without
 * touching this context's tasks: it destroys QUIESCE_ROUNDS buffers of
 * the same memory (so of the same context and PE) that no task ever
 * names (engine/buf.c, buf_quiesce_owner), or stops and starts again,
 * QUIESCE_ROUNDS times, a second, idle context on the same PE
 * (engine/ctx_run.c). Each counted itself in the guard's revoke while it
 * waited in its first version (buf_destroy_counts_revoke,
 * stop_counts_revoke), as the switch once did (pool_share_counts_revoke).
 */
#include "scenario.h"

#include <sched.h>

#define MAX_TASKS 3u
#define OWNER_TAGS 3u    /* tags 0..2, each submitted OWNER_ROUNDS times */
#define OWNER_ROUNDS 2u
#define FOREIGN_TASKS 3u /* tags 3..5 */
#define TOTAL (OWNER_TAGS * OWNER_ROUNDS + FOREIGN_TASKS)
#define RETURN ((uint64_t)1 << 32)

static struct world w;
static _Atomic uint64_t hi;
static _Atomic(struct doca_event *) handoff;
static atomic_uint freer_begun, freer_done;     /* the freer's free calls */
static atomic_uint foreign_begun, foreign_done; /* the foreign thread's submit calls */
static unsigned handed, counted; /* the owner's: events handed, their credits counted back */

/* Submit tag once, the AGAIN checked; true if accepted. */
static bool submit_checked(unsigned tag, bool owner)
{
	uint64_t v1 = atomic_fetch_add(&hi, 1) + 1;
	doca_error_t err = world_submit(&w, tag);
	uint64_t v2 = atomic_load(&hi);

	if (err == DOCA_SUCCESS)
		return true;
	if (err != DOCA_ERROR_AGAIN)
		explore_end(VERDICT_INVARIANT, "result: submit of task %u: %s", tag, doca_error_get_name(err));
	if (owner && v1 >> 32 != v2 >> 32)
		explore_end(VERDICT_INVARIANT, "credits: a credit returned during an owner submit");
	if (v1 >> 32 == v2 >> 32 && (uint32_t)v2 < MAX_TASKS + 1u)
		explore_end(VERDICT_INVARIANT, "credits: %s submit of task %u refused with AGAIN while at most %u of %u credits were out",
			    owner ? "owner" : "foreign", tag, (uint32_t)v2 - 1u, MAX_TASKS);
	atomic_fetch_sub(&hi, 1); /* refused: never held a credit */
	return false;
}

/* One progress call, every ready event taken and freed here (its credit
 * counted back once the free returned) or handed to the freer. Returns
 * how many. */
static unsigned progress_freeing(void)
{
	struct doca_event *ev;
	unsigned done = atomic_load(&freer_done), begun = atomic_load(&freer_begun);
	unsigned sdone = atomic_load(&foreign_done), sbegun = atomic_load(&foreign_begun);
	unsigned n = doca_pe_progress(w.pe);

	/* no call of the freer's or the foreign thread's under way when the
	 * turn began (the counts of calls done read first) nor begun during
	 * it: every free that returned before had its push and its signal
	 * whole, and no other signal was half done (one that finds the
	 * context marked leaves the queueing to its marker), so the turn
	 * visited the context and put the credit back */
	if (begun == done && sbegun == sdone && atomic_load(&freer_begun) == begun &&
	    atomic_load(&foreign_begun) == sbegun) {
		atomic_fetch_add(&hi, (RETURN - 1u) * (done - counted));
		counted = done;
	}
	while ((ev = doca_pe_get_event(w.pe)) != NULL) {
		struct doca_event *none = NULL;

		world_event(&w, ev);
		n++;
		if (atomic_compare_exchange_strong(&handoff, &none, ev)) {
			handed++;
			continue;
		}
		doca_event_free(ev);
		atomic_fetch_add(&hi, RETURN - 1u);
	}
	return n;
}

static void *owner(void *unused)
{
	explore_name("owner");
	(void)progress_freeing(); /* this thread runs the PE: its guard is parked */
	for (unsigned i = 0; i < OWNER_TAGS * OWNER_ROUNDS; i++)
		while (!submit_checked(i % OWNER_TAGS, true))
			if (progress_freeing() == 0)
				sched_yield();
	while (atomic_load(&w.events_total) < TOTAL || counted < handed)
		if (progress_freeing() == 0)
			sched_yield();
	atomic_store(&handoff, (struct doca_event *)&handoff); /* the freer's end */
	return NULL;
}

static void *foreign(void *unused)
{
	explore_name("foreign");
	for (unsigned tag = OWNER_TAGS; tag < OWNER_TAGS + FOREIGN_TASKS;) {
		atomic_fetch_add(&foreign_begun, 1);
		bool accepted = submit_checked(tag, false);

		atomic_fetch_add(&foreign_done, 1);
		if (accepted)
			tag++;
		else
			sched_yield();
	}
	return NULL;
}

static void *freer(void *unused)
{
	explore_name("freer");
	for (;;) {
		struct doca_event *ev = atomic_load(&handoff);

		if (ev == (struct doca_event *)&handoff)
			return NULL;
		if (ev == NULL || !atomic_compare_exchange_strong(&handoff, &ev, NULL)) {
			sched_yield();
			continue;
		}
		atomic_fetch_add(&freer_begun, 1);
		doca_event_free(ev);
		atomic_fetch_add(&freer_done, 1);
	}
}

/* The scenario's threads, and @p quiescer (or none) beside them. */
static void again_run(void *(*quiescer)(void *))
{
	pthread_t t[4];
	void *(*fns[4])(void *) = { owner, foreign, freer, quiescer };
	unsigned n = quiescer != NULL ? 4u : 3u;

	atomic_store(&hi, 0);
	atomic_store(&handoff, NULL);
	atomic_store(&freer_begun, 0);
	atomic_store(&freer_done, 0);
	atomic_store(&foreign_begun, 0);
	atomic_store(&foreign_done, 0);
	handed = counted = 0;
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fns[i], NULL) != 0)
			explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

void scenario_pool_share_again(void)
{
	world_open(&w, "sw0", MAX_TASKS, NULL);
	again_run(NULL);
	world_end_with_exact_credits(&w, MAX_TASKS);
}

#define QUIESCE_ROUNDS 3u

static struct doca_buf *unused_bufs[QUIESCE_ROUNDS]; /* quiesce_again_buf's */
static struct doca_ctx *idle_ctx;                     /* quiesce_again_stop's, */
static struct doca_dev *idle_dev;                     /* on a device of its own */

static void *buf_destroyer(void *unused)
{
	explore_name("destroyer");
	for (unsigned i = 0; i < QUIESCE_ROUNDS; i++)
		EXPECT_OK(doca_buf_destroy(unused_bufs[i]));
	return NULL;
}

static void *ctx_stopper(void *unused)
{
	explore_name("stopper");
	for (unsigned i = 0; i < QUIESCE_ROUNDS; i++) {
		EXPECT_OK(doca_ctx_stop(idle_ctx)); /* no task: IDLE at once */
		EXPECT_OK(doca_ctx_start(idle_ctx));
	}
	return NULL;
}

void scenario_quiesce_again_buf(void)
{
	world_open(&w, "sw0", MAX_TASKS, NULL);
	for (unsigned i = 0; i < QUIESCE_ROUNDS; i++)
		EXPECT_OK(doca_buf_create(w.mem, i, 1, &unused_bufs[i]));
	again_run(buf_destroyer);
	world_end_with_exact_credits(&w, MAX_TASKS);
}

void scenario_quiesce_again_stop(void)
{
	world_open(&w, "sw0", MAX_TASKS, NULL);
	EXPECT_OK(doca_ctx_create(&idle_ctx));
	EXPECT_OK(doca_dev_open("sw0", &idle_dev));
	EXPECT_OK(doca_ctx_set_dev(idle_ctx, idle_dev));
	EXPECT_OK(doca_ctx_set_max_tasks(idle_ctx, 1));
	EXPECT_OK(doca_pe_connect_ctx(w.pe, idle_ctx));
	EXPECT_OK(doca_ctx_start(idle_ctx));
	again_run(ctx_stopper);
	EXPECT_OK(doca_ctx_stop(idle_ctx));
	EXPECT_OK(doca_dev_close(idle_dev));
	EXPECT_OK(doca_ctx_destroy(idle_ctx));
	world_end_with_exact_credits(&w, MAX_TASKS);
}
