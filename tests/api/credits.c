/*
 * tests/api/credits.c — the task pool: exactly max_tasks accepted, then
 * DOCA_ERROR_AGAIN at once; an event holds its credit until freed; every
 * accepted task gets exactly one event and a refused one none.
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>

Test(credits, default_max_tasks_is_1024_and_limits_are_enforced)
{
	struct doca_ctx *ctx = NULL;
	uint32_t n = 0;

	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_ctx_get_max_tasks(ctx, &n));
	cr_assert_eq(n, DOCA_CTX_DEFAULT_MAX_TASKS, "default max_tasks %u", n);
	cr_assert_eq(n, 1024, "default max_tasks %u", n);
	assert_doca(doca_ctx_set_max_tasks(ctx, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_max_tasks(ctx, DOCA_CTX_MAX_TASKS_LIMIT + 1), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_max_tasks(ctx, UINT32_MAX), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_ctx_get_max_tasks(ctx, &n));
	cr_assert_eq(n, 1024, "a refused set changed max_tasks to %u", n);
	assert_ok(doca_ctx_set_max_tasks(ctx, 1));
	assert_ok(doca_ctx_get_max_tasks(ctx, &n));
	cr_assert_eq(n, 1, "max_tasks %u", n);
	assert_ok(doca_ctx_set_max_tasks(ctx, DOCA_CTX_MAX_TASKS_LIMIT));
	assert_ok(doca_ctx_get_max_tasks(ctx, &n));
	cr_assert_eq(n, DOCA_CTX_MAX_TASKS_LIMIT, "max_tasks %u", n);
	assert_ok(doca_ctx_destroy(ctx));
}

/* n is checked before the state: a RUNNING context refuses n = 0 as
 * INVALID_VALUE (the fuzzer's model found BAD_STATE here), a good n as
 * BAD_STATE, and neither changes the pool. */
Test(credits, set_max_tasks_on_a_running_ctx_checks_n_first)
{
	struct api_fixture f;
	uint32_t n = 0;

	fixture_init_started(&f, "sw0", 64, 8);
	assert_doca(doca_ctx_set_max_tasks(f.ctx, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_max_tasks(f.ctx, DOCA_CTX_MAX_TASKS_LIMIT + 1), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_max_tasks(f.ctx, 16), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_ctx_get_max_tasks(f.ctx, &n));
	cr_assert_eq(n, 8, "a refused set changed max_tasks to %u", n);
	fixture_fini(&f);
}

/* Exactly max_tasks accepted, then AGAIN; one event per accepted task, none for refused ones. */
static void exact_pool_size(const char *dev_name, uint32_t setting)
{
	struct api_fixture f;
	uint32_t max = setting != 0 ? setting : DOCA_CTX_DEFAULT_MAX_TASKS;
	uint8_t *seen = calloc(max, 1);
	uint32_t accepted = 0, events = 0;

	cr_assert_not_null(seen, "calloc");
	/* setting 0: the fixture leaves the default pool size. */
	fixture_init_started(&f, dev_name, 64, setting);
	for (uint32_t i = 0; i < max; i++) {
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
		accepted++;
	}
	for (int i = 0; i < 3; i++)
		assert_doca(submit_copy(f.ctx, f.src, f.dst, 1000000 + (uint64_t)i, 0), DOCA_ERROR_AGAIN);
	while (events < accepted) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t user = doca_event_get_user_data(ev).u64;

		cr_assert_lt(user, max, "event for a refused task (user %llu)", (unsigned long long)user);
		cr_assert_eq(seen[user], 0, "second event for task %llu", (unsigned long long)user);
		seen[user] = 1;
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
		events++;
		/* Until freed, the event holds its credit. */
		if (events == 1)
			assert_doca(submit_copy(f.ctx, f.src, f.dst, 2000000, 0), DOCA_ERROR_AGAIN);
		doca_event_free(ev);
	}
	expect_no_event_for(f.pe, 20);
	cr_assert_eq(events, max, "%u events for %u accepted tasks", events, max);
	/* Every credit came back: the full pool is accepted again. */
	for (uint32_t i = 0; i < max; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 0, 0), DOCA_ERROR_AGAIN);
	for (uint32_t i = 0; i < max; i++)
		doca_event_free(wait_event(f.pe));
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f);
	free(seen);
}

Test(credits, exactly_max_tasks_accepted_then_again_inline)
{
	exact_pool_size("sw0", 8);
}

Test(credits, exactly_max_tasks_accepted_then_again_one_engine)
{
	exact_pool_size("sw0:engines=1", 32);
}

Test(credits, exactly_default_1024_accepted_then_again_two_engines)
{
	exact_pool_size("sw0:engines=2", 0);
}

Test(credits, single_credit_pool_cycles)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, 1);
	for (int i = 0; i < 50; i++) {
		struct doca_event *ev;

		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
		assert_doca(submit_copy(f.ctx, f.src, f.dst, 99, 0), DOCA_ERROR_AGAIN);
		ev = wait_event(f.pe);
		cr_assert_eq(doca_event_get_user_data(ev).u64, (uint64_t)i, "user data");
		assert_doca(submit_copy(f.ctx, f.src, f.dst, 99, 0), DOCA_ERROR_AGAIN);
		doca_event_free(ev);
	}
	fixture_fini(&f);
}

/* Freeing one event returns exactly one credit. */
Test(credits, freeing_one_event_returns_exactly_one_credit)
{
	enum { MAX = 4 };
	struct api_fixture f;
	struct doca_event *ev[MAX];

	fixture_init_started(&f, "sw0", 64, MAX);
	for (int i = 0; i < MAX; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	for (int i = 0; i < MAX; i++)
		ev[i] = wait_event(f.pe);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 10, 0), DOCA_ERROR_AGAIN);
	doca_event_free(ev[2]);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 11, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 12, 0), DOCA_ERROR_AGAIN);
	doca_event_free(ev[0]);
	doca_event_free(ev[1]);
	doca_event_free(ev[3]);
	expect_success_event(f.pe, 11, 64);
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f);
}

/* Refusals of every kind take no credit. */
Test(credits, refused_submissions_take_no_credit)
{
	struct api_fixture f;
	struct doca_buf *empty = NULL, *short_dst = NULL;
	struct doca_task_desc desc;

	fixture_init(&f, "sw0", 64, 1);
	assert_ok(doca_buf_create(f.src_mem, 0, 0, &empty));
	assert_ok(doca_buf_create(f.dst_mem, 0, 32, &short_dst));
	assert_ok(doca_ctx_start(f.ctx));
	for (int i = 0; i < 10; i++) {
		assert_doca(submit_copy(f.ctx, empty, f.dst, 1, 0), DOCA_ERROR_INVALID_VALUE);
		assert_doca(submit_copy(f.ctx, f.src, short_dst, 1, 0), DOCA_ERROR_INVALID_VALUE);
		assert_doca(submit_copy(f.ctx, f.dst, f.src, 1, 0), DOCA_ERROR_NOT_PERMITTED);
		assert_doca(submit_copy(f.ctx, f.src, f.dst, 1, 1u << 7), DOCA_ERROR_INVALID_VALUE);
		memset(&desc, 0, sizeof(desc));
		desc.type = (enum doca_task_type)99;
		desc.src = f.src;
		desc.dst = f.dst;
		assert_doca(doca_task_submit(f.ctx, &desc), DOCA_ERROR_INVALID_VALUE);
	}
	expect_no_event_for(f.pe, 10);
	fixture_copy_and_verify(&f);
	expect_no_event_for(f.pe, 10);
	assert_ok(doca_buf_destroy(empty));
	assert_ok(doca_buf_destroy(short_dst));
	fixture_fini(&f);
}

/* The credit check comes last: a bad task on a full pool reports its own error. */
Test(credits, invalid_task_on_full_pool_reports_its_error_not_again)
{
	struct api_fixture f;
	struct doca_buf *empty = NULL, *short_dst = NULL;
	struct doca_event *ev;

	fixture_init(&f, "sw0", 64, 1);
	assert_ok(doca_buf_create(f.src_mem, 0, 0, &empty));
	assert_ok(doca_buf_create(f.dst_mem, 0, 32, &short_dst));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 2, 0), DOCA_ERROR_AGAIN);
	assert_doca(submit_copy(f.ctx, empty, f.dst, 3, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(f.ctx, f.src, short_dst, 4, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(f.ctx, f.dst, f.src, 5, 0), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 6, 1u << 5), DOCA_ERROR_INVALID_VALUE);
	ev = wait_event(f.pe);
	cr_assert_eq(doca_event_get_user_data(ev).u64, 1, "user data");
	doca_event_free(ev);
	expect_no_event_for(f.pe, 10);
	assert_ok(doca_buf_destroy(empty));
	assert_ok(doca_buf_destroy(short_dst));
	fixture_fini(&f);
}

/* Two ctxs on one PE have separate pools. */
Test(credits, pools_are_per_ctx)
{
	struct api_fixture a, b;

	fixture_init_started(&a, "sw0", 64, 2);
	fixture_init_started(&b, "sw0", 64, 3);
	for (int i = 0; i < 2; i++)
		assert_ok(submit_copy(a.ctx, a.src, a.dst, (uint64_t)i, 0));
	assert_doca(submit_copy(a.ctx, a.src, a.dst, 9, 0), DOCA_ERROR_AGAIN);
	for (int i = 0; i < 3; i++)
		assert_ok(submit_copy(b.ctx, b.src, b.dst, (uint64_t)i, 0));
	assert_doca(submit_copy(b.ctx, b.src, b.dst, 9, 0), DOCA_ERROR_AGAIN);
	for (int i = 0; i < 2; i++)
		expect_success_event(a.pe, (uint64_t)i, 64);
	for (int i = 0; i < 3; i++)
		expect_success_event(b.pe, (uint64_t)i, 64);
	fixture_fini(&a);
	fixture_fini(&b);
}

/* With two engines and many tasks, every accepted task gets exactly one event. */
Test(credits, thousands_of_tasks_on_two_engines_each_get_exactly_one_event)
{
	enum { N = 5000, MAX = 256 };
	struct api_fixture f;
	uint8_t *seen = calloc(N, 1);
	int submitted = 0, events = 0;
	uint64_t deadline = now_ns() + 20ull * 1000000000ull;

	cr_assert_not_null(seen, "calloc");
	fixture_init_started(&f, "sw0:engines=2", 128, MAX);
	while (events < N) {
		struct doca_event *ev;

		while (submitted < N) {
			doca_error_t rc = submit_copy(f.ctx, f.src, f.dst, (uint64_t)submitted, 0);

			if (rc == DOCA_ERROR_AGAIN) {
				cr_assert_eq(submitted - events, MAX, "AGAIN with %d of %d credits used",
					     submitted - events, MAX);
				break;
			}
			assert_ok(rc);
			submitted++;
		}
		doca_pe_progress(f.pe);
		while ((ev = doca_pe_get_event(f.pe)) != NULL) {
			uint64_t user = doca_event_get_user_data(ev).u64;

			cr_assert_lt(user, (uint64_t)submitted, "event for a task never accepted");
			cr_assert_eq(seen[user], 0, "second event for task %llu", (unsigned long long)user);
			seen[user] = 1;
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
			doca_event_free(ev);
			events++;
		}
		cr_assert_lt(now_ns(), deadline, "%d of %d events", events, N);
	}
	expect_no_event_for(f.pe, 20);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 128, f.seed), 128, "copy differs");
	fixture_fini(&f);
	free(seen);
}

/* The PE's event queue holds every event of its ctxs: two full pools, nothing lost. */
Test(credits, pe_queue_holds_every_event_of_two_full_pools)
{
	enum { MAX = 1024 };
	struct api_fixture a;
	struct api_sibling b;
	uint32_t ready = 0;
	int got_a = 0, got_b = 0;
	uint64_t deadline;

	fixture_init_started(&a, "sw0:engines=1", 64, MAX);
	sibling_init(&b, &a, MAX);
	for (int i = 0; i < MAX; i++) {
		assert_ok(submit_copy(a.ctx, a.src, a.dst, 1, 0));
		assert_ok(submit_copy(b.ctx, b.src, b.dst, 2, 0));
	}
	assert_doca(submit_copy(a.ctx, a.src, a.dst, 1, 0), DOCA_ERROR_AGAIN);
	assert_doca(submit_copy(b.ctx, b.src, b.dst, 2, 0), DOCA_ERROR_AGAIN);
	/* Complete everything without reaping: progress counts each event once. */
	deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	while (ready < 2 * MAX) {
		ready += doca_pe_progress(a.pe);
		cr_assert_lt(now_ns(), deadline, "%u of %d events ready", ready, 2 * MAX);
	}
	cr_assert_eq(ready, 2 * MAX, "progress reported %u events for %d tasks", ready, 2 * MAX);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(doca_pe_progress(a.pe), 0, "an event was reported twice");
	for (;;) {
		struct doca_event *ev = doca_pe_get_event(a.pe);

		if (ev == NULL)
			break;
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
		if (doca_event_get_ctx(ev) == a.ctx)
			got_a++;
		else
			got_b++;
		doca_event_free(ev);
	}
	cr_assert_eq(got_a, MAX, "%d events of ctx 1", got_a);
	cr_assert_eq(got_b, MAX, "%d events of ctx 2", got_b);

	sibling_fini_with_fixture(&b, &a);
}

/* doca_pe_progress returns each event once: the sum over turns equals the task count. */
Test(credits, progress_return_values_sum_to_the_number_of_events)
{
	enum { N = 37 };
	struct api_fixture f;
	uint32_t total = 0;
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	fixture_init_started(&f, "sw0:engines=2", 64, 64);
	cr_assert_eq(doca_pe_progress(f.pe), 0, "progress with nothing submitted");
	for (int i = 0; i < N; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	while (total < N) {
		total += doca_pe_progress(f.pe);
		cr_assert_lt(now_ns(), deadline, "%u of %d", total, N);
	}
	for (int i = 0; i < 20; i++)
		total += doca_pe_progress(f.pe);
	cr_assert_eq(total, N, "progress reported %u events for %d tasks", total, N);
	for (int i = 0; i < N; i++) {
		struct doca_event *ev = doca_pe_get_event(f.pe);

		cr_assert_not_null(ev, "event %d of %d missing", i, N);
		doca_event_free(ev);
	}
	cr_assert_null(doca_pe_get_event(f.pe), "an extra event");
	fixture_fini(&f);
}
