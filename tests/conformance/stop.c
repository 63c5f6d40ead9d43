/*
 * tests/conformance/stop.c — stopping on the device under test: a stop with
 * work outstanding is asynchronous; tasks the device started complete
 * normally, the others are flushed (FAILURE, DOCA_ERROR_SHUTDOWN); every
 * accepted task gets exactly one event; the context is IDLE once every event
 * is freed, and works again after a restart.
 */
#include <string.h>

#include "tests/conformance/conformance.h"

enum { STOP_TASKS = 128, STOP_SLICE = 64 };

/* Submit STOP_TASKS copies, each into its own slice of dst. */
static void submit_slices(struct api_fixture *f, struct doca_buf **src, struct doca_buf **dst)
{
	for (uint32_t i = 0; i < STOP_TASKS; i++) {
		assert_ok(doca_buf_create(f->src_mem, (size_t)i * STOP_SLICE, STOP_SLICE, &src[i]));
		assert_ok(doca_buf_create(f->dst_mem, (size_t)i * STOP_SLICE, STOP_SLICE, &dst[i]));
		conf_submit_ok(f->ctx, src[i], dst[i], i);
	}
}

/* Stop now (IN_PROGRESS), reap, check each outcome against the bytes, restart. */
static void stop_reap_check(struct api_fixture *f, struct doca_buf **src, struct doca_buf **dst)
{
	uint8_t outcome[STOP_TASKS] = { 0 };
	uint32_t copied = 0;

	assert_doca(doca_ctx_stop(f->ctx), DOCA_ERROR_IN_PROGRESS);
	assert_state(f->ctx, DOCA_CTX_STATE_STOPPING);
	assert_doca(submit_copy(f->ctx, f->src, f->dst, 999, 0), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_ctx_stop(f->ctx), DOCA_ERROR_IN_PROGRESS);
	conf_reap(f->pe, STOP_TASKS, outcome, STOP_SLICE, true);
	progress_until_state(f->pe, f->ctx, DOCA_CTX_STATE_IDLE);
	for (uint32_t i = 0; i < STOP_TASKS; i++) {
		const uint8_t *d = f->dst_bytes + (size_t)i * STOP_SLICE;

		if (outcome[i] == CONF_COPIED) {
			copied++;
			cr_assert_eq(memcmp(d, f->src_bytes + (size_t)i * STOP_SLICE, STOP_SLICE), 0,
				     "task %u completed but its bytes differ", i);
		}
		assert_ok(doca_buf_destroy(src[i]));
		assert_ok(doca_buf_destroy(dst[i]));
	}
	cr_log_info("%s: %u of %u copied before the stop took effect", conf_dev(), copied, STOP_TASKS);
	assert_ok(doca_ctx_start(f->ctx));
	fixture_copy_and_verify(f);
}

Test(conf_stop, stop_before_any_progress_flushes_or_completes_each_task_once)
{
	struct api_fixture f;
	struct doca_buf *src[STOP_TASKS], *dst[STOP_TASKS];

	fixture_init_started(&f, conf_dev(), STOP_TASKS * STOP_SLICE, STOP_TASKS);
	submit_slices(&f, src, dst);
	stop_reap_check(&f, src, dst);
	fixture_fini(&f);
}

/* One progress call first, then a moment: the device owns work, and has
 * finished some of it, when the stop flushes. */
Test(conf_stop, stop_with_work_on_the_device_flushes_or_completes_each_task_once)
{
	struct api_fixture f;
	struct doca_buf *src[STOP_TASKS], *dst[STOP_TASKS];

	fixture_init_started(&f, conf_dev(), STOP_TASKS * STOP_SLICE, STOP_TASKS);
	submit_slices(&f, src, dst);
	doca_pe_progress(f.pe);
	sleep_ms(1);
	stop_reap_check(&f, src, dst);
	fixture_fini(&f);
}

Test(conf_stop, stop_with_nothing_outstanding_is_immediate)
{
	struct api_fixture f;

	fixture_init_started(&f, conf_dev(), 256, 0);
	fixture_copy_and_verify(&f);
	assert_ok(doca_ctx_stop(f.ctx));
	assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_BAD_STATE);
	fixture_fini(&f);
}

Test(conf_stop, an_unfreed_event_keeps_the_context_stopping)
{
	struct api_fixture f;
	struct doca_event *ev;

	fixture_init_started(&f, conf_dev(), 256, 0);
	conf_submit_ok(f.ctx, f.src, f.dst, 1);
	ev = wait_event(f.pe);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	for (int i = 0; i < 100; i++)
		doca_pe_progress(f.pe);
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	doca_event_free(ev);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
}
