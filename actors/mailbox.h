/*
 * actors/mailbox.h — an actor's sharded, bounded, lock-free mailbox.
 *
 * Many producers (any thread), one consumer (the thread currently running
 * the actor). Each producer thread pushes into the shard of its thread slot,
 * so producers on different slots never touch the same cache lines; the
 * consumer drains shards round robin with a bounded batch per shard, so one
 * busy producer cannot starve another.
 */
#ifndef DOCA_MAILBOX_H
#define DOCA_MAILBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ck_ring.h>

#define MAILBOX_SHARDS 16u

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
	uint32_t capacity;            /* items each shard can hold */
	uint32_t cursor;              /* consumer-private: shard to drain first */
};

/* Allocate shards that each hold at least `capacity` items. Returns false on
 * allocation failure (the mailbox is then empty and may be finalised). */
bool mailbox_init(struct mailbox *mb, uint32_t capacity, const struct mailbox_allocator *alloc);
void mailbox_fini(struct mailbox *mb);

/* Push from any thread. False if the caller's shard is full. *was_empty is
 * set when this push turned the shard from empty to non-empty — the one push
 * that must wake a sleeping consumer. Thread safety: any thread, lock-free. */
bool mailbox_push_mpsc(struct mailbox *mb, void *item, bool *was_empty);

/* Take up to `max` items, at most `per_shard` from each shard, starting at
 * the shard after the one drained first last time. Thread safety: the one
 * consumer only. */
uint32_t mailbox_drain_sc(struct mailbox *mb, void **items, uint32_t max, uint32_t per_shard);

/* True if some shard may hold an item (exact when producers are quiet). */
bool mailbox_nonempty(const struct mailbox *mb);

#endif /* DOCA_MAILBOX_H */
