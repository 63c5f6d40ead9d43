/*
 * stress/explore/scenario_stale_connect.c — a connect on a context handle
 * racing the context's destroy and a new context that reuses its memory
 * (stale_connect).
 *
 * The application destroys an IDLE context while another thread connects
 * it to a PE (an application bug: the connect must be refused as a stale
 * handle, never applied to the new occupant), waits for its memory to be
 * freed and creates a context, which gets the same cell (engine/cells.c
 * hands the last freed one out first). The connect must answer SUCCESS
 * with no stale handle counted (it came first, and the destroy
 * disconnected it) or INVALID_VALUE counted once by
 * doca_stale_handle_count, as every stale handle is. The new context must
 * be unconnected and the PE left with no member. One that looked the
 * handle up before its read-side section, or found it destroyed when it
 * looked again under the lock, answered INVALID_VALUE uncounted, with no
 * log line (found by a review).
 */
#include "scenario.h"

static struct doca_pe *pe;
static struct doca_ctx *old;
static doca_error_t connect_result;

static void *connecter(void *unused)
{
	(void)unused;
	explore_name("connecter");
	connect_result = doca_pe_connect_ctx(pe, old);
	return NULL;
}

void scenario_stale_connect(void)
{
	uint64_t stale = doca_stale_handle_count();
	struct doca_ctx *fresh;
	pthread_t t;

	EXPECT_OK(doca_pe_create(&pe));
	world_ctx_destroyed_under(&old, connecter, &t);
	EXPECT_OK(doca_ctx_create(&fresh));
	pthread_join(t, NULL);
	expect_current_or_stale("doca_pe_connect_ctx", connect_result, DOCA_SUCCESS, stale);
	/* the new context is not connected, and the PE has no member */
	EXPECT_OK(doca_pe_connect_ctx(pe, fresh));
	EXPECT_OK(doca_ctx_destroy(fresh));
	EXPECT_OK(doca_pe_destroy(pe));
	explore_rcu_barrier();
	explore_guards_check();
}
