/*
 * stress/explore/scenario_stale_configure.c — a setter and a start on a
 * context handle racing the context's destroy and a new context that
 * reuses its memory (stale_configure).
 *
 * The application destroys an IDLE context (no device) while another
 * thread sets its user data, then starts it (an application bug: each
 * call must be refused as a stale handle once the destroy came first,
 * never applied to the new occupant), waits for its memory to be freed
 * and creates a context, which gets the same cell. The setter answers
 * SUCCESS with nothing counted or INVALID_VALUE counted once; the start
 * NOT_CONNECTED (no device) with nothing counted or INVALID_VALUE counted
 * once. The new context keeps no user data and stays IDLE. Both calls
 * hold the context from their handle check and look again under the
 * lock; finding it destroyed there, they answered INVALID_VALUE with no
 * log line and nothing counted (found by a review).
 */
#include "scenario.h"

static struct doca_ctx *old;
static doca_error_t set_result, start_result;
static uint64_t set_stale, start_stale; /* the count before each call */

static void *configurer(void *unused)
{
	(void)unused;
	explore_name("configurer");
	set_stale = doca_stale_handle_count();
	set_result = doca_ctx_set_user_data(old, (union doca_data){ .u64 = 7 });
	/* checked here: only this thread uses stale handles */
	expect_current_or_stale("doca_ctx_set_user_data", set_result, DOCA_SUCCESS, set_stale);
	start_stale = doca_stale_handle_count();
	start_result = doca_ctx_start(old);
	expect_current_or_stale("doca_ctx_start", start_result, DOCA_ERROR_NOT_CONNECTED, start_stale);
	return NULL;
}

void scenario_stale_configure(void)
{
	struct doca_ctx *fresh;
	enum doca_ctx_state st;
	pthread_t t;

	world_ctx_destroyed_under(&old, configurer, &t);
	EXPECT_OK(doca_ctx_create(&fresh));
	pthread_join(t, NULL);
	EXPECT_OK(doca_ctx_get_state(fresh, &st));
	if (st != DOCA_CTX_STATE_IDLE)
		explore_end(VERDICT_INVARIANT, "state: a start on a destroyed handle started the context in its cell");
	EXPECT_OK(doca_ctx_destroy(fresh));
	explore_rcu_barrier();
	explore_guards_check();
}
