/*
 * hw/sw/sw_cq.h — the engine mode's completion queue: up to SW_CQ_PACK
 * completions in each slot of an SPSC ring (hw/sw/sw_ring.h).
 *
 * Why packed: with one completion per slot, every task made one CQ line
 * cross from the engine's CPU to the PE's and back, and perf showed both
 * sides stalled on it (offload 64 B: the engine on its store into the slot,
 * the PE on its load of the slot's sequence). A slot of six compact
 * entries makes that a sixth of a crossing per task. An entry is a cookie
 * and one byte for status, fatal and error (its meta; 0 for a whole
 * copy's), and no bytes: a whole copy's bytes are its len, which the PE
 * holds in the task (hw/hw.h, struct hw_cqe), and a flushed one's are not
 * read. A failed or partial completion, whose bytes are read, takes two
 * entries: its own, then its bytes in the next entry's cookie word; only
 * a configured fault makes one, and then the room is asked for two
 * entries a completion (sw_cq_room), so the pair is never split between
 * slots. (Three entries of cookie, bytes and meta a slot, before: the
 * reap of a whole copy never read the bytes.)
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
 * most SW_CQ_PACK - 1 copies of fewer bytes come between a completion and
 * the PE.
 * The consumer (the PE's thread) takes a published slot's entries in
 * order, as many as its poll asks for, remembers how many it took in the
 * ring's `csub`, and releases the slot with its last entry.
 *
 * Why it is correct: the ring's argument, item = slot (sw_ring_claim,
 * sw_ring_publish). The room for the gathered slot is checked before its
 * first entry's descriptor is taken (sw_cq_room: a claim, which stores
 * nothing; a gathered slot without room for the next completion's
 * entries is published first, by this same rule), and nothing else is
 * published before the gathered slot, so
 * the flush that publishes it writes that same claimed slot
 * (sw_ring_claimed), with no second look at the room. tail != head still
 * means "an entry the PE has not taken" (sw_ring_unread, the wake's
 * check): a slot is released only when its last entry is taken.
 */
#ifndef DOCA_HW_SW_CQ_H
#define DOCA_HW_SW_CQ_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"
#include "hw/sw/sw_ring.h"

#define SW_CQ_PACK 6u /* entries per ring slot */
/* A copy this large costs more than a line crossing saves: its completion,
 * and those before it, are published at once. */
#define SW_CQ_ALONE_FROM 1024u

/* status (2 bits) | fatal (1 bit) << 2 | error (5 bits) << 3 */
#define SW_CQ_STATUS_MASK 3u
#define SW_CQ_FATAL 4u
#define SW_CQ_ERROR_SHIFT 3u

_Static_assert(HW_CQE_FLUSHED <= SW_CQ_STATUS_MASK, "a status fits 2 bits");
_Static_assert(DOCA_ERROR_COUNT <= 32, "an error code fits 5 bits");

/* The count first, then the metas, then a byte that stays 0: one 8-byte
 * load reads them as the slot's meta word (sw_cq_slot_word). */
struct sw_cq_slot {
	uint64_t cookie[SW_CQ_PACK]; /* or, after a bytes-carrying entry, its bytes */
	uint8_t count;               /* entries gathered (producer) or published (consumer) */
	uint8_t meta[SW_CQ_PACK];
	uint8_t zero; /* never written: 0 in every gathered slot (zeroed at the start) */
};

_Static_assert(sizeof(struct sw_cq_slot) <= SW_SLOT_PAYLOAD, "a packed slot fits one ring slot");
_Static_assert(offsetof(struct sw_cq_slot, meta) == offsetof(struct sw_cq_slot, count) + 1u &&
		       offsetof(struct sw_cq_slot, zero) == offsetof(struct sw_cq_slot, count) + 1u + SW_CQ_PACK &&
		       offsetof(struct sw_cq_slot, zero) + 1u - offsetof(struct sw_cq_slot, count) == sizeof(uint64_t),
	       "the meta word: the count, the metas and the zero byte, 8 bytes in this order");

/* A completion's meta byte: 0 for a whole copy's (HW_CQE_OK,
 * DOCA_SUCCESS, not fatal). */
static inline uint8_t sw_cq_meta_of(const struct hw_cqe *c)
{
	return (uint8_t)(c->status | (c->fatal ? SW_CQ_FATAL : 0u) | (uint32_t)c->error << SW_CQ_ERROR_SHIFT);
}

/* Entries a completion of meta @p m takes: 2 if its bytes travel
 * (HW_CQE_FAILED, HW_CQE_PARTIAL: the caller reads them), else 1 (a
 * whole copy's bytes are its len, a flushed one's are not read). */
static inline uint32_t sw_cq_entries_of(uint32_t m)
{
	uint32_t st = m & SW_CQ_STATUS_MASK;

	return st == HW_CQE_FAILED || st == HW_CQE_PARTIAL ? 2u : 1u;
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

/* Producer: is there room for one more completion of up to @p entries
 * entries (1, or 2 where a fault is configured: sw_cq_entries_of)? True
 * while the gathered slot @p g has entries (its room was checked before
 * the first) and room for that many; else its entries, if any, are
 * published first, and then if the ring has a free slot (or can grow to
 * one). */
static inline bool sw_cq_room(struct sw_ring *cq, struct sw_cq_slot *g, uint32_t entries)
{
	/* a gathered slot never rests full (sw_cq_gather and sw_cq_add
	 * publish it), so one entry fits whenever it has any: with @p
	 * entries a constant 1 this is the count's test alone */
	if (g->count != 0 && (entries == 1u || g->count + entries <= SW_CQ_PACK))
		return true;
	sw_cq_flush(cq, g);
	return sw_ring_claim(cq) != NULL;
}

/* Producer: before a copy of @p len bytes starts, publish the gathered
 * completions if it is large (they would wait for it). */
static inline void sw_cq_before(struct sw_ring *cq, struct sw_cq_slot *g, uint64_t len)
{
	if (len >= SW_CQ_ALONE_FROM)
		sw_cq_flush(cq, g);
}

/* Producer: gather a whole copy's completion (sw_cq_room said there is
 * room): its cookie, meta 0, nothing of its @p len (its bytes are its
 * len, which the PE knows); publish the slot once it is full or the copy
 * was large. An engine thread's whole copy comes here straight, with no
 * struct hw_cqe built and packed. */
static inline void sw_cq_gather(struct sw_ring *cq, struct sw_cq_slot *g, uint64_t cookie, uint64_t len)
{
	uint8_t i = g->count;

	g->cookie[i] = cookie;
	g->meta[i] = 0;
	g->count = (uint8_t)(i + 1u);
	if (g->count == SW_CQ_PACK || len >= SW_CQ_ALONE_FROM)
		sw_cq_flush(cq, g);
}

/* Producer: gather a completion (sw_cq_room said there is room for
 * sw_cq_entries_of its meta); publish the slot once it is full or the
 * copy was large. A failed or partial one's bytes go in the entry after
 * its own (that entry's meta is not written: never read). */
static inline void sw_cq_add(struct sw_ring *cq, struct sw_cq_slot *g, const struct hw_cqe *c)
{
	uint8_t m = sw_cq_meta_of(c), i = g->count;

	if (m == 0) {
		sw_cq_gather(cq, g, c->cookie, c->bytes);
		return;
	}
	g->cookie[i] = c->cookie;
	g->meta[i] = m;
	if (sw_cq_entries_of(m) == 2u) {
		if (i + 2u > SW_CQ_PACK) {
			fputs("sw_cq_add: no room for a completion's bytes (the room was asked for one entry)\n",
			      stderr);
			abort();
		}
		g->cookie[++i] = c->bytes;
	}
	g->count = (uint8_t)(i + 1u);
	if (g->count == SW_CQ_PACK || c->bytes >= SW_CQ_ALONE_FROM)
		sw_cq_flush(cq, g);
}

/* Consumer: the completion at entry @p i of a published slot (a whole
 * copy's, meta 0: HW_CQE_OK, DOCA_SUCCESS, not fatal, without
 * decoding; its bytes are the caller's len, reported 0 here, hw/hw.h);
 * returns the entries it took (sw_cq_entries_of). */
static inline uint32_t sw_cq_entry(const struct sw_cq_slot *s, uint32_t i, struct hw_cqe *o)
{
	uint32_t m = s->meta[i];

	o->cookie = s->cookie[i];
	o->bytes = 0;
	if (__builtin_expect(m == 0, 1)) {
		o->status = HW_CQE_OK;
		o->error = DOCA_SUCCESS;
		o->fatal = false;
		return 1;
	}
	o->status = m & SW_CQ_STATUS_MASK;
	o->error = (doca_error_t)(m >> SW_CQ_ERROR_SHIFT);
	o->fatal = (m & SW_CQ_FATAL) != 0;
	if (sw_cq_entries_of(m) == 1u)
		return 1;
	o->bytes = s->cookie[i + 1u];
	return 2;
}

/* Consumer: slot @p s's meta word (its count, metas and zero byte as one
 * 8-byte load reads them, either byte order), with @p i (the entries
 * taken, less than SW_CQ_PACK) or-ed into its first meta's byte: a slot
 * partly taken then never looks whole nor short. */
static inline uint64_t sw_cq_slot_word(const struct sw_cq_slot *s, uint32_t i)
{
	/* the first meta's byte: the word's second (a shift: assembled in
	 * memory, gcc stored and reloaded it each slot) */
	const unsigned meta0_shift = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 8u : 48u;
	uint64_t word;

	memcpy(&word, &s->count, sizeof(word));
	return word | (uint64_t)i << meta0_shift;
}

/* The meta word of a slot of @p count entries with every meta 0. */
static inline uint64_t sw_cq_word_of_count(uint8_t count)
{
	uint8_t bytes[sizeof(uint64_t)] = { count };
	uint64_t word;

	memcpy(&word, bytes, sizeof(word));
	return word;
}

/* Consumer: true if the published slot @p s, of which @p i entries were
 * taken, is whole and of whole copies: none taken, SW_CQ_PACK of them,
 * each's meta 0 (HW_CQE_OK, DOCA_SUCCESS, not fatal): one compare of
 * the meta word. */
static inline bool sw_cq_slot_whole(const struct sw_cq_slot *s, uint32_t i)
{
	return sw_cq_slot_word(s, i) == sw_cq_word_of_count(SW_CQ_PACK);
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
	uint64_t word = sw_cq_slot_word(s, i);
	uint32_t count = s->count;

	if ((word & ~sw_cq_word_of_count(0xff)) != 0 || count - 1u >= left)
		return 0;
	return count;
}

/* Consumer: take up to @p max completions, in order: from each published
 * slot as many as are left in it and fit (a slot of whole copies counted
 * once, else entry by entry: a failed or partial completion is two
 * entries). Without
 * @p reap (poll), each whole into cqes[]; with it (reap), each one's
 * record linked at *link and its address stored in @p recs' next word
 * (hw_link_record, @p next: the records' link offset; hw_ops.reap) and
 * only one that is not a whole copy (meta not 0) whole into cqes[],
 * *nodd of them.
 *
 * The consumer's own words (tail, its segment, csub: only it stores
 * them) are loaded once a call and kept in registers, as the link
 * stores could alias them; tail is stored at each slot's release as
 * before, csub once at the end. A link slot's payload is zero past the
 * link (sw_ring_grow), so its count is 0 and the whole-slot look
 * refuses it without a look at the link flag; the general way follows
 * it. */
static inline __attribute__((always_inline)) uint32_t sw_cq_take(struct sw_ring *cq, uint32_t max, bool reap,
								 void **link, uint32_t next, void *recs,
								 struct hw_cqe *cqes, uint32_t *nodd)
{
	uint32_t pos = atomic_load_explicit(&cq->tail, memory_order_relaxed), mask = cq->cmask, i = cq->csub;
	const bool spread = cq->cspread; /* false for the CQ (sw_qp.c); kept exact */
	const struct sw_slot *slots = cq->cslots, *r;
	/* left: how many more fit (max less those taken), one register */
	uint32_t left = max, odd = 0;
	void *at = reap ? *link : NULL;
	/* the next record's word in recs (a pointer's size each) */
	char *rec_at = recs;

	while (left != 0 && sw_slot_ready(r = &slots[sw_slot_index(pos, mask, spread)], pos)) {
		const struct sw_cq_slot *s = (const struct sw_cq_slot *)r->payload;

		if (reap && left >= SW_CQ_PACK && sw_cq_slot_whole(s, i)) {
			/* a reap of a whole slot of whole copies: its records
			 * linked, no entry's test, i left 0 */
#pragma GCC unroll 6
			for (uint32_t k = 0; k < SW_CQ_PACK; k++, rec_at += sizeof(void *))
				at = hw_link_record(at, s->cookie[k], next, rec_at);
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
			 * last, 1 to SW_CQ_PACK - 1 entries): the same, no
			 * entry's test */
			for (uint32_t k = 0; k < c; k++, rec_at += sizeof(void *))
				at = hw_link_record(at, s->cookie[k], next, rec_at);
			left -= c;
			sw_ring_release_at(cq, pos++);
			continue;
		}
		/* the general way: entry by entry from i, a failed or partial
		 * completion two entries (its bytes in the second), until the
		 * slot ends or max is reached inside it */
		uint32_t count = s->count;

		/* not unrolled: gcc's copies of it took the registers that the
		 * whole-slot way then spilled (the link offset, the tail's
		 * address), 2 loads a slot */
#pragma GCC unroll 1
		while (i != count && left != 0) {
			left--;
			if (!reap) {
				i += sw_cq_entry(s, i, &cqes[max - left - 1u]);
				continue;
			}
			at = hw_link_record(at, s->cookie[i], next, rec_at);
			rec_at += sizeof(void *);
			if (__builtin_expect(s->meta[i] != 0, 0))
				i += sw_cq_entry(s, i, &cqes[odd++]);
			else
				i++;
		}
		if (i != count)
			break; /* max reached inside the slot */
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
	return sw_cq_take(cq, max, false, NULL, 0, NULL, out, NULL);
}

/* Consumer: hw_ops.reap's way (sw_cq_take). */
static inline uint32_t sw_cq_reap(struct sw_ring *cq, void **link, uint32_t next, uint32_t max, void *recs,
				  struct hw_cqe *odd, uint32_t *nodd)
{
	return sw_cq_take(cq, max, true, link, next, recs, odd, nodd);
}

#endif /* DOCA_HW_SW_CQ_H */
