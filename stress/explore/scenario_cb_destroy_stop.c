/*
 * stress/explore/scenario_cb_destroy_stop.c — buffers destroyed inside
 * their task's event callback (doca_buf.h: "the buffer goes when the event
 * does (its memory counts it until then)"), and another thread that, once
 * the callback has run, stops the context and destroys the memory.
 * Invariant: once doca_ctx_stop has made the context IDLE (every event
 * gone), the buffers destroyed by the callback no longer count: the
 * memory's destroy succeeds (doca_mem.h: IN_USE only while buffers of it
 * exist).
 */
#include "scenario.h"

#include <sched.h>

#define ACCESS_RW (DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE)

static struct world w;
static struct doca_mem *mem2;
static struct doca_buf *b_src, *b_dst;
static atomic_bool cb_done, stopper_done;

static void cb(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
	EXPECT_OK(doca_buf_destroy(b_src));
	EXPECT_OK(doca_buf_destroy(b_dst));
	atomic_store(&cb_done, true);
}

static void *stopper(void *unused)
{
	(void)unused;
	explore_name("stopper");
	while (!atomic_load(&cb_done))
		sched_yield();
	doca_error_t rc = doca_ctx_stop(w.ctx), stop_rc = rc;

	if (rc == DOCA_ERROR_IN_PROGRESS) {
		while (world_state(&w) != DOCA_CTX_STATE_IDLE)
			sched_yield();
	} else if (rc != DOCA_SUCCESS) {
		explore_end(VERDICT_INVARIANT, "result: doca_ctx_stop returned %s", doca_error_get_name(rc));
	}
	rc = doca_mem_destroy(mem2);
	if (rc != DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT,
			    "result: doca_mem_destroy returned %s with the ctx IDLE and its buffers destroyed "
			    "by their event's callback (the stop returned %s)",
			    doca_error_get_name(rc), doca_error_get_name(stop_rc));
	atomic_store(&stopper_done, true);
	return NULL;
}

void scenario_cb_destroy_stop(void)
{
	pthread_t s;
	uint8_t *bytes;

	world_open(&w, "sw0", 4, cb);
	EXPECT_OK(doca_mem_create(w.ctx, 128, ACCESS_RW, &mem2));
	EXPECT_OK(doca_mem_get_addr(mem2, (void **)&bytes));
	EXPECT_OK(doca_buf_create(mem2, 0, 64, &b_src));
	EXPECT_OK(doca_buf_create(mem2, 64, 64, &b_dst));
	struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = b_src, .dst = b_dst };

	EXPECT_OK(doca_task_submit(w.ctx, &d));
	if (pthread_create(&s, NULL, stopper, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	while (!atomic_load(&stopper_done))
		if (doca_pe_progress(w.pe) == 0)
			sched_yield();
	pthread_join(s, NULL);
	world_close(&w);
	world_finish(&w);
}
