/*
 * tests/conformance/credits.c — the task pool on the device under test:
 * max_tasks accepted, then DOCA_ERROR_AGAIN at once; an event holds its
 * credit until freed.
 */
#include "tests/conformance/conformance.h"

Test(conf_credits, again_at_max_tasks_until_an_event_is_freed)
{
	enum { MAX = 8 };
	struct api_fixture f;
	struct doca_event *held[MAX];

	fixture_init_started(&f, conf_dev(), 64, MAX);
	for (uint64_t i = 0; i < MAX; i++)
		conf_submit_ok(f.ctx, f.src, f.dst, i);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 100, 0), DOCA_ERROR_AGAIN);
	for (int i = 0; i < MAX; i++) {
		held[i] = wait_event(f.pe);
		cr_assert_eq(doca_event_get_status(held[i]), DOCA_EVENT_STATUS_SUCCESS);
	}
	/* Completed but not freed: still no credit. */
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 101, 0), DOCA_ERROR_AGAIN);
	doca_event_free(held[0]);
	conf_submit_ok(f.ctx, f.src, f.dst, 102);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 103, 0), DOCA_ERROR_AGAIN);
	for (int i = 1; i < MAX; i++)
		doca_event_free(held[i]);
	expect_success_event(f.pe, 102, f.len);
	fixture_fini(&f);
}

Test(conf_credits, a_pool_of_one_cycles)
{
	struct api_fixture f;

	fixture_init_started(&f, conf_dev(), 128, 1);
	for (uint64_t i = 0; i < 200; i++) {
		conf_submit_ok(f.ctx, f.src, f.dst, i);
		assert_doca(submit_copy(f.ctx, f.src, f.dst, 1000 + i, 0), DOCA_ERROR_AGAIN);
		expect_success_event(f.pe, i, f.len);
	}
	fixture_fini(&f);
}
