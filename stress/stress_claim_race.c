/*
 * stress/stress_claim_race.c — the owner's plain claim against frees from
 * another thread, on the hardware, for as long as asked.
 *
 * The PE's thread claims its events with a plain load and store until a
 * thread outside its guard first frees one of the PE's events: that free's
 * membarrier and wait, and the owner's look at the PE's claim flag after
 * its entry, keep two frees of one event from both winning
 * (engine/event.c, "The owner's plain claim"). The explorer is
 * sequentially consistent and the owner's way is off under a race
 * detector, so a missing fence there shows only on the hardware: here and
 * in tests/engine/handles.c. The flag goes up once in a PE's
 * life, so every round is a new PE.
 *
 * Each round: a new context (max_tasks N, 2..32) on a new PE run by this
 * thread, N copies submitted and their N events taken; in half the rounds
 * the freer thread first frees one of them alone (the flag is then up
 * when the race begins); then the freer frees the others from the last
 * while this thread frees them from the first (each side by
 * doca_event_free or by one doca_event_free_bulk, drawn per round), both
 * after a short random spin. Checks: exactly one free of each raced event
 * wins (doca_stale_handle_count grows by exactly their number), every
 * credit is back (after one turn the context accepts exactly N new copies
 * and refuses the next with AGAIN), each copy's event is its own and a
 * success and the destination holds the source's bytes, and everything
 * tears down. A double win shows first in the count (one refusal less);
 * the second return of its slot may then abort in the task pool.
 *
 * The summary counts the rounds whose race happened (overlap): this
 * thread's frees and the freer's overlapped in time: the side that began
 * its first free of the raced events later began it before the other had
 * returned from its last (stress_overlap, stress_common.h). Under fewer than 10 % of the
 * rounds the run says so with a WARNING: line (a pass that tested little,
 * not a failure).
 *
 *   stress_claim_race [--seconds S] [--seed N] [--sabotage lost|dup]
 *
 * --sabotage lost: one event of the round is freed by neither thread
 * during the race (this thread frees it after the count); dup: this thread
 * frees one event twice. Either must be reported.
 */
#include "stress_common.h"

#include <stdio.h>
#include <string.h>

#define MAX_N 32u
#define LEN 64u

/* One round's hand-off to the freer thread. */
struct round {
	struct doca_event *evs[MAX_N]; /* the raced events (the primer not among them) */
	struct doca_event *primer;     /* or NULL: the freer's one free before the race */
	uint32_t n;
	bool bulk;     /* the freer's frees: one doca_event_free_bulk */
	unsigned spin; /* the freer's spin before it starts */
};

static struct round cur;
/* the round the freer may start, the one whose primer it freed, the one
 * it finished */
static atomic_ulong go, primed, done;
static atomic_bool quit;
/* both sides' windows of frees of the raced events */
static struct stress_overlap frees;

/* The freer: every round's events from the last, after its spin. */
static void *freer_main(void *unused)
{
	unsigned long seen = 0;

	(void)unused;
	for (;;) {
		unsigned long g = stress_await_go(&go, seen, &quit);

		if (g == seen)
			return NULL;
		seen = g;
		if (cur.primer != NULL)
			doca_event_free(cur.primer);
		atomic_store(&primed, seen);
		stress_spin(cur.spin);
		if (cur.bulk) {
			struct doca_event *rev[MAX_N];

			for (uint32_t i = 0; i < cur.n; i++)
				rev[i] = cur.evs[cur.n - 1 - i];
			stress_overlap_enter(&frees, seen);
			doca_event_free_bulk(rev, cur.n);
		} else {
			stress_overlap_enter(&frees, seen);
			for (uint32_t i = cur.n; i-- > 0;)
				doca_event_free(cur.evs[i]);
		}
		stress_overlap_exit(&frees);
		atomic_store(&done, seen);
	}
}

/* @p n copies submitted (tags from @p tag) and their n events taken into
 * @p evs, each checked: its tag, success, the destination's bytes. */
static void submit_and_take(struct stress_rig *r, uint32_t n, uint64_t tag, struct doca_event **evs)
{
	for (uint32_t i = 0; i < n; i++) {
		struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = r->src[0], .dst = r->dst[0],
					    .user_data.u64 = tag + i };

		if (!STRESS_OK(doca_task_submit(r->ctx, &d)))
			stress_fatal("copy %u of %u refused: a credit is missing", i, n);
	}
	uint32_t got = 0;

	for (unsigned tries = 0; got < n; tries++) {
		if (tries == 1000000)
			stress_fatal("%u of %u events after a million turns", got, n);
		(void)doca_pe_progress(r->pe);
		got += doca_pe_get_events(r->pe, evs + got, n - got);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (doca_event_get_user_data(evs[i]).u64 != tag + i ||
		    doca_event_get_status(evs[i]) != DOCA_EVENT_STATUS_SUCCESS)
			stress_violation("event %u: tag %llu (want %llu), status %d", i,
					 (unsigned long long)doca_event_get_user_data(evs[i]).u64,
					 (unsigned long long)(tag + i), (int)doca_event_get_status(evs[i]));
	}
	if (memcmp(r->bytes, r->bytes + LEN, LEN) != 0)
		stress_violation("the copies' destination differs from their source");
}

/* One round (see the top). @return its accepted copies; *overlaps
 * counts it if its race happened. */
static unsigned long one_round(struct rng *g, unsigned long round, enum sabotage sab, unsigned long *overlaps)
{
	uint32_t n = 2 + rng_below(g, MAX_N - 1);
	struct stress_rig r;
	struct doca_event *evs[MAX_N], *again[MAX_N];

	stress_rig_up(&r, n, 1, LEN);
	stress_pattern(round, r.bytes, LEN);
	submit_and_take(&r, n, round << 8, evs);
	/* Half the rounds the freer first frees one event alone, so the race
	 * begins with the PE's claim flag up: the owner must then look at
	 * it and claim by CAS (a plain claim there would meet the freer's
	 * CAS, which no longer waits). */
	bool prime = n > 2 && rng_pct(g, 50);

	cur.primer = prime ? evs[0] : NULL;
	n -= prime;
	memcpy(cur.evs, evs + prime, n * sizeof(evs[0]));
	cur.n = n;
	cur.bulk = rng_pct(g, 50);
	cur.spin = rng_below(g, 400);
	bool bulk = rng_pct(g, 50);
	unsigned my_spin = rng_below(g, 400);
	uint32_t skip = sab == SABOTAGE_LOST ? rng_below(g, n) : MAX_N;
	uint64_t stale = doca_stale_handle_count();

	if (skip < MAX_N)
		cur.evs[skip] = NULL; /* freed by neither: NULL is ignored */
	atomic_store(&go, round); /* the freer's loads of cur come after it */
	while (atomic_load(&primed) != round)
		;
	stress_spin(my_spin);
	stress_overlap_enter(&frees, round);
	if (bulk) {
		doca_event_free_bulk(cur.evs, n);
	} else {
		for (uint32_t i = 0; i < n; i++)
			doca_event_free(cur.evs[i]);
	}
	stress_overlap_exit(&frees);
	if (sab == SABOTAGE_DUP)
		doca_event_free(cur.evs[rng_below(g, n)]);
	while (atomic_load(&done) != round)
		;
	*overlaps += stress_overlap_seen(&frees, round); /* the freer's exit came before its done */
	uint64_t refused = doca_stale_handle_count() - stale;

	if (refused != n)
		stress_violation("round %lu: %llu frees refused, not %u: of two frees of each event exactly one wins",
				 round, (unsigned long long)refused, n);
	if (skip < MAX_N)
		doca_event_free(evs[skip + prime]); /* the sabotage's event, so the round completes */
	/* The freer's wins come back through the mailbox: it pushed and
	 * marked the context ready before its done, and one turn drains the
	 * mailbox until it is empty. */
	(void)doca_pe_progress(r.pe);
	n += prime;
	stress_pattern(round + 1, r.bytes, LEN);
	submit_and_take(&r, n, (round << 8) | 0x80, again);
	struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = r.src[0], .dst = r.dst[0] };
	doca_error_t over = doca_task_submit(r.ctx, &d);

	if (over != DOCA_ERROR_AGAIN)
		stress_violation("round %lu: copy %u of max_tasks %u answered %s, not AGAIN", round, n + 1, n,
				 doca_error_get_name(over));
	doca_event_free_bulk(again, n);
	stress_rig_down(&r);
	return 2ul * n;
}

int main(int argc, char **argv)
{
	struct stress_opts o;
	struct rng g;
	pthread_t t;
	unsigned long accepted = 0, round = 0, overlaps = 0;

	stress_parse_kinds(argc, argv, &o, STRESS_KIND(SABOTAGE_LOST) | STRESS_KIND(SABOTAGE_DUP));
	stress_watchdog(o.seconds);
	/* every round refuses N frees, each logged as an error */
	(void)doca_log_set_level(DOCA_LOG_NONE);
	rng_init(&g, o.seed, 0);
	if (pthread_create(&t, NULL, freer_main, NULL) != 0)
		stress_fatal("pthread_create");
	uint64_t end = stress_now_ns() + (uint64_t)(o.seconds * 1e9);

	do
		accepted += one_round(&g, ++round, o.sabotage, &overlaps);
	while (stress_now_ns() < end && stress_violation_count() == 0);
	atomic_store(&quit, true);
	pthread_join(t, NULL);
	bool pass = stress_violation_count() == 0;

	printf("stress_claim_race: %s seed=%llu %.1fs accepted=%lu violations=%lu rounds=%lu overlap=%lu\n",
	       pass ? "PASS" : "FAIL", (unsigned long long)o.seed, o.seconds, accepted, stress_violation_count(),
	       round, overlaps);
	stress_overlap_report("stress_claim_race", overlaps, round);
	return pass ? 0 : 1;
}
