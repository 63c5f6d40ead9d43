/*
 * stress/explore/scenario_stale_mem_create.c — memories created on a
 * context handle racing the context's destroy and a new context that
 * reuses its memory (stale_mem_create).
 *
 * The application destroys an IDLE context (no device) while another
 * thread creates a memory on it, then registers one of its own (an
 * application bug: each call must be refused as a stale handle once the
 * destroy came first), waits for its memory to be freed and creates a
 * context, which gets the same cell. Each call answers NOT_CONNECTED (no
 * device) with nothing counted or INVALID_VALUE counted once, and the new
 * context has no memory (its destroy succeeds). Both check the handle,
 * then register under the configuration lock, where they look it up
 * again; finding it destroyed there, they answered INVALID_VALUE with no
 * log line and nothing counted (found by a review).
 */
#include "scenario.h"

static struct doca_ctx *old;

static void *mem_creator(void *unused)
{
	static uint8_t region[WORLD_LEN];
	const uint32_t rw = DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE;
	struct doca_mem *mem = NULL;

	(void)unused;
	explore_name("creator");
	/* checked here: only this thread uses stale handles */
	uint64_t stale = doca_stale_handle_count();

	expect_current_or_stale("doca_mem_create", doca_mem_create(old, WORLD_LEN, rw, &mem),
				DOCA_ERROR_NOT_CONNECTED, stale);
	stale = doca_stale_handle_count();
	expect_current_or_stale("doca_mem_create_from", doca_mem_create_from(old, region, WORLD_LEN, rw, &mem),
				DOCA_ERROR_NOT_CONNECTED, stale);
	if (mem != NULL)
		explore_end(VERDICT_INVARIANT, "state: a refused create made a memory");
	return NULL;
}

void scenario_stale_mem_create(void)
{
	struct doca_ctx *fresh;
	pthread_t t;

	world_ctx_destroyed_under(&old, mem_creator, &t);
	EXPECT_OK(doca_ctx_create(&fresh));
	pthread_join(t, NULL);
	EXPECT_OK(doca_ctx_destroy(fresh));
	explore_rcu_barrier();
	explore_guards_check();
}
