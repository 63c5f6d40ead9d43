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
