/* tests/engine/sw_ring.c — the software device's rings grow by use
 * (hw/sw/sw_ring.h). */
#include <criterion/criterion.h>

#include "hw/sw/sw_ring.h"

Test(sw_ring, a_new_ring_is_small_and_grows_only_when_full)
{
	struct sw_ring r;
	uint64_t v;

	cr_assert(sw_ring_init(&r, 1024));
	cr_assert_eq(r.pmask + 1u, SW_RING_INITIAL, "a new ring has %u slots", SW_RING_INITIAL);
	for (uint64_t i = 0; i < SW_RING_INITIAL - 1u; i++)
		cr_assert(sw_ring_put(&r, &i, sizeof(i)));
	cr_assert_eq(r.pslots, r.cslots, "one slot kept for the link: no growth yet");
	v = SW_RING_INITIAL - 1u;
	cr_assert(sw_ring_put(&r, &v, sizeof(v)));
	cr_assert_neq(r.pslots, r.cslots, "full: the producer moved to a larger segment");
	cr_assert_eq(r.pmask + 1u, 2u * SW_RING_INITIAL);
	cr_assert(sw_ring_ready(&r));
	for (uint64_t i = 0; i < SW_RING_INITIAL; i++) {
		cr_assert(sw_ring_get(&r, &v, sizeof(v)));
		cr_assert_eq(v, i, "item %llu comes out in order (got %llu)", (unsigned long long)i,
			     (unsigned long long)v);
	}
	cr_assert_eq(r.pslots, r.cslots, "the consumer followed the link");
	cr_assert_not(sw_ring_get(&r, &v, sizeof(v)));
	cr_assert_not(sw_ring_unread(&r), "every item and the link were read");
	sw_ring_fini(&r);
}

Test(sw_ring, growth_stops_at_max_and_every_item_comes_out_once_in_order)
{
	struct sw_ring r;
	uint64_t n = 0, v = 0;

	cr_assert(sw_ring_init(&r, 64));
	while (sw_ring_put(&r, &n, sizeof(n)))
		n++;
	/* segments of 16 and 32 slots keep one for their link; the last, at
	 * max, is full at 64 */
	cr_assert_eq(n, 15u + 31u + 64u, "%llu items before full", (unsigned long long)n);
	cr_assert_eq(r.pmask + 1u, 64u);
	for (uint64_t i = 0; i < n; i++) {
		cr_assert(sw_ring_get(&r, &v, sizeof(v)));
		cr_assert_eq(v, i);
	}
	cr_assert_not(sw_ring_get(&r, &v, sizeof(v)));
	/* the largest segment is reused, and holds 64 again */
	for (uint64_t i = 0; i < 64; i++)
		cr_assert(sw_ring_put(&r, &i, sizeof(i)));
	cr_assert_not(sw_ring_put(&r, &v, sizeof(v)), "at max and full: refused");
	for (uint64_t i = 0; i < 64; i++) {
		cr_assert(sw_ring_get(&r, &v, sizeof(v)));
		cr_assert_eq(v, i);
	}
	sw_ring_fini(&r);
}

Test(sw_ring, a_small_max_makes_a_ring_of_that_size_that_never_grows)
{
	struct sw_ring r;
	uint64_t v = 7;

	cr_assert(sw_ring_init(&r, 2));
	cr_assert(sw_ring_put(&r, &v, sizeof(v)));
	cr_assert(sw_ring_put(&r, &v, sizeof(v)));
	cr_assert_not(sw_ring_put(&r, &v, sizeof(v)), "2 slots, 2 items");
	cr_assert_eq(r.pmask, 1u);
	sw_ring_fini(&r);
}

/* sw_slot_index with spread is a permutation of each segment's slots,
 * for every size a ring may have, and consecutive positions are not in
 * consecutive slots (the point of it) from 32 slots on (16: once a lap);
 * without spread it is the position's low bits. */
Test(sw_ring, a_spread_segment_maps_each_position_of_a_lap_to_its_own_slot)
{
	static unsigned char hit[65536];

	for (uint32_t size = 2; size <= 65536u; size *= 2) {
		uint32_t mask = size - 1u, adjacent = 0;

		memset(hit, 0, size);
		for (uint32_t pos = 1000u; pos != 1000u + size; pos++) {
			uint32_t i = sw_slot_index(pos, mask, true);

			cr_assert_lt(i, size);
			cr_assert_eq(hit[i]++, 0, "size %u: slot %u serves one position a lap", size, i);
			cr_assert_eq(sw_slot_index(pos, mask, false), pos & mask);
			adjacent += sw_slot_index(pos + 1u, mask, true) == ((i + 1u) & mask);
		}
		if (size >= 16u)
			cr_assert_eq(adjacent, size == 16u ? 1u : 0u, "size %u: a position's successor in the next slot",
				     size);
	}
}

/* A spread ring hands its items over as a ring in order does: each once,
 * in order, through wraps and through growth to max, a full ring at max
 * refused with nothing changed. */
Test(sw_ring, a_spread_ring_keeps_the_order_through_wraps_and_growth)
{
	struct sw_ring r;
	uint64_t put = 0, got = 0, v;

	cr_assert(sw_ring_init_spread(&r, 256));
	for (uint32_t round = 0; round < 40; round++) {
		uint32_t burst = 1u + (round * 7u) % 50u; /* growth on the way: up to 49 held */

		for (uint32_t k = 0; k < burst; k++, put++)
			cr_assert(sw_ring_put(&r, &put, sizeof(put)));
		for (uint32_t k = 0; k < burst - round % 2u; k++, got++) {
			cr_assert(sw_ring_get(&r, &v, sizeof(v)));
			cr_assert_eq(v, got, "item %llu in order (got %llu)", (unsigned long long)got,
				     (unsigned long long)v);
		}
	}
	while (sw_ring_put(&r, &put, sizeof(put)))
		put++;
	cr_assert_eq(r.pmask + 1u, 256u, "grown to max");
	uint32_t head = r.head;

	cr_assert_not(sw_ring_put(&r, &put, sizeof(put)));
	cr_assert_eq(r.head, head, "a refused put changed nothing");
	for (; got < put; got++) {
		cr_assert(sw_ring_get(&r, &v, sizeof(v)));
		cr_assert_eq(v, got);
	}
	cr_assert_not(sw_ring_get(&r, &v, sizeof(v)));
	cr_assert_not(sw_ring_unread(&r));
	sw_ring_fini(&r);
}
