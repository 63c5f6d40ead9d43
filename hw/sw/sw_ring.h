/*
 * hw/sw/sw_ring.h — the single-producer, single-consumer rings of the
 * software device (SQ: PE → executor; CQ: engine thread → PE).
 *
 * Built for the fewest cache lines crossing CPUs per item. Each slot is one
 * cache line holding a sequence number and the item. The producer writes
 * the item, then stores sequence = position + 1 (release); the consumer
 * polls the slot at its position and takes the item once the sequence
 * matches (acquire), so an item crosses in its own line, with no shared
 * producer index to read first. The consumer publishes how far it has read
 * in `tail` (release, on its own line); the producer keeps a private copy
 * and reloads it (acquire) only when that copy says the ring is full, so
 * in steady state it never reads a line the consumer writes.
 *
 * Why it is correct: only the producer writes items and sequences, only
 * the consumer writes tail. A slot's previous sequence (position + 1 -
 * size) never equals the one the consumer waits for (position + 1), so it
 * never takes a stale item. The producer reuses a slot only after loading
 * a tail past it, and the consumer stored that tail after copying the item
 * out, so an item is never overwritten while being read. Every ordering is
 * a C11 release/acquire pair, visible to TSan as such.
 */
#ifndef DOCA_HW_SW_RING_H
#define DOCA_HW_SW_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "actors/explore.h"

#define SW_SLOT_PAYLOAD 56u

struct sw_slot {
	_Atomic uint32_t seq;
	unsigned char payload[SW_SLOT_PAYLOAD] __attribute__((aligned(8)));
} __attribute__((aligned(64)));

struct sw_ring {
	struct sw_slot *slots; /* size of them; set at init, read by both sides */
	uint32_t mask;         /* size - 1; size is a power of two */
	_Alignas(64) uint32_t head;        /* producer: next position to write */
	uint32_t tail_seen;                /* producer: tail when last loaded */
	_Alignas(64) _Atomic uint32_t tail; /* consumer: next position to read */
};

/* @p slots: @p size zeroed slots (size a power of two, at least 2). */
static inline void sw_ring_init(struct sw_ring *r, struct sw_slot *slots, uint32_t size)
{
	r->slots = slots;
	r->mask = size - 1u;
	r->head = 0;
	r->tail_seen = 0;
	atomic_init(&r->tail, 0);
}

static inline struct sw_slot *sw_ring_slot(const struct sw_ring *r, uint32_t pos)
{
	return &r->slots[pos & r->mask];
}

/* Producer: copy @p len bytes of @p item in. False if the ring is full. */
static inline bool sw_ring_put(struct sw_ring *r, const void *item, size_t len)
{
	uint32_t pos = r->head;

	if (pos - r->tail_seen > r->mask) {
		EXPLORE_POINT(QUEUE);
		/* acquire: the consumer copied out every item before this tail. */
		r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (pos - r->tail_seen > r->mask)
			return false;
	}
	struct sw_slot *s = sw_ring_slot(r, pos);

	memcpy(s->payload, item, len);
	EXPLORE_POINT(QUEUE);
	/* release: the item is in the slot before the consumer sees its sequence. */
	atomic_store_explicit(&s->seq, pos + 1u, memory_order_release);
	r->head = pos + 1u;
	return true;
}

/* Consumer: true if an item is ready at the consumer's position. */
static inline bool sw_ring_ready(const struct sw_ring *r)
{
	EXPLORE_POINT(QUEUE);
	uint32_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);

	return atomic_load_explicit(&sw_ring_slot(r, pos)->seq, memory_order_relaxed) == pos + 1u;
}

/* Producer: true unless the consumer has taken every item put. A stale
 * tail only errs towards true; false means every item was copied out. */
static inline bool sw_ring_unread(const struct sw_ring *r)
{
	EXPLORE_POINT(QUEUE);
	return atomic_load_explicit(&r->tail, memory_order_relaxed) != r->head;
}

/* Consumer: copy the next item out (@p len bytes). False if none is ready. */
static inline bool sw_ring_get(struct sw_ring *r, void *out, size_t len)
{
	uint32_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
	struct sw_slot *s = sw_ring_slot(r, pos);

	EXPLORE_POINT(QUEUE);
	/* acquire: pairs with put's release, so the item is complete. */
	if (atomic_load_explicit(&s->seq, memory_order_acquire) != pos + 1u)
		return false;
	memcpy(out, s->payload, len);
	EXPLORE_POINT(QUEUE);
	/* release: the copy is done before the producer may reuse the slot. */
	atomic_store_explicit(&r->tail, pos + 1u, memory_order_release);
	return true;
}

#endif /* DOCA_HW_SW_RING_H */
