/*
 * tests/api/ready_index.c — the PE's ready index (engine/engine.h,
 * PE_READY_INDEX) hands out exactly the ready list's events: each task's
 * event once, per context in submission order, never one past an event
 * the index does not hold. The index names a prefix of the ready list, so
 * a poll's events may join it only when it reaches the list's old tail
 * (pe_index_ready, engine/pe_progress.c); these cases fail if that test
 * is dropped. The verdicts are exact and do not depend on timing: the
 * deterministic case progresses until the counted events are ready, the
 * random cases drain everything before they check.
 */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

/* Progress until @p n more events are ready; the test fails after
 * API_WAIT_MS. The short sleeps let the engine finish a phase's copies
 * so that one poll usually reaps them all (the state the case is after);
 * the verdict does not depend on them. */
static void progress_until_ready(struct doca_pe *pe, uint32_t n)
{
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	uint32_t done = 0;

	while (done < n && now_ns() < deadline) {
		sleep_ms(1);
		done += (uint32_t)doca_pe_progress(pe);
	}
	cr_assert_eq(done, n, "%u of %u ready", done, n);
}

/* Ctx A on an engine: 250 events polled onto an empty list (indexed).
 * Sibling B: 10 events, which do not fit (260 > 256): not indexed. Then
 * A: 3 more, which fit, but the index does not reach B's tail, so they
 * must not join it. One get returns exactly A0..A249, B0..B9, A250..A252
 * (an index that took A's 3 would skip B's 10 and lose them). A few
 * rounds, each on a drained list, as the engine may split a phase over
 * polls. */
Test(ready_index, a_poll_after_one_that_did_not_fit_is_not_indexed)
{
	enum { ROUNDS = 4, A1 = 250, B = 10, A2 = 3, ALL = A1 + B + A2 };
	struct api_fixture f;
	struct api_sibling b;
	struct doca_event *evs[ALL + 1];
	uint64_t want[ALL];

	fixture_init_started(&f, "sw0:engines=1", 64, A1 + A2);
	sibling_init(&b, &f, B);
	for (uint32_t round = 0; round < ROUNDS; round++) {
		uint32_t n = 0;

		for (uint32_t i = 0; i < A1; i++, n++)
			assert_ok(submit_copy(f.ctx, f.src, f.dst, want[n] = 1000 + i, 0));
		progress_until_ready(f.pe, A1);
		for (uint32_t i = 0; i < B; i++, n++)
			assert_ok(submit_copy(b.ctx, b.src, b.dst, want[n] = 2000 + i, 0));
		progress_until_ready(f.pe, B);
		for (uint32_t i = 0; i < A2; i++, n++)
			assert_ok(submit_copy(f.ctx, f.src, f.dst, want[n] = 1000 + A1 + i, 0));
		progress_until_ready(f.pe, A2);

		uint32_t got = doca_pe_get_events(f.pe, evs, ALL + 1);

		cr_assert_eq(got, ALL, "round %u: %u of %u taken", round, got, ALL);
		for (uint32_t i = 0; i < got; i++)
			cr_assert_eq(doca_event_get_user_data(evs[i]).u64, want[i], "round %u, place %u", round, i);
		doca_event_free_bulk(evs, got);
		cr_assert_null(doca_pe_get_event(f.pe), "round %u: nothing left", round);
	}
	sibling_fini_with_fixture(&b, &f);
}

/*
 * Random multi-context case: NCTX contexts on one PE (NSIB siblings and
 * the fixture's ctx without a callback, one with an event callback that
 * takes 0-3 batches of the others' events re-entrantly), a random getter
 * each step (get_event, get_events, get_events_ok and, after has_error,
 * a get_event that must return the failed event), random max, progress
 * between gets (so polls land on a partly taken index), frees on a second
 * thread or inline (slots recycled into new tasks while the index holds
 * addresses), and stops of a sibling while its events are ready, with a
 * restart once it is IDLE. Each event carries (ctx << 40 | seq). A run's
 * random steps stop at STEPS, EVENTS or STEP_NS, whichever comes first
 * (that bounds the work, not the verdict); then everything is drained and
 * the exact sequences are checked.
 */
enum { NSIB = 3, NCTX = NSIB + 2, DEPTH = 200, QCAP = 1 << 16, TAKE = 80 };
enum { STEPS = 40000, EVENTS = 50000 };
#define STEP_NS 500000000ull /* 0.5 s of random steps per configuration */

struct freer {
	pthread_mutex_t lock;
	struct doca_event *q[QCAP];
	uint32_t head, tail;
	atomic_bool quit;
	pthread_t thr;
};

static struct freer g_fr;
static struct doca_pe *g_pe;
static struct doca_ctx *g_ctxs[NCTX];
static uint64_t g_expect[NCTX];    /* the next seq per ctx */
static uint64_t g_submitted[NCTX]; /* seqs handed out per ctx */
static uint64_t g_out;             /* events checked */
static uint32_t g_rng;
static bool g_inline_free; /* free on the getting thread */

static uint32_t rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 17;
	g_rng ^= g_rng << 5;
	return g_rng;
}

static void *freer_main(void *arg)
{
	struct doca_event *batch[64];

	(void)arg;
	for (;;) {
		uint32_t n = 0;

		pthread_mutex_lock(&g_fr.lock);
		while (g_fr.head != g_fr.tail && n < 64)
			batch[n++] = g_fr.q[g_fr.head++ % QCAP];
		pthread_mutex_unlock(&g_fr.lock);
		if (n == 0) {
			if (atomic_load(&g_fr.quit))
				return NULL;
			sched_yield();
			continue;
		}
		if (n > 1 && (n & 1))
			doca_event_free_bulk(batch, n);
		else
			for (uint32_t i = 0; i < n; i++)
				doca_event_free(batch[i]);
	}
}

static void push_free(struct doca_event **evs, uint32_t n)
{
	if (g_inline_free) {
		doca_event_free_bulk(evs, n);
		return;
	}
	pthread_mutex_lock(&g_fr.lock);
	for (uint32_t i = 0; i < n; i++) {
		cr_assert(g_fr.tail - g_fr.head < QCAP);
		g_fr.q[g_fr.tail++ % QCAP] = evs[i];
	}
	pthread_mutex_unlock(&g_fr.lock);
}

static int ctx_index(const struct doca_ctx *c)
{
	for (int i = 0; i < NCTX; i++)
		if (g_ctxs[i] == c)
			return i;
	return -1;
}

/* @p ev is its ctx's next event (and a SUCCESS when @p need_ok). */
static void check(struct doca_event *ev, bool need_ok)
{
	cr_assert_not_null(ev);
	uint64_t u = doca_event_get_user_data(ev).u64;
	int ci = (int)(u >> 40);
	uint64_t seq = u & ((1ull << 40) - 1u);

	cr_assert(ci >= 0 && ci < NCTX, "user %llx", (unsigned long long)u);
	cr_assert_eq(ctx_index(doca_event_get_ctx(ev)), ci, "event's ctx");
	cr_assert_eq(seq, g_expect[ci], "ctx %d: got seq %llu, expected %llu", ci, (unsigned long long)seq,
		     (unsigned long long)g_expect[ci]);
	if (need_ok)
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	g_expect[ci]++;
	g_out++;
}

/* One random get of at most @p room events: checked and freed; returns
 * how many. */
static uint32_t take_some(uint32_t room)
{
	struct doca_event *evs[TAKE];
	uint32_t kind = rnd() % 3u, max = 1u + rnd() % (room < TAKE ? room : TAKE), got;
	bool has_error = false;

	if (kind == 0) {
		evs[0] = doca_pe_get_event(g_pe);
		got = evs[0] != NULL;
	} else if (kind == 1) {
		got = doca_pe_get_events(g_pe, evs, max);
	} else {
		got = doca_pe_get_events_ok(g_pe, evs, max, &has_error);
	}
	cr_assert_leq(got, max);
	for (uint32_t i = 0; i < got; i++)
		check(evs[i], kind == 2);
	push_free(evs, got);
	if (!has_error)
		return got;
	cr_assert_lt(got, max, "has_error with max taken");

	struct doca_event *failed = doca_pe_get_event(g_pe);

	cr_assert_not_null(failed, "has_error but nothing first in line");
	cr_assert_neq(doca_event_get_status(failed), DOCA_EVENT_STATUS_SUCCESS, "has_error but the next succeeded");
	check(failed, false);
	push_free(&failed, 1);
	return got + 1u;
}

static void cb(struct doca_event *ev, union doca_data ud)
{
	(void)ud;
	check(ev, false);
	for (uint32_t r = rnd() % 4u; r != 0; r--)
		take_some(1u + rnd() % 40u);
}

static void submit_burst(int ci, struct doca_buf *src, struct doca_buf *dst, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		doca_error_t e = submit_copy(g_ctxs[ci], src, dst, ((uint64_t)ci << 40) | g_submitted[ci], 0);

		if (e != DOCA_SUCCESS) {
			cr_assert(e == DOCA_ERROR_NO_MEMORY || e == DOCA_ERROR_AGAIN || e == DOCA_ERROR_BAD_STATE,
				  "submit: %s", doca_error_get_name(e));
			return;
		}
		g_submitted[ci]++;
	}
}

static void run(const char *dev, bool inline_free, bool stops, uint32_t seed, uint32_t take_one_in)
{
	struct api_fixture f;
	struct api_sibling s[NSIB + 1], *c = &s[NSIB];
	struct doca_buf *srcs[NCTX], *dsts[NCTX];
	bool stopping[NCTX] = { false };

	memset(&g_fr, 0, sizeof(g_fr));
	memset(g_expect, 0, sizeof(g_expect));
	memset(g_submitted, 0, sizeof(g_submitted));
	g_out = 0;
	g_rng = seed;
	g_inline_free = inline_free;
	pthread_mutex_init(&g_fr.lock, NULL);
	cr_assert_eq(pthread_create(&g_fr.thr, NULL, freer_main, NULL), 0);

	fixture_init_started(&f, dev, 64, DEPTH);
	g_pe = f.pe;
	for (int i = 0; i < NSIB; i++)
		sibling_init(&s[i], &f, DEPTH);
	memset(c, 0, sizeof(*c));
	assert_ok(doca_ctx_create(&c->ctx));
	assert_ok(doca_ctx_set_max_tasks(c->ctx, DEPTH / 4));
	assert_ok(doca_ctx_set_dev(c->ctx, f.dev));
	assert_ok(doca_ctx_set_event_cb(c->ctx, cb));
	assert_ok(doca_pe_connect_ctx(f.pe, c->ctx));
	assert_ok(doca_mem_create(c->ctx, 128, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &c->mem));
	assert_ok(doca_buf_create(c->mem, 0, 64, &c->src));
	assert_ok(doca_buf_create(c->mem, 64, 64, &c->dst));
	assert_ok(doca_ctx_start(c->ctx));

	g_ctxs[0] = f.ctx;
	srcs[0] = f.src;
	dsts[0] = f.dst;
	for (int i = 0; i <= NSIB; i++) {
		g_ctxs[1 + i] = s[i].ctx;
		srcs[1 + i] = s[i].src;
		dsts[1 + i] = s[i].dst;
	}

	uint64_t t_end = now_ns() + STEP_NS;

	for (uint32_t step = 0; step < STEPS && g_out < EVENTS && now_ns() < t_end; step++) {
		uint32_t what = rnd() % 16u;

		if (what < 5) {
			int ci = (int)(rnd() % NCTX);

			if (!stopping[ci])
				submit_burst(ci, srcs[ci], dsts[ci], 1u + rnd() % 64u);
		} else if (what < 9) {
			doca_pe_progress(f.pe);
		} else if (what == 9 && stops) {
			int ci = 1 + (int)(rnd() % NSIB); /* a sibling without a callback */

			if (!stopping[ci]) {
				doca_error_t e = doca_ctx_stop(g_ctxs[ci]);

				cr_assert(e == DOCA_SUCCESS || e == DOCA_ERROR_IN_PROGRESS, "stop: %s",
					  doca_error_get_name(e));
				stopping[ci] = true;
			}
		} else if (rnd() % take_one_in == 0) {
			take_some(1u + rnd() % 70u);
		}
		for (int ci = 0; ci < NCTX; ci++) {
			enum doca_ctx_state st;

			if (!stopping[ci])
				continue;
			assert_ok(doca_ctx_get_state(g_ctxs[ci], &st));
			if (st == DOCA_CTX_STATE_IDLE) {
				cr_assert_eq(g_expect[ci], g_submitted[ci], "ctx %d IDLE with %llu of %llu out", ci,
					     (unsigned long long)g_expect[ci], (unsigned long long)g_submitted[ci]);
				assert_ok(doca_ctx_start(g_ctxs[ci]));
				stopping[ci] = false;
			}
		}
	}

	uint64_t want = 0, deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	for (int ci = 0; ci < NCTX; ci++)
		want += g_submitted[ci];
	while (g_out < want && now_ns() < deadline) {
		doca_pe_progress(f.pe);
		while (take_some(TAKE) != 0)
			;
	}
	cr_assert_eq(g_out, want, "%llu of %llu events out", (unsigned long long)g_out, (unsigned long long)want);
	for (int ci = 0; ci < NCTX; ci++)
		cr_assert_eq(g_expect[ci], g_submitted[ci], "ctx %d", ci);
	cr_assert_null(doca_pe_get_event(g_pe));
	cr_log_info("%s, seed %u, a take in %u: %llu events", dev, seed, take_one_in, (unsigned long long)want);
	atomic_store(&g_fr.quit, true);
	pthread_join(g_fr.thr, NULL);
	pthread_mutex_destroy(&g_fr.lock);
	siblings_fini_with_fixture(s, NSIB + 1, &f);
}

/* Each configuration with takes on 1, 1/2, 1/4 and 1/8 of the take steps
 * (rarer takes let the ready list grow past the index, so polls stop
 * fitting), two seeds each. */
static void runs(const char *dev, bool inline_free, bool stops, uint32_t seed)
{
	for (uint32_t take_one_in = 1; take_one_in <= 8; take_one_in *= 2)
		for (uint32_t k = 0; k < 2; k++)
			run(dev, inline_free, stops, seed + 16u * take_one_in + k, take_one_in);
}

#define CASE(name, dev, inl, st, seed)         \
	Test(ready_index, name, .timeout = 60) \
	{                                      \
		runs(dev, inl, st, seed);      \
	}

CASE(random_engines1, "sw0:engines=1", false, false, 12345)
CASE(random_engines1_fail, "sw0:engines=1,fail_every=7", false, false, 23456)
CASE(random_engines2_fail_stops, "sw0:engines=2,fail_every=11", false, true, 34567)
CASE(random_engines1_inline_free_stops, "sw0:engines=1,fail_every=5", true, true, 45678)
CASE(random_inline_dev_stops, "sw0", false, true, 56789)
CASE(random_inline_dev_fail, "sw0:fail_every=3", true, true, 67890)
CASE(random_engines1_partial_stops, "sw0:engines=1,partial_every=9", false, true, 78901)
