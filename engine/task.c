/*
 * engine/task.c — doca_task_submit(_batch): the one entry point from any
 * thread.
 *
 * Lock-free and allocation-free: validate, then inside an RCU read-side
 * section check RUNNING, pin the buffers, take a credit (a free event slot)
 * and push the slot into the caller's mailbox shard. A shard holds as many
 * items as the pool has slots, so a push that holds a credit cannot fail.
 * Only a push that turns a shard from empty to non-empty wakes the PE, once
 * per burst: a batch shares one read-side section and one wake-up.
 */
#include <stdlib.h>

#include "engine/engine.h"

#define TASK_FLAGS_KNOWN ((uint32_t)DOCA_TASK_FLAG_ALLOW_PARTIAL)

/* The argument checks that come after the state check, in contract order. */
static doca_error_t task_check(const struct doca_ctx *ctx, const struct doca_task_desc *desc,
			       uint64_t *len)
{
	const struct doca_buf *src = desc->src, *dst = desc->dst;

	if (desc->type != DOCA_TASK_COPY || (desc->flags & ~TASK_FLAGS_KNOWN) != 0 || src->len == 0 ||
	    dst->len == 0 || src->mem->ctx != ctx || dst->mem->ctx != ctx)
		return DOCA_ERROR_INVALID_VALUE;
	if ((src->mem->access & DOCA_ACCESS_FLAG_READ) == 0 ||
	    (dst->mem->access & DOCA_ACCESS_FLAG_WRITE) == 0)
		return DOCA_ERROR_NOT_PERMITTED;
	if (dst->len < src->len && (desc->flags & DOCA_TASK_FLAG_ALLOW_PARTIAL) == 0)
		return DOCA_ERROR_INVALID_VALUE;
	*len = dst->len < src->len ? dst->len : src->len;
	return DOCA_SUCCESS;
}

static struct doca_event *pool_take(struct ctx_run *run)
{
	struct doca_event *ev;

	if (!ck_ring_dequeue_spmc(&run->pool.free_ring, run->pool.free_slots, &ev))
		return NULL;
	TSAN_ACQUIRE(ev);
	return ev;
}

static doca_error_t task_enqueue(struct doca_ctx *ctx, struct ctx_run *run,
				 const struct doca_task_desc *desc, bool *wake)
{
	uint64_t len;
	doca_error_t err = task_check(ctx, desc, &len);

	if (err != DOCA_SUCCESS)
		return err;
	if (!buf_pin(desc->src))
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_pin(desc->dst)) {
		buf_unpin(desc->src);
		return DOCA_ERROR_INVALID_VALUE;
	}
	struct doca_event *ev = pool_take(run);

	if (ev == NULL) {
		buf_unpin(desc->dst);
		buf_unpin(desc->src);
		return DOCA_ERROR_AGAIN;
	}
	ev->magic = MAGIC_EVENT;
	ev->state = EV_QUEUED;
	ev->type = (uint16_t)desc->type;
	ev->flags = desc->flags;
	ev->src = desc->src;
	ev->dst = desc->dst;
	ev->len = len;
	ev->bytes = 0;
	ev->user_data = desc->user_data;

	bool was_empty;

	if (!mailbox_push_mpsc(&run->mbox, ev, &was_empty)) {
		doca_log(DOCA_LOG_ERROR, "mailbox shard full while holding a credit");
		abort();
	}
	*wake = *wake || was_empty;
	return DOCA_SUCCESS;
}

/* One task of a burst, inside the read-side section: handles, then state,
 * then the rest (the contract's order). */
static doca_error_t task_submit_one(struct doca_ctx *ctx, const struct doca_task_desc *desc,
				    struct ctx_run **run, bool *wake)
{
	if (!buf_valid(desc->src) || !buf_valid(desc->dst))
		return DOCA_ERROR_INVALID_VALUE;
	if (ctx_state(ctx) != DOCA_CTX_STATE_RUNNING)
		return DOCA_ERROR_BAD_STATE;
	if (*run == NULL) {
		/* Read once: it cannot be retired while we are in the section. */
		*run = rcu_dereference(ctx->run);
		if (*run == NULL)
			return DOCA_ERROR_BAD_STATE;
		TSAN_ACQUIRE(*run);
	}
	return task_enqueue(ctx, *run, desc, wake);
}

doca_error_t doca_task_submit_batch(struct doca_ctx *ctx, const struct doca_task_desc *descs,
				    uint32_t n, uint32_t *accepted)
{
	doca_error_t err = DOCA_SUCCESS;
	struct ctx_run *run = NULL;
	bool wake = false;
	uint32_t i = 0;

	if (accepted != NULL)
		*accepted = 0;
	if (ctx == NULL || accepted == NULL || (descs == NULL && n != 0))
		return DOCA_ERROR_INVALID_VALUE;
	/* Validate inside the section: a racing destroy frees after a grace period. */
	doca_rcu_read_lock();
	if (!ctx_valid(ctx))
		err = DOCA_ERROR_INVALID_VALUE;
	for (; err == DOCA_SUCCESS && i < n; i++) {
		err = task_submit_one(ctx, &descs[i], &run, &wake);
		if (err != DOCA_SUCCESS)
			break;
	}
	if (wake)
		pe_wake(ctx->pe);
	doca_rcu_read_unlock();
	*accepted = i;
	return err;
}

doca_error_t doca_task_submit(struct doca_ctx *ctx, const struct doca_task_desc *desc)
{
	uint32_t accepted;

	if (desc == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return doca_task_submit_batch(ctx, desc, 1, &accepted);
}
