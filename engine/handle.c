/*
 * engine/handle.c — refusing handles, and the count of refused stale ones
 * (doca_stale_handle_count, include/doca_log.h).
 */
#include <stdatomic.h>

#include "engine/engine.h"

static _Atomic uint64_t stale_handles;

void handle_count_stale(void)
{
	atomic_fetch_add_explicit(&stale_handles, 1, memory_order_relaxed);
}

uint64_t doca_stale_handle_count(void)
{
	return atomic_load_explicit(&stale_handles, memory_order_relaxed);
}

doca_error_t stale_refusal(void)
{
	handle_count_stale();
	doca_log(DOCA_LOG_ERROR, "a handle used after its object was destroyed (stale handle)");
	return DOCA_ERROR_INVALID_VALUE;
}

/* The handle word a live object with @p o's head and @p magic has for
 * @p h: h, or a buffer's folded with its epoch's fold (buf_of_folded). */
static uintptr_t handle_word_for(const struct handle_head *o, const void *h, uint32_t magic)
{
	return magic == MAGIC_BUF ? buf_word_made(h, buf_fold_made(head_load(&o->epoch))) : (uintptr_t)h;
}

doca_error_t handle_refusal(const void *h, uint32_t magic)
{
	const struct handle_head *o = handle_addr(h);

	if (o == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	uintptr_t word = atomic_load_explicit(&o->handle, memory_order_relaxed);

	/* inherited and live: the handle's generation is the object's (a
	 * stale handle whose cell holds an inherited object is stale) */
	if (head_load(&o->magic) == magic && head_load(&o->epoch) != g_fork_epoch &&
	    word == handle_word_for(o, h, magic))
		return DOCA_ERROR_BAD_STATE;
	if (head_load(&o->magic) == MAGIC_DEAD ||
	    (head_load(&o->magic) == magic && word != handle_word_for(o, h, magic)))
		return stale_refusal();
	return DOCA_ERROR_INVALID_VALUE;
}
