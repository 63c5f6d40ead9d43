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

/* Unpin what buf_pin pinned, with the same @p guarded, on a thread that
 * does not hold the guard (a freer on another thread): a guarded pin is
 * counted out in foreign_unpins, which only such freers write. Caller:
 * inside a read-side section (the buffer may be destroyed right after). */
static inline void buf_unpin_foreign(struct doca_buf *buf, bool guarded)
{
	if (!guarded) {
		buf_unpin(buf, false); /* an atomic count: anybody's to drop */
		return;
	}
	hb_release(buf); /* the task's last use happens before the buffer's destroy */
	EXPLORE_POINT(ATOMIC);
	/* release: a destroy that reads the count sees the task's last use */
	atomic_fetch_add_explicit(&buf->foreign_unpins, 1u, memory_order_release);
}

/* The guarded pins not yet unpinned (engine/buf.c). foreign_unpins first:
 * a foreign unpin seen there comes after its pin, so the guarded_pins read
 * after it counts that pin, and the difference never goes below 0. */
static inline uint32_t buf_guarded_outstanding(struct doca_buf *buf)
{
	/* acquire: the unpinned task's last use happens before the destroy */
	uint32_t dropped = atomic_load_explicit(&buf->foreign_unpins, memory_order_acquire);

	EXPLORE_POINT(ATOMIC);
	/* acquire: the last guarded unpin happens before the destroy */
	return atomic_load_explicit(&buf->guarded_pins, memory_order_acquire) - dropped;
}

#endif /* DOCA_ENGINE_BUF_PIN_H */
