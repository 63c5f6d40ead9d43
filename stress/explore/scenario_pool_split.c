/*
 * stress/explore/scenario_pool_split.c — ring21 step 2's split credits
 * (engine/task_pool.h "The split credits"): pool_reload_stale_t and
 * pool_chunk_prefix call them directly; pool_split_again through the
 * library's submit and free.
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
 * pool_chunk_prefix (D4): a pool of 96 credits (three chunks), 30 taken
 * and returned first; taker A, its view of returned fresh, takes 32 (the
 * first chunk covers them); taker B, its view stale (0: it never saw the
 * 30 back), takes 8, its bound 70 although at most 40 are out. Every
 * chunk below the credits out must exist after each take (a guard
 * holder's fresh slot is at most that index). With
 * DOCA_EXPLORE_REVERT=chunk_only_last (v1's look: only the chunk the
 * bound falls in) B makes chunk 2 alone and chunk 1 is missing under 40
 * credits out (invariant).
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
 */
#include "scenario.h"

#include <sched.h>

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

static void *prefix_taker(void *arg)
{
	bool stale = arg != NULL;
	uint64_t seen = stale ? 0 : atomic_load(&pool->returned);
	uint32_t k = stale ? 8 : 32;

	explore_name(stale ? "stale" : "fresh");
	if (credit_split_take(pool, k, &seen) != k)
		explore_end(VERDICT_INVARIANT, "credits: %u refused with at most 40 of 96 out", k);
	chunks_cover_outstanding(stale ? "the stale taker" : "the fresh taker");
	return NULL;
}

void scenario_pool_chunk_prefix(void)
{
	pthread_t a, b;
	uint64_t seen = 0;

	world_open(&w, "sw0", 96, NULL);
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
	/* the takers' 40 back (taken and returned are the pool's credits:
	 * the stop waits for every one) */
	credit_split_return(pool, task_pool_out(pool));
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}

static atomic_uint freed_one, again_done;

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
	pthread_t t;

	world_open(&w, "sw0", 2, NULL);
	(void)doca_pe_progress(w.pe); /* this thread is the PE's: the submitter is foreign */
	if (pthread_create(&t, NULL, again_submitter, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	/* the application's loop: every event checked and freed at once */
	while (atomic_load(&again_done) == 0 || atomic_load(&w.events_total) != atomic_load(&w.accepted_total)) {
		struct doca_event *ev;
		uint32_t n = doca_pe_progress(w.pe);

		while ((ev = doca_pe_get_event(w.pe)) != NULL) {
			world_event(&w, ev);
			doca_event_free(ev);
			atomic_store(&freed_one, 1);
		}
		if (n == 0)
			sched_yield();
	}
	pthread_join(t, NULL);
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
