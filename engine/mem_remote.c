/*
 * engine/mem_remote.c — remote memory: exporting a memory to other
 * processes and importing what they exported (DESIGN §6). The engine checks
 * handles and access; the descriptor's format and the transport belong to
 * the device (hw_ops.mem_export / mem_import; fab0 has them, sw0 does not).
 */
#include "engine/engine.h"
#include "engine/refs.h"

#define ACCESS_ALL (DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE)

doca_error_t doca_mem_export(struct doca_mem *h, uint32_t access, const void **desc, size_t *len)
{
	doca_error_t err;
	bool device_called = false;

	if (mem_of(h) == NULL)
		return HANDLE_REFUSAL(h, MAGIC_MEM);
	if (desc == NULL || len == NULL || access == 0 || (access & ~(uint32_t)ACCESS_ALL) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	/* Under the lock that doca_mem_destroy takes to kill the handle: the
	 * memory we check is the one we export. */
	pthread_mutex_lock(&g_config_lock);
	const struct doca_mem *mem = mem_of(h);

	/* closed: a destroy has won and will free what we would hand out */
	if (mem == NULL || users_closed((_Atomic uint32_t *)&mem->bufs))
		err = DOCA_ERROR_INVALID_VALUE;
	else if (mem->remote)
		err = DOCA_ERROR_NOT_SUPPORTED; /* only the owner exports */
	else if ((access & ~mem->access) != 0)
		err = DOCA_ERROR_NOT_PERMITTED; /* never more than the memory allows */
	else {
		(void)hw_diag_take(); /* a reason left by an earlier failure is not ours */
		err = mem->dev->entry->ops->mem_export(mem->mr, access, desc, len);
		device_called = true;
	}
	pthread_mutex_unlock(&g_config_lock);
	if (device_called)
		log_device_reason("doca_mem_export", err);
	return err;
}

doca_error_t doca_mem_import(struct doca_ctx *ctx, const void *desc, size_t len,
			     struct doca_mem **remote)
{
	const struct mem_import import = { .desc = desc, .len = len };

	if (ctx_of(ctx) == NULL)
		return HANDLE_REFUSAL(ctx, MAGIC_CTX);
	if (desc == NULL || len == 0 || remote == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	(void)hw_diag_take(); /* a reason left by an earlier failure is not ours */
	doca_error_t err = mem_register(ctx, NULL, 0, 0, false, &import, remote);

	log_device_reason("doca_mem_import", err);
	return err;
}
