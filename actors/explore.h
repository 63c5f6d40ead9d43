/*
 * actors/explore.h — the hook points of the systematic concurrency tester
 * (stress/explore/, built with -Dexplore=true). Outside that build every
 * macro here compiles to nothing.
 *
 * EXPLORE_POINT(kind) goes on the line before each synchronisation point of
 * engine/, actors/ and hw/sw/: an atomic that publishes or consumes shared
 * state, a runner-guard entry or exit, a push or pop of a mailbox shard,
 * the task pool or a device ring, the check of a wake-up, an RCU read-side
 * lock or unlock. The explorer's scheduler runs the library's threads one
 * at a time and, at each point, chooses which thread runs next; so the
 * operation right after a point runs with no other thread in between, and
 * every interleaving of those operations can be produced. EXPLORE_YIELD()
 * marks one iteration of a spin-wait (the scheduler then prefers another
 * thread); EXPLORE_SPINS(n) shortens an idle spin count to 2, so the sleep
 * and wake-up paths are exercised instead of thousands of empty turns.
 *
 * The calls that can block in the kernel — pthread create/join and mutexes,
 * poll, epoll_wait, read/write/close on fds, the futex syscall, sleeps,
 * sched_yield, fork — and the grace periods (doca_synchronize_rcu,
 * doca_call_rcu) need no mark here: the explorer's executable wraps them at
 * link time (-Wl,--wrap), which makes each one a hook point too and lets
 * the scheduler know which thread is blocked on what.
 */
#ifndef DOCA_EXPLORE_H
#define DOCA_EXPLORE_H

#include <stddef.h>

enum explore_kind {
	EXPLORE_ATOMIC,     /* an atomic that publishes or consumes shared state */
	EXPLORE_GUARD,      /* a runner guard is taken or released */
	EXPLORE_QUEUE,      /* a push or pop: mailbox, task pool, device ring */
	EXPLORE_WAKE,       /* the armed / sleeping check of a wake-up */
	EXPLORE_RCU_LOCK,   /* entering an RCU read-side section */
	EXPLORE_RCU_UNLOCK, /* leaving one */
	EXPLORE_SPIN,       /* one iteration of a spin-wait */
};

#ifdef DOCA_EXPLORE
/* Installed by the explorer's scheduler before the program starts a
 * thread; NULL (every point a no-op) in any other program linked against
 * an explorer build of the library. */
extern void (*doca_explore_hook)(enum explore_kind kind, const char *file, int line);

static inline void doca_explore_point(enum explore_kind kind, const char *file, int line)
{
	if (doca_explore_hook != NULL)
		doca_explore_hook(kind, file, line);
}

#define EXPLORE_POINT(kind) doca_explore_point(EXPLORE_##kind, __FILE__, __LINE__)
#define EXPLORE_YIELD() EXPLORE_POINT(SPIN)
#define EXPLORE_SPINS(n) 2u
#else
#define EXPLORE_POINT(kind) ((void)0)
#define EXPLORE_YIELD() ((void)0)
#define EXPLORE_SPINS(n) (n)
#endif

#endif /* DOCA_EXPLORE_H */
