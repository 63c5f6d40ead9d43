/*
 * stress/stress_sw_qp.c — the software device's queue pairs (hw/sw/) driven
 * through its ops table (hw/hw.h) directly, below the engine, with every
 * completion checked, for as long as asked.
 *
 * Why below the engine: the engine reaches the device in one pattern only.
 * It posts with post_chain (the sw device sets posts_chain), reaps with
 * reap (reaps_whole) and never polls an engine-mode CQ, takes a turn's
 * completions with its own fixed maximum, and its credits keep both rings
 * far from full. The rings' corners — a CQ slot partly taken by one call
 * and finished by the next (csub), a short slot against a small max, poll
 * and reap taking turns on one CQ, descriptors posted one to a slot
 * (post) or two (post_chain), a CQ that cannot grow (ring_max), an
 * engine thread that went to sleep — are reached only by a caller that
 * draws all of them at random. This program is that caller.
 *
 * A run cycles through the device configurations below (each at least
 * once, a round each, at most ROUND_S_MAX seconds a round). A round opens
 * the device with the configuration's open string, makes its queue pairs
 * (depth DEPTH, on one or two engine threads, or on none: then a poll
 * executes the descriptors, and nothing reaps) and then, until its time is
 * up, for each queue pair at random: posts a burst of 1..BURST_MAX copies
 * (as many as fit the depth; lengths 1-64, 100-1023 or 1024-LEN_MAX
 * bytes; by post or by post_chain, the ring doorbelled and kicked), and
 * takes 1..TAKE_MAX completions (by poll or by reap). Now and then it
 * sleeps up to 3 ms, so the engine thread goes to sleep and the next
 * post's kick must wake it. Then the flush, one queue pair after another:
 * two more bursts, its flush, one more burst after it, and every
 * completion taken, while the queue pairs not flushed yet go on with
 * their posts and takes; then each of those takes all it holds, posts a
 * burst and takes it too (so a flush that reaches the wrong queue pair
 * shows there).
 *
 * Checks (each a VIOLATION: line; the run then ends with FAIL), and how
 * each can fail:
 * - each queue pair's completions come exactly once and in the order
 *   posted: a completion whose record is not the next id (a lost,
 *   doubled, reordered or misrouted completion) — a cookie that is not
 *   one of the queue pair's records is reported before it is followed;
 * - each status is the one the device's fault counter gives (fail_every,
 *   partial_every count the copies executed, device-wide: the
 *   configurations with faults have one queue pair) with its byte count
 *   (len / 2 or 0; a whole copy's, len, is the caller's and not read,
 *   hw/hw.h) and error, never fatal; FLUSHED, with
 *   DOCA_ERROR_SHUTDOWN, exactly where the queue pair's own flush could
 *   reach (the rule at flush_window): never for a copy whose completion
 *   was taken before that flush, never before an executed one, and for
 *   every copy posted after it (on an inline queue pair, for every copy
 *   not taken before it);
 * - the destination holds the source's bytes up to the byte count and
 *   nothing was written past it (the rest of the copy and GUARD bytes
 *   beyond it keep their poison);
 * - poll and reap return at most the max asked; reap links every record
 *   it returns (a record's link is poisoned after it is posted), sets
 *   its count of odd completions (at most n) and hands each completion
 *   that is not a whole copy in odd[] in order; its whole ones are
 *   checked as HW_CQE_OK with every byte;
 * - post takes every descriptor while fewer than the depth are
 *   outstanding (the rings grow to the depth), and with ring_max at least
 *   one when none is;
 * - after the flush every posted copy has its one completion;
 * - a hang: no completion for STALL_S seconds while a round runs (a lost
 *   wake-up of the engine thread, or a completion the device never
 *   gives), reported by the watchdog thread, which ends the run.
 * After a violation the run ends at once (_exit, no teardown): a device
 * that broke its contract may hold descriptors it will never complete.
 *
 *   stress_sw_qp [--seconds S] [--seed N] [--sabotage order|data|lost]
 *
 * --sabotage (a harness fault, once, at the SABOTAGE_AT-th completion):
 * order: the checker expects the wrong next id; data: one destination
 * byte is flipped after the copy and before its check; lost: the checker
 * drops one completion from its tally. Each must be reported.
 *
 * It links the internal library (the device's private headers).
 */
#include "stress_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/sw/sw.h"

#define DEPTH 64u      /* each queue pair's depth: most copies outstanding */
#define SLOTS 1024u    /* records a queue pair: id's record is id % SLOTS */
#define LEN_MAX 5000u
#define GUARD 8u       /* bytes past a copy that must keep their poison */
#define SLOT_BYTES (LEN_MAX + GUARD)
#define SRC_SPAN 4093u /* a copy's source starts at a prime's residue */
#define QPS_MAX 3u
#define BURST_MAX 24u
#define TAKE_MAX 40u
#define PAUSE_ONE_IN 2000u
#define PAUSE_US_MAX 3000u
#define ROUND_S_MAX 2.0
#define STALL_S 20u
#define SABOTAGE_AT 1000u
#define ODD_UNSET UINT32_MAX

/* What a record's link holds between its post and its reap. */
#define LINK_POISON ((struct rec *)(uintptr_t)0x5a5a5a5a5a5a5a5aull)

/* A device configuration: its open string's values and its queue pairs.
 * The faults count copies device-wide, so their configurations have one. */
struct config {
	uint32_t engines;
	uint32_t ring_max; /* 0: the rings grow to the depth */
	uint32_t fail_every;
	uint32_t partial_every;
	unsigned qps;
};

static const struct config configs[] = {
	{ .engines = 1, .qps = 1 },
	{ .engines = 1, .qps = 3 },
	{ .engines = 2, .qps = 3 },
	{ .engines = 1, .ring_max = 4, .qps = 3 },
	{ .engines = 1, .ring_max = 8, .qps = 3 },
	{ .engines = 1, .fail_every = 7, .partial_every = 11, .qps = 1 },
	{ .engines = 1, .fail_every = 5, .partial_every = 3, .qps = 1 },
	{ .engines = 1, .ring_max = 8, .fail_every = 5, .partial_every = 3, .qps = 1 },
	{ .engines = 0, .qps = 3 },
	{ .engines = 0, .ring_max = 8, .fail_every = 5, .partial_every = 3, .qps = 1 },
};
#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

/* @p cfg's open string. */
static void open_string(const struct config *cfg, char *out, size_t cap)
{
	int len = snprintf(out, cap, "engines=%u", cfg->engines);

	if (cfg->ring_max != 0)
		len += snprintf(out + len, cap - (size_t)len, ",ring_max=%u", cfg->ring_max);
	if (cfg->fail_every | cfg->partial_every)
		snprintf(out + len, cap - (size_t)len, ",fail_every=%u,partial_every=%u", cfg->fail_every,
			 cfg->partial_every);
}

/* Where post_chain finds a copy's address: at offset 0 of this. */
struct data_ref {
	void *addr;
};

/* One copy. Its address is its cookie; post_chain reads it through
 * chain_shape, reap links it through next. */
struct rec {
	struct rec *next;
	uint64_t id;
	uint64_t len;
	struct data_ref *src, *dst;
	struct data_ref src_ref, dst_ref;
};

static const struct hw_chain chain_shape = {
	.next = offsetof(struct rec, next),
	.len = offsetof(struct rec, len),
	.src = offsetof(struct rec, src),
	.dst = offsetof(struct rec, dst),
	.data = offsetof(struct data_ref, addr),
};

/* One queue pair of a round. */
struct qp_run {
	unsigned index;
	struct hw_qp *qp;
	struct rec *recs;     /* SLOTS */
	uint8_t *dst;         /* SLOTS destinations of SLOT_BYTES */
	uint64_t posted;      /* ids below it posted */
	uint64_t expect;      /* the id the next completion must carry */
	uint64_t taken;       /* completions counted */
	/* its flush's window (flush_window): ids from flush_covers on may
	 * be FLUSHED, ids from flush_from on must be; both UINT64_MAX until
	 * this queue pair's flush */
	uint64_t flush_covers;
	uint64_t flush_from;
	bool flushed_seen;
};

/* The run's totals, for the summary. */
struct totals {
	unsigned long rounds;
	unsigned long long completions, whole, failed, partial, flushed, polls, reaps, pauses;
};

/* The whole run (this thread's, except the atomics). */
struct harness {
	struct stress_opts opts;
	uint8_t *source;     /* SRC_SPAN + LEN_MAX bytes of the run's pattern */
	struct rec *recs[QPS_MAX];
	uint8_t *dst[QPS_MAX];
	struct totals sum;
	bool sabotaged;
	/* the round being run */
	const struct config *cfg;
	char params[128];
	struct rng rng;
	struct qp_run qps[QPS_MAX];
	uint64_t executed;   /* copies executed: the device's fault counter, our copy */
	/* the watchdog's: completions taken (any progress), the round and
	 * its configuration (an index of configs), quit */
	atomic_ulong progress;
	atomic_ulong round;
	atomic_uint config;
	atomic_bool quit;
};

static uint8_t *dst_of(const struct qp_run *q, uint64_t id)
{
	return q->dst + (size_t)(id % SLOTS) * SLOT_BYTES;
}

static const uint8_t *source_of(const struct harness *h, const struct qp_run *q, uint64_t id)
{
	return h->source + (id * 7u + q->index * 1361u) % SRC_SPAN;
}

/* True once per run: the sabotage of @p kind is due now. */
static bool sabotage_due(struct harness *h, enum sabotage kind)
{
	if (h->opts.sabotage != kind || h->sabotaged || h->sum.completions < SABOTAGE_AT)
		return false;
	h->sabotaged = true;
	return true;
}

static void print_summary(const struct harness *h)
{
	bool pass = stress_violation_count() == 0;
	const struct totals *t = &h->sum;

	printf("stress_sw_qp: %s seed=%llu %.1fs rounds=%lu configs=%zu completions=%llu whole=%llu failed=%llu "
	       "partial=%llu flushed=%llu polls=%llu reaps=%llu pauses=%llu violations=%lu\n",
	       pass ? "PASS" : "FAIL", (unsigned long long)h->opts.seed, h->opts.seconds, t->rounds, NCONFIGS,
	       t->completions, t->whole, t->failed, t->partial, t->flushed, t->polls, t->reaps, t->pauses,
	       stress_violation_count());
	fflush(stdout);
}

/* ---- the checker ---- */

/* The record @p cookie names, if it is one of @p q's; else NULL. */
static struct rec *record_of(const struct qp_run *q, uint64_t cookie)
{
	uintptr_t at = (uintptr_t)cookie, first = (uintptr_t)q->recs;

	if (at < first || at >= first + SLOTS * sizeof(struct rec) || (at - first) % sizeof(struct rec) != 0)
		return NULL;
	return (struct rec *)at;
}

/* What the device must report for @p r, executed now. */
static void predict(struct harness *h, const struct rec *r, uint32_t *status, uint64_t *bytes)
{
	const struct config *cfg = h->cfg;

	*status = HW_CQE_OK;
	*bytes = r->len;
	if ((cfg->fail_every | cfg->partial_every) == 0)
		return;
	uint64_t k = ++h->executed;

	if (cfg->fail_every != 0 && k % cfg->fail_every == 0) {
		*status = HW_CQE_FAILED;
		*bytes = 0;
	} else if (cfg->partial_every != 0 && k % cfg->partial_every == 0) {
		*status = HW_CQE_PARTIAL;
		*bytes = r->len / 2u;
	}
}

/* The destination of @p r: the source's bytes up to @p bytes, its poison
 * from there to GUARD bytes past the copy. */
static void check_data(struct harness *h, const struct qp_run *q, const struct rec *r, uint64_t bytes)
{
	uint8_t *dst = dst_of(q, r->id);

	if (bytes != 0 && sabotage_due(h, SABOTAGE_DATA))
		dst[bytes - 1u] ^= 0xff;
	if (memcmp(dst, source_of(h, q, r->id), bytes) != 0)
		stress_violation("round %lu (%s) qp %u id %llu: the destination does not hold the source's first %llu "
				 "bytes", h->sum.rounds, h->params, q->index, (unsigned long long)r->id,
				 (unsigned long long)bytes);
	if (!stress_all_poison(dst + bytes, r->len + GUARD - bytes))
		stress_violation("round %lu (%s) qp %u id %llu: written past the %llu bytes reported (len %llu)",
				 h->sum.rounds, h->params, q->index, (unsigned long long)r->id,
				 (unsigned long long)bytes, (unsigned long long)r->len);
}

/* One completion @p c of @p q, for the record @p r it names. */
static void check_completion(struct harness *h, struct qp_run *q, const struct hw_cqe *c, const struct rec *r)
{
	uint64_t want_id = q->expect;

	if (sabotage_due(h, SABOTAGE_LOST))
		return; /* as if it never came */
	if (sabotage_due(h, SABOTAGE_ORDER))
		want_id++;
	if (r->id != want_id)
		stress_violation("round %lu (%s) qp %u: the completion of id %llu came where id %llu was next (lost, "
				 "doubled or out of order)", h->sum.rounds, h->params, q->index,
				 (unsigned long long)r->id, (unsigned long long)want_id);
	q->expect = r->id + 1u; /* one fault, one violation */
	q->taken++;
	h->sum.completions++;
	if (c->status == HW_CQE_FLUSHED) {
		h->sum.flushed++;
		if (r->id < q->flush_covers)
			stress_violation("round %lu (%s) qp %u id %llu: FLUSHED, but %s", h->sum.rounds, h->params,
					 q->index, (unsigned long long)r->id,
					 q->flush_covers == UINT64_MAX ? "this queue pair was not flushed (yet)"
								       : "taken before its queue pair's flush");
		if (c->error != DOCA_ERROR_SHUTDOWN)
			stress_violation("round %lu (%s) qp %u id %llu: FLUSHED with error %d, not SHUTDOWN",
					 h->sum.rounds, h->params, q->index, (unsigned long long)r->id, (int)c->error);
		q->flushed_seen = true;
		check_data(h, q, r, 0); /* never started: nothing written */
		return;
	}
	if (q->flushed_seen || r->id >= q->flush_from)
		stress_violation("round %lu (%s) qp %u id %llu: executed (status %u) %s", h->sum.rounds, h->params,
				 q->index, (unsigned long long)r->id, c->status,
				 q->flushed_seen ? "after a FLUSHED one" : "though not started before its queue pair's flush");
	uint32_t status;
	uint64_t bytes;

	predict(h, r, &status, &bytes);
	h->sum.whole += status == HW_CQE_OK;
	h->sum.failed += status == HW_CQE_FAILED;
	h->sum.partial += status == HW_CQE_PARTIAL;
	doca_error_t want_error = status == HW_CQE_OK ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED;
	/* a whole copy's bytes are its len, which the caller holds: not
	 * read (hw/hw.h), and an engine's CQ does not carry them */
	bool bytes_read = status != HW_CQE_OK;

	if (c->status != status || (bytes_read && c->bytes != bytes) || c->fatal || c->error != want_error)
		stress_violation("round %lu (%s) qp %u id %llu len %llu: status %u bytes %llu error %d fatal %d; want "
				 "%u %llu %d 0", h->sum.rounds, h->params, q->index, (unsigned long long)r->id,
				 (unsigned long long)r->len, c->status, (unsigned long long)c->bytes, (int)c->error,
				 (int)c->fatal, status, (unsigned long long)bytes, (int)want_error);
	check_data(h, q, r, bytes);
}

/* ---- posting and taking ---- */

static uint32_t draw_len(struct rng *g)
{
	uint32_t x = rng_below(g, 100);

	if (x < 70)
		return 1u + rng_below(g, 64);
	if (x < 90)
		return 100u + rng_below(g, 924);
	return 1024u + rng_below(g, LEN_MAX - 1024u);
}

/* Post a burst of copies to @p q (as many as the depth leaves room for),
 * doorbell and kick. */
static void post_burst(struct harness *h, struct qp_run *q)
{
	uint32_t outstanding = (uint32_t)(q->posted - q->expect);
	uint32_t n = 1u + rng_below(&h->rng, BURST_MAX);
	struct hw_desc descs[BURST_MAX];

	if (n > DEPTH - outstanding)
		n = DEPTH - outstanding;
	if (n == 0)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t id = q->posted + i;
		struct rec *r = &q->recs[id % SLOTS];
		uint8_t *dst = dst_of(q, id);

		r->id = id;
		r->len = draw_len(&h->rng);
		r->next = LINK_POISON;
		r->src_ref.addr = (void *)source_of(h, q, id);
		r->dst_ref.addr = dst;
		r->src = &r->src_ref;
		r->dst = &r->dst_ref;
		memset(dst, STRESS_POISON, r->len + GUARD);
		descs[i] = (struct hw_desc){ .cookie = (uint64_t)(uintptr_t)r, .src = r->src_ref.addr, .dst = dst,
					     .len = r->len };
	}
	uint32_t k;

	if (rng_pct(&h->rng, 50)) {
		for (uint32_t i = 0; i + 1u < n; i++)
			((struct rec *)(uintptr_t)descs[i].cookie)->next = (struct rec *)(uintptr_t)descs[i + 1u].cookie;
		((struct rec *)(uintptr_t)descs[n - 1u].cookie)->next = NULL;
		k = hw_qp_post_chain(q->qp, (const void *)(uintptr_t)descs[0].cookie, n, &chain_shape);
		/* the SQ holds the copies by value: the links are the reap's
		 * again, poisoned so a record it does not link shows */
		for (uint32_t i = 0; i < n; i++)
			((struct rec *)(uintptr_t)descs[i].cookie)->next = LINK_POISON;
	} else {
		k = hw_qp_post(q->qp, descs, n);
	}
	if (k > n || (h->cfg->ring_max == 0 && k != n) || (k == 0 && outstanding == 0))
		stress_violation("round %lu (%s) qp %u: post took %u of %u copies with %u of depth %u outstanding",
				 h->sum.rounds, h->params, q->index, k, n, outstanding, DEPTH);
	q->posted += k;
	hw_qp_doorbell(q->qp);
	hw_qp_kick(q->qp);
}

/* Check @p c, the completion of the record at @p cookie. */
static void check_cookie(struct harness *h, struct qp_run *q, const struct hw_cqe *c)
{
	const struct rec *r = record_of(q, c->cookie);

	if (r == NULL)
		stress_violation("round %lu (%s) qp %u: a completion's cookie %#llx is none of its records",
				 h->sum.rounds, h->params, q->index, (unsigned long long)c->cookie);
	else
		check_completion(h, q, c, r);
}

static uint32_t take_by_poll(struct harness *h, struct qp_run *q, uint32_t max)
{
	struct hw_cqe cqes[DEPTH];
	uint32_t n = hw_qp_poll(q->qp, cqes, max);

	h->sum.polls++;
	if (n > max) {
		stress_violation("round %lu (%s) qp %u: poll returned %u of max %u", h->sum.rounds, h->params,
				 q->index, n, max);
		return n;
	}
	for (uint32_t i = 0; i < n; i++)
		check_cookie(h, q, &cqes[i]);
	return n;
}

static uint32_t take_by_reap(struct harness *h, struct qp_run *q, uint32_t max)
{
	struct hw_cqe odd[DEPTH];
	struct rec *head = LINK_POISON, *vec[DEPTH];
	void *link = &head;
	uint32_t nodd = ODD_UNSET;
	uint32_t n = hw_qp_reap(q->qp, &link, offsetof(struct rec, next), max, vec, odd, &nodd);
	struct rec *r = head;
	uint32_t o = 0;

	h->sum.reaps++;
	if (n > max || nodd > n) {
		stress_violation("round %lu (%s) qp %u: reap returned %u of max %u, %u odd", h->sum.rounds, h->params,
				 q->index, n, max, nodd);
		return n;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (record_of(q, (uint64_t)(uintptr_t)r) == NULL) {
			stress_violation("round %lu (%s) qp %u: reap's link %u of %u is %p, none of its records",
					 h->sum.rounds, h->params, q->index, i, n, (void *)r);
			return n;
		}
		if (vec[i] != r) {
			stress_violation("round %lu (%s) qp %u: reap's record %u of %u in hand is %p, its link %p",
					 h->sum.rounds, h->params, q->index, i, n, (void *)vec[i], (void *)r);
			return n;
		}
		/* the last one's link is left unwritten (the caller ends the list) */
		struct rec *after = i + 1u < n ? r->next : NULL;

		if (o < nodd && odd[o].cookie == (uint64_t)(uintptr_t)r) {
			check_completion(h, q, &odd[o++], r);
		} else {
			struct hw_cqe whole = { .cookie = (uint64_t)(uintptr_t)r, .bytes = r->len,
						.status = HW_CQE_OK, .error = DOCA_SUCCESS };

			check_completion(h, q, &whole, r);
		}
		r = after;
	}
	if (o != nodd)
		stress_violation("round %lu (%s) qp %u: reap gave %u odd completions, %u of them not of its records "
				 "in order", h->sum.rounds, h->params, q->index, nodd, nodd - o);
	return n;
}

/* Take 1..TAKE_MAX completions of @p q by poll or by reap (reap only on a
 * qp that has it, hw_qp.reaps_whole: an engine's; an inline qp's poll
 * executes its descriptors). */
static void take_some(struct harness *h, struct qp_run *q)
{
	uint32_t max = 1u + rng_below(&h->rng, TAKE_MAX);
	bool by_poll = !q->qp->reaps_whole || rng_pct(&h->rng, 50);
	uint32_t n = by_poll ? take_by_poll(h, q, max) : take_by_reap(h, q, max);

	if (n != 0)
		atomic_fetch_add_explicit(&h->progress, 1, memory_order_relaxed);
}

/* ---- the watchdog ---- */

/* No completion in STALL_S seconds' worth of the watchdog's own 100 ms
 * ticks in a round: a hang, reported; the run ends here (the main thread
 * is stuck in its loop). Ticks, not the wall clock: a process or VM
 * frozen for longer than that must not read as a hang when it resumes,
 * before the main thread has run again. */
static void *watchdog_main(void *arg)
{
	struct harness *h = arg;
	unsigned long seen = atomic_load(&h->progress);
	unsigned idle_ticks = 0;

	while (!atomic_load(&h->quit)) {
		stress_sleep_us(100000);
		unsigned long now_progress = atomic_load(&h->progress);

		if (now_progress != seen) {
			seen = now_progress;
			idle_ticks = 0;
			continue;
		}
		if (++idle_ticks < STALL_S * 10u)
			continue;
		/* printed here, not counted by stress_violation: the main
		 * thread ends the run at the first count it sees and would cut
		 * this report short */
		char params[128];
		const struct config *cfg = &configs[atomic_load(&h->config)];

		open_string(cfg, params, sizeof(params));
		fprintf(stderr, "VIOLATION: round %lu (%s, qps=%u): no completion for %u s: a hang (a lost "
			"wake-up of the engine thread, or a completion the device never gives)\n",
			atomic_load(&h->round), params, cfg->qps, STALL_S);
		printf("stress_sw_qp: FAIL seed=%llu %.1fs violations=%lu (watchdog)\n",
		       (unsigned long long)h->opts.seed, h->opts.seconds, stress_violation_count() + 1u);
		fflush(stdout);
		_exit(1);
	}
	return NULL;
}

/* ---- rounds ---- */

static void no_wake(void *arg, hw_unread_fn unread, const void *cq)
{
	(void)arg;
	(void)unread;
	(void)cq;
}

/* The run ends at its first violation, without a teardown (see the top). */
static void end_if_violated(struct harness *h)
{
	if (stress_violation_count() == 0)
		return;
	fflush(stderr);
	print_summary(h);
	_exit(1);
}

/*
 * The window of @p q's flush, set as the flush is called (this thread
 * posts and takes, so nothing of q moves meanwhile). hw.h: every
 * descriptor the device has not started completes FLUSHED, started ones
 * normally, and every later post is flushed. The sw device's flush sets
 * q's own flag (sw_qp_flush), and its executor reads that flag for each
 * descriptor as it starts it — an engine thread as it takes it from the
 * SQ, an inline poll as it executes it (sw_qp_take_due, sw_run_now) — in
 * SQ order. So, for q's ids (its completions are checked in id order):
 * - below flush_covers, q->expect at the flush (completions taken before
 *   it, started before it): never FLUSHED — neither before q's flush nor
 *   by another queue pair's flush;
 * - from flush_covers to flush_from: executed (started by an engine
 *   thread before the flush) up to some id, FLUSHED from there on;
 * - from flush_from on: FLUSHED. That is q->posted at the flush (posted
 *   after it) on an engine queue pair; on an inline one nothing starts
 *   outside this thread's polls, so every copy not taken is unstarted and
 *   flush_from is flush_covers.
 */
static void flush_window(struct harness *h, struct qp_run *q)
{
	q->flush_covers = q->expect;
	q->flush_from = h->cfg->engines == 0 ? q->expect : q->posted;
}

/* Take every completion of @p q, while the queue pairs from @p busy_from
 * on keep their traffic. */
static void drain(struct harness *h, struct qp_run *q, unsigned busy_from)
{
	while (q->expect < q->posted) {
		take_some(h, q);
		for (unsigned j = busy_from; j < h->cfg->qps; j++) {
			if (rng_below(&h->rng, 3) == 0)
				post_burst(h, &h->qps[j]);
			if (rng_below(&h->rng, 2) == 0)
				take_some(h, &h->qps[j]);
		}
		end_if_violated(h);
	}
}

/* The flush (see the top): every completion taken, each copy's one. */
static void flush_and_drain(struct harness *h)
{
	for (unsigned i = 0; i < h->cfg->qps; i++) {
		struct qp_run *q = &h->qps[i];

		post_burst(h, q);
		post_burst(h, q);
		flush_window(h, q);
		hw_sw_ops.flush(q->qp);
		post_burst(h, q);
		end_if_violated(h);
		drain(h, q, i + 1u);
		if (q->taken != q->posted)
			stress_violation("round %lu (%s) qp %u: %llu completions for %llu copies posted", h->sum.rounds,
					 h->params, q->index, (unsigned long long)q->taken,
					 (unsigned long long)q->posted);
		/* the queue pairs not flushed yet: a burst posted after q's
		 * flush, and taken — none FLUSHED, unless the flush reached
		 * the wrong queue pair */
		for (unsigned j = i + 1u; j < h->cfg->qps; j++) {
			drain(h, &h->qps[j], h->cfg->qps);
			post_burst(h, &h->qps[j]);
			drain(h, &h->qps[j], h->cfg->qps);
		}
	}
	end_if_violated(h);
}

static void run_round(struct harness *h, const struct config *cfg, double seconds)
{
	struct hw_dev *dev;
	struct hw_qp_attr attr = { .depth = DEPTH, .wake = no_wake };

	h->sum.rounds++;
	atomic_store(&h->config, (unsigned)(cfg - configs));
	atomic_store(&h->round, h->sum.rounds);
	h->cfg = cfg;
	open_string(cfg, h->params, sizeof(h->params));
	rng_init(&h->rng, h->opts.seed, h->sum.rounds);
	h->executed = 0;
	if (hw_sw_ops.open("sw0", h->params, &dev) != DOCA_SUCCESS)
		stress_fatal("round %lu: the sw device refused \"%s\"", h->sum.rounds, h->params);
	for (unsigned i = 0; i < cfg->qps; i++) {
		h->qps[i] = (struct qp_run){ .index = i, .recs = h->recs[i], .dst = h->dst[i],
					    .flush_covers = UINT64_MAX, .flush_from = UINT64_MAX };
		if (hw_sw_ops.qp_create(dev, &attr, &h->qps[i].qp) != DOCA_SUCCESS)
			stress_fatal("round %lu (%s): no queue pair %u", h->sum.rounds, h->params, i);
	}
	uint64_t end = stress_now_ns() + (uint64_t)(seconds * 1e9);

	while (stress_now_ns() < end) {
		for (unsigned i = 0; i < cfg->qps; i++) {
			if (rng_below(&h->rng, 3) != 0)
				post_burst(h, &h->qps[i]);
			if (rng_below(&h->rng, 4) != 0)
				take_some(h, &h->qps[i]);
		}
		end_if_violated(h);
		if (rng_below(&h->rng, PAUSE_ONE_IN) == 0) {
			/* the engine thread may go to sleep: the next kick must wake it */
			h->sum.pauses++;
			stress_sleep_us(rng_below(&h->rng, PAUSE_US_MAX));
		}
	}
	flush_and_drain(h);
	for (unsigned i = 0; i < cfg->qps; i++)
		hw_sw_ops.qp_destroy(h->qps[i].qp);
	hw_sw_ops.close(dev);
}

int main(int argc, char **argv)
{
	static struct harness h;
	pthread_t watchdog;

	stress_parse_kinds(argc, argv, &h.opts,
			   STRESS_KIND(SABOTAGE_ORDER) | STRESS_KIND(SABOTAGE_DATA) | STRESS_KIND(SABOTAGE_LOST));
	stress_watchdog(h.opts.seconds);
	h.source = malloc(SRC_SPAN + LEN_MAX);
	if (h.source == NULL)
		stress_fatal("no memory for the source");
	stress_pattern(h.opts.seed, h.source, SRC_SPAN + LEN_MAX);
	for (unsigned i = 0; i < QPS_MAX; i++) {
		h.recs[i] = calloc(SLOTS, sizeof(struct rec));
		h.dst[i] = malloc((size_t)SLOTS * SLOT_BYTES);
		if (h.recs[i] == NULL || h.dst[i] == NULL)
			stress_fatal("no memory for queue pair %u's records", i);
	}
	if (pthread_create(&watchdog, NULL, watchdog_main, &h) != 0)
		stress_fatal("pthread_create");
	double round_s = h.opts.seconds / NCONFIGS;
	uint64_t end = stress_now_ns() + (uint64_t)(h.opts.seconds * 1e9);

	if (round_s > ROUND_S_MAX)
		round_s = ROUND_S_MAX;
	/* every configuration once, then around again until the time is up */
	for (unsigned long i = 0; i < NCONFIGS || stress_now_ns() < end; i++)
		run_round(&h, &configs[i % NCONFIGS], round_s);
	atomic_store(&h.quit, true);
	pthread_join(watchdog, NULL);
	for (unsigned i = 0; i < QPS_MAX; i++) {
		free(h.recs[i]);
		free(h.dst[i]);
	}
	free(h.source);
	print_summary(&h);
	if (h.opts.sabotage != SABOTAGE_NONE && !h.sabotaged) {
		/* not a detection: a run that never sabotaged proves nothing */
		fprintf(stderr, "ERROR: the sabotage never came (fewer than %u completions)\n", SABOTAGE_AT);
		return 2;
	}
	return stress_violation_count() == 0 ? 0 : 1;
}
