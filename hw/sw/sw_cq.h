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
 * The producer (the engine thread) fills the slot at the ring's head in
 * place and publishes it when it holds SW_CQ_PACK entries or when its pass
 * over the qp ends (sw_cq_flush), so a one-at-a-time copy sees its
 * completion as soon as before. A completion waits only for small copies:
 * one of SW_CQ_ALONE_FROM bytes or more publishes its slot at once, and
 * the slot is published before such a copy starts (sw_cq_before), so at
 * most two copies of fewer bytes come between a completion and the PE. The
 * consumer (the PE's thread) takes a published slot's entries in order,
 * as many as its poll asks for, remembers how many it took in the ring's
 * `csub`, and releases the slot with its last entry.
 *
 * Why it is correct: the ring's argument, item = slot. The producer writes
 * a slot's entries and count only between its claim and its publish
 * (release), and the consumer reads them only after its acquire of the
 * slot's sequence; it releases the slot (tail, release) only after copying
 * out the last entry, so the producer, which reuses a slot only past a
 * tail it loaded, never writes entries still unread. A claimed slot left
 * with no entry is not published; the next claim returns the same slot
 * (head did not move) and starts its count again. tail != head still
 * means "an entry the PE has not taken" (sw_ring_unread, the wake's
 * check): a slot is released only when its last entry is taken.
 */
#ifndef DOCA_HW_SW_CQ_H
#define DOCA_HW_SW_CQ_H

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
	uint8_t count; /* entries written (producer) or published (consumer) */
};

_Static_assert(sizeof(struct sw_cq_slot) <= SW_SLOT_PAYLOAD, "a packed slot fits one ring slot");

/* Producer: the slot to add to, claimed if none is open (*open); false if
 * the ring is full at its largest (or a larger segment cannot be made). */
static inline bool sw_cq_room(struct sw_ring *cq, struct sw_cq_slot **open)
{
	if (*open != NULL)
		return true;
	*open = sw_ring_claim(cq);
	if (*open == NULL)
		return false;
	(*open)->count = 0;
	return true;
}

/* Producer: publish the open slot if it holds an entry (the end of a pass). */
static inline void sw_cq_flush(struct sw_ring *cq, struct sw_cq_slot **open)
{
	if (*open != NULL && (*open)->count != 0)
		sw_ring_publish(cq);
	*open = NULL;
}

/* Producer: before a copy of @p len bytes starts, publish the entries of
 * the open slot if it is large (they would wait for it). */
static inline void sw_cq_before(struct sw_ring *cq, struct sw_cq_slot **open, uint64_t len)
{
	if (len >= SW_CQ_ALONE_FROM)
		sw_cq_flush(cq, open);
}

/* Producer: add a completion to the open slot (sw_cq_room said there is
 * one); publish the slot once it is full or the copy was large. */
static inline void sw_cq_add(struct sw_ring *cq, struct sw_cq_slot **open, const struct hw_cqe *c)
{
	struct sw_cq_slot *s = *open;
	uint8_t i = s->count;

	s->cookie[i] = c->cookie;
	s->bytes[i] = c->bytes;
	s->meta[i] = (uint8_t)(c->status | (c->fatal ? SW_CQ_FATAL : 0u) |
			       (uint32_t)c->error << SW_CQ_ERROR_SHIFT);
	s->count = (uint8_t)(i + 1u);
	if (s->count == SW_CQ_PACK || c->bytes >= SW_CQ_ALONE_FROM)
		sw_cq_flush(cq, open);
}

/* Consumer: take up to @p max completions, in order. */
static inline uint32_t sw_cq_poll(struct sw_ring *cq, struct hw_cqe *out, uint32_t max)
{
	const struct sw_cq_slot *s;
	uint32_t n = 0;

	while (n < max && (s = sw_ring_peek(cq)) != NULL) {
		uint32_t i = cq->csub;

		for (; i < s->count && n < max; i++, n++)
			out[n] = (struct hw_cqe){
				.cookie = s->cookie[i],
				.bytes = s->bytes[i],
				.status = s->meta[i] & SW_CQ_STATUS_MASK,
				.error = (doca_error_t)(s->meta[i] >> SW_CQ_ERROR_SHIFT),
				.fatal = (s->meta[i] & SW_CQ_FATAL) != 0,
			};
		if (i < s->count) {
			cq->csub = i; /* max reached inside the slot */
			break;
		}
		cq->csub = 0;
		sw_ring_release(cq);
	}
	return n;
}

#endif /* DOCA_HW_SW_CQ_H */
