/*
 * engine/event.c — event getters and freeing. An event is its task's pool
 * slot: freeing it returns the credit and unpins the buffers.
 */
#include <stdlib.h>

#include "actors/explore_revert.h"
#include "engine/engine.h"

/* An event of this process: its ctx was not inherited across fork(). */
static bool event_live(const struct doca_event *ev)
{
	return ev != NULL && ev->magic == MAGIC_EVENT && ev->ctx->epoch == g_fork_epoch;
}

enum doca_event_status doca_event_get_status(const struct doca_event *ev)
{
	return event_live(ev) ? (enum doca_event_status)ev->status : DOCA_EVENT_STATUS_FAILURE;
}

doca_error_t doca_event_get_error(const struct doca_event *ev)
{
	return event_live(ev) ? ev->error : DOCA_ERROR_INVALID_VALUE;
}

size_t doca_event_get_bytes(const struct doca_event *ev)
{
	return event_live(ev) ? (size_t)ev->bytes : 0;
}

union doca_data doca_event_get_user_data(const struct doca_event *ev)
{
	union doca_data none = { .u64 = 0 };

	return event_live(ev) ? ev->user_data : none;
}

enum doca_task_type doca_event_get_type(const struct doca_event *ev)
{
	return event_live(ev) ? (enum doca_task_type)ev->type : (enum doca_task_type)0;
}

struct doca_ctx *doca_event_get_ctx(const struct doca_event *ev)
{
	return event_live(ev) ? ev->ctx : NULL;
}

/* Inside a read-side section: the credit we return can let a stop retire
 * the run at once, and the ring operation still reads the run's memory
 * after publishing it; the grace period before the run is freed covers
 * that tail (and shows TSan the order). */
void event_release(struct doca_event *ev)
{
	doca_rcu_read_lock();
	struct task_pool *pool = &ev->run->pool;

	buf_unpin(ev->src);
	buf_unpin(ev->dst);
	ev->state = EV_FREE;
	ev->magic = 0;
	TSAN_RELEASE(ev);
	TSAN_RELEASE(pool);
	EXPLORE_POINT(QUEUE);
	hb_release(ev); /* the application is done with the task before the slot's reuse */
	/* release: our last touch of the slot happens before whoever sees the
	 * credit back (a submitter, or a stop that counts none outstanding and
	 * frees the run). */
	atomic_thread_fence(memory_order_release);
	if (!ck_ring_enqueue_spmc(&pool->free_ring, pool->free_slots, ev)) {
		doca_log(DOCA_LOG_ERROR, "task pool full on a release: a slot was returned twice");
		abort();
	}
	run_credits_returned(ev->run);
	doca_rcu_read_unlock();
}

/* Whether the application holds the event: checked under the runner guard
 * (the guard orders every state change of a READY event), so of two threads
 * freeing one event only the first to take the guard frees it. */
static bool event_held_by_app(const struct doca_event *ev)
{
	return event_live(ev) && ev->state == EV_READY;
}

static void event_free_refused(const struct doca_event *ev)
{
	doca_log(DOCA_LOG_ERROR, "doca_event_free: not an event held by the application (%s)",
		 event_live(ev) ? "owned by an event callback" : "already freed or not an event");
}

void doca_event_free(struct doca_event *ev)
{
	bool checked_before_guard = DOCA_REVERTED("event_free_check_before_guard");

	if (ev == NULL)
		return;
	/* A hint only (it names the guard to take): decided again inside. */
	if (!event_live(ev) || (checked_before_guard && ev->state != EV_READY)) {
		event_free_refused(ev);
		return;
	}
	struct runner *runner = &ev->ctx->pe->runner;
	enum runner_entry entry = runner_enter(runner);

	if (entry == RUNNER_BUSY) {
		doca_log(DOCA_LOG_ERROR, "doca_event_free: refused while another thread runs the PE");
		return;
	}
	if (checked_before_guard || event_held_by_app(ev))
		event_release(ev);
	else
		event_free_refused(ev);
	if (entry == RUNNER_ENTERED)
		runner_exit(runner);
}
