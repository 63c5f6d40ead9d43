/*
 * engine/mem.c — memories: allocated or caller-provided regions registered
 * with the context's device.
 */
#include <string.h>

#include "actors/explore_revert.h"
#include "engine/cells.h"
#include "engine/engine.h"
#include "engine/refs.h"

#define MEM_LEN_MAX (SIZE_MAX / 2)
#define ACCESS_ALL (DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE)

doca_error_t mem_register(const struct doca_ctx *h, void *addr, size_t len, uint32_t access,
			  bool owned, const struct mem_import *import, struct doca_mem **out)
{
	doca_error_t err = DOCA_SUCCESS;
	struct doca_mem *mem = cell_get(CELL_MEM, sizeof(*mem));
	struct doca_ctx *ctx;

	if (mem == NULL)
		return DOCA_ERROR_NO_MEMORY;
	pthread_mutex_lock(&g_config_lock);
	ctx = ctx_of(h);
	/* destroyed since the caller's check: used after its destroy, refused
	 * (and counted) as a stale handle is, below, once the lock is let go */
	bool gone = ctx == NULL;

	if (gone) {
		err = DOCA_ERROR_INVALID_VALUE;
	} else if (ctx->dev == NULL) {
		err = DOCA_ERROR_NOT_CONNECTED;
	} else {
		struct dev_entry *e = ctx->dev->entry;

		err = import != NULL
			      ? e->ops->mem_import(e->hw, import->desc, import->len, &mem->mr)
			      : e->ops->mem_register(e->hw, addr, len, access, &mem->mr);
		if (err == DOCA_SUCCESS) {
			dev_entry_get(e);
			mem->dev = ctx->dev;
			ctx->dev->nr_mems++;
			ctx->nr_mems++;
		}
	}
	pthread_mutex_unlock(&g_config_lock);
	if (err != DOCA_SUCCESS) {
		cell_put(CELL_MEM, mem, sizeof(*mem));
		return gone && !DOCA_REVERTED("mem_register_refusal_uncounted") ? HANDLE_REFUSAL(h, MAGIC_CTX) : err;
	}
	mem->ctx = ctx;
	mem->addr = addr;
	mem->len = import != NULL ? mem->mr->len : len;
	mem->access = import != NULL ? mem->mr->access : access;
	mem->owned = owned;
	mem->remote = import != NULL;
	head_store(&mem->epoch, g_fork_epoch);
	head_store(&mem->magic, MAGIC_MEM);
	live_created(LIVE_MEM, mem->len); /* an import's is the exported length */
	*out = handle_of(mem);
	return DOCA_SUCCESS;
}

static doca_error_t mem_args_check(const struct doca_ctx *h, size_t len, uint32_t access,
				   struct doca_mem **mem)
{
	if (ctx_of(h) == NULL)
		return HANDLE_REFUSAL(h, MAGIC_CTX);
	return mem != NULL && len != 0 && len <= MEM_LEN_MAX && access != 0 &&
			       (access & ~(uint32_t)ACCESS_ALL) == 0
		       ? DOCA_SUCCESS
		       : DOCA_ERROR_INVALID_VALUE;
}

doca_error_t doca_mem_create(struct doca_ctx *ctx, size_t len, uint32_t access, struct doca_mem **mem)
{
	doca_error_t err = mem_args_check(ctx, len, access, mem);

	if (err != DOCA_SUCCESS)
		return err;
	/* Checked before allocating, so a ctx without a device costs nothing. */
	pthread_mutex_lock(&g_config_lock);
	const struct doca_ctx *obj = ctx_of(ctx);
	bool has_dev = obj == NULL || obj->dev != NULL; /* a destroyed one: mem_register says so */

	pthread_mutex_unlock(&g_config_lock);
	if (!has_dev)
		return DOCA_ERROR_NOT_CONNECTED;
	void *addr = doca_alloc_aligned(len >= 4096 ? 4096 : 64, len);

	if (addr == NULL)
		return DOCA_ERROR_NO_MEMORY;
	memset(addr, 0, len);
	(void)hw_diag_take(); /* a reason left by an earlier failure is not ours */
	err = mem_register(ctx, addr, len, access, true, NULL, mem);
	log_device_reason("doca_mem_create", err);
	if (err != DOCA_SUCCESS)
		doca_free(addr);
	return err;
}

doca_error_t doca_mem_create_from(struct doca_ctx *ctx, void *addr, size_t len, uint32_t access,
				  struct doca_mem **mem)
{
	doca_error_t err = mem_args_check(ctx, len, access, mem);

	if (err != DOCA_SUCCESS)
		return err;
	if (addr == NULL || (uintptr_t)addr > UINTPTR_MAX - len)
		return DOCA_ERROR_INVALID_VALUE;
	(void)hw_diag_take(); /* a reason left by an earlier failure is not ours */
	err = mem_register(ctx, addr, len, access, false, NULL, mem);
	log_device_reason("doca_mem_create_from", err);
	return err;
}

doca_error_t doca_mem_get_addr(const struct doca_mem *h, void **addr)
{
	/* a remote memory has no local address: another process's memory */
	HANDLE_READ(mem_of, MAGIC_MEM, h, addr, obj->remote ? DOCA_ERROR_NOT_SUPPORTED : DOCA_SUCCESS,
		    obj->addr);
}

doca_error_t doca_mem_get_len(const struct doca_mem *h, size_t *len)
{
	HANDLE_READ(mem_of, MAGIC_MEM, h, len, DOCA_SUCCESS, obj->len);
}

static void mem_free_rcu(struct rcu_head *head)
{
	struct doca_mem *mem = caa_container_of(head, struct doca_mem, rcu);

	DOCA_RCU_CALLBACK_ENTER(head);
	if (mem->owned)
		doca_free(mem->addr);
	cell_put(CELL_MEM, mem, sizeof(*mem));
}

/* The memory behind @p h, closed to new buffers by us (so the destroy is
 * ours), or NULL with *err. The read-side section keeps the cell this
 * memory's from the check to the close: a destroy that won hands it on
 * only after a grace period, and a close of the cell's next memory would
 * destroy that one. */
static struct doca_mem *mem_close(struct doca_mem *h, doca_error_t *err)
{
	bool section = !DOCA_REVERTED("handle_lookup_outside_section");

	if (section)
		doca_rcu_read_lock();
	struct doca_mem *mem = mem_of(h);

	if (mem == NULL)
		*err = HANDLE_REFUSAL(h, MAGIC_MEM);
	else if (!users_close(&mem->bufs)) /* closed already: a concurrent destroy won */
		*err = users_closed(&mem->bufs) ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_IN_USE;
	else
		*err = DOCA_SUCCESS;
	if (section)
		doca_rcu_read_unlock();
	/* destroyed twice (the winner may not have killed the handle yet):
	 * refused as a stale handle, logged and counted */
	if (mem != NULL && *err == DOCA_ERROR_INVALID_VALUE && !DOCA_REVERTED("mem_destroy_refusal_uncounted"))
		*err = stale_refusal();
	return *err == DOCA_SUCCESS ? mem : NULL;
}

doca_error_t doca_mem_destroy(struct doca_mem *h)
{
	doca_error_t err;
	struct doca_mem *mem = mem_close(h, &err);

	if (mem == NULL)
		return err;
	hb_acquire(mem);
	pthread_mutex_lock(&g_config_lock);
	struct dev_entry *e = mem->dev->entry;

	(void)hw_diag_take(); /* a reason left by an earlier failure is not ours */
	e->ops->mem_deregister(mem->mr);
	const char *why = hw_diag_take(); /* fab0: its service endpoint not remade */

	if (why[0] != '\0')
		doca_log(DOCA_LOG_WARN, "doca_mem_destroy: %s (tried again every retry_ms)", why);
	mem->dev->nr_mems--;
	mem->ctx->nr_mems--;
	handle_kill(mem);
	size_t len = mem->len; /* mem may be reused once handed to the reclaimer */

	pthread_mutex_unlock(&g_config_lock);
	dev_entry_put(e);
	doca_call_rcu(&mem->rcu, mem_free_rcu);
	live_destroyed(LIVE_MEM, len);
	return DOCA_SUCCESS;
}
