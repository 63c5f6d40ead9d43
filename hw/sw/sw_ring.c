/*
 * hw/sw/sw_ring.c — the slow paths of the software device's rings
 * (sw_ring.h says why they are correct): making segments, growing into a
 * larger one, following a link.
 */
#include <stdlib.h>

#include "actors/hb_annotate.h"
#include "hw/sw/sw_ring.h"

/* A segment of @p size slots whose first position is @p start: each slot
 * holds the sequence of its previous lap, which no consumer waits for. */
static struct sw_slot *segment_new(uint32_t size, uint32_t start, bool spread)
{
	struct sw_slot *slots = aligned_alloc(_Alignof(struct sw_slot), sizeof(*slots) * size);

	if (slots == NULL)
		return NULL;
	hb_private(slots, sizeof(*slots) * size);
	memset(slots, 0, sizeof(*slots) * size);
	for (uint32_t i = 0; i < size; i++) {
		/* first position with low bits i (its slot: sw_slot_index) */
		uint32_t first = start + ((i - start) & (size - 1u));

		atomic_init(&slots[sw_slot_index(i, size - 1u, spread)].seq, first + 1u - size);
	}
	/* The maker's memset (a libc call an application's TSan sees) happens
	 * before the free on another thread (segment_free): the atomics that
	 * order them are invisible to it. */
	hb_release(slots);
	return slots;
}

/* Free a segment, which another thread may have made. */
static void segment_free(struct sw_slot *slots)
{
	if (slots == NULL)
		return;
	hb_acquire(slots); /* see segment_new */
	free(slots);
}

static bool ring_init(struct sw_ring *r, uint32_t max, bool spread)
{
	uint32_t size = max < SW_RING_INITIAL ? max : SW_RING_INITIAL;

	r->max = max;
	r->pspread = r->cspread = spread;
	r->pslots = r->cslots = segment_new(size, 0, spread);
	r->pmask = r->cmask = size - 1u;
	r->head = r->seg_start = r->csub = 0;
	sw_ring_see_tail(r, 0);
	atomic_init(&r->tail, 0);
	return r->pslots != NULL;
}

bool sw_ring_init(struct sw_ring *r, uint32_t max)
{
	return ring_init(r, max, false);
}

bool sw_ring_init_spread(struct sw_ring *r, uint32_t max)
{
	return ring_init(r, max, true);
}

void sw_ring_fini(struct sw_ring *r)
{
	if (r->pslots != r->cslots)
		segment_free(r->pslots); /* a link the consumer never reached: nothing behind it */
	segment_free(r->cslots);
	r->pslots = r->cslots = NULL;
}

bool sw_ring_grow(struct sw_ring *r)
{
	uint32_t size = (r->pmask + 1u) * 2u;
	uint32_t pos = r->head;

	if (r->pmask + 1u >= r->max)
		return false;
	struct sw_slot *next = segment_new(size, pos + 1u, r->pspread);

	if (next == NULL)
		return false;
	struct sw_slot *s = &r->pslots[sw_slot_index(pos, r->pmask, r->pspread)];
	struct sw_ring_link l = { .slots = next, .mask = size - 1u };

	/* zero past the link: a look at an item's bytes refuses it (sw_cq.h) */
	memset(s->payload, 0, sizeof(s->payload));
	memcpy(s->payload, &l, sizeof(l));
	s->link = 1;
	EXPLORE_POINT(QUEUE);
	/* release: the new segment is initialised before the consumer follows the link. */
	atomic_store_explicit(&s->seq, pos + 1u, memory_order_release);
	r->head = pos + 1u;
	r->seg_start = pos + 1u;
	r->pslots = next;
	r->pmask = size - 1u;
	sw_ring_see_tail(r, pos + 1u); /* its fill counted from the link on, whatever tail is */
	return true;
}

void sw_ring_follow(struct sw_ring *r, const struct sw_slot *link_slot)
{
	uint32_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
	struct sw_slot *old = r->cslots;
	struct sw_ring_link l;

	memcpy(&l, link_slot->payload, sizeof(l));
	r->cslots = l.slots;
	r->cmask = l.mask;
	EXPLORE_POINT(QUEUE);
	/* release: as for an item (the producer counts the link as read). */
	atomic_store_explicit(&r->tail, pos + 1u, memory_order_release);
	segment_free(old); /* the producer writes only the new segment since the link */
}
