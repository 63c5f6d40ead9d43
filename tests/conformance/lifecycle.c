/*
 * tests/conformance/lifecycle.c — the seed's lifecycle on the device under
 * test: the eight steps in order, the misuses that are errors, restarting a
 * context, and many open/close rounds leaving no descriptor behind.
 */
#include <string.h>

#include "tests/conformance/conformance.h"

Test(conf_lifecycle, seed_order)
{
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_mem *mem;
	struct doca_buf *a, *b;
	struct doca_event *ev;
	uint8_t *bytes;

	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_dev_open(conf_dev(), &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_ok(doca_mem_create(ctx, 1u << 20, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem));
	assert_ok(doca_mem_get_addr(mem, (void **)&bytes));
	assert_ok(doca_buf_create(mem, 0, 4096, &a));
	assert_ok(doca_buf_create(mem, 4096, 4096, &b));
	fill_pattern(bytes, 4096, 42);
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_state(ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_ctx_start(ctx));
	assert_state(ctx, DOCA_CTX_STATE_RUNNING);
	conf_submit_ok(ctx, a, b, 7);
	ev = wait_event(pe);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	cr_assert_eq(doca_event_get_bytes(ev), 4096);
	doca_event_free(ev);
	cr_assert_eq(pattern_mismatch(bytes + 4096, 4096, 42), 4096);
	assert_ok(doca_ctx_stop(ctx));
	assert_state(ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_buf_destroy(a));
	assert_ok(doca_buf_destroy(b));
	assert_ok(doca_mem_destroy(mem));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
}

Test(conf_lifecycle, misuse_is_an_error_and_changes_nothing)
{
	struct api_fixture f;
	struct doca_event *ev;

	fixture_init_started(&f, conf_dev(), 4096, 0);
	assert_doca(doca_ctx_destroy(f.ctx), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_mem_destroy(f.src_mem), DOCA_ERROR_IN_USE);
	assert_doca(doca_dev_close(f.dev), DOCA_ERROR_IN_USE);
	assert_doca(doca_ctx_start(f.ctx), DOCA_ERROR_BAD_STATE);
	/* A buffer named by a task is in use until its event is freed. */
	conf_submit_ok(f.ctx, f.src, f.dst, 1);
	assert_doca(doca_buf_destroy(f.src), DOCA_ERROR_IN_USE);
	ev = wait_event(f.pe);
	assert_doca(doca_buf_destroy(f.dst), DOCA_ERROR_IN_USE);
	doca_event_free(ev);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, f.len, f.seed), f.len);
	fixture_copy_and_verify(&f); /* everything still works */
	fixture_fini(&f);
}

Test(conf_lifecycle, a_stopped_context_starts_again)
{
	struct api_fixture f;

	fixture_init_started(&f, conf_dev(), 4096, 16);
	for (int round = 0; round < 5; round++) {
		fixture_copy_and_verify(&f);
		assert_ok(doca_ctx_stop(f.ctx));
		assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
		assert_doca(submit_copy(f.ctx, f.src, f.dst, 0, 0), DOCA_ERROR_BAD_STATE);
		assert_ok(doca_ctx_start(f.ctx));
	}
	fixture_fini(&f);
}

/* The descriptor count once it has stopped changing for 20 ms (deferred frees
 * run after an RCU grace period, on another thread). */
static int settled_fd_count(void)
{
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	int n = count_open_fds();

	for (;;) {
		int again;

		sleep_ms(20);
		again = count_open_fds();
		if (again == n || now_ns() > deadline)
			return again;
		n = again;
	}
}

Test(conf_lifecycle, open_use_close_rounds_leave_no_descriptor)
{
	struct api_fixture f;
	int before;

	/* One round first: lazily created process-wide state (RCU threads,
	 * device registries) is not a leak. A verbs queue pair holds a
	 * completion channel fd until it is destroyed. */
	fixture_init_started(&f, conf_dev(), 256, 4);
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
	before = settled_fd_count();
	for (int round = 0; round < 20; round++) {
		fixture_init_started(&f, conf_dev(), 256, 4);
		fixture_copy_and_verify(&f);
		fixture_fini(&f);
	}
	/* PEs and queue pairs close their fds after an RCU grace period. */
	int after = count_open_fds_settled(before);

	cr_assert_leq(after, before, "%d descriptors before, %d after", before, after);
}
