/*
 * stress/explore/scenario_pool_split.c — ring21 step 2's split credits
 * (engine/task_pool.h "The split credits"): pool_reload_stale_t,
 * pool_chunk_prefix, pool_steal_fresh and pool_again_look call the
 * pool's takes, returns and looks directly, each thread in the role the
 * library gives it (a foreign taker of credits alone, a guard holder
 * that takes credits and slots, returned's one writer);
 * pool_split_again goes through the library's submit and free.
 *
 * A pool of 2 credits; two takers, each taking one credit at a time with
 * its own cached view of returned, handing it to a returner (the guard
 * holder's role: returned's one writer) and waiting until it is back
 * before its next take. So while a taker is inside its take, it holds no
 * credit and the other at most one: 1 of 2 out at most, and every take
 * must succeed. The schedules that matter: a taker loads taken, the other
 * takes and the returner returns before the first reloads returned, so
 * the returned it reads is ahead of its taken (D5). With
 * DOCA_EXPLORE_REVERT=again_unsigned (the look's compare unsigned) that
 * wraps to "everything out": AGAIN with at most 1 of 2 out (invariant).
 *
 * pool_chunk_prefix (D4, and the review of step 2's F1): a pool of 128
 * credits (four chunks), 30 taken and returned first; taker A, its view
 * of returned fresh, takes 32 (the first chunk covers them); taker B,
 * its view stale (0: it never saw the 30 back), takes 40: at most 72
 * out, so chunks 0 to 2 may be needed and chunk 3 never. Every chunk
 * below the credits out must exist after each take (a guard holder's
 * fresh slot is at most that index), and chunk 3 must never be made.
 * With DOCA_EXPLORE_REVERT=chunk_only_last (v1's look: only the chunk
 * the bound falls in), after A, B's bound (72, by returned reloaded)
 * falls in chunk 2, B makes it alone, and chunk 1 is missing under 72
 * credits out (invariant). With chunks_on_cached_returned (B makes its
 * chunks by its stale view, F1) B's bound is 102 after A, and it makes
 * chunk 3 (invariant).
 *
 * pool_steal_fresh (the review of step 2's F2, adapted: a foreign taker
 * pops no slot since the split): a pool of 64 (two chunks), shared, 31
 * credits and fresh slots out (the guard holder's). A foreign taker F
 * takes one credit (its bound 32: chunk 0 covers it), a guard holder G
 * takes one credit and its slot (the CAS way: the pool is shared), then
 * the PE's feed pops F's slot. Whatever the order, the feed's slot is
 * fresh slot 32, in chunk 1: the last of the two takes made it first
 * (G's credit_take_covered by its exact count, or F's bound 33). With
 * guarded_cas_take_no_chunks (7314cfd's guard holder, whose CAS take
 * made no chunk) F then G leaves chunk 1 unmade: the feed finds no slot
 * for F's credit ("a credit taken found no slot", abort).
 *
 * pool_again_look (the review of step 2's F3): a pool of 2, shared, 1
 * credit out all along (the guard holder's role returns it, then takes
 * one again); a foreign thread's look without taking
 * (task_pool_all_out: the early AGAIN before a foreign submit's pins)
 * must never say all out. With again_look_returned_first (returned
 * loaded before taken, task_pool_out's order) the return and the take
 * between its loads count one credit twice: all 2 out with 1 out
 * (invariant).
 *
 * pool_split_again (design 1.3, 1.5 step 2; the library's own ways): a
 * pool of 2; a foreign submitter (its SP ring's cached returned) fills
 * it with tasks 0 and 1, its view of returned 0, then waits until the
 * application's loop on the PE's thread has freed one event (its credit
 * back before doca_event_free returns), then submits task 2, which must
 * be accepted (1 of 2 out: its look reloads returned once the cached
 * view says full). With DOCA_EXPLORE_REVERT=again_on_cached_returned
 * (AGAIN from the cached view) it is AGAIN while 1 of 2 is out
 * (invariant).
 *
 * The second review of step 2 (A-C):
 *
 * pool_batch_again (A; the library's ways): a pool of 2, shared (as a
 * foreign submit's switch leaves it); a foreign thread submits task 0,
 * then a batch of tasks 1 and 2 while the application's loop on the PE's
 * thread frees task 0's event (its credit back before doca_event_free
 * returns) and records taken just after. Accepting task 1 alone with
 * AGAIN is exact only if 2 were out at some instant: not when taken was
 * still 1 after the free returned (a later take then saw 0 out). With
 * DOCA_EXPLORE_REVERT=batch_take_once (one split take, AGAIN for the
 * rest of a partial one: its look's returned loaded before the free, its
 * CAS after) it is accepted 1, AGAIN with never 2 of 2 out (invariant).
 *
 * pool_owner_cover (B; sequential but for one thread): a pool of 64, the
 * owner's: 32 fresh slots out (chunk 0), 1 back (stacked: 31 out); a
 * foreign credit by the brief guard (its bound 32: chunk 0 covers it);
 * the owner's single take (33 out, at the fast bound's edge: 33 >
 * fresh_from 32, so the fast way refuses and the slow way makes chunk 1,
 * then pops the stacked slot), as the feed then pops fresh slot 32 for
 * the foreign credit. With owner_fast_no_cover (credit_guarded_free
 * bounded by size, no cover) the fast way takes the stacked slot and the
 * feed finds no slot ("a credit taken found no slot", abort).
 *
 * pool_switch_chunk (C): a pool of 64, 32 out (chunk 0); the main thread
 * holds the guard (runner_enter_brief) and takes 2 (a busy-flag plain
 * update: it needs chunk 1, so it ends the update around the
 * allocation), while a foreign taker, refused the guard, turns the pool
 * shared and takes 1 by CAS: taken must end at every take's sum. With
 * chunk_take_no_mode_look (the take goes on plainly after the
 * allocation, no new look at the mode) the switcher saw busy 0 during
 * the allocation and the foreign CAS is overwritten: a credit lost
 * (invariant).
 */
#include "scenario.h"

#include <sched.h>

#include "actors/runner.h"
#include "engine/task_pool.h"

#define TAKES 3u

static struct world w;
static struct task_pool *pool;
static atomic_uint handed[2]; /* a taker's credit waiting for the returner */
static atomic_uint takers_done;

static void *taker(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	uint64_t seen = 0;

	explore_name(me == 0 ? "taker0" : "taker1");
	for (unsigned i = 0; i < TAKES; i++) {
		uint32_t m = credit_split_take(pool, 1, &seen);

		if (m != 1)
			explore_end(VERDICT_INVARIANT, "credits: taker %u's take %u got %u with at most 1 of 2 out", me, i,
				    m);
		atomic_store(&handed[me], 1);
		while (atomic_load(&handed[me]) != 0)
			sched_yield();
	}
	atomic_fetch_add(&takers_done, 1);
	return NULL;
}

void scenario_pool_reload_stale_t(void)
{
	pthread_t t[2];

	world_open(&w, "sw0", 2, NULL);
	pool = &handle_deref(w.ctx)->run->pool; /* started, and nothing submits: its credits are ours */
	for (unsigned i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, taker, (void *)(uintptr_t)i) != 0)
			explore_end(VERDICT_HARNESS, "pthread_create");
	while (atomic_load(&takers_done) != 2) { /* the returner */
		bool some = false;

		for (unsigned i = 0; i < 2; i++)
			if (atomic_load(&handed[i]) != 0) {
				credit_split_return(pool, 1);
				atomic_store(&handed[i], 0);
				some = true;
			}
		if (!some)
			sched_yield();
	}
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (atomic_load(&pool->taken) != atomic_load(&pool->returned) ||
	    atomic_load(&pool->taken) != 2u * TAKES)
		explore_end(VERDICT_INVARIANT, "credits: %llu taken, %llu returned",
			    (unsigned long long)atomic_load(&pool->taken),
			    (unsigned long long)atomic_load(&pool->returned));
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

/* Every chunk below the credits out exists (taken, then returned, loaded
 * after: a take's chunks are made before its CAS). */
static void chunks_cover_outstanding(const char *who)
{
	uint64_t t = atomic_load(&pool->taken), r = atomic_load(&pool->returned);

	for (uint32_t c = 0; (uint64_t)c * POOL_CHUNK < t - r; c++)
		if (atomic_load(&pool->chunks[c]) == NULL)
			explore_end(VERDICT_INVARIANT, "chunks: %s: chunk %u missing with %llu credits out", who, c,
				    (unsigned long long)(t - r));
}

#define PREFIX_OUT 72u /* pool_chunk_prefix: A's 32 and B's 40 */

/* No chunk made beyond those PREFIX_OUT credits out can need (F1). */
static void chunks_follow_outstanding(const char *who)
{
	for (uint32_t c = (PREFIX_OUT + POOL_CHUNK - 1u) / POOL_CHUNK; c < pool->nchunks; c++)
		if (atomic_load(&pool->chunks[c]) != NULL)
			explore_end(VERDICT_INVARIANT, "chunks: %s: chunk %u made with at most %u credits out", who, c,
				    PREFIX_OUT);
}

static void *prefix_taker(void *arg)
{
	bool stale = arg != NULL;
	uint64_t seen = stale ? 0 : atomic_load(&pool->returned);
	uint32_t k = stale ? 40 : 32;
	const char *who = stale ? "the stale taker" : "the fresh taker";

	explore_name(stale ? "stale" : "fresh");
	if (credit_split_take(pool, k, &seen) != k)
		explore_end(VERDICT_INVARIANT, "credits: %u refused with at most %u of 128 out", k, PREFIX_OUT);
	chunks_cover_outstanding(who);
	chunks_follow_outstanding(who);
	return NULL;
}

void scenario_pool_chunk_prefix(void)
{
	pthread_t a, b;
	uint64_t seen = 0;

	world_open(&w, "sw0", 128, NULL);
	pool = &handle_deref(w.ctx)->run->pool; /* started, and nothing submits: its credits are ours */
	if (credit_split_take(pool, 30, &seen) != 30)
		explore_end(VERDICT_HARNESS, "the first 30");
	credit_split_return(pool, 30);
	if (pthread_create(&a, NULL, prefix_taker, NULL) != 0 ||
	    pthread_create(&b, NULL, prefix_taker, (void *)1) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	chunks_cover_outstanding("the end");
	chunks_follow_outstanding("the end");
	/* the takers' 72 back (taken and returned are the pool's credits:
	 * the stop waits for every one) */
	credit_split_return(pool, task_pool_out(pool));
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

#define STEAL_FIRST 31u /* pool_steal_fresh: the guard holder's first credits and fresh slots */

static struct doca_event *steal_evs[STEAL_FIRST + 2u];

/* F: a foreign taker's credit, no slot (task_pool_take_credits: in
 * pool_steal_fresh the pool is shared, so credit_split_take, its view of
 * returned 0); @p arg: the most out of 64 around it, for the verdict
 * (pool_steal_fresh, pool_owner_cover, pool_switch_chunk). */
static void *foreign_credit(void *arg)
{
	uint64_t seen = 0;
	doca_error_t why = DOCA_SUCCESS;

	explore_name("foreign");
	if (task_pool_take_credits(pool, 1, &seen, &why) != 1)
		explore_end(VERDICT_INVARIANT, "credits: the foreign take refused (%s) with %s of 64 out",
			    doca_error_get_name(why), (const char *)arg);
	return NULL;
}

/* G: a guard holder's credit and its slot (the CAS way). */
static void *steal_guarded(void *arg)
{
	doca_error_t why = DOCA_SUCCESS;

	(void)arg;
	explore_name("guarded");
	if (task_pool_take(pool, &steal_evs[STEAL_FIRST], 1, &why) != 1)
		explore_end(VERDICT_INVARIANT, "credits: the guarded take refused (%s) with 32 of 64 out",
			    doca_error_get_name(why));
	return NULL;
}

void scenario_pool_steal_fresh(void)
{
	pthread_t f, g;
	doca_error_t why = DOCA_SUCCESS;
	struct pool_chain c = { 0 };

	world_open(&w, "sw0", 64, NULL);
	pool = &handle_deref(w.ctx)->run->pool; /* started, and nothing submits: its credits are ours */
	atomic_store(&pool->mode, POOL_SHARED); /* as a foreign taker's first take leaves it */
	for (uint32_t got = 0; got < STEAL_FIRST;) {
		uint32_t m = task_pool_take(pool, &steal_evs[got], STEAL_FIRST - got, &why);

		if (m == 0)
			explore_end(VERDICT_HARNESS, "the first %u: %s", STEAL_FIRST, doca_error_get_name(why));
		got += m;
	}
	if (pthread_create(&f, NULL, foreign_credit, (void *)"32") != 0 || pthread_create(&g, NULL, steal_guarded, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	pthread_join(f, NULL);
	pthread_join(g, NULL);
	task_pool_slots(pool, &steal_evs[STEAL_FIRST + 1u], 1); /* the feed's slot for F's credit */
	for (uint32_t i = 0; i < STEAL_FIRST + 2u; i++)
		pool_chain_add(&c, steal_evs[i]);
	task_pool_put(pool, &c); /* every credit and slot back before the stop */
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

static atomic_bool look_done;

static void *again_looker(void *arg)
{
	(void)arg;
	explore_name("looker");
	for (unsigned i = 0; i < 3 && !atomic_load(&look_done); i++)
		if (task_pool_all_out(pool))
			explore_end(VERDICT_INVARIANT, "credits: the look says all %u out with at most 1 out",
				    pool->size);
	return NULL;
}

void scenario_pool_again_look(void)
{
	pthread_t t;
	doca_error_t why = DOCA_SUCCESS;
	struct doca_event *ev = NULL;
	struct pool_chain c = { 0 };

	world_open(&w, "sw0", 2, NULL);
	pool = &handle_deref(w.ctx)->run->pool; /* started, and nothing submits: its credits are ours */
	atomic_store(&pool->mode, POOL_SHARED); /* as a foreign taker's first take leaves it */
	if (task_pool_take(pool, &ev, 1, &why) != 1)
		explore_end(VERDICT_HARNESS, "the first take: %s", doca_error_get_name(why));
	if (pthread_create(&t, NULL, again_looker, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	pool_chain_add(&c, ev);
	task_pool_put(pool, &c); /* the guard holder's return: 0 out */
	if (task_pool_take(pool, &ev, 1, &why) != 1) /* 1 out */
		explore_end(VERDICT_INVARIANT, "credits: the second take refused (%s) with 0 of 2 out",
			    doca_error_get_name(why));
	atomic_store(&look_done, true);
	pthread_join(t, NULL);
	pool_chain_add(&c, ev);
	task_pool_put(pool, &c);
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

static atomic_uint freed_one, again_done;

/* The application's loop on the PE's thread: every event checked and
 * freed at once, @p freed told each one's user data after its free
 * returned, until *@p done and every accepted task's event came. */
static void app_loop(atomic_uint *done, void (*freed)(uint64_t user_data))
{
	while (atomic_load(done) == 0 || atomic_load(&w.events_total) != atomic_load(&w.accepted_total)) {
		struct doca_event *ev;
		uint32_t n = doca_pe_progress(w.pe);

		while ((ev = doca_pe_get_event(w.pe)) != NULL) {
			uint64_t u = doca_event_get_user_data(ev).u64;

			world_event(&w, ev);
			doca_event_free(ev);
			freed(u);
		}
		if (n == 0)
			sched_yield();
	}
}

/* A pool of 2; @p submitter on a thread of its own (foreign: this
 * thread is the PE's), the application's loop here until it is done
 * (app_loop); @p shared: the pool turned shared first, as a foreign
 * submit's switch leaves it. */
static void foreign_submitter_run(void *(*submitter)(void *), atomic_uint *done, void (*freed)(uint64_t user_data),
				  bool shared)
{
	pthread_t t;

	world_open(&w, "sw0", 2, NULL);
	(void)doca_pe_progress(w.pe);
	pool = &handle_deref(w.ctx)->run->pool;
	if (shared)
		atomic_store(&pool->mode, POOL_SHARED);
	if (pthread_create(&t, NULL, submitter, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	app_loop(done, freed);
	pthread_join(t, NULL);
}

static void freed_note(uint64_t user_data)
{
	(void)user_data;
	atomic_store(&freed_one, 1);
}

static void *again_submitter(void *arg)
{
	(void)arg;
	explore_name("submitter");
	for (unsigned i = 0; i < 2; i++)
		EXPECT_OK(world_submit(&w, i));
	while (atomic_load(&freed_one) == 0)
		sched_yield();
	doca_error_t err = world_submit(&w, 2);

	if (err != DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT, "credits: task 2 refused (%s) while 1 of 2 is out", doca_error_get_name(err));
	atomic_store(&again_done, 1);
	return NULL;
}

void scenario_pool_split_again(void)
{
	foreign_submitter_run(again_submitter, &again_done, freed_note, false);
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

static atomic_uint batch_done, batch_acc;
static atomic_int batch_err;
static atomic_ullong batch_taken_after_free = ~0ull;

/* taken just after task 0's free returned */
static void batch_freed(uint64_t user_data)
{
	if (user_data == 0)
		atomic_store(&batch_taken_after_free, atomic_load(&pool->taken));
}

static void *batch_submitter(void *arg)
{
	struct doca_task_desc d[2];
	uint32_t acc = 0;

	(void)arg;
	explore_name("submitter");
	EXPECT_OK(world_submit(&w, 0));
	for (unsigned i = 0; i < 2; i++) {
		d[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = w.src[1 + i], .dst = w.dst[1 + i],
						.user_data = { .u64 = 1 + i } };
		atomic_fetch_add(&w.accepted[1 + i], 1);
	}
	doca_error_t err = doca_task_submit_batch(w.ctx, d, 2, &acc);

	for (unsigned i = acc; i < 2; i++)
		atomic_fetch_sub(&w.accepted[1 + i], 1);
	atomic_fetch_add(&w.accepted_total, acc);
	atomic_store(&batch_acc, acc);
	atomic_store(&batch_err, (int)err);
	atomic_store(&batch_done, 1);
	return NULL;
}

void scenario_pool_batch_again(void)
{
	foreign_submitter_run(batch_submitter, &batch_done, batch_freed, true);
	if (atomic_load(&batch_acc) == 1 && atomic_load(&batch_err) == DOCA_ERROR_AGAIN &&
	    atomic_load(&batch_taken_after_free) == 1)
		explore_end(VERDICT_INVARIANT, "credits: batch accepted 1 then AGAIN, but after task 0's credit came back "
					       "only 1 had been taken since (never 2 of 2 out)");
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

#define CHUNK_FIRST 32u

static struct doca_event *chunk_evs[CHUNK_FIRST + 3u];

/* CHUNK_FIRST fresh slots out, chunk 0's, to the owner's role */
static void take_chunk_zero(void)
{
	doca_error_t why = DOCA_SUCCESS;

	for (uint32_t got = 0; got < CHUNK_FIRST;) {
		uint32_t m = task_pool_take(pool, &chunk_evs[got], CHUNK_FIRST - got, &why);

		if (m == 0)
			explore_end(VERDICT_HARNESS, "the first %u: %s", CHUNK_FIRST, doca_error_get_name(why));
		got += m;
	}
}

/* @p n events of chunk_evs back, then the stop */
static void chunk_give_back_and_stop(uint32_t n)
{
	struct pool_chain c = { 0 };

	for (uint32_t i = 0; i < n; i++)
		pool_chain_add(&c, chunk_evs[i]);
	task_pool_put(pool, &c);
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

void scenario_pool_owner_cover(void)
{
	pthread_t f;
	doca_error_t why = DOCA_SUCCESS;
	struct pool_chain c = { 0 };

	world_open(&w, "sw0", 64, NULL);
	pool = &handle_deref(w.ctx)->run->pool;
	take_chunk_zero();
	pool_chain_add(&c, chunk_evs[CHUNK_FIRST - 1u]);
	task_pool_put(pool, &c); /* 31 out, 1 stacked */
	if (pthread_create(&f, NULL, foreign_credit, (void *)"31") != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	pthread_join(f, NULL); /* 32 out: the foreign credit, no slot yet */
	if (task_pool_take(pool, &chunk_evs[CHUNK_FIRST - 1u], 1, &why) != 1) /* 33 out: the slow way (the fast one under the revert) */
		explore_end(VERDICT_INVARIANT, "credits: the owner's take refused (%s) with 32 of 64 out",
			    doca_error_get_name(why));
	task_pool_slots(pool, &chunk_evs[CHUNK_FIRST], 1); /* the feed's slot for the foreign credit */
	chunk_give_back_and_stop(CHUNK_FIRST + 1u);
}

void scenario_pool_switch_chunk(void)
{
	pthread_t f;
	doca_error_t why = DOCA_SUCCESS;

	world_open(&w, "sw0", 64, NULL);
	pool = &handle_deref(w.ctx)->run->pool;
	take_chunk_zero();
	struct runner *guard = &pool->run->pe->runner;
	enum runner_entry e = runner_enter_brief(guard);

	if (e == RUNNER_BUSY)
		explore_end(VERDICT_HARNESS, "the guard busy");
	if (pthread_create(&f, NULL, foreign_credit, (void *)"at most 34") != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	/* a guard holder's busy-flag take: 34 out needs chunk 1 */
	uint32_t m = task_pool_take(pool, &chunk_evs[CHUNK_FIRST], 2, &why);

	if (e == RUNNER_ENTERED)
		runner_exit(guard);
	pthread_join(f, NULL);
	uint64_t tk = atomic_load(&pool->taken);

	if (tk != CHUNK_FIRST + m + 1u)
		explore_end(VERDICT_INVARIANT, "credits: taken %llu after %u + %u + 1 taken", (unsigned long long)tk,
			    CHUNK_FIRST, m);
	task_pool_slots(pool, &chunk_evs[CHUNK_FIRST + m], 1); /* the feed's slot for the foreign credit */
	chunk_give_back_and_stop(CHUNK_FIRST + m + 1u);
}
