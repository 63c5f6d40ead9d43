/*
 * engine/buf_pin.h — pinning a buffer for a task and unpinning it, inline
 * on the submit and release paths. Why it is correct: engine/buf.c.
 */
#ifndef DOCA_ENGINE_BUF_PIN_H
#define DOCA_ENGINE_BUF_PIN_H

#include <stdbool.h>

#include "actors/asym_fence.h"
#include "engine/engine.h"
#include "engine/refs.h"

/* Pin a buffer for a task; false if it is being destroyed. @p guarded:
 * the caller holds the runner guard of the buffer's PE (then no atomic
 * read-modify-write: engine/buf.c), and unpins under it. */
static inline bool buf_pin(struct doca_buf *buf, bool guarded)
{
	if (!guarded)
		return users_enter(&buf->users);
	uint32_t n = atomic_load_explicit(&buf->guarded_pins, memory_order_relaxed);

	EXPLORE_POINT(ATOMIC);
	atomic_store_explicit(&buf->guarded_pins, n + 1u, memory_order_relaxed);
	asym_fence_light(); /* our pin is visible before we look for DEAD (engine/buf.c) */
	EXPLORE_POINT(ATOMIC);
	/* acquire: as users_enter, after the unpins of an earlier life */
	if ((atomic_load_explicit(&buf->users, memory_order_acquire) & REF_DEAD) == 0)
		return true;
	atomic_store_explicit(&buf->guarded_pins, n, memory_order_relaxed);
	return false;
}

/* Unpin what buf_pin pinned, with the same @p guarded. */
static inline void buf_unpin(struct doca_buf *buf, bool guarded)
{
	hb_release(buf); /* the task's last use happens before the buffer's destroy */
	if (!guarded) {
		users_leave(&buf->users);
		return;
	}
	EXPLORE_POINT(ATOMIC);
	/* release: a destroy that reads the count sees the task's last use */
	atomic_store_explicit(&buf->guarded_pins,
			      atomic_load_explicit(&buf->guarded_pins, memory_order_relaxed) - 1u,
			      memory_order_release);
}

#endif /* DOCA_ENGINE_BUF_PIN_H */
