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
 * (as the position its segment is full at by it, `fill_end`) and reloads
 * it (acquire) only when that copy says the segment is full, so in
 * steady state it never reads a line the consumer writes.
 *
 * Sized by use: a ring starts with SW_RING_INITIAL slots and grows, up to
 * `max`, only when the producer finds it full. The producer then allocates
 * a segment twice as large, writes a link to it in the slot it would have
 * used (a segment that may still grow keeps that slot for the link) and
 * continues there, positions counting on; the consumer, reaching the link,
 * switches to the new segment and frees the old one (sw_ring.c). An idle
 * queue pair keeps a small ring; one with n descriptors in flight about n
 * slots.
 *
 * An item may also be written and read in place (sw_ring_claim /
 * sw_ring_publish, sw_ring_peek / sw_ring_release): the same steps
 * without the copy through a local (the SQ's producer writes its
 * descriptors in place, hw/sw/sw_sq.h; the CQ's consumer reads its
 * packed completions in place, hw/sw/sw_cq.h, with the same steps
 * split so that tail and the segment stay in its registers through a
 * call: sw_slot_ready, sw_ring_release_at, sw_ring_follow). A slot
 * also carries a 16-bit tag beside its sequence, the producer's word on
 * the item's form (the SQ's: one descriptor or several packed,
 * hw/sw/sw_sq.h), published and read with the item.
 *
 * Why it is correct: only the producer writes items, links and sequences,
 * only the consumer writes tail. A slot's previous sequence (position + 1 -
 * segment size; a new segment's slots start with that value) never equals
 * the one the consumer waits for (position + 1), so it never takes a stale
 * item (nor a stale tag: the tag is written with the item, before the
 * release). The producer reuses a slot only after loading a tail past it, and
 * the consumer stored that tail after copying the item out, so an item is
 * never overwritten while being read; a new segment holds only positions
 * from its link on, so its fill is counted from there. The link is
 * published like an item (release/acquire on its sequence), so the consumer
 * sees the new segment's memory, and the producer never touches the old
 * segment after the link, so the consumer may free it. Every ordering is a
 * C11 release/acquire pair, visible to TSan as such. A spread ring
 * (sw_ring_init_spread, the engine's SQ) puts position p in the slot
 * sw_slot_index gives, a fixed permutation of p's low bits per segment
 * size, on both sides and in a new segment's first sequences: each slot
 * still serves exactly one position a lap, so all of the above holds
 * slot for slot; only which line holds which position changes.
 */
#ifndef DOCA_HW_SW_RING_H
#define DOCA_HW_SW_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "actors/explore.h"

#define SW_SLOT_PAYLOAD 56u
#define SW_RING_INITIAL 16u /* slots of a new ring */

struct sw_slot {
	_Atomic uint32_t seq;
	uint16_t link; /* 1: the payload is a struct sw_ring_link, not an item */
	uint16_t tag;  /* the producer's word on the item's form (hw/sw/sw_sq.h) */
	unsigned char payload[SW_SLOT_PAYLOAD] __attribute__((aligned(8)));
} __attribute__((aligned(64)));

/* The payload of a link slot: the segment that follows. */
struct sw_ring_link {
	struct sw_slot *slots;
	uint32_t mask;
};

struct sw_ring {
	uint32_t max;                      /* most slots a segment may have; set at init */
	/* the producer's */
	_Alignas(64) struct sw_slot *pslots; /* the segment it writes */
	uint32_t pmask;
	uint32_t head;                     /* next position to write */
	uint32_t fill_end;                 /* the position its segment is full at, by the tail last loaded */
	uint32_t seg_start;                /* first position of its segment */
	bool pspread;                      /* slots spread (sw_ring_init_spread); fixed at init */
	/* the consumer's */
	_Alignas(64) _Atomic uint32_t tail; /* next position to read */
	struct sw_slot *cslots;            /* the segment it reads */
	uint32_t cmask;
	uint32_t csub;                     /* entries taken from the item at tail (hw/sw/sw_cq.h) */
	bool cspread;                      /* pspread's copy */
};

/* A ring of SW_RING_INITIAL slots (fewer if @p max is smaller) that grows
 * up to @p max (a power of two, at least 2). False when out of memory. */
bool sw_ring_init(struct sw_ring *r, uint32_t max);
/* As sw_ring_init, with consecutive positions spread over the segment's
 * slots (sw_slot_index). For a ring whose consumer catches up with its
 * producer and reads in order (the SQ): the consumer's CPU prefetches the
 * lines that follow the ones it reads, and in a ring laid out in order
 * those are the slots the producer is about to write, whose stores then
 * wait for the lines to come back (bench/README.md, "### off57"). */
bool sw_ring_init_spread(struct sw_ring *r, uint32_t max);
/* Free a drained ring's memory (every item taken; a ring never set up, all
 * zero, is fine too). */
void sw_ring_fini(struct sw_ring *r);
/* Producer, slow path: the segment is full; link a larger one. False when
 * it is at max already or out of memory. */
bool sw_ring_grow(struct sw_ring *r);
/* Consumer, slow path: the slot at tail is a link: follow it, freeing the
 * old segment. */
void sw_ring_follow(struct sw_ring *r, const struct sw_slot *link_slot);

/* The slot of position @p pos in a segment of mask @p mask: its low
 * bits, or with @p spread a fixed permutation of them: j ^ (j >> 2) is a
 * bijection on the mask's bits, and so is the product by an odd number
 * modulo a power of two, so each slot still serves one position a lap;
 * consecutive positions land 37 slots apart, give or take the xor, in
 * no stride a prefetcher follows. */
static inline uint32_t sw_slot_index(uint32_t pos, uint32_t mask, bool spread)
{
	uint32_t j = pos & mask;

	return spread ? ((j ^ (j >> 2)) * 37u) & mask : j;
}

/* The later of two positions (they are less than 2^31 apart). */
static inline uint32_t sw_ring_later(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0 ? a : b;
}

/* Producer: how many items its segment may hold at once (one slot is
 * kept for a link while it may grow). */
static inline uint32_t sw_ring_seg_cap(const struct sw_ring *r)
{
	return r->pmask + 1u < r->max ? r->pmask : r->pmask + 1u;
}

/* Producer: @p tail loaded (or the segment new): the segment is full at
 * cap positions past the later of that tail and the segment's first
 * position (its fill is counted from there). Kept as one position so
 * that the room is one subtraction a look (sw_ring_room). */
static inline void sw_ring_see_tail(struct sw_ring *r, uint32_t tail)
{
	r->fill_end = sw_ring_later(tail, r->seg_start) + sw_ring_seg_cap(r);
}

/* Producer: how many more items the current segment may hold by the
 * tail last seen; none: sw_ring_seg_full. */
static inline uint32_t sw_ring_room(const struct sw_ring *r)
{
	/* never more than cap: a slot is claimed only while fewer are held */
	return r->fill_end - r->head;
}

static inline bool sw_ring_seg_full(const struct sw_ring *r)
{
	return sw_ring_room(r) == 0;
}

/* Producer: the payload of the slot a sw_ring_claim gave, with nothing
 * published since (no second look at the room: the claim found it). */
static inline void *sw_ring_claimed(struct sw_ring *r)
{
	return r->pslots[sw_slot_index(r->head, r->pmask, r->pspread)].payload;
}

/* Producer: the payload of the next slot, to be filled in place and
 * published with sw_ring_publish; NULL if the ring is full at its largest
 * (or a larger segment cannot be allocated). */
static inline void *sw_ring_claim(struct sw_ring *r)
{
	if (sw_ring_seg_full(r)) {
		EXPLORE_POINT(QUEUE);
		/* acquire: the consumer copied out every item before this tail. */
		sw_ring_see_tail(r, atomic_load_explicit(&r->tail, memory_order_acquire));
		if (sw_ring_seg_full(r) && !sw_ring_grow(r))
			return NULL;
	}
	return sw_ring_claimed(r);
}

/* Producer: publish the item written into slot @p s, at position @p pos
 * (the producer's head, moved past it by the caller), with @p tag. */
static inline void sw_slot_publish(struct sw_slot *s, uint32_t pos, uint16_t tag)
{
	s->link = 0;
	s->tag = tag;
	EXPLORE_POINT(QUEUE);
	/* release: the item is in the slot before the consumer sees its sequence. */
	atomic_store_explicit(&s->seq, pos + 1u, memory_order_release);
}

/* Producer: publish the item written into the slot sw_ring_claim gave,
 * with @p tag for the consumer (sw_ring_peek_tag). */
static inline void sw_ring_publish_tag(struct sw_ring *r, uint16_t tag)
{
	uint32_t pos = r->head;

	sw_slot_publish(&r->pslots[sw_slot_index(pos, r->pmask, r->pspread)], pos, tag);
	r->head = pos + 1u;
}

/* Producer: publish the item written into the slot sw_ring_claim gave. */
static inline void sw_ring_publish(struct sw_ring *r)
{
	sw_ring_publish_tag(r, 0);
}

/* Producer: copy @p len bytes of @p item in. False if the ring is full at
 * its largest (or a larger segment cannot be allocated). */
static inline bool sw_ring_put(struct sw_ring *r, const void *item, size_t len)
{
	void *slot = sw_ring_claim(r);

	if (slot == NULL)
		return false;
	memcpy(slot, item, len);
	sw_ring_publish(r);
	return true;
}

/* Consumer: true if an item is ready at the consumer's position. */
static inline bool sw_ring_ready(const struct sw_ring *r)
{
	EXPLORE_POINT(QUEUE);
	uint32_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
	const struct sw_slot *s = &r->cslots[sw_slot_index(pos, r->cmask, r->cspread)];

	/* acquire: a link's payload is read below */
	if (atomic_load_explicit(&s->seq, memory_order_acquire) != pos + 1u)
		return false;
	if (!s->link)
		return true;
	struct sw_ring_link l;

	memcpy(&l, s->payload, sizeof(l));
	return atomic_load_explicit(&l.slots[sw_slot_index(pos + 1u, l.mask, r->cspread)].seq, memory_order_relaxed) == pos + 2u;
}

/* Producer: true unless the consumer has taken every item put. A stale
 * tail only errs towards true; false means every item was copied out. */
static inline bool sw_ring_unread(const struct sw_ring *r)
{
	EXPLORE_POINT(QUEUE);
	return atomic_load_explicit(&r->tail, memory_order_relaxed) != r->head;
}

/* Consumer: true if the producer has published slot @p s, at position
 * @p pos (tail): an item or a link. For a consumer that keeps tail and
 * its segment in registers through a call (only it stores tail and
 * follows links). */
static inline bool sw_slot_ready(const struct sw_slot *s, uint32_t pos)
{
	EXPLORE_POINT(QUEUE);
	/* acquire: pairs with publish's release, so the item is complete. */
	return atomic_load_explicit(&s->seq, memory_order_acquire) == pos + 1u;
}

/* Consumer: done with the item at position @p pos (tail); its slot may
 * be reused. */
static inline void sw_ring_release_at(struct sw_ring *r, uint32_t pos)
{
	EXPLORE_POINT(QUEUE);
	/* release: the item is read before the producer may reuse the slot. */
	atomic_store_explicit(&r->tail, pos + 1u, memory_order_release);
}

/* Consumer: the next item, read in place until sw_ring_release, and its
 * tag in *tag; NULL if none is ready. */
static inline const void *sw_ring_peek_tag(struct sw_ring *r, uint16_t *tag)
{
	for (;;) {
		uint32_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
		const struct sw_slot *s = &r->cslots[sw_slot_index(pos, r->cmask, r->cspread)];

		if (!sw_slot_ready(s, pos))
			return NULL;
		if (!s->link) {
			*tag = s->tag;
			return s->payload;
		}
		sw_ring_follow(r, s);
	}
}

/* Consumer: the next item, read in place until sw_ring_release; NULL if
 * none is ready. */
static inline const void *sw_ring_peek(struct sw_ring *r)
{
	uint16_t tag;

	return sw_ring_peek_tag(r, &tag);
}

/* Consumer: done with the item sw_ring_peek gave; its slot may be reused. */
static inline void sw_ring_release(struct sw_ring *r)
{
	sw_ring_release_at(r, atomic_load_explicit(&r->tail, memory_order_relaxed));
}

/* Consumer: copy the next item out (@p len bytes). False if none is ready. */
static inline bool sw_ring_get(struct sw_ring *r, void *out, size_t len)
{
	const void *item = sw_ring_peek(r);

	if (item == NULL)
		return false;
	memcpy(out, item, len);
	sw_ring_release(r);
	return true;
}

#endif /* DOCA_HW_SW_RING_H */
