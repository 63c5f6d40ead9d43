/*
 * engine/ctx.c — the context: configuration, the state machine, start and
 * the asynchronous stop, teardown.
 *
 * Stop, and why no accepted task is lost: doca_ctx_stop stores STOPPING,
 * then waits an RCU grace period. Every submitter reads the state inside a
 * read-side section and pushes before leaving it, so after the grace period
 * every submission that saw RUNNING is in the mailbox, holding a credit; the
 * ones that saw STOPPING were refused. If no credit is out the ctx goes IDLE
 * at once; otherwise the PE flushes the mailbox and the queue pair and turns
 * STOPPING into IDLE once every event has been freed (may_finalize gates it
 * until stop has reported RUNNING → STOPPING, so reports keep their order).
 */
#include <string.h>

#include "engine/engine.h"

static bool ref_get_unless_zero(_Atomic uint32_t *refs)
{
	uint32_t r = atomic_load_explicit(refs, memory_order_relaxed);

	while (r != 0)
		/* acquire: pairs with the release of the last put, see below. */
		if (atomic_compare_exchange_weak_explicit(refs, &r, r + 1, memory_order_acquire,
							  memory_order_relaxed))
			return true;
	return false;
}

bool ctx_ref_get(struct doca_ctx *ctx)
{
	return ref_get_unless_zero(&ctx->refs);
}

static void pool_free(struct task_pool *pool)
{
	doca_free(pool->events);
	doca_free(pool->free_slots);
	memset(pool, 0, sizeof(*pool));
}

static void ctx_free_rcu(struct rcu_head *head)
{
	struct doca_ctx *ctx = caa_container_of(head, struct doca_ctx, rcu);

	DOCA_RCU_CALLBACK_ENTER(head);
	pool_free(&ctx->pool);
	mailbox_fini(&ctx->mbox);
	doca_free(ctx);
}

void ctx_ref_put(struct doca_ctx *ctx)
{
	/* acq_rel: the last holder sees every other holder's writes. */
	if (atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel) == 1)
		doca_call_rcu(&ctx->rcu, ctx_free_rcu);
}

uint32_t ctx_outstanding(const struct doca_ctx *ctx)
{
	if (ctx->pool.events == NULL)
		return 0;
	return ctx->pool.size - ck_ring_size(&ctx->pool.free_ring);
}

void ctx_report(struct doca_ctx *ctx, enum doca_ctx_state prev, enum doca_ctx_state next)
{
	if (ctx->state_cb != NULL)
		ctx->state_cb(ctx, ctx->user_data, prev, next);
}

doca_error_t doca_ctx_create(struct doca_ctx **out)
{
	if (out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	struct doca_ctx *ctx = doca_zalloc(sizeof(*ctx));

	if (ctx == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ctx->max_tasks = DOCA_CTX_DEFAULT_MAX_TASKS;
	CDS_INIT_LIST_HEAD(&ctx->dev_link);
	atomic_store_explicit(&ctx->refs, 1, memory_order_relaxed);
	atomic_store_explicit(&ctx->state, DOCA_CTX_STATE_IDLE, memory_order_relaxed);
	ctx->magic = MAGIC_CTX;
	*out = ctx;
	return DOCA_SUCCESS;
}

/* Run `apply` on an IDLE ctx under the config lock. */
#define CTX_CONFIGURE(ctx, apply)                                          \
	do {                                                               \
		doca_error_t cfg_err_ = DOCA_SUCCESS;                      \
		if (!ctx_valid(ctx))                                       \
			return DOCA_ERROR_INVALID_VALUE;                   \
		pthread_mutex_lock(&g_config_lock);                        \
		if (ctx_state(ctx) != DOCA_CTX_STATE_IDLE)                 \
			cfg_err_ = DOCA_ERROR_BAD_STATE;                   \
		else                                                       \
			apply;                                             \
		pthread_mutex_unlock(&g_config_lock);                      \
		return cfg_err_;                                           \
	} while (0)

doca_error_t doca_ctx_set_dev(struct doca_ctx *ctx, struct doca_dev *dev)
{
	if (!dev_valid(dev))
		return DOCA_ERROR_INVALID_VALUE;
	CTX_CONFIGURE(ctx, {
		if (ctx->dev != NULL) {
			cfg_err_ = DOCA_ERROR_NOT_PERMITTED;
		} else {
			ctx->dev = dev;
			cds_list_add_tail(&ctx->dev_link, &dev->ctxs);
		}
	});
}

doca_error_t doca_ctx_set_max_tasks(struct doca_ctx *ctx, uint32_t n)
{
	if (n == 0 || n > DOCA_CTX_MAX_TASKS_LIMIT)
		return DOCA_ERROR_INVALID_VALUE;
	CTX_CONFIGURE(ctx, ctx->max_tasks = n);
}

doca_error_t doca_ctx_get_max_tasks(const struct doca_ctx *ctx, uint32_t *n)
{
	if (!ctx_valid(ctx) || n == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*n = ctx->max_tasks;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data ctx_user_data)
{
	CTX_CONFIGURE(ctx, ctx->user_data = ctx_user_data);
}

doca_error_t doca_ctx_set_event_cb(struct doca_ctx *ctx, doca_event_cb_t cb)
{
	CTX_CONFIGURE(ctx, ctx->event_cb = cb);
}

doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_cb_t cb)
{
	CTX_CONFIGURE(ctx, ctx->state_cb = cb);
}

doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_state *state)
{
	if (!ctx_valid(ctx) || state == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*state = ctx_state(ctx);
	return DOCA_SUCCESS;
}

/* Make (or keep, when the size is unchanged) a full task pool. */
static doca_error_t pool_prepare(struct doca_ctx *ctx)
{
	struct task_pool *pool = &ctx->pool;
	uint32_t ring = 2;

	if (pool->events != NULL && pool->size == ctx->max_tasks)
		return DOCA_SUCCESS; /* IDLE: every slot is back in the ring */
	pool_free(pool);
	while (ring - 1u < ctx->max_tasks)
		ring <<= 1;
	pool->events = doca_zalloc(sizeof(*pool->events) * ctx->max_tasks);
	pool->free_slots = doca_zalloc(sizeof(*pool->free_slots) * ring);
	if (pool->events == NULL || pool->free_slots == NULL) {
		pool_free(pool);
		return DOCA_ERROR_NO_MEMORY;
	}
	pool->size = ctx->max_tasks;
	ck_ring_init(&pool->free_ring, ring);
	TSAN_BENIGN_RACE(pool->free_slots, sizeof(*pool->free_slots) * ring,
			 "ck_ring slots: ordered by ck fences");
	for (uint32_t i = 0; i < pool->size; i++) {
		pool->events[i].ctx = ctx;
		ck_ring_enqueue_spmc(&pool->free_ring, pool->free_slots, &pool->events[i]);
	}
	return DOCA_SUCCESS;
}

static doca_error_t mailbox_prepare(struct doca_ctx *ctx)
{
	if (ctx->mbox.shards != NULL && ctx->mbox.capacity >= ctx->max_tasks)
		return DOCA_SUCCESS; /* IDLE: empty */
	mailbox_fini(&ctx->mbox);
	return mailbox_init(&ctx->mbox, ctx->max_tasks, &doca_mailbox_allocator) ? DOCA_SUCCESS
										  : DOCA_ERROR_NO_MEMORY;
}

static doca_error_t run_prepare(struct doca_ctx *ctx)
{
	struct dev_entry *entry = ctx->dev->entry;
	struct hw_qp_attr attr = {
		.depth = ctx->max_tasks,
		.wake = pe_wake_cb,
		.wake_arg = ctx->pe,
	};
	doca_error_t err;
	struct ctx_run *run = doca_zalloc(sizeof(*run));

	if (run == NULL)
		return DOCA_ERROR_NO_MEMORY;
	err = entry->ops->qp_create(entry->hw, &attr, &run->qp);
	if (err == DOCA_SUCCESS) {
		err = pe_watch_qp(ctx->pe, run->qp);
		if (err != DOCA_SUCCESS)
			entry->ops->qp_destroy(run->qp);
	}
	if (err != DOCA_SUCCESS) {
		doca_free(run);
		return err;
	}
	dev_entry_get(entry);
	run->entry = entry;
	TSAN_RELEASE(run);
	rcu_assign_pointer(ctx->run, run);
	return DOCA_SUCCESS;
}

static void run_free_rcu(struct rcu_head *head)
{
	struct ctx_run *run = caa_container_of(head, struct ctx_run, rcu);

	DOCA_RCU_CALLBACK_ENTER(head);
	run->entry->ops->qp_destroy(run->qp);
	dev_entry_put(run->entry);
	doca_free(run);
}

/* Unpublish the run; destroy its qp once no PE turn can still be polling it. */
static void run_retire_locked(struct doca_ctx *ctx)
{
	struct ctx_run *run = ctx->run;

	rcu_assign_pointer(ctx->run, NULL);
	pe_unwatch_qp(ctx->pe, run->qp);
	doca_call_rcu(&run->rcu, run_free_rcu);
}

doca_error_t doca_ctx_start(struct doca_ctx *ctx)
{
	doca_error_t err;

	if (!ctx_valid(ctx))
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_config_lock);
	if (ctx_state(ctx) != DOCA_CTX_STATE_IDLE)
		err = DOCA_ERROR_BAD_STATE;
	else if (ctx->dev == NULL || ctx->pe == NULL)
		err = DOCA_ERROR_NOT_CONNECTED;
	else
		err = DOCA_SUCCESS;
	if (err == DOCA_SUCCESS) {
		ctx_set_state(ctx, DOCA_CTX_STATE_STARTING);
		err = pool_prepare(ctx);
		if (err == DOCA_SUCCESS)
			err = mailbox_prepare(ctx);
		if (err == DOCA_SUCCESS)
			err = run_prepare(ctx);
		atomic_store_explicit(&ctx->may_finalize, false, memory_order_relaxed);
		ctx_set_state(ctx, err == DOCA_SUCCESS ? DOCA_CTX_STATE_RUNNING : DOCA_CTX_STATE_IDLE);
	}
	pthread_mutex_unlock(&g_config_lock);
	if (err == DOCA_SUCCESS)
		ctx_report(ctx, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING);
	return err;
}

doca_error_t doca_ctx_stop(struct doca_ctx *ctx)
{
	enum doca_ctx_state st;

	if (!ctx_valid(ctx))
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_config_lock);
	st = ctx_state(ctx);
	if (st == DOCA_CTX_STATE_RUNNING)
		ctx_set_state(ctx, DOCA_CTX_STATE_STOPPING);
	pthread_mutex_unlock(&g_config_lock);
	if (st == DOCA_CTX_STATE_STOPPING)
		return DOCA_ERROR_IN_PROGRESS;
	if (st != DOCA_CTX_STATE_RUNNING)
		return DOCA_ERROR_BAD_STATE;

	/* Every submitter that saw RUNNING has pushed once this returns. */
	doca_synchronize_rcu();

	pthread_mutex_lock(&g_config_lock);
	bool idle = ctx_outstanding(ctx) == 0;

	if (idle) {
		run_retire_locked(ctx);
		ctx_set_state(ctx, DOCA_CTX_STATE_IDLE);
	}
	pthread_mutex_unlock(&g_config_lock);
	if (idle) {
		ctx_report(ctx, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_IDLE);
		return DOCA_SUCCESS;
	}
	ctx_report(ctx, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING);
	/* release: the PE's acquire sees STOPPING reported before it may finish. */
	atomic_store_explicit(&ctx->may_finalize, true, memory_order_release);
	pe_wake(ctx->pe);
	return DOCA_ERROR_IN_PROGRESS;
}

bool ctx_try_finalize(struct doca_ctx *ctx)
{
	bool done = false;

	if (ctx_state(ctx) != DOCA_CTX_STATE_STOPPING ||
	    !atomic_load_explicit(&ctx->may_finalize, memory_order_acquire) || ctx_outstanding(ctx) != 0)
		return false;
	pthread_mutex_lock(&g_config_lock);
	if (ctx_state(ctx) == DOCA_CTX_STATE_STOPPING) {
		run_retire_locked(ctx);
		atomic_store_explicit(&ctx->may_finalize, false, memory_order_relaxed);
		ctx_set_state(ctx, DOCA_CTX_STATE_IDLE);
		done = true;
	}
	pthread_mutex_unlock(&g_config_lock);
	if (done)
		ctx_report(ctx, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE);
	return done;
}

void ctx_stop_on_fatal(struct doca_ctx *ctx)
{
	doca_log(DOCA_LOG_ERROR, "device queue pair failed: stopping its context, flushing its tasks");
	(void)doca_ctx_stop(ctx);
}

doca_error_t ctx_unbind_all_locked(struct doca_dev *dev)
{
	struct doca_ctx *ctx, *tmp;

	cds_list_for_each_entry(ctx, &dev->ctxs, dev_link)
		if (ctx_state(ctx) != DOCA_CTX_STATE_IDLE)
			return DOCA_ERROR_IN_USE;
	cds_list_for_each_entry_safe(ctx, tmp, &dev->ctxs, dev_link) {
		cds_list_del_init(&ctx->dev_link);
		ctx->dev = NULL;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_destroy(struct doca_ctx *ctx)
{
	doca_error_t err = DOCA_SUCCESS;

	if (!ctx_valid(ctx))
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_config_lock);
	if (ctx_state(ctx) != DOCA_CTX_STATE_IDLE)
		err = DOCA_ERROR_BAD_STATE;
	else if (ctx->nr_mems != 0 || ctx->dev != NULL)
		err = DOCA_ERROR_IN_USE;
	if (err == DOCA_SUCCESS) {
		if (ctx->pe != NULL)
			pe_remove_member_locked(ctx->pe, ctx);
		ctx->pe = NULL;
		ctx->magic = MAGIC_DEAD;
	}
	pthread_mutex_unlock(&g_config_lock);
	if (err == DOCA_SUCCESS)
		ctx_ref_put(ctx);
	return err;
}
