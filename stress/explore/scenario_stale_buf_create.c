/*
 * stress/explore/scenario_stale_buf_create.c — a buffer created on a
 * memory racing the memory's destroy (stale_buf_create).
 *
 * The application destroys a memory while another thread creates a
 * buffer on it (and destroys the buffer when it got one). Of the two one
 * wins: the create (SUCCESS, nothing counted; the destroy is refused
 * IN_USE until the buffer is gone, and tried again) or the destroy (the
 * create refused as a stale handle, INVALID_VALUE counted once by
 * doca_stale_handle_count). A create that found the memory's count
 * closed by its destroy answered INVALID_VALUE with no log line and
 * nothing counted (found by a review).
 */
#include "scenario.h"

static struct doca_mem *mem;

static void *buf_creator(void *unused)
{
	struct doca_buf *buf = NULL;

	(void)unused;
	explore_name("creator");
	/* checked here: only this thread uses stale handles */
	uint64_t stale = doca_stale_handle_count();
	doca_error_t rc = doca_buf_create(mem, 0, WORLD_LEN, &buf);

	expect_current_or_stale("doca_buf_create", rc, DOCA_SUCCESS, stale);
	if (rc == DOCA_SUCCESS)
		EXPECT_OK(doca_buf_destroy(buf));
	else if (buf != NULL)
		explore_end(VERDICT_INVARIANT, "state: a refused create made a buffer");
	return NULL;
}

void scenario_stale_buf_create(void)
{
	struct world w;
	pthread_t t;

	world_open(&w, "sw0", 2, NULL);
	EXPECT_OK(doca_mem_create(w.ctx, WORLD_LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem));
	if (pthread_create(&t, NULL, buf_creator, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (doca_error_t rc; (rc = doca_mem_destroy(mem)) != DOCA_SUCCESS; sched_yield())
		if (rc != DOCA_ERROR_IN_USE)
			explore_end(VERDICT_INVARIANT, "result: doca_mem_destroy returned %s", doca_error_get_name(rc));
	pthread_join(t, NULL);
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
