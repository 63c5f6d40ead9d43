/*
 * stress/explore/scenario_stale_mem_destroy.c — two destroys of one memory
 * racing, and a new memory that reuses its cell (stale_mem_destroy).
 *
 * The application destroys a memory while another thread destroys it too
 * (an application bug: exactly one must succeed, the other is refused),
 * waits for its cell to be freed, and registers a new memory, which gets
 * the same cell (engine/cells.c hands the last freed one out first). The
 * loser must answer INVALID_VALUE, counted once by doca_stale_handle_count
 * (a loser that found the count closed by the winner answered it
 * uncounted, with no log line: found by a review), and the new memory must
 * stay whole (a buffer can be made on it, and it is destroyed once): a
 * destroy that checked the handle, was preempted, and then closed the
 * cell's count would destroy the new memory instead.
 */
#include "scenario.h"

static struct world w;
static struct doca_mem *old;
static doca_error_t late_result;

static void *late_destroyer(void *unused)
{
	explore_name("late destroyer");
	late_result = doca_mem_destroy(old);
	return NULL;
}

void scenario_stale_mem_destroy(void)
{
	pthread_t t;
	struct doca_mem *fresh;
	struct doca_buf *buf;
	doca_error_t first;
	uint64_t stale = doca_stale_handle_count();

	world_open(&w, "sw0", 2, NULL);
	EXPECT_OK(doca_mem_create(w.ctx, WORLD_LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &old));
	if (pthread_create(&t, NULL, late_destroyer, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	first = doca_mem_destroy(old);
	explore_rcu_barrier(); /* its cell is free (unless the late destroy holds it): the next memory's */
	EXPECT_OK(doca_mem_create(w.ctx, WORLD_LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &fresh));
	pthread_join(t, NULL);
	expect_one_destroyed("doca_mem_destroy", first, late_result, DOCA_SUCCESS, stale);
	if (doca_buf_create(fresh, 0, WORLD_LEN, &buf) != DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT, "state: a destroy on a stale handle destroyed the memory that reused its cell");
	EXPECT_OK(doca_buf_destroy(buf));
	EXPECT_OK(doca_mem_destroy(fresh));
	EXPECT_IN(doca_ctx_stop(w.ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(&w);
	world_close(&w);
	world_finish(&w);
}
