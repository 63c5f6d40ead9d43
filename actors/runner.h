/*
 * actors/runner.h — "at most one runner" for an actor.
 *
 * An actor's private state (queues, event lists) is touched only by the
 * thread that holds its runner guard. Entering is one CAS from "nobody" to
 * the caller's identity (the address of a thread-local byte); a second
 * thread is refused, never allowed in. Acquire on enter pairs with release on
 * exit, so each runner sees everything the previous runner wrote.
 */
#ifndef DOCA_RUNNER_H
#define DOCA_RUNNER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "tsan_annotate.h"

struct runner {
	_Atomic(const void *) owner;
};

enum runner_entry {
	RUNNER_ENTERED, /* the caller now runs the actor; call runner_exit */
	RUNNER_NESTED,  /* the caller already runs it (a callback re-entered) */
	RUNNER_BUSY,    /* another thread runs it */
};

extern DOCA_TLS char runner_self_token;

static inline const void *runner_self(void)
{
	return &runner_self_token;
}

static inline enum runner_entry runner_enter(struct runner *r)
{
	const void *me = runner_self();
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);

	if (cur == me)
		return RUNNER_NESTED;
	cur = NULL;
	/* acquire: see the previous runner's writes (its exit released them). */
	if (atomic_compare_exchange_strong_explicit(&r->owner, &cur, me, memory_order_acquire,
						    memory_order_relaxed))
		return RUNNER_ENTERED;
	return RUNNER_BUSY;
}

static inline void runner_exit(struct runner *r)
{
	/* release: publish this turn's writes to the next runner. */
	atomic_store_explicit(&r->owner, NULL, memory_order_release);
}

/* True if the caller holds the guard. */
static inline bool runner_is_self(struct runner *r)
{
	return atomic_load_explicit(&r->owner, memory_order_relaxed) == runner_self();
}

/* True if the caller holds the guard or nobody does (a best-effort misuse
 * check for calls that belong to the running thread). */
static inline bool runner_is_self_or_free(struct runner *r)
{
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);

	return cur == NULL || cur == runner_self();
}

#endif /* DOCA_RUNNER_H */
