/*
 * actors/mailbox.h — an actor's sharded, bounded, lock-free mailbox.
 *
 * Many producers (any thread), one consumer (the thread currently running
 * the actor). Each producer thread pushes into the shard of its thread slot,
 * so producers on different slots never touch the same cache lines; the
 * consumer drains shards round robin with a bounded batch per shard, so one
 * busy producer cannot starve another. A summary word with one bit per
 * shard tells the consumer which shards to visit, so an idle mailbox costs
 * one load per drain instead of a look at every shard.
 */
#ifndef DOCA_MAILBOX_H
#define DOCA_MAILBOX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ck_ring.h>

#include "explore.h"

#define MAILBOX_SHARDS 16u
_Static_assert(MAILBOX_SHARDS <= 32, "one bit per shard in a 32-bit summary word");

struct mailbox_shard {
	struct ck_ring ring;
	struct ck_ring_buffer *slots;
} __attribute__((aligned(64)));

/* Where a mailbox gets its memory: zalloc returns zeroed, 64-byte aligned
 * memory or NULL. The owner passes its allocator (so allocation-failure
 * injection reaches the mailbox too). */
struct mailbox_allocator {
	void *(*zalloc)(size_t size);
	void (*free)(void *p);
};

struct mailbox {
	const struct mailbox_allocator *alloc;
	struct mailbox_shard *shards; /* MAILBOX_SHARDS of them */
	_Atomic uint32_t *summary;    /* own cache line; bit i: shard i may hold items */
	uint32_t capacity;            /* items each shard can hold */
	/* consumer-private, on a line of their own (producers read the above) */
	_Alignas(64) uint32_t cursor; /* shard to drain first */
	uint32_t leftover;            /* shards a drain left non-empty */
};

/* Allocate shards that each hold at least `capacity` items. Returns false on
 * allocation failure (the mailbox is then empty and may be finalised). */
bool mailbox_init(struct mailbox *mb, uint32_t capacity, const struct mailbox_allocator *alloc);
void mailbox_fini(struct mailbox *mb);

/* Push into the caller's shard. False if it is full. A drain may not see
 * the item before the caller's next mailbox_announce. Thread safety: any
 * thread, lock-free. */
bool mailbox_push_mpsc(struct mailbox *mb, void *item);

/* After one or more pushes: flag the caller's shard so the next drain visits
 * it. Begins with a full fence, so a load the caller makes after it (a check
 * whether the consumer sleeps) is ordered after the pushes. Thread safety:
 * any thread, lock-free. */
void mailbox_announce(struct mailbox *mb);

/* Take up to `max` items, at most `per_shard` from each flagged shard,
 * starting at the shard after the one drained first last time. Every item
 * announced before the call is taken by it or by a later drain. Thread
 * safety: the one consumer only. */
uint32_t mailbox_drain_sc(struct mailbox *mb, void **items, uint32_t max, uint32_t per_shard);

/* True if no drain would find anything: no shard is flagged or left
 * non-empty. Thread safety: the one consumer only. */
static inline bool mailbox_idle(const struct mailbox *mb)
{
	EXPLORE_POINT(ATOMIC);
	return mb->leftover == 0 && atomic_load_explicit(mb->summary, memory_order_relaxed) == 0;
}

/* True if some shard holds a pushed item, announced or not (exact when
 * producers are quiet). */
bool mailbox_nonempty(const struct mailbox *mb);

#endif /* DOCA_MAILBOX_H */
