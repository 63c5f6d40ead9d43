/*
 * engine/buf_pin.h — pinning a buffer for a task and unpinning it, inline
 * on the submit and release paths. Why it is correct: engine/buf.c.
 */
#ifndef DOCA_ENGINE_BUF_PIN_H
#define DOCA_ENGINE_BUF_PIN_H

#include <stdbool.h>

#include "actors/asym_fence.h"
#include "engine/engine.h"

/* Pin a buffer for a task from a thread without its PE's runner guard;
 * false if it is being destroyed. */
static inline bool buf_pin_shared(struct doca_buf *buf)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: after the unpins of an earlier life (a reopen) */
	if ((atomic_fetch_add_explicit(&buf->users, 1u, memory_order_acquire) & BUF_DEAD) == 0)
		return true;
	EXPLORE_POINT(ATOMIC);
	atomic_fetch_sub_explicit(&buf->users, 1u, memory_order_relaxed); /* never counted */
	return false;
}

/* A guarded pin (the caller holds the runner guard of the buffer's PE:
 * no atomic read-modify-write, engine/buf.c) is three steps, so that a
 * task's two pins share one fence: buf_pin_guarded_store counts each;
 * then one asym_fence_light() makes both visible before any DEAD is
 * looked for; then buf_pin_guarded_alive looks, source first, and a pin
 * that may not stand (its buffer, or the source, is DEAD) is taken back
 * with buf_pin_guarded_undo (a plain store: it was never a task's).
 * engine/buf.c says why that is still the Dekker pair (engine/task.c,
 * task_pin, is the one user). */
static inline __attribute__((always_inline)) void buf_pin_guarded_store(struct doca_buf *buf)
{
#ifdef OWNED_RMW_ASM
	/* the same load and store, as one unlocked add (engine/engine.h;
	 * only the guard's holder writes the count); the caller's light
	 * fence orders it before the DEAD looks, as it does the store */
	__asm__ volatile("addl $1, %0" : "+m"(buf->guarded_pins) : : "cc");
#else
	uint32_t n = atomic_load_explicit(&buf->guarded_pins, memory_order_relaxed);

	EXPLORE_POINT(ATOMIC);
	atomic_store_explicit(&buf->guarded_pins, n + 1u, memory_order_relaxed);
#endif
}

/* After buf_pin_guarded_store and a light fence: false if a destroy
 * closed the buffer (the pin must be taken back). */
static inline bool buf_pin_guarded_alive(struct doca_buf *buf)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: as users_enter, after the unpins of an earlier life */
#ifdef OWNED_RMW_ASM
	/* the same load as one compare with the word in memory, DEAD being
	 * its sign bit: an x86 load is an acquire, and the "memory" clobber
	 * keeps the compiler from moving later accesses above it (gcc keeps
	 * an atomic load apart from its test: three instructions, not two) */
	_Static_assert(BUF_DEAD == UINT64_C(1) << 63, "DEAD is the sign bit");
	bool alive;

	__asm__ volatile("cmpq $0, %1" : "=@ccns"(alive) : "m"(buf->users) : "memory");
	return alive;
#else
	return (atomic_load_explicit(&buf->users, memory_order_acquire) & BUF_DEAD) == 0;
#endif
}

/* A task's two DEAD looks (buf_pin_guarded_alive, source first) after
 * both buffers' buf_pin_guarded_store and the light fence: 0 if both
 * pins stand, 1 if the source's look found DEAD, 2 if the destination's
 * did (the source's pin stood). With OWNED_RMW_ASM both looks are first
 * made as one: a load of the source's users or-ed with a load of the
 * destination's (each a single-copy atomic load, in this order: x86 keeps
 * loads in order, so each is an acquire as the look's is; the "memory"
 * clobber keeps later accesses after them), DEAD the sign bit of the
 * result (three instructions for the four of two compares). Both clear:
 * the two looks' answer at those two loads. Otherwise the two looks are
 * made again, the answer theirs: what the looks would have found had
 * they come that much later, which they may (nothing of ours lies between
 * the fence and them, and the first loads wrote nothing). DEAD may have
 * gone meanwhile (a destroy that reopens), then both stand, as they would
 * have at those later looks. The explorer and TSan builds make the two
 * looks alone, as before. */
static inline __attribute__((always_inline)) unsigned buf_pin_guarded_dead_pair(struct doca_buf *src,
										 struct doca_buf *dst)
{
#ifdef OWNED_RMW_ASM
	bool alive;
	uint64_t w;

	__asm__ volatile("movq %2, %1\n\torq %3, %1"
			 : "=@ccns"(alive), "=&r"(w)
			 : "m"(src->users), "m"(dst->users)
			 : "memory");
	if (__builtin_expect(alive, 1))
		return 0;
#endif
	if (!buf_pin_guarded_alive(src))
		return 1;
	if (!buf_pin_guarded_alive(dst))
		return 2;
	return 0;
}

static inline void buf_pin_guarded_undo(struct doca_buf *buf)
{
	atomic_store_explicit(&buf->guarded_pins,
			      atomic_load_explicit(&buf->guarded_pins, memory_order_relaxed) - 1u,
			      memory_order_relaxed);
}

/* A guarded unpin's count: the guard holder, its one writer, stores
 * guarded_pins - 1. With OWNED_RMW_ASM (engine/engine.h) the load and
 * the store are one unlocked `subl` to memory: the store is one aligned
 * 32-bit write that a destroy reads whole (old or new), and a release as
 * every x86 store is; the "memory" clobber keeps the compiler from moving
 * the task's earlier accesses after it, as the release below does. */
static inline __attribute__((always_inline)) void buf_guarded_unpin_store(struct doca_buf *buf)
{
#ifdef OWNED_RMW_ASM
	_Static_assert(sizeof(buf->guarded_pins) == 4, "guarded_pins is one 32-bit word");
	__asm__ volatile("subl $1, %0" : "+m"(*(uint32_t *)&buf->guarded_pins) : : "memory");
#else
	/* release: a destroy that reads the count sees the task's last use */
	atomic_store_explicit(&buf->guarded_pins,
			      atomic_load_explicit(&buf->guarded_pins, memory_order_relaxed) - 1u,
			      memory_order_release);
#endif
}

/* Unpin what a pin that stood (buf_pin_shared, or a guarded pin found
 * alive) pinned, @p guarded as it was; @p watched false only when the
 * caller found hb_watching() false (a loop tests it once). */
static inline __attribute__((always_inline)) void buf_unpin_watched(struct doca_buf *buf, bool guarded,
								   bool watched)
{
	if (watched)
		hb_release(buf); /* the task's last use happens before the buffer's destroy */
	if (!guarded) {
		EXPLORE_POINT(ATOMIC);
		/* release: a destroy that reads the count sees the task's last use */
		atomic_fetch_add_explicit(&buf->users_left, 1u, memory_order_release);
		return;
	}
	EXPLORE_POINT(ATOMIC);
	buf_guarded_unpin_store(buf);
}

static inline void buf_unpin(struct doca_buf *buf, bool guarded)
{
	buf_unpin_watched(buf, guarded, true);
}

/* buf_unpin on a thread that does not hold the guard (a freer on
 * another thread): a guarded pin is
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

/* The users pins not yet unpinned: users_left first, so an unpin seen
 * there comes after its pin, which the users read after it counts, and the
 * difference never goes below 0. */
static inline uint64_t buf_users_outstanding(struct doca_buf *buf)
{
	/* acquire: the unpinned tasks' last uses happen before the destroy */
	uint64_t left = atomic_load_explicit(&buf->users_left, memory_order_acquire);

	EXPLORE_POINT(ATOMIC);
	return (atomic_load_explicit(&buf->users, memory_order_relaxed) & ~BUF_DEAD) - left;
}

/* Close the users count (set BUF_DEAD) if exactly @p held of its pins are
 * outstanding; false, nothing changed, otherwise. The CAS expects users to
 * be users_left (read first) + held: as users_left only grows and never
 * passes users, a success means users - users_left was held at the CAS,
 * and a pinner after it finds DEAD. */
static inline bool buf_users_close(struct doca_buf *buf, uint64_t held)
{
	/* acquire: the unpinned tasks' last uses happen before the destroy */
	uint64_t expect = atomic_load_explicit(&buf->users_left, memory_order_acquire) + held;

	EXPLORE_POINT(ATOMIC);
	/* acquire: as users_close (engine/refs.h) */
	return atomic_compare_exchange_strong_explicit(&buf->users, &expect, expect | BUF_DEAD,
						       memory_order_acquire, memory_order_relaxed);
}

static inline bool buf_users_closed(struct doca_buf *buf)
{
	EXPLORE_POINT(ATOMIC);
	return (atomic_load_explicit(&buf->users, memory_order_relaxed) & BUF_DEAD) != 0;
}

#endif /* DOCA_ENGINE_BUF_PIN_H */
