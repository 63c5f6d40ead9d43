/*
 * actors/runner.h — "at most one runner" for an actor.
 *
 * An actor's private state (queues, event lists) is touched only by the
 * thread that holds its runner guard. Entering is one CAS from "nobody" to
 * the caller's identity (the address of a thread-local byte); a second
 * thread is refused, never allowed in. Acquire on enter pairs with release on
 * exit, so each runner sees everything the previous runner wrote.
 *
 * A brief holder (runner_enter_brief: a submit posting straight to the
 * device) holds the guard for a bounded moment and never calls back into
 * user code; its identity carries a tag bit, and runner_enter waits for it
 * to leave instead of refusing, so taking the guard briefly never turns a
 * legitimate runner's call into a refusal. A brief holder waits for nobody
 * (it gives up if the guard is taken), so the wait cannot deadlock.
 *
 * Progress, exactly: runner_try, runner_enter_brief and runner_exit take a
 * bounded number of steps (a load and at most one CAS or store): wait-free.
 * runner_enter returns after one CAS (entered, nested or busy) unless a
 * brief holder has the guard: then it spins, yielding the CPU every 64
 * tries, until the holder leaves — the holder's bounded work (the engine
 * posts at most one chunk of descriptors and rings a doorbell) plus however
 * long that thread is preempted while holding. A preempted brief holder
 * therefore stalls every runner_enter caller until it runs again: that
 * call is not lock-free.
 */
#ifndef DOCA_RUNNER_H
#define DOCA_RUNNER_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore.h"
#include "tsan_annotate.h"

struct runner {
	_Atomic(const void *) owner;
};

enum runner_entry {
	RUNNER_ENTERED, /* the caller now runs the actor; call runner_exit */
	RUNNER_NESTED,  /* the caller already runs it (a callback re-entered) */
	RUNNER_BUSY,    /* another thread runs it */
};

/* Even-aligned, so bit 0 of its address is free for the brief tag. */
extern DOCA_TLS _Alignas(2) char runner_self_token;

#define RUNNER_BRIEF_TAG ((uintptr_t)1)

static inline const void *runner_self(void)
{
	return &runner_self_token;
}

static inline bool runner_held_briefly(const void *owner)
{
	return ((uintptr_t)owner & RUNNER_BRIEF_TAG) != 0;
}

static inline bool runner_try(struct runner *r, const void *as)
{
	const void *cur = NULL;

	EXPLORE_POINT(GUARD);
	/* acquire: see the previous runner's writes (its exit released them). */
	return atomic_compare_exchange_strong_explicit(&r->owner, &cur, as, memory_order_acquire,
						       memory_order_relaxed);
}

/* Take the guard, or report who has it. Waits only while a brief holder
 * has it (see "Progress, exactly" above). */
static inline enum runner_entry runner_enter(struct runner *r)
{
	const void *me = runner_self();
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);
	unsigned spins = 0;

	if (cur == me)
		return RUNNER_NESTED;
	while (!runner_try(r, me)) {
		EXPLORE_YIELD();
		cur = atomic_load_explicit(&r->owner, memory_order_relaxed);
		if (cur != NULL && !runner_held_briefly(cur))
			return RUNNER_BUSY;
		if (++spins % 64u == 0)
			sched_yield(); /* the brief holder may have been preempted */
	}
	return RUNNER_ENTERED;
}

/* Take the guard for a bounded moment, or give up at once if it is taken
 * (RUNNER_BUSY; RUNNER_NESTED when the caller already holds it). */
static inline enum runner_entry runner_enter_brief(struct runner *r)
{
	const void *me = runner_self();

	if (atomic_load_explicit(&r->owner, memory_order_relaxed) == me)
		return RUNNER_NESTED;
	return runner_try(r, (const void *)((uintptr_t)me | RUNNER_BRIEF_TAG)) ? RUNNER_ENTERED
										: RUNNER_BUSY;
}

static inline void runner_exit(struct runner *r)
{
	EXPLORE_POINT(GUARD);
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
