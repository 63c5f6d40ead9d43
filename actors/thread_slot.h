/*
 * actors/thread_slot.h — a small dense number per live thread, assigned on
 * first use and released when the thread exits, so per-thread structures
 * (mailbox shards) can be indexed without hashing thread ids.
 */
#ifndef DOCA_THREAD_SLOT_H
#define DOCA_THREAD_SLOT_H

#include <stdbool.h>

#include "tsan_annotate.h"

#define THREAD_SLOT_MAX 256u

/* The calling thread's slot once it has one, else -1 (thread_slot.c). */
extern DOCA_TLS int thread_slot_mine;

/* True while the calling thread holds its slot exclusively: set by a
 * winning claim, cleared by the slot's release (before its release
 * store), so an exit-time key destructor that runs after the release, an
 * overflow thread and a thread that never claimed find it false. The
 * foreign submit's SP ring of a slot is written only by the thread that
 * finds this true (engine/ring.c, I1). */
extern DOCA_TLS bool thread_slot_exclusive;

/* thread_slot_get's first call of a thread: claim a slot. */
unsigned thread_slot_first_use(void);

/* The calling thread's slot, in [0, THREAD_SLOT_MAX). When more than
 * THREAD_SLOT_MAX threads are alive at once, later ones share slots; and a
 * thread's call from one of its exit-time key destructors that runs after
 * the slot's release still returns the released slot, which a new thread
 * may hold by then (callers must therefore tolerate two threads on one
 * slot: the mailbox shards are multi-producer for that reason). Thread
 * safety: any thread. */
static inline unsigned thread_slot_get(void)
{
	/* inline: a mailbox push pays a TLS load and a branch, no call */
	if (__builtin_expect(thread_slot_mine >= 0, 1))
		return (unsigned)thread_slot_mine;
	return thread_slot_first_use();
}

/* fork() child (single-threaded): the slots of the parent's other threads,
 * which the child does not have, are free again. */
void thread_slot_after_fork_child(void);

#endif /* DOCA_THREAD_SLOT_H */
