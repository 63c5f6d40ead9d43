/*
 * engine/refs.h — reference counts. Closable user counts: a count of users
 * plus a DEAD bit.
 * A destroy closes the count only when it is zero (CAS 0 → DEAD); a new
 * user increments and backs off if it finds DEAD. So "destroy while in use"
 * and "use while destroyed" always resolve to exactly one winner.
 */
#ifndef DOCA_ENGINE_REFS_H
#define DOCA_ENGINE_REFS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

static inline bool users_enter(_Atomic uint32_t *users)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with users_leave's release of earlier users. */
	uint32_t prev = atomic_fetch_add_explicit(users, 1, memory_order_acquire);

	if ((prev & REF_DEAD) == 0)
		return true;
	EXPLORE_POINT(ATOMIC);
	atomic_fetch_sub_explicit(users, 1, memory_order_relaxed);
	return false;
}

static inline void users_leave(_Atomic uint32_t *users)
{
	EXPLORE_POINT(ATOMIC);
	/* release: a later close sees everything this user did. */
	atomic_fetch_sub_explicit(users, 1, memory_order_release);
}

/* Closed by a destroy (for good, or for the moment of a buffer destroy's
 * second look, engine/buf.c). */
static inline bool users_closed(_Atomic uint32_t *users)
{
	EXPLORE_POINT(ATOMIC);
	return (atomic_load_explicit(users, memory_order_relaxed) & REF_DEAD) != 0;
}

/* Close the count if it is zero; false (and nothing changed) if in use. */
static inline bool users_close(_Atomic uint32_t *users)
{
	uint32_t zero = 0;

	EXPLORE_POINT(ATOMIC);
	/* acquire: see every write of the users that left. */
	return atomic_compare_exchange_strong_explicit(users, &zero, REF_DEAD, memory_order_acquire,
						       memory_order_relaxed);
}

/* Take a reference on an object that may be on its way out: fails once the
 * count has reached zero (the object is being freed after a grace period). */
static inline bool ref_get_unless_zero(_Atomic uint32_t *refs)
{
	EXPLORE_POINT(ATOMIC);
	uint32_t r = atomic_load_explicit(refs, memory_order_relaxed);

	while (r != 0) {
		EXPLORE_POINT(ATOMIC);
		/* acquire: see the object as its creator and earlier holders left it. */
		if (atomic_compare_exchange_weak_explicit(refs, &r, r + 1, memory_order_acquire,
							  memory_order_relaxed))
			return true;
	}
	return false;
}

/* Drop a reference that is not the last one; false (and nothing changed)
 * if it is the last: the caller drops that one where the object's removal
 * is serialised. */
static inline bool ref_put_unless_one(_Atomic uint32_t *refs)
{
	EXPLORE_POINT(ATOMIC);
	uint32_t r = atomic_load_explicit(refs, memory_order_relaxed);

	while (r > 1) {
		EXPLORE_POINT(ATOMIC);
		/* release: the last dropper sees this holder's writes. */
		if (atomic_compare_exchange_weak_explicit(refs, &r, r - 1, memory_order_release,
							  memory_order_relaxed))
			return true;
	}
	return false;
}

#endif /* DOCA_ENGINE_REFS_H */
