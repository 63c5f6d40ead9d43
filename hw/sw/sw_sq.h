/*
 * hw/sw/sw_sq.h — the submission queue of the software device: a burst's
 * descriptors packed two to a slot of an SPSC ring (hw/sw/sw_ring.h).
 *
 * Why packed: with one descriptor per slot, every task made one SQ line
 * cross from the PE's CPU to the engine's, in series, and perf showed the
 * engine thread stalled on it (offload 64 B: 25 % of its samples on the
 * load of the slot's sequence). A post hands over a burst (hw_ops.post
 * gets n descriptors at once), so it writes two compact entries into a
 * slot (cookie, src, dst and a 32-bit length: all that sw_execute, the
 * fault injection and the race detector read; never the memory
 * registrations) and publishes the slot once, with both in it. A lone
 * descriptor, the last of an odd burst, one of 4 GiB or more (and one
 * whose partner would be such a one), and every one of a queue pair that
 * does not pack goes alone, whole (struct sw_desc), as before: a
 * one-at-a-time copy waits for nothing. The slot's
 * tag says which: 0 one struct sw_desc, SW_SQ_PACK a struct sw_sq_pair.
 *
 * A queue pair packs only without delay_us and without ring_max: a
 * delayed descriptor carries its due time (not in the compact entry), and
 * ring_max counts descriptors (a ring that cannot grow past that many, as
 * when memory runs out), which a packed slot would double.
 *
 * The consumer (the executor) takes a slot's entries in order, one at a
 * time, remembers how many it took in the ring's `csub` (as the CQ's,
 * hw/sw/sw_cq.h), and releases the slot with its last entry.
 *
 * Why it is correct: the ring's argument, item = slot; the tag is
 * written with the item, before its release (sw_ring_publish_tag), and
 * read after the acquire that finds it (sw_ring_peek_tag). A slot is
 * released only when its last entry is taken, so tail != head still means
 * "a descriptor the executor has not taken" (sw_ring_unread), and a slot
 * at tail with entries left is still published (sw_ring_ready: work). The
 * entries of one slot are taken one by one, each with its own look at the
 * flush flag (sw_qp_take_due; an engine thread's, without a delay,
 * engine_take_peeked), so a flush between them flushes the second
 * and not the first, as with one descriptor per slot.
 */
#ifndef DOCA_HW_SW_SQ_H
#define DOCA_HW_SW_SQ_H

#include "hw/hw.h"
#include "hw/sw/sw_ring.h"

#define SW_SQ_PACK 2u /* descriptors per packed ring slot */

/* One descriptor alone in a slot (tag 0). */
struct sw_desc {
	struct hw_desc d;
	uint64_t due_ns; /* 0: no delay */
};

/* Two compact descriptors in a slot (tag SW_SQ_PACK). */
struct sw_sq_pair {
	uint64_t cookie[SW_SQ_PACK];
	void *src[SW_SQ_PACK];
	void *dst[SW_SQ_PACK];
	uint32_t len[SW_SQ_PACK];
};

_Static_assert(sizeof(struct sw_desc) <= SW_SLOT_PAYLOAD, "a descriptor fits one ring slot");
_Static_assert(sizeof(struct sw_sq_pair) <= SW_SLOT_PAYLOAD, "a packed pair fits one ring slot");

/* A length a compact entry holds. */
static inline bool sw_sq_compact(const struct hw_desc *d)
{
	return d->len <= UINT32_MAX;
}

/* Producer, a packing queue's first way: the leading pairs of @p d (of
 * @p n) while the segment has room for them by the tail last seen and
 * both lengths are compact, each slot written in place and published in
 * turn, as sw_sq_post's loop would, with the room counted once and the
 * head stored once. Returns the descriptors queued (pairs only); the rest
 * (the room out, a lone last one, a long length) is sw_sq_post's loop's. */
static inline uint32_t sw_sq_post_pairs(struct sw_ring *sq, const struct hw_desc *d, uint32_t n)
{
	uint32_t room = sw_ring_room(sq), pairs = n / SW_SQ_PACK, pos = sq->head, mask = sq->pmask;
	struct sw_slot *slots = sq->pslots;
	const bool spread = sq->pspread;
	const struct hw_desc *start = d, *end = d + SW_SQ_PACK * (pairs < room ? pairs : room);

	for (; d != end && (d[0].len | d[1].len) <= UINT32_MAX; d += SW_SQ_PACK) {
		struct sw_slot *s = &slots[sw_slot_index(pos, mask, spread)];
		struct sw_sq_pair *p = (struct sw_sq_pair *)s->payload;

		p->cookie[0] = d[0].cookie;
		p->cookie[1] = d[1].cookie;
		p->src[0] = d[0].src;
		p->src[1] = d[1].src;
		p->dst[0] = d[0].dst;
		p->dst[1] = d[1].dst;
		p->len[0] = (uint32_t)d[0].len;
		p->len[1] = (uint32_t)d[1].len;
		sw_slot_publish(s, pos++, SW_SQ_PACK);
	}
	sq->head = pos;
	return (uint32_t)(d - start);
}

/* Producer, a packing queue's first way for hw_ops.post_chain: as
 * sw_sq_post_pairs, each pair's entries read from two records of the
 * chain at *rec (every field of a pair, and the link past it, before the
 * slot is published), *rec moved past the pairs queued. */
static inline uint32_t sw_sq_post_chain_pairs(struct sw_ring *sq, const void **rec, uint32_t n,
					      const struct hw_chain *shape)
{
	const struct hw_chain map = *shape, *c = &map; /* in registers: the slot stores may alias *shape */
	uint32_t room = sw_ring_room(sq), pairs = n / SW_SQ_PACK, start = sq->head, mask = sq->pmask;
	struct sw_slot *slots = sq->pslots;
	const bool spread = sq->pspread;
	const void *r = *rec;

	if (pairs > room)
		pairs = room;
	/* the pairs counted by the positions they take: no count of its own */
	uint32_t pos = start, end = start + pairs;

	while (pos != end) {
		const void *r1 = hw_chain_next(r, c);
		struct hw_desc d0 = hw_chain_desc(r, c), d1 = hw_chain_desc(r1, c);

		if (((d0.len | d1.len) >> 32) != 0) /* either above UINT32_MAX */
			break;
		struct sw_slot *s = &slots[sw_slot_index(pos, mask, spread)];
		struct sw_sq_pair *p = (struct sw_sq_pair *)s->payload;

		p->cookie[0] = d0.cookie;
		p->cookie[1] = d1.cookie;
		p->src[0] = d0.src;
		p->src[1] = d1.src;
		p->dst[0] = d0.dst;
		p->dst[1] = d1.dst;
		p->len[0] = (uint32_t)d0.len;
		p->len[1] = (uint32_t)d1.len;
		r = hw_chain_next(r1, c);
		sw_slot_publish(s, pos++, SW_SQ_PACK);
	}
	sq->head = pos;
	*rec = r;
	return (pos - start) * SW_SQ_PACK;
}

/* Producer: queue the first descriptors at @p d (@p left of them) in one
 * slot: two packed when @p pack and both are compact, else the first
 * whole, due at @p due_ns (0: no delay). Returns how many (0: the ring is
 * full at its largest). */
static inline uint32_t sw_sq_post_slot(struct sw_ring *sq, const struct hw_desc *d, uint32_t left, uint64_t due_ns,
				       bool pack)
{
	void *slot = sw_ring_claim(sq); /* written in place */

	if (slot == NULL)
		return 0;
	if (pack && left >= SW_SQ_PACK && sw_sq_compact(&d[0]) && sw_sq_compact(&d[1])) {
		struct sw_sq_pair *p = slot;

		for (uint32_t k = 0; k < SW_SQ_PACK; k++) {
			p->cookie[k] = d[k].cookie;
			p->src[k] = d[k].src;
			p->dst[k] = d[k].dst;
			p->len[k] = (uint32_t)d[k].len;
		}
		sw_ring_publish_tag(sq, SW_SQ_PACK);
		return SW_SQ_PACK;
	}
	struct sw_desc *w = slot;

	w->d = d[0];
	w->due_ns = due_ns;
	sw_ring_publish(sq);
	return 1;
}

/* Producer: queue up to @p n descriptors, due at @p due_ns (0: no delay),
 * two to a slot when @p pack (then @p due_ns must be 0). Returns how many
 * were queued (fewer only when the ring is full at its largest). Every
 * slot written is published before this returns. */
static inline uint32_t sw_sq_post(struct sw_ring *sq, const struct hw_desc *descs, uint32_t n, uint64_t due_ns,
				  bool pack)
{
	uint32_t i = pack ? sw_sq_post_pairs(sq, descs, n) : 0, k;

	while (i < n && (k = sw_sq_post_slot(sq, &descs[i], n - i, due_ns, pack)) != 0)
		i += k;
	return i;
}

/* A descriptor as an executor without a delay reads it from its slot:
 * what its copy and its completion need (no memory registrations, no due
 * time), in registers. */
struct sw_sq_entry {
	uint64_t cookie;
	void *src;
	void *dst;
	uint64_t len;
};

/* The descriptors in a slot of tag @p tag. */
static inline uint32_t sw_sq_entries(uint16_t tag)
{
	return tag == 0 ? 1u : tag;
}

/* Consumer: entry @p i of the item sw_ring_peek_tag gave, @p tag its
 * tag (0: the one whole descriptor, i 0). */
static inline struct sw_sq_entry sw_sq_entry_at(const void *item, uint16_t tag, uint32_t i)
{
	if (tag == 0) {
		const struct hw_desc *d = &((const struct sw_desc *)item)->d;

		return (struct sw_sq_entry){ .cookie = d->cookie, .src = d->src, .dst = d->dst, .len = d->len };
	}
	const struct sw_sq_pair *p = item;

	return (struct sw_sq_entry){ .cookie = p->cookie[i], .src = p->src[i], .dst = p->dst[i], .len = p->len[i] };
}

/* Consumer: the next descriptor in *out, left in the queue; false if none
 * is ready. *tag: its slot's tag, for sw_sq_take. A compact entry comes
 * back without memory registrations and with no due time. */
static inline bool sw_sq_peek(struct sw_ring *sq, struct sw_desc *out, uint16_t *tag)
{
	const void *item = sw_ring_peek_tag(sq, tag);

	if (item == NULL)
		return false;
	if (*tag == 0) {
		memcpy(out, item, sizeof(*out));
		return true;
	}
	struct sw_sq_entry x = sw_sq_entry_at(item, *tag, sq->csub);

	*out = (struct sw_desc){ .d = { .cookie = x.cookie, .src = x.src, .dst = x.dst, .len = x.len } };
	return true;
}

/* Consumer: the length of the next descriptor, left in the queue; 0 if
 * none is ready. */
static inline uint64_t sw_sq_next_len(struct sw_ring *sq)
{
	uint16_t tag;
	const void *item = sw_ring_peek_tag(sq, &tag);

	if (item == NULL)
		return 0;
	if (tag == 0)
		return ((const struct sw_desc *)item)->d.len;
	return ((const struct sw_sq_pair *)item)->len[sq->csub];
}

/* Consumer: take the descriptor sw_sq_peek just gave (@p tag its tag);
 * its slot is released with its last entry. */
static inline void sw_sq_take(struct sw_ring *sq, uint16_t tag)
{
	if (sq->csub + 1u < sw_sq_entries(tag)) {
		sq->csub++;
		return;
	}
	sq->csub = 0;
	sw_ring_release(sq);
}

/* Consumer: copy the next descriptor out and take it. False if none is
 * ready. */
static inline bool sw_sq_get(struct sw_ring *sq, struct sw_desc *out)
{
	uint16_t tag;

	if (!sw_sq_peek(sq, out, &tag))
		return false;
	sw_sq_take(sq, tag);
	return true;
}

#endif /* DOCA_HW_SW_SQ_H */
