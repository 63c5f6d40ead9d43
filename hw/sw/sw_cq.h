/*
 * hw/sw/sw_cq.h — the engine mode's completion queue: up to SW_CQ_PACK
 * completions in each slot of an SPSC ring (hw/sw/sw_ring.h).
 *
 * Why packed: with one completion per slot, every task made one CQ line
 * cross from the engine's CPU to the PE's and back, and perf showed both
 * sides stalled on it (offload 64 B: the engine on its store into the slot,
 * the PE on its load of the slot's sequence). A slot of three compact
 * entries (cookie, bytes and one byte for status, fatal and error) makes
 * that a third of a crossing per task.
 *
 * The producer (the engine thread) gathers completions in a slot of its
 * own (struct sw_cq_slot, a local of its pass) and copies it into the
 * ring's slot when it holds SW_CQ_PACK entries or when its pass over the
 * qp ends (sw_cq_flush), so a one-at-a-time copy sees its completion as
 * soon as before, and the ring's slot, which the waiting PE is polling, is
 * written in one go, once: writing entries into it one by one made its
 * line cross back and forth while the PE polled it (4 KiB offload 10 %
 * slower). A completion waits only for small copies: one of
 * SW_CQ_ALONE_FROM bytes or more is published at once, and the gathered
 * entries are published before such a copy starts (sw_cq_before), so at
 * most two copies of fewer bytes come between a completion and the PE.
 * The consumer (the PE's thread) takes a published slot's entries in
 * order, as many as its poll asks for, remembers how many it took in the
 * ring's `csub`, and releases the slot with its last entry.
 *
 * Why it is correct: the ring's argument, item = slot (sw_ring_claim,
 * sw_ring_publish). The room for the gathered slot is checked before its
 * first entry's descriptor is taken (sw_cq_room: a claim, which stores
 * nothing), and nothing else is published before the gathered slot, so
 * the flush that publishes it writes that same claimed slot
 * (sw_ring_claimed), with no second look at the room. tail != head still
 * means "an entry the PE has not taken" (sw_ring_unread, the wake's
 * check): a slot is released only when its last entry is taken.
 */
#ifndef DOCA_HW_SW_CQ_H
#define DOCA_HW_SW_CQ_H

#include <stddef.h>
#include <string.h>

#include "hw/hw.h"
#include "hw/sw/sw_ring.h"

#define SW_CQ_PACK 3u /* completions per ring slot */
/* A copy this large costs more than a line crossing saves: its completion,
 * and those before it, are published at once. */
#define SW_CQ_ALONE_FROM 1024u

/* status (2 bits) | fatal (1 bit) << 2 | error (5 bits) << 3 */
#define SW_CQ_STATUS_MASK 3u
#define SW_CQ_FATAL 4u
#define SW_CQ_ERROR_SHIFT 3u

_Static_assert(HW_CQE_FLUSHED <= SW_CQ_STATUS_MASK, "a status fits 2 bits");
_Static_assert(DOCA_ERROR_COUNT <= 32, "an error code fits 5 bits");

struct sw_cq_slot {
	uint64_t cookie[SW_CQ_PACK];
	uint64_t bytes[SW_CQ_PACK];
	uint8_t meta[SW_CQ_PACK];
	uint8_t count; /* entries gathered (producer) or published (consumer) */
};

_Static_assert(sizeof(struct sw_cq_slot) <= SW_SLOT_PAYLOAD, "a packed slot fits one ring slot");

/* Producer: is there room for one more completion? True while the
 * gathered slot @p g has entries (its room was checked before the first),
 * else if the ring has a free slot (or can grow to one). */
static inline bool sw_cq_room(struct sw_ring *cq, const struct sw_cq_slot *g)
{
	return g->count != 0 || sw_ring_claim(cq) != NULL;
}

/* Producer: publish the gathered completions, if any (the end of a pass),
 * into the slot sw_cq_room claimed before the first of them (nothing was
 * published since): no second look at the room. */
static inline void sw_cq_flush(struct sw_ring *cq, struct sw_cq_slot *g)
{
	if (g->count == 0)
		return;
	memcpy(sw_ring_claimed(cq), g, sizeof(*g));
	sw_ring_publish(cq);
	g->count = 0;
}

/* Producer: before a copy of @p len bytes starts, publish the gathered
 * completions if it is large (they would wait for it). */
static inline void sw_cq_before(struct sw_ring *cq, struct sw_cq_slot *g, uint64_t len)
{
	if (len >= SW_CQ_ALONE_FROM)
		sw_cq_flush(cq, g);
}

/* Producer: gather a completion already packed (sw_cq_room said there is
 * room; @p meta 0: a whole copy's, HW_CQE_OK, DOCA_SUCCESS, not fatal);
 * publish the slot once it is full or the copy was large. An engine
 * thread's whole copy comes here straight, with no struct hw_cqe built
 * and packed. */
static inline void sw_cq_gather(struct sw_ring *cq, struct sw_cq_slot *g, uint64_t cookie, uint64_t bytes,
				uint8_t meta)
{
	uint8_t i = g->count;

	g->cookie[i] = cookie;
	g->bytes[i] = bytes;
	g->meta[i] = meta;
	g->count = (uint8_t)(i + 1u);
	if (g->count == SW_CQ_PACK || bytes >= SW_CQ_ALONE_FROM)
		sw_cq_flush(cq, g);
}

/* Producer: gather a completion (sw_cq_room said there is room); publish
 * the slot once it is full or the copy was large. */
static inline void sw_cq_add(struct sw_ring *cq, struct sw_cq_slot *g, const struct hw_cqe *c)
{
	sw_cq_gather(cq, g, c->cookie, c->bytes,
		     (uint8_t)(c->status | (c->fatal ? SW_CQ_FATAL : 0u) | (uint32_t)c->error << SW_CQ_ERROR_SHIFT));
}

/* Consumer: one entry of a published slot as a completion; a whole
 * copy's (meta 0: HW_CQE_OK, DOCA_SUCCESS, not fatal) without decoding. */
static inline void sw_cq_entry(const struct sw_cq_slot *s, uint32_t i, struct hw_cqe *o)
{
	uint32_t m = s->meta[i];

	o->cookie = s->cookie[i];
	o->bytes = s->bytes[i];
	if (__builtin_expect(m == 0, 1)) {
		o->status = HW_CQE_OK;
		o->error = DOCA_SUCCESS;
		o->fatal = false;
		return;
	}
	o->status = m & SW_CQ_STATUS_MASK;
	o->error = (doca_error_t)(m >> SW_CQ_ERROR_SHIFT);
	o->fatal = (m & SW_CQ_FATAL) != 0;
}

/* A slot's meta word: its three metas and its count, in their order in
 * memory, as one 4-byte load reads them (either byte order). */
static inline uint32_t sw_cq_meta_word(uint8_t m0, uint8_t m1, uint8_t m2, uint8_t count)
{
	const uint8_t bytes[SW_CQ_PACK + 1u] = { m0, m1, m2, count };
	uint32_t word;

	_Static_assert(SW_CQ_PACK == 3u, "the whole-slot look and its reap (sw_cq_take) name three entries");
	_Static_assert(offsetof(struct sw_cq_slot, count) == offsetof(struct sw_cq_slot, meta) + SW_CQ_PACK,
		       "the count follows the metas");
	memcpy(&word, bytes, sizeof(word));
	return word;
}

/* Consumer: slot @p s's meta word, with @p i (the entries taken, less
 * than SW_CQ_PACK) or-ed into its first meta's byte: a slot partly
 * taken then never looks whole nor short. */
static inline uint32_t sw_cq_slot_word(const struct sw_cq_slot *s, uint32_t i)
{
	uint32_t word;

	memcpy(&word, s->meta, sizeof(word));
	return word | sw_cq_meta_word((uint8_t)i, 0, 0, 0);
}

/* Consumer: true if the published slot @p s, of which @p i entries were
 * taken, is whole and of whole copies: none taken, SW_CQ_PACK of them,
 * each's meta 0 (HW_CQE_OK, DOCA_SUCCESS, not fatal): one compare of
 * the meta word. */
static inline bool sw_cq_slot_whole(const struct sw_cq_slot *s, uint32_t i)
{
	return sw_cq_slot_word(s, i) == sw_cq_meta_word(0, 0, 0, SW_CQ_PACK);
}

/* Consumer: the count of the published slot @p s, of which @p i entries
 * were taken, if it is short and of whole copies and fits @p left: none
 * taken, each meta 0 (an entry's past the count too: a gathered slot's
 * metas past its count are 0 unless an odd one sat there earlier in the
 * pass, which only sends the slot the general way), 1 to @p left
 * entries; else 0 (a link's count is 0). Asked after sw_cq_slot_whole,
 * so a whole slot that fits never comes here. */
static inline uint32_t sw_cq_slot_short(const struct sw_cq_slot *s, uint32_t i, uint32_t left)
{
	uint32_t count = s->count;

	if ((sw_cq_slot_word(s, i) & sw_cq_meta_word(0xff, 0xff, 0xff, 0)) != 0 || count - 1u >= left)
		return 0;
	return count;
}

/* Consumer: take up to @p max completions, in order: from each published
 * slot as many as are left in it and fit, counted once a slot. Without
 * @p reap (poll), each whole into cqes[]; with it (reap), each one's
 * record linked at *link (hw_link_record, @p next: the records' link
 * offset; hw_ops.reap) and only one that is not a whole copy (meta not
 * 0) whole into cqes[], *nodd of them.
 *
 * The consumer's own words (tail, its segment, csub: only it stores
 * them) are loaded once a call and kept in registers, as the link
 * stores could alias them; tail is stored at each slot's release as
 * before, csub once at the end. A link slot's payload is zero past the
 * link (sw_ring_grow), so its count is 0 and the whole-slot look
 * refuses it without a look at the link flag; the general way follows
 * it. */
static inline __attribute__((always_inline)) uint32_t sw_cq_take(struct sw_ring *cq, uint32_t max, bool reap,
								 void **link, uint32_t next, struct hw_cqe *cqes,
								 uint32_t *nodd)
{
	uint32_t pos = atomic_load_explicit(&cq->tail, memory_order_relaxed), mask = cq->cmask, i = cq->csub;
	const struct sw_slot *slots = cq->cslots, *r;
	/* left: how many more fit (max less those taken), one register */
	uint32_t left = max, odd = 0;
	void *at = reap ? *link : NULL;

	while (left != 0 && sw_slot_ready(r = &slots[pos & mask], pos)) {
		const struct sw_cq_slot *s = (const struct sw_cq_slot *)r->payload;

		if (reap && left >= SW_CQ_PACK && sw_cq_slot_whole(s, i)) {
			/* a reap of a whole slot of whole copies: its records
			 * linked, no entry's test, i left 0 */
			at = hw_link_record(at, s->cookie[0], next);
			at = hw_link_record(at, s->cookie[1], next);
			at = hw_link_record(at, s->cookie[2], next);
			left -= SW_CQ_PACK;
			sw_ring_release_at(cq, pos++);
			continue;
		}
		if (__builtin_expect(r->link, 0)) {
			sw_ring_follow(cq, r); /* tail past the link */
			pos++;
			slots = cq->cslots;
			mask = cq->cmask;
			continue;
		}
		uint32_t c = reap ? sw_cq_slot_short(s, i, left) : 0;

		if (c != 0) {
			/* a reap of a short slot of whole copies (a pass's
			 * last, 1 or 2 entries): the same, no entry's test */
			at = hw_link_record(at, s->cookie[0], next);
			if (c > 1)
				at = hw_link_record(at, s->cookie[1], next);
			left -= c;
			sw_ring_release_at(cq, pos++);
			continue;
		}
		uint32_t take = s->count - i;
		bool more = take > left; /* max reached inside the slot */

		if (more)
			take = left;
		/* not unrolled: gcc's three copies of it took the registers
		 * that the whole-slot way then spilled (the link offset, the
		 * tail's address), 2 loads a slot */
#pragma GCC unroll 1
		for (uint32_t k = i + take; i != k; i++, left--) {
			if (!reap) {
				sw_cq_entry(s, i, &cqes[max - left]);
				continue;
			}
			at = hw_link_record(at, s->cookie[i], next);
			if (__builtin_expect(s->meta[i] != 0, 0))
				sw_cq_entry(s, i, &cqes[odd++]);
		}
		if (more)
			break;
		i = 0;
		sw_ring_release_at(cq, pos++);
	}
	cq->csub = i;
	if (reap) {
		*link = at;
		*nodd = odd;
	}
	return max - left;
}

/* Consumer: hw_ops.poll's way (sw_cq_take). */
static inline uint32_t sw_cq_poll(struct sw_ring *cq, struct hw_cqe *out, uint32_t max)
{
	return sw_cq_take(cq, max, false, NULL, 0, out, NULL);
}

/* Consumer: hw_ops.reap's way (sw_cq_take). */
static inline uint32_t sw_cq_reap(struct sw_ring *cq, void **link, uint32_t next, uint32_t max, struct hw_cqe *odd,
				  uint32_t *nodd)
{
	return sw_cq_take(cq, max, true, link, next, odd, nodd);
}

#endif /* DOCA_HW_SW_CQ_H */
