/*
 * tests/reliability/faults.c — device faults under load: every task gets
 * exactly one event whose status, error and byte count match what the device
 * did, and the destination holds exactly those bytes; inline and with engine
 * threads, with one and with several submitting threads; a ctx stopped in
 * the middle of a fault storm still reaches IDLE; delay_us holds each
 * descriptor back.
 *
 * Which descriptor is the device's Nth depends on thread timing, but the
 * totals do not: if E descriptors executed (flushed ones are not counted),
 * exactly E / fail_every failed and the multiples of partial_every up to E
 * that are not multiples of fail_every were partial (doca_dev.h).
 */
#include "../api/common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#define STORM_SLOT 256      /* bytes reserved per task in each memory */
#define STORM_MAX_TASKS 64  /* a small pool: submitters meet DOCA_ERROR_AGAIN */
#define GUARD 0xA5

enum outcome { OUT_NONE = 0, OUT_OK, OUT_FAILED, OUT_PARTIAL, OUT_FLUSHED };

struct storm {
	struct api_fixture f;    /* src/dst buffers unused: one pair per task below */
	struct doca_buf **src, **dst;
	size_t *len;
	int ntasks, nthreads;
	_Atomic int accepted, refused;
	_Atomic bool *was_accepted;
	enum outcome *seen;      /* main thread only */
};

struct submitter {
	struct storm *s;
	int first, count;
	pthread_t thread;
};

/* Task i copies len(i) bytes: lengths vary, odd ones too, so len / 2 rounds. */
static size_t task_len(int i)
{
	return 1 + (size_t)(i * 37) % STORM_SLOT;
}

static void storm_init(struct storm *s, const char *dev, int ntasks, int nthreads)
{
	memset(s, 0, sizeof(*s));
	fixture_init(&s->f, dev, (size_t)ntasks * STORM_SLOT, STORM_MAX_TASKS);
	s->ntasks = ntasks;
	s->nthreads = nthreads;
	s->src = calloc((size_t)ntasks, sizeof(*s->src));
	s->dst = calloc((size_t)ntasks, sizeof(*s->dst));
	s->len = calloc((size_t)ntasks, sizeof(*s->len));
	s->was_accepted = calloc((size_t)ntasks, sizeof(*s->was_accepted));
	s->seen = calloc((size_t)ntasks, sizeof(*s->seen));
	cr_assert(s->src && s->dst && s->len && s->was_accepted && s->seen, "out of memory");
	memset(s->f.dst_bytes, GUARD, s->f.len);
	for (int i = 0; i < ntasks; i++) {
		size_t off = (size_t)i * STORM_SLOT;

		s->len[i] = task_len(i);
		assert_ok(doca_buf_create(s->f.src_mem, off, s->len[i], &s->src[i]));
		assert_ok(doca_buf_create(s->f.dst_mem, off, s->len[i], &s->dst[i]));
	}
	assert_ok(doca_ctx_start(s->f.ctx));
}

static void storm_fini(struct storm *s)
{
	stop_and_drain(s->f.ctx, s->f.pe);
	for (int i = 0; i < s->ntasks; i++) {
		assert_ok(doca_buf_destroy(s->src[i]));
		assert_ok(doca_buf_destroy(s->dst[i]));
	}
	fixture_fini(&s->f);
	free(s->src);
	free(s->dst);
	free(s->len);
	free((void *)s->was_accepted);
	free(s->seen);
}

/* Submit tasks [first, first + count); retry on AGAIN; give up at a stop. */
static void *submit_range(void *arg)
{
	struct submitter *sub = arg;
	struct storm *s = sub->s;

	for (int i = sub->first; i < sub->first + sub->count; i++) {
		doca_error_t rc;

		/* Marked before the call: the PE may handle the event before
		 * submit returns. A refusal takes the mark back. */
		atomic_store(&s->was_accepted[i], true);
		while ((rc = submit_copy(s->f.ctx, s->src[i], s->dst[i], (uint64_t)i, 0)) == DOCA_ERROR_AGAIN)
			sched_yield();
		if (rc == DOCA_ERROR_BAD_STATE) { /* stopped: this and later tasks are refused */
			atomic_store(&s->was_accepted[i], false);
			atomic_fetch_add(&s->refused, sub->first + sub->count - i);
			return NULL;
		}
		cr_assert_eq(rc, DOCA_SUCCESS, "submit of task %d: %s", i, doca_error_get_name(rc));
		atomic_fetch_add(&s->accepted, 1);
	}
	return NULL;
}

/* Classify one event and check it against the bytes in its destination. */
static void check_event(struct storm *s, struct doca_event *ev)
{
	uint64_t i = doca_event_get_user_data(ev).u64;
	enum doca_event_status st = doca_event_get_status(ev);
	doca_error_t err = doca_event_get_error(ev);
	size_t bytes = doca_event_get_bytes(ev), len;
	const uint8_t *src, *dst;
	enum outcome out;

	cr_assert_lt(i, (uint64_t)s->ntasks, "event of unknown task %llu", (unsigned long long)i);
	cr_assert(atomic_load(&s->was_accepted[i]), "event of task %llu, which was never accepted",
		  (unsigned long long)i);
	cr_assert_eq(s->seen[i], OUT_NONE, "task %llu got a second event", (unsigned long long)i);
	len = s->len[i];
	src = s->f.src_bytes + i * STORM_SLOT;
	dst = s->f.dst_bytes + i * STORM_SLOT;
	if (st == DOCA_EVENT_STATUS_SUCCESS && err == DOCA_SUCCESS && bytes == len)
		out = OUT_OK;
	else if (st == DOCA_EVENT_STATUS_FAILURE && err == DOCA_ERROR_IO_FAILED && bytes == 0)
		out = OUT_FAILED;
	else if (st == DOCA_EVENT_STATUS_PARTIAL && err == DOCA_ERROR_IO_FAILED && bytes == len / 2)
		out = OUT_PARTIAL;
	else if (st == DOCA_EVENT_STATUS_FAILURE && err == DOCA_ERROR_SHUTDOWN && bytes == 0)
		out = OUT_FLUSHED;
	else
		cr_assert_fail("task %llu (%zu bytes): status %d, %s, %zu bytes is no outcome of the contract",
			       (unsigned long long)i, len, st, doca_error_get_name(err), bytes);
	/* the destination holds exactly the reported bytes of the source */
	cr_assert_eq(memcmp(dst, src, bytes), 0, "task %llu: the first %zu bytes differ from the source",
		     (unsigned long long)i, bytes);
	cr_assert_eq(bytes_mismatch(dst + bytes, len - bytes, GUARD), len - bytes,
		     "task %llu wrote past its %zu reported bytes", (unsigned long long)i, bytes);
	s->seen[i] = out;
}

static int count_outcome(const struct storm *s, enum outcome o)
{
	int n = 0;

	for (int i = 0; i < s->ntasks; i++)
		n += s->seen[i] == o;
	return n;
}

/*
 * Run a storm of ntasks copies on dev from nthreads submitters while this
 * thread progresses and reaps; with stop_after > 0, stop the ctx once that
 * many events were reaped. Then check the totals against the device's rule.
 */
static void run_storm(const char *dev, uint32_t fail_every, uint32_t partial_every, int ntasks, int nthreads,
		      int stop_after)
{
	struct storm s;
	struct submitter subs[8];
	int reaped = 0, per = ntasks / nthreads;
	bool stopped = false;
	uint64_t deadline = now_ns() + 20ull * 1000000000ull;

	cr_assert_leq(nthreads, 8);
	storm_init(&s, dev, ntasks, nthreads);
	fill_pattern(s.f.src_bytes, s.f.len, 77);
	for (int t = 0; t < nthreads; t++) {
		subs[t] = (struct submitter){ .s = &s, .first = t * per, .count = t == nthreads - 1 ? ntasks - t * per : per };
		cr_assert_eq(pthread_create(&subs[t].thread, NULL, submit_range, &subs[t]), 0);
	}
	for (;;) {
		struct doca_event *ev;
		enum doca_ctx_state st;

		doca_pe_progress(s.f.pe);
		while ((ev = doca_pe_get_event(s.f.pe)) != NULL) {
			check_event(&s, ev);
			doca_event_free(ev);
			reaped++;
		}
		if (stop_after > 0 && !stopped && reaped >= stop_after) {
			doca_error_t rc = doca_ctx_stop(s.f.ctx);

			cr_assert(rc == DOCA_SUCCESS || rc == DOCA_ERROR_IN_PROGRESS, "stop: %s", doca_error_get_name(rc));
			stopped = true;
		}
		assert_ok(doca_ctx_get_state(s.f.ctx, &st));
		if (atomic_load(&s.accepted) + atomic_load(&s.refused) == ntasks && reaped == atomic_load(&s.accepted) &&
		    (!stopped || st == DOCA_CTX_STATE_IDLE))
			break;
		cr_assert_lt(now_ns(), deadline, "storm on %s: %d of %d accepted tasks reaped, ctx %s", dev, reaped,
			     atomic_load(&s.accepted), state_name(st));
	}
	for (int t = 0; t < nthreads; t++)
		pthread_join(subs[t].thread, NULL);
	expect_no_event_for(s.f.pe, 20);

	int executed = reaped - count_outcome(&s, OUT_FLUSHED), want_fail = 0, want_partial = 0;

	for (int k = 1; k <= executed; k++) {
		if (fail_every != 0 && k % fail_every == 0)
			want_fail++;
		else if (partial_every != 0 && k % partial_every == 0)
			want_partial++;
	}
	cr_assert_eq(count_outcome(&s, OUT_FAILED), want_fail, "%s: %d of %d executed failed, expected %d", dev,
		     count_outcome(&s, OUT_FAILED), executed, want_fail);
	cr_assert_eq(count_outcome(&s, OUT_PARTIAL), want_partial, "%s: %d of %d executed were partial, expected %d",
		     dev, count_outcome(&s, OUT_PARTIAL), executed, want_partial);
	if (stop_after == 0)
		cr_assert_eq(reaped, ntasks, "%s: %d events for %d tasks", dev, reaped, ntasks);
	storm_fini(&s);
}

Test(reliability_faults, inline_one_submitter)
{
	run_storm("sw0:fail_every=7,partial_every=5", 7, 5, 300, 1, 0);
}

Test(reliability_faults, inline_four_submitters)
{
	run_storm("sw0:fail_every=3,partial_every=4", 3, 4, 400, 4, 0);
}

Test(reliability_faults, one_engine_four_submitters)
{
	run_storm("sw0:engines=1,fail_every=5,partial_every=3", 5, 3, 400, 4, 0);
}

Test(reliability_faults, two_engines_three_submitters)
{
	run_storm("sw0:engines=2,fail_every=4,partial_every=6", 4, 6, 300, 3, 0);
}

Test(reliability_faults, every_descriptor_fails_or_is_partial)
{
	run_storm("sw0:engines=1,fail_every=2,partial_every=1", 2, 1, 200, 2, 0);
}

Test(reliability_faults, stop_mid_storm_inline_reaches_idle)
{
	run_storm("sw0:fail_every=3,partial_every=2", 3, 2, 400, 4, 60);
}

Test(reliability_faults, stop_mid_storm_engines_reaches_idle)
{
	run_storm("sw0:engines=2,fail_every=3,partial_every=2,delay_us=50", 3, 2, 400, 4, 60);
}

/* delay_us: no event earlier than the delay after its submission. */
static void check_delay(const char *dev, unsigned delay_us)
{
	struct api_fixture f;
	uint64_t t0[4];

	fixture_init_started(&f, dev, 4 * 64, 0);
	for (int i = 0; i < 4; i++) {
		struct doca_buf *src, *dst;

		assert_ok(doca_buf_create(f.src_mem, (size_t)i * 64, 64, &src));
		assert_ok(doca_buf_create(f.dst_mem, (size_t)i * 64, 64, &dst));
		t0[i] = now_ns();
		assert_ok(submit_copy(f.ctx, src, dst, (uint64_t)i, 0));
		struct doca_event *ev = wait_event(f.pe);
		uint64_t waited = now_ns() - t0[i];

		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
		cr_assert_geq(waited, (uint64_t)delay_us * 1000u, "%s: event after %llu ns, delay is %u us", dev,
			      (unsigned long long)waited, delay_us);
		doca_event_free(ev);
		assert_ok(doca_buf_destroy(src));
		assert_ok(doca_buf_destroy(dst));
	}
	fixture_fini(&f);
}

Test(reliability_faults, delay_inline)
{
	check_delay("sw0:delay_us=3000", 3000);
}

Test(reliability_faults, delay_engine)
{
	check_delay("sw0:engines=1,delay_us=3000", 3000);
}
