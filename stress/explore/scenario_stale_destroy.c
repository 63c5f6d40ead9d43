/*
 * stress/explore/scenario_stale_destroy.c — two destroys of one object
 * racing (stale_ctx_destroy, stale_pe_destroy, stale_buf_destroy).
 *
 * The application destroys an object on two threads at once (an
 * application bug the library must survive): exactly one destroy
 * succeeds, and the other is refused as a stale handle, INVALID_VALUE
 * with a log line and counted once by doca_stale_handle_count, as
 * include/doca_log.h promises for an object "destroyed twice" (a PE's
 * loser may instead be refused IN_USE, uncounted, while the winner holds
 * the PE's guard: include/doca_pe.h). A loser
 * that held the object from its handle check and found it destroyed when
 * it looked again under the lock answered INVALID_VALUE uncounted, with no
 * log line (found by a review).
 */
#include "scenario.h"

static doca_error_t ctx_destroy(void *h)
{
	return doca_ctx_destroy(h);
}

void scenario_stale_ctx_destroy(void)
{
	struct doca_ctx *ctx;

	EXPECT_OK(doca_ctx_create(&ctx));
	world_destroy_twice("doca_ctx_destroy", ctx_destroy, ctx, DOCA_SUCCESS);
}

static doca_error_t pe_destroy(void *h)
{
	return doca_pe_destroy(h);
}

void scenario_stale_pe_destroy(void)
{
	struct doca_pe *pe;

	EXPECT_OK(doca_pe_create(&pe));
	world_destroy_twice("doca_pe_destroy", pe_destroy, pe, DOCA_ERROR_IN_USE);
}

static doca_error_t buf_destroy(void *h)
{
	return doca_buf_destroy(h);
}

void scenario_stale_buf_destroy(void)
{
	struct world w;
	struct doca_buf *buf;

	world_open(&w, "sw0", 2, NULL);
	EXPECT_OK(doca_buf_create(w.mem, 0, WORLD_LEN, &buf));
	world_destroy_twice("doca_buf_destroy", buf_destroy, buf, DOCA_SUCCESS);
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
