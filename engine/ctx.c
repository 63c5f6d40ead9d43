/*
 * engine/ctx.c — the context object: creation, configuration while IDLE,
 * references, device binding, teardown. Start and stop are in ctx_run.c.
 */
#include "actors/explore_revert.h"
#include "engine/cells.h"
#include "engine/engine.h"
#include "engine/refs.h"

bool ctx_ref_get(struct doca_ctx *ctx)
{
	return ref_get_unless_zero(&ctx->refs);
}

struct doca_ctx *ctx_hold(const struct doca_ctx *h)
{
	bool section = !DOCA_REVERTED("ctx_hold_outside_section");

	if (section)
		doca_rcu_read_lock();
	struct doca_ctx *ctx = ctx_of(h);

	if (ctx != NULL && !ctx_ref_get(ctx))
		ctx = NULL;
	if (section)
		doca_rcu_read_unlock();
	return ctx;
}

/* Give a context's cell back: the owner's submit (engine/task.c) loads
 * its state and PE outside any read-side section, so they are reset by
 * atomic stores and kept out of the zeroing (CTX_CELL_KEEP). */
static void ctx_cell_put(struct doca_ctx *ctx)
{
	atomic_store_explicit(&ctx->state, DOCA_CTX_STATE_IDLE, memory_order_relaxed);
	atomic_store_explicit(&ctx->pe, NULL, memory_order_relaxed);
	cell_put_keep(CELL_CTX, ctx, sizeof(*ctx), CTX_CELL_KEEP);
}

static void ctx_free_rcu(struct rcu_head *head)
{
	struct doca_ctx *ctx = caa_container_of(head, struct doca_ctx, rcu);

	DOCA_RCU_CALLBACK_ENTER(head);
	pthread_mutex_destroy(&ctx->report_lock);
	ctx_credits_fini(&ctx->credits);
	ctx_cell_put(ctx);
}

void ctx_ref_put(struct doca_ctx *ctx)
{
	EXPLORE_POINT(ATOMIC);
	hb_release(&ctx->refs);
	/* acq_rel: the last holder sees every other holder's writes. */
	if (atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel) == 1) {
		hb_acquire(&ctx->refs);
		doca_call_rcu(&ctx->rcu, ctx_free_rcu);
	}
}

DOCA_TLS uint32_t ctx_state_cb_depth;

void ctx_report(struct doca_ctx *ctx, enum doca_ctx_state prev, enum doca_ctx_state next)
{
	if (ctx->state_cb == NULL)
		return;
	ctx_state_cb_depth++;
	ctx->state_cb(handle_of(ctx), ctx->user_data, prev, next);
	ctx_state_cb_depth--;
}

doca_error_t doca_ctx_create(struct doca_ctx **out)
{
	if (out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	struct doca_ctx *ctx = cell_get(CELL_CTX, sizeof(*ctx));

	if (ctx == NULL)
		return DOCA_ERROR_NO_MEMORY;
	pthread_mutexattr_t recursive;

	pthread_mutexattr_init(&recursive);
	pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
	int err = pthread_mutex_init(&ctx->report_lock, &recursive);

	pthread_mutexattr_destroy(&recursive);
	if (err != 0) {
		ctx_cell_put(ctx);
		return DOCA_ERROR_NO_MEMORY;
	}
	ctx->max_tasks = DOCA_CTX_DEFAULT_MAX_TASKS;
	ready_node_init(&ctx->ready);
	ctx_credits_init(&ctx->credits);
	CDS_INIT_LIST_HEAD(&ctx->dev_link);
	atomic_store_explicit(&ctx->refs, 1, memory_order_relaxed);
	atomic_store_explicit(&ctx->state, DOCA_CTX_STATE_IDLE, memory_order_relaxed);
	head_store(&ctx->epoch, g_fork_epoch);
	head_store(&ctx->magic, MAGIC_CTX);
	live_created(LIVE_CTX, 0);
	*out = handle_of(ctx);
	return DOCA_SUCCESS;
}

doca_error_t ctx_gone_refusal(const struct doca_ctx *h)
{
	if (DOCA_REVERTED("ctx_refusal_uncounted"))
		return DOCA_ERROR_INVALID_VALUE;
	return HANDLE_REFUSAL(h, MAGIC_CTX);
}

/* Run `apply` on an IDLE ctx under the config lock, after any report of a
 * transition under way has finished (the report reads the callbacks). The
 * handle is checked again under the lock: a destroy may have won since. */
#define CTX_CONFIGURE(h, apply)                                            \
	do {                                                               \
		doca_error_t cfg_err_ = DOCA_SUCCESS;                      \
		bool gone_ = false;                                        \
		struct doca_ctx *ctx = ctx_hold(h);                        \
		if (ctx == NULL)                                           \
			return HANDLE_REFUSAL(h, MAGIC_CTX);               \
		pthread_mutex_lock(&(ctx)->report_lock);                   \
		pthread_mutex_lock(&g_config_lock);                        \
		if (ctx_of(h) != ctx)                                      \
			gone_ = true;                                      \
		else if (ctx_state(ctx) != DOCA_CTX_STATE_IDLE)            \
			cfg_err_ = DOCA_ERROR_BAD_STATE;                   \
		else                                                       \
			apply;                                             \
		pthread_mutex_unlock(&g_config_lock);                      \
		pthread_mutex_unlock(&(ctx)->report_lock);                 \
		if (gone_)                                                 \
			cfg_err_ = ctx_gone_refusal(h);                    \
		ctx_ref_put(ctx);                                          \
		return cfg_err_;                                           \
	} while (0)

doca_error_t doca_ctx_set_dev(struct doca_ctx *h, struct doca_dev *dh)
{
	struct doca_dev *dev = dev_of(dh);

	if (dev == NULL)
		return HANDLE_REFUSAL(dh, MAGIC_DEV);
	CTX_CONFIGURE(h, {
		if (dev_of(dh) != dev) { /* closed since the check above */
			cfg_err_ = DOCA_ERROR_INVALID_VALUE;
		} else if (ctx->dev != NULL) {
			cfg_err_ = DOCA_ERROR_NOT_PERMITTED;
		} else {
			ctx->dev = dev;
			cds_list_add_tail(&ctx->dev_link, &dev->ctxs);
		}
	});
}

doca_error_t doca_ctx_set_max_tasks(struct doca_ctx *h, uint32_t n)
{
	/* the handle first (a stale or inherited one is refused as such and
	 * counted, whatever n is), then n, then the state */
	if (ctx_of(h) == NULL)
		return HANDLE_REFUSAL(h, MAGIC_CTX);
	if (n == 0 || n > DOCA_CTX_MAX_TASKS_LIMIT)
		return DOCA_ERROR_INVALID_VALUE;
	/* atomic: doca_ctx_get_max_tasks reads it without the lock */
	CTX_CONFIGURE(h, __atomic_store_n(&ctx->max_tasks, n, __ATOMIC_RELAXED));
}

doca_error_t doca_ctx_get_max_tasks(const struct doca_ctx *h, uint32_t *n)
{
	HANDLE_READ(ctx_of, MAGIC_CTX, h, n, DOCA_SUCCESS, __atomic_load_n(&obj->max_tasks, __ATOMIC_RELAXED));
}

doca_error_t doca_ctx_set_user_data(struct doca_ctx *h, union doca_data ctx_user_data)
{
	CTX_CONFIGURE(h, ctx->user_data = ctx_user_data);
}

doca_error_t doca_ctx_set_event_cb(struct doca_ctx *h, doca_event_cb_t cb)
{
	CTX_CONFIGURE(h, ctx->event_cb = cb);
}

doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *h, doca_ctx_state_cb_t cb)
{
	CTX_CONFIGURE(h, ctx->state_cb = cb);
}

doca_error_t doca_ctx_get_state(const struct doca_ctx *h, enum doca_ctx_state *state)
{
	HANDLE_READ(ctx_of, MAGIC_CTX, h, state, DOCA_SUCCESS, ctx_state(obj));
}

doca_error_t ctx_unbind_all_locked(struct doca_dev *dev)
{
	struct cds_list_head *pos, *next;

	/* cds_list_for_each, not _for_each_entry: the latter forms a ctx
	 * pointer from the list head itself, misaligned for struct doca_ctx. */
	cds_list_for_each(pos, &dev->ctxs)
		if (ctx_state(cds_list_entry(pos, struct doca_ctx, dev_link)) != DOCA_CTX_STATE_IDLE)
			return DOCA_ERROR_IN_USE;
	cds_list_for_each_safe(pos, next, &dev->ctxs) {
		cds_list_del_init(pos);
		cds_list_entry(pos, struct doca_ctx, dev_link)->dev = NULL;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_destroy(struct doca_ctx *h)
{
	doca_error_t err = DOCA_SUCCESS;
	/* the handle's reference, unless the PE's ready set holds the ctx:
	 * then the PE drops it when it meets the node (engine/pe_ready.c) */
	bool put = true;
	struct doca_ctx *ctx = ctx_hold(h); /* our own reference, put last */

	if (ctx == NULL)
		return HANDLE_REFUSAL(h, MAGIC_CTX);
	/* after any report under way (or inside it: the lock is recursive) */
	pthread_mutex_lock(&ctx->report_lock);
	pthread_mutex_lock(&g_config_lock);
	/* Once detached from its PE's ready set, the PE may drop the last
	 * reference (engine/pe_ready.c) before we unlock report_lock below:
	 * the read-side section keeps the free (and its mutex destroy) after
	 * that unlock. Entered with the locks held: nothing below waits. */
	doca_rcu_read_lock();
	/* a concurrent destroy won: used after its destroy, refused (and
	 * counted) as a stale handle is, below, once the locks are let go */
	bool gone = ctx_of(h) != ctx;

	if (gone)
		err = DOCA_ERROR_INVALID_VALUE;
	else if (ctx_state(ctx) != DOCA_CTX_STATE_IDLE)
		err = DOCA_ERROR_BAD_STATE;
	else if (ctx->nr_mems != 0 || ctx->dev != NULL)
		err = DOCA_ERROR_IN_USE;
	if (err == DOCA_SUCCESS) {
		if (ctx_pe(ctx) != NULL) {
			pe_remove_member_locked(ctx_pe(ctx), ctx);
			put = ctx_ready_detach(ctx);
		}
		atomic_store_explicit(&ctx->pe, NULL, memory_order_relaxed); /* (ctx_pe) */
		handle_kill(ctx);
	}
	pthread_mutex_unlock(&g_config_lock);
	pthread_mutex_unlock(&ctx->report_lock);
	doca_rcu_read_unlock();
	if (gone)
		err = ctx_gone_refusal(h);
	if (err == DOCA_SUCCESS && put)
		ctx_ref_put(ctx);
	ctx_ref_put(ctx);
	if (err != DOCA_SUCCESS)
		return err;
	live_destroyed(LIVE_CTX, 0);
	return DOCA_SUCCESS;
}
