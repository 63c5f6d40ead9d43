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

void buf_destroy_finish(struct doca_buf *buf)
{
	hb_acquire(buf);
	hb_release(buf->mem); /* the buffer's uses happen before its memory's destroy */
	users_leave(&buf->mem->bufs);
	doca_call_rcu(&buf->rcu, buf_free_rcu);
}

/* Inside the callback of an event naming buf, with no other task using it:
 * close its count over that event's pins, and let the PE finish the
 * destroy after releasing the event (the pins then drop to none). False,
 * nothing changed, otherwise. */
static bool buf_destroy_in_callback(struct doca_buf *buf)
{
	struct doca_pe *pe = buf->mem->ctx->pe;

	if (pe == NULL || !runner_is_self(&pe->runner) || pe->cb_event == NULL)
		return false;
	const struct doca_event *ev = pe->cb_event;
	uint32_t pins = (uint32_t)(ev->src == buf) + (uint32_t)(ev->dst == buf);

	if (pins == 0)
		return false;
	EXPLORE_POINT(ATOMIC);
	/* acquire: as users_close. A submit that races us finds DEAD and
	 * backs off; its section ends before the grace period that frees. */
	if (!atomic_compare_exchange_strong_explicit(&buf->users, &pins, pins | REF_DEAD,
						     memory_order_acquire, memory_order_relaxed))
		return false;
	pe->cb_doomed[pe->cb_ndoomed++] = buf;
	return true;
}

doca_error_t doca_buf_destroy(struct doca_buf *buf)
{
	if (!buf_valid(buf))
		return HANDLE_REFUSAL(buf, MAGIC_BUF);
	if (users_close(&buf->users)) {
		buf->magic = MAGIC_DEAD;
		buf_destroy_finish(buf);
		return DOCA_SUCCESS;
	}
	if (!buf_destroy_in_callback(buf))
		return DOCA_ERROR_IN_USE;
	buf->magic = MAGIC_DEAD;
	return DOCA_SUCCESS;
}
