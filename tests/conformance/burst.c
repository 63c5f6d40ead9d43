/*
 * tests/conformance/burst.c — burst completions on the device under test:
 * doca_pe_get_events hands out events in completion order (exactly the set
 * submitted, each once; in submission order where the device completes one
 * context's tasks in order), a max smaller than what is ready leaves the
 * rest for the next call, and doca_event_free_bulk frees events of two
 * contexts of one PE at once (NULL entries skipped) and returns exactly their
 * credits; a bulk free of handles already freed is refused, counted and
 * changes nothing. doca_pe_get_events_ok stops before an event that did
 * not succeed (a partial copy: a short destination with
 * DOCA_TASK_FLAG_ALLOW_PARTIAL), which stays next in line.
 */
#include "tests/conformance/conformance.h"

#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>

/* Not an event: marks a slot of an array doca_pe_get_events must not write. */
#define POISON ((struct doca_event *)&poison_byte)
static const char poison_byte;

/*
 * Does the device complete the tasks of one context in the order they were
 * submitted (from one thread)? The software device gives a context one
 * queue pair served by one executor (inline progress or one engine thread),
 * and a verbs device one RC queue pair, whose completions are ordered. For
 * any other backend only the set of events is checked.
 */
static bool conf_dev_completes_in_order(void)
{
	struct doca_dev_info info;

	conf_dev_info(&info);
	return strcmp(info.backend, "sw") == 0 || strcmp(info.backend, "verbs") == 0;
}

/*
 * Progress and take events with doca_pe_get_events(pe, evs + got, per_call)
 * until @p n are in evs[0..n) (evs has room for n + per_call): each call
 * returns at most per_call and leaves the slot after its window alone, and
 * no more than @p n come. Fails after API_WAIT_MS.
 */
static void reap_in_bursts(struct doca_pe *pe, struct doca_event **evs, uint32_t n, uint32_t per_call)
{
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	uint32_t got = 0;

	while (got < n) {
		uint32_t k;

		(void)doca_pe_progress(pe);
		evs[got + per_call] = POISON;
		k = doca_pe_get_events(pe, evs + got, per_call);
		cr_assert_leq(k, per_call, "doca_pe_get_events returned %u for max %u", k, per_call);
		cr_assert_eq(evs[got + per_call], POISON, "doca_pe_get_events wrote past max");
		got += k;
		cr_assert_leq(got, n, "%u events for %u tasks", got, n);
		cr_assert(got == n || now_ns() < deadline, "%u of %u events within %d ms", got, n, API_WAIT_MS);
	}
}

/* The events of @p ctx among evs[0..n) carry users first, first + 1, ...
 * (in that order when @p ordered, each once in any case), all SUCCESS with
 * @p bytes bytes; @return how many there are. */
static uint32_t check_events_of(struct doca_event *const *evs, uint32_t n, const struct doca_ctx *ctx,
				uint64_t first, uint32_t count, size_t bytes, bool ordered)
{
	uint64_t seen = 0; /* bit i: user first + i */
	uint32_t mine = 0;

	cr_assert_leq(count, 64);
	for (uint32_t i = 0; i < n; i++) {
		if (doca_event_get_ctx(evs[i]) != ctx)
			continue;
		uint64_t user = doca_event_get_user_data(evs[i]).u64;

		cr_assert(user >= first && user < first + count, "event %u: unknown task %llu", i,
			  (unsigned long long)user);
		cr_assert_eq(seen & (1ull << (user - first)), 0, "task %llu: a second event", (unsigned long long)user);
		if (ordered)
			cr_assert_eq(user, first + mine, "event %u is task %llu, task %llu completed first", i,
				     (unsigned long long)user, (unsigned long long)(first + mine));
		cr_assert_eq(doca_event_get_status(evs[i]), DOCA_EVENT_STATUS_SUCCESS, "task %llu: status %d",
			     (unsigned long long)user, (int)doca_event_get_status(evs[i]));
		assert_ok(doca_event_get_error(evs[i]));
		cr_assert_eq(doca_event_get_bytes(evs[i]), bytes);
		seen |= 1ull << (user - first);
		mine++;
	}
	cr_assert_eq(mine, count, "%u events of the context, expected %u", mine, count);
	return mine;
}

/* Exactly @p n more tasks are accepted on @p ctx, then DOCA_ERROR_AGAIN;
 * their events are reaped and freed. */
static void expect_exact_credits(struct doca_ctx *ctx, struct doca_pe *pe, struct doca_buf *src,
				 struct doca_buf *dst, uint32_t n, size_t bytes)
{
	for (uint32_t i = 0; i < n; i++)
		assert_ok(submit_copy(ctx, src, dst, 1000 + i, 0));
	assert_doca(submit_copy(ctx, src, dst, 2000, 0), DOCA_ERROR_AGAIN);
	for (uint32_t i = 0; i < n; i++)
		expect_success_event(pe, 1000 + i, bytes);
}

Test(conf_burst, a_burst_comes_out_in_completion_order)
{
	enum { N = 32 };
	struct api_fixture f;
	struct doca_event *evs[2 * N + 2];

	fixture_init_started(&f, conf_dev(), 64, N);
	for (uint64_t i = 0; i < N; i++)
		conf_submit_ok(f.ctx, f.src, f.dst, i);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, N, 0), DOCA_ERROR_AGAIN);
	reap_in_bursts(f.pe, evs, N, N + 1); /* asks for more than can come */
	check_events_of(evs, N, f.ctx, 0, N, 64, conf_dev_completes_in_order());
	cr_assert_eq(doca_pe_get_events(f.pe, evs, N), 0, "an event beyond the burst");
	doca_event_free_bulk(evs, N);
	expect_exact_credits(f.ctx, f.pe, f.src, f.dst, N, 64);
	fixture_fini(&f);
}

Test(conf_burst, a_max_below_what_is_ready_leaves_the_rest_for_the_next_call)
{
	enum { N = 12, MAX = 5 };
	struct api_fixture f;
	struct doca_event *evs[N + MAX];
	uint64_t deadline;
	uint32_t ready = 0;

	fixture_init_started(&f, conf_dev(), 64, N);
	for (uint64_t i = 0; i < N; i++)
		conf_submit_ok(f.ctx, f.src, f.dst, i);
	/* Every completion is made ready before any is taken. */
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (ready < N) {
		ready += doca_pe_progress(f.pe);
		cr_assert(ready == N || now_ns() < deadline, "%u of %u ready within %d ms", ready, N, API_WAIT_MS);
	}
	cr_assert_eq(ready, N, "doca_pe_progress made %u ready for %u tasks", ready, N);
	for (uint32_t i = 0; i < N + MAX; i++)
		evs[i] = POISON;
	cr_assert_eq(doca_pe_get_events(f.pe, evs, MAX), MAX);
	cr_assert_eq(evs[MAX], POISON, "doca_pe_get_events wrote past max");
	cr_assert_eq(doca_pe_get_events(f.pe, evs + MAX, MAX), MAX);
	cr_assert_eq(doca_pe_get_events(f.pe, evs + 2 * MAX, MAX), N - 2 * MAX, "the rest, and no more");
	cr_assert_eq(evs[N], POISON, "an entry past the count was written");
	cr_assert_eq(doca_pe_get_events(f.pe, evs + N, MAX), 0);
	cr_assert_eq(evs[N], POISON);
	check_events_of(evs, N, f.ctx, 0, N, 64, conf_dev_completes_in_order());
	doca_event_free_bulk(evs, N);
	expect_exact_credits(f.ctx, f.pe, f.src, f.dst, N, 64);
	fixture_fini(&f);
}

Test(conf_burst, free_bulk_of_two_contexts_with_null_entries_returns_exactly_their_credits)
{
	enum { MAX_A = 6, MAX_B = 4, N = MAX_A + MAX_B, SPREAD = 2 * N + 1 };
	struct api_fixture f;
	struct api_sibling s;
	struct doca_event *evs[N + 3], *mixed[SPREAD] = { NULL };
	bool ordered = conf_dev_completes_in_order();
	uint64_t stale = doca_stale_handle_count();

	fixture_init_started(&f, conf_dev(), 64, MAX_A);
	sibling_init(&s, &f, MAX_B);
	/* Interleaved submissions fill both pools. */
	for (uint64_t i = 0; i < MAX_A; i++) {
		conf_submit_ok(f.ctx, f.src, f.dst, i);
		if (i < MAX_B)
			conf_submit_ok(s.ctx, s.src, s.dst, 100 + i);
	}
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 99, 0), DOCA_ERROR_AGAIN);
	assert_doca(submit_copy(s.ctx, s.src, s.dst, 199, 0), DOCA_ERROR_AGAIN);
	reap_in_bursts(f.pe, evs, N, 3);
	check_events_of(evs, N, f.ctx, 0, MAX_A, 64, ordered);
	check_events_of(evs, N, s.ctx, 100, MAX_B, 64, ordered);
	/* NULL first, between every two events, and last. */
	for (uint32_t i = 0; i < N; i++)
		mixed[2 * i + 1] = evs[i];
	/* Taken, not freed: the credits are still out. */
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 99, 0), DOCA_ERROR_AGAIN);
	assert_doca(submit_copy(s.ctx, s.src, s.dst, 199, 0), DOCA_ERROR_AGAIN);
	doca_event_free_bulk(mixed, SPREAD);
	cr_assert_eq(doca_stale_handle_count(), stale, "a held event's free was refused");
	expect_exact_credits(f.ctx, f.pe, f.src, f.dst, MAX_A, 64);
	expect_exact_credits(s.ctx, f.pe, s.src, s.dst, MAX_B, 64);
	sibling_fini_with_fixture(&s, &f);
}

Test(conf_burst, free_bulk_of_freed_handles_is_refused_counted_and_changes_nothing,
     .init = cr_redirect_stderr)
{
	enum { N = 4 };
	struct api_fixture f;
	struct doca_event *old[2 * N], *held[2 * N], *again[N + 2];
	char text[4096];
	int logged = 0;
	uint64_t stale;

	fixture_init_started(&f, conf_dev(), 64, N);
	for (uint64_t i = 0; i < N; i++)
		conf_submit_ok(f.ctx, f.src, f.dst, i);
	reap_in_bursts(f.pe, old, N, N);
	doca_event_free_bulk(old, N);
	/* The same slots hold the next events now. */
	for (uint64_t i = 0; i < N; i++)
		conf_submit_ok(f.ctx, f.src, f.dst, 10 + i);
	reap_in_bursts(f.pe, held, N, N);
	again[0] = NULL;
	memcpy(again + 1, old, N * sizeof(old[0]));
	again[N + 1] = NULL;
	stale = doca_stale_handle_count();
	doca_event_free_bulk(again, N + 2);
	cr_assert_eq(doca_stale_handle_count(), stale + N, "stale count %llu -> %llu, expected +%d",
		     (unsigned long long)stale, (unsigned long long)doca_stale_handle_count(), N);
	read_redirected_stderr(text, sizeof(text));
	for (const char *p = text; (p = strstr(p, "doca_event_free_bulk: event already freed")) != NULL; p++)
		logged++;
	cr_assert_eq(logged, N, "%d refusals logged, expected %d:\n%s", logged, N, text);
	/* Nothing changed: the held events are intact and keep their credits. */
	check_events_of(held, N, f.ctx, 10, N, 64, conf_dev_completes_in_order());
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 99, 0), DOCA_ERROR_AGAIN);
	doca_event_free_bulk(held, N);
	cr_assert_eq(doca_stale_handle_count(), stale + N, "a held event's free was refused");
	expect_exact_credits(f.ctx, f.pe, f.src, f.dst, N, 64);
	fixture_fini(&f);
}

/* Take what doca_pe_get_events_ok(pe, evs + got, max) hands out (all
 * SUCCESS, at most max, nothing written past them) until it returns 0;
 * @return has_error of that last call. *got counts the events. */
static bool reap_ok_until_empty(struct doca_pe *pe, struct doca_event **evs, uint32_t *got, uint32_t max)
{
	bool has_error = false;
	uint32_t k;

	do {
		evs[*got + max] = POISON;
		k = doca_pe_get_events_ok(pe, evs + *got, max, &has_error);
		cr_assert_leq(k, max, "doca_pe_get_events_ok returned %u for max %u", k, max);
		cr_assert_eq(evs[*got + max], POISON, "doca_pe_get_events_ok wrote past max");
		for (uint32_t i = 0; i < k; i++)
			cr_assert_eq(doca_event_get_status(evs[*got + i]), DOCA_EVENT_STATUS_SUCCESS);
		cr_assert(k == 0 || !has_error || k < max, "has_error with a full window");
		*got += k;
	} while (k != 0);
	return has_error;
}

/* N copies, the one with user PARTIAL_USER into a short destination with
 * ALLOW_PARTIAL, all made ready before any is taken. doca_pe_get_events_ok
 * hands out the successes before it and stops there (has_error; on an
 * in-order device exactly users 0..PARTIAL_USER - 1 in one call), again
 * while it is first; doca_pe_get_event takes it (PARTIAL, TOO_BIG, 100
 * bytes); the rest come in windows of MAX with has_error false. */
Test(conf_burst, get_events_ok_stops_before_a_partial_copy_which_stays_next_in_line)
{
	enum { N = 9, PARTIAL_USER = 4, MAX = 3 };
	struct api_fixture f;
	struct doca_buf *src_long, *dst_short;
	struct doca_event *evs[N + N + 1], *partial;
	bool ordered = conf_dev_completes_in_order();
	uint64_t deadline;
	uint32_t ready = 0, got = 0;
	bool has_error;

	fixture_init_started(&f, conf_dev(), 256, N);
	assert_ok(doca_buf_create(f.src_mem, 0, 150, &src_long));
	assert_ok(doca_buf_create(f.dst_mem, 0, 100, &dst_short));
	for (uint64_t i = 0; i < N; i++) {
		if (i == PARTIAL_USER)
			assert_ok(submit_copy(f.ctx, src_long, dst_short, i, DOCA_TASK_FLAG_ALLOW_PARTIAL));
		else
			conf_submit_ok(f.ctx, f.src, f.dst, i);
	}
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (ready < N) {
		ready += doca_pe_progress(f.pe);
		cr_assert(ready == N || now_ns() < deadline, "%u of %u ready within %d ms", ready, N, API_WAIT_MS);
	}
	if (ordered) {
		has_error = false;
		evs[PARTIAL_USER] = POISON;
		cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, N, &has_error), PARTIAL_USER);
		cr_assert(has_error);
		cr_assert_eq(evs[PARTIAL_USER], POISON, "the partial copy's place was written");
		got = PARTIAL_USER;
	}
	cr_assert(reap_ok_until_empty(f.pe, evs, &got, N), "stopped before the partial copy");
	has_error = false;
	cr_assert_eq(doca_pe_get_events_ok(f.pe, evs + got, N, &has_error), 0);
	cr_assert(has_error, "the partial copy is still first");
	partial = doca_pe_get_event(f.pe);
	cr_assert_not_null(partial);
	cr_assert_eq(doca_event_get_user_data(partial).u64, PARTIAL_USER);
	cr_assert_eq(doca_event_get_status(partial), DOCA_EVENT_STATUS_PARTIAL);
	assert_doca(doca_event_get_error(partial), DOCA_ERROR_TOO_BIG);
	cr_assert_eq(doca_event_get_bytes(partial), 100);
	doca_event_free(partial);
	if (ordered) {
		for (uint32_t want = N - 1 - PARTIAL_USER; want > 0; want -= want < MAX ? want : MAX) {
			uint32_t k = want < MAX ? want : MAX;

			has_error = true;
			cr_assert_eq(doca_pe_get_events_ok(f.pe, evs + got, MAX, &has_error), k);
			cr_assert(!has_error);
			got += k;
		}
	}
	cr_assert(!reap_ok_until_empty(f.pe, evs, &got, MAX), "a second failure");
	cr_assert_eq(got, N - 1, "%u events that succeeded, expected %d", got, N - 1);
	/* users 0..N-1 but PARTIAL_USER, each once (in order on an in-order device) */
	uint32_t seen = 1u << PARTIAL_USER;

	for (uint32_t i = 0; i < got; i++) {
		uint64_t user = doca_event_get_user_data(evs[i]).u64;

		cr_assert(user < N && !(seen & (1u << user)), "event %u: task %llu", i, (unsigned long long)user);
		seen |= 1u << user;
		if (ordered)
			cr_assert_eq(user, i < PARTIAL_USER ? i : i + 1, "event %u", i);
	}
	cr_assert_null(doca_pe_get_event(f.pe), "an event beyond the tasks");
	doca_event_free_bulk(evs, got);
	expect_exact_credits(f.ctx, f.pe, f.src, f.dst, N, 256);
	assert_ok(doca_buf_destroy(src_long));
	assert_ok(doca_buf_destroy(dst_short));
	fixture_fini(&f);
}
