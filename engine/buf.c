/*
 * engine/buf.c — buffers: windows into a memory. A buffer counts the
 * unfreed events of tasks that name it; its memory counts its buffers.
 */
#include "engine/engine.h"
#include "engine/refs.h"

doca_error_t doca_buf_create(struct doca_mem *mem, size_t offset, size_t len, struct doca_buf **out)
{
	if (!mem_valid(mem))
		return HANDLE_REFUSAL(mem, MAGIC_MEM);
	if (out == NULL || offset > mem->len || len > mem->len - offset)
		return DOCA_ERROR_INVALID_VALUE;
	struct doca_buf *buf = doca_zalloc(sizeof(*buf));

	if (buf == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (!users_enter(&mem->bufs)) {
		doca_free(buf);
		return DOCA_ERROR_INVALID_VALUE; /* the memory is being destroyed */
	}
	buf->mem = mem;
	buf->data = (uint8_t *)mem->addr + offset;
	buf->len = len;
	buf->epoch = g_fork_epoch;
	buf->magic = MAGIC_BUF;
	live_created(LIVE_BUF, 0);
	*out = buf;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data)
{
	if (!buf_valid(buf))
		return HANDLE_REFUSAL(buf, MAGIC_BUF);
	if (data == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*data = buf->data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len)
{
	if (!buf_valid(buf))
		return HANDLE_REFUSAL(buf, MAGIC_BUF);
	if (len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*len = buf->len;
	return DOCA_SUCCESS;
}

bool buf_pin(struct doca_buf *buf)
{
	return users_enter(&buf->users);
}

void buf_unpin(struct doca_buf *buf)
{
	hb_release(buf); /* the task's last use happens before the buffer's destroy */
	users_leave(&buf->users);
}

static void buf_free_rcu(struct rcu_head *head)
{
	DOCA_RCU_CALLBACK_ENTER(head);
	doca_free(caa_container_of(head, struct doca_buf, rcu));
}

doca_error_t doca_buf_destroy(struct doca_buf *buf)
{
	if (!buf_valid(buf))
		return HANDLE_REFUSAL(buf, MAGIC_BUF);
	if (!users_close(&buf->users))
		return DOCA_ERROR_IN_USE;
	hb_acquire(buf);
	buf->magic = MAGIC_DEAD;
	hb_release(buf->mem); /* the buffer's uses happen before its memory's destroy */
	users_leave(&buf->mem->bufs);
	doca_call_rcu(&buf->rcu, buf_free_rcu);
	live_destroyed(LIVE_BUF, 0);
	return DOCA_SUCCESS;
}
