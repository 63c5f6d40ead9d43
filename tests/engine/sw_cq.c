/* tests/engine/sw_cq.c — the engine mode's packed completion queue
 * (hw/sw/sw_cq.h): SW_CQ_PACK entries a slot, published when full or at
 * the end of a pass, taken in order whatever the consumer asks for; a
 * whole copy's entry carries no bytes, a failed or partial one's carries
 * them in a second entry. */
#include <criterion/criterion.h>

#include <signal.h>
#include <string.h>

#include "hw/sw/sw_cq.h"

static struct hw_cqe cqe_of(uint64_t i)
{
	/* small copies (under SW_CQ_ALONE_FROM): packed SW_CQ_PACK to a slot */
	return (struct hw_cqe){ .cookie = 0x1000u + i, .bytes = 1u + i % 1000u, .status = HW_CQE_OK };
}

/* The room for @p c: its own entries (the engine asks for 2 each while a
 * fault is configured). */
static bool room_for(struct sw_ring *cq, struct sw_cq_slot *g, const struct hw_cqe *c)
{
	return sw_cq_room(cq, g, sw_cq_entries_of(sw_cq_meta_of(c)));
}

/* The producer adds completion i (room first, as the engine does). */
static void add(struct sw_ring *cq, struct sw_cq_slot *g, uint64_t i)
{
	struct hw_cqe c = cqe_of(i);

	cr_assert(room_for(cq, g, &c), "room for completion %llu", (unsigned long long)i);
	sw_cq_add(cq, g, &c);
}

static void expect_cqe(const struct hw_cqe *got, uint64_t i)
{
	struct hw_cqe want = cqe_of(i);

	cr_assert_eq(got->cookie, want.cookie, "completion %llu: cookie %#llx", (unsigned long long)i,
		     (unsigned long long)got->cookie);
	/* a whole copy's bytes are its len, the caller's: not carried (hw/hw.h) */
	cr_assert_eq(got->bytes, 0u);
	cr_assert_eq(got->status, (uint32_t)HW_CQE_OK);
	cr_assert_eq(got->error, DOCA_SUCCESS);
	cr_assert_not(got->fatal);
}

Test(sw_cq, a_slot_is_published_only_when_it_holds_six)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct hw_cqe out[SW_CQ_PACK + 1u];

	cr_assert_eq(SW_CQ_PACK, 6u);
	cr_assert(sw_ring_init(&cq, 64));
	struct sw_slot before = cq.pslots[0]; /* the slot the PE polls next */

	for (uint64_t i = 0; i < SW_CQ_PACK - 1u; i++)
		add(&cq, &g, i);
	cr_assert_eq(sw_cq_poll(&cq, out, SW_CQ_PACK + 1u), 0u, "five entries wait, gathered");
	cr_assert_eq(cq.head, 0u, "nothing published");
	cr_assert_eq(memcmp(&before, &cq.pslots[0], sizeof(before)), 0,
		     "the ring's slot is not written before it is published");
	add(&cq, &g, SW_CQ_PACK - 1u);
	cr_assert_eq(g.count, 0, "a full slot is published, and gathering starts again");
	cr_assert_eq(cq.head, 1u, "one slot for six completions");
	cr_assert_eq(sw_cq_poll(&cq, out, SW_CQ_PACK + 1u), SW_CQ_PACK);
	for (uint64_t i = 0; i < SW_CQ_PACK; i++)
		expect_cqe(&out[i], i);
	cr_assert_not(sw_ring_unread(&cq), "the slot was released with its last entry");
	sw_ring_fini(&cq);
}

Test(sw_cq, the_end_of_a_pass_publishes_a_partial_slot_and_never_an_empty_one)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct hw_cqe out[4];

	cr_assert(sw_ring_init(&cq, 64));
	cr_assert(sw_cq_room(&cq, &g, 1));
	sw_cq_flush(&cq, &g); /* a pass that found no due descriptor */
	cr_assert_eq(g.count, 0);
	cr_assert_eq(cq.head, 0u, "an empty slot is not published");
	cr_assert_eq(sw_cq_poll(&cq, out, 4), 0u);
	add(&cq, &g, 7);
	sw_cq_flush(&cq, &g);
	cr_assert_eq(cq.head, 1u, "one entry, published at the pass's end");
	cr_assert_eq(sw_cq_poll(&cq, out, 4), 1u);
	expect_cqe(&out[0], 7);
	cr_assert_not(sw_ring_unread(&cq));
	sw_ring_fini(&cq);
}

Test(sw_cq, a_large_copy_publishes_its_slot_and_the_entries_before_it_at_once)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct hw_cqe out[4];
	struct hw_cqe big = { .cookie = 0xb16, .bytes = SW_CQ_ALONE_FROM, .status = HW_CQE_OK };
	struct hw_cqe below = { .cookie = 0x5a11, .bytes = SW_CQ_ALONE_FROM - 1u, .status = HW_CQE_OK };

	cr_assert(sw_ring_init(&cq, 64));
	add(&cq, &g, 0);
	cr_assert(sw_cq_room(&cq, &g, 1));
	sw_cq_add(&cq, &g, &big);
	cr_assert_eq(g.count, 0, "a large copy's completion does not wait for more");
	cr_assert_eq(cq.head, 1u);
	cr_assert(sw_cq_room(&cq, &g, 1));
	sw_cq_add(&cq, &g, &below);
	cr_assert_eq(g.count, 1, "one byte less is packed");
	cr_assert_eq(cq.head, 1u);
	sw_cq_flush(&cq, &g);
	cr_assert_eq(sw_cq_poll(&cq, out, 4), 3u);
	expect_cqe(&out[0], 0);
	cr_assert_eq(out[1].cookie, big.cookie);
	cr_assert_eq(out[1].status, (uint32_t)HW_CQE_OK);
	cr_assert_eq(out[2].cookie, below.cookie);
	sw_ring_fini(&cq);
}

Test(sw_cq, gathered_entries_go_out_before_a_large_copy_starts)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct hw_cqe out[4];

	cr_assert(sw_ring_init(&cq, 64));
	sw_cq_before(&cq, &g, SW_CQ_ALONE_FROM); /* nothing gathered: nothing to do */
	cr_assert_eq(cq.head, 0u);
	add(&cq, &g, 0);
	sw_cq_before(&cq, &g, SW_CQ_ALONE_FROM - 1u);
	cr_assert_eq(g.count, 1, "a small copy next: the entry may wait for it");
	cr_assert_eq(cq.head, 0u);
	sw_cq_before(&cq, &g, SW_CQ_ALONE_FROM);
	cr_assert_eq(g.count, 0, "a large copy next: published first");
	cr_assert_eq(cq.head, 1u);
	cr_assert_eq(sw_cq_poll(&cq, out, 4), 1u);
	expect_cqe(&out[0], 0);
	sw_ring_fini(&cq);
}

Test(sw_cq, a_poll_may_stop_inside_a_slot_and_the_next_goes_on_from_there)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct hw_cqe out[SW_CQ_PACK];

	cr_assert(sw_ring_init(&cq, 64));
	for (uint64_t i = 0; i < 2u * SW_CQ_PACK; i++)
		add(&cq, &g, i);
	cr_assert_eq(sw_cq_poll(&cq, out, 2), 2u);
	expect_cqe(&out[0], 0);
	expect_cqe(&out[1], 1);
	cr_assert(sw_ring_unread(&cq), "the first slot still holds entries");
	cr_assert_eq(atomic_load(&cq.tail), 0u, "and is not released");
	cr_assert_eq(sw_cq_poll(&cq, out, SW_CQ_PACK), SW_CQ_PACK, "the rest of slot 0, then two of slot 1");
	for (uint64_t i = 0; i < SW_CQ_PACK; i++)
		expect_cqe(&out[i], 2 + i);
	cr_assert_eq(atomic_load(&cq.tail), 1u);
	cr_assert_eq(sw_cq_poll(&cq, out, SW_CQ_PACK), SW_CQ_PACK - 2u);
	for (uint64_t i = 0; i < SW_CQ_PACK - 2u; i++)
		expect_cqe(&out[i], SW_CQ_PACK + 2u + i);
	cr_assert_not(sw_ring_unread(&cq));
	cr_assert_eq(sw_cq_poll(&cq, out, SW_CQ_PACK), 0u);
	sw_ring_fini(&cq);
}

Test(sw_cq, every_status_error_and_fatal_flag_comes_back_as_put)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct hw_cqe in, out;
	uint32_t n = 0;

	cr_assert(sw_ring_init(&cq, 1024));
	for (uint32_t st = HW_CQE_OK; st <= HW_CQE_FLUSHED; st++)
		for (uint32_t err = 0; err < DOCA_ERROR_COUNT; err++)
			for (int fatal = 0; fatal < 2; fatal++) {
				in = (struct hw_cqe){ .cookie = UINT64_MAX - n, .bytes = (uint64_t)1 << 40 | n,
						      .status = st, .error = (doca_error_t)err, .fatal = fatal };
				cr_assert(sw_cq_room(&cq, &g, 2));
				sw_cq_add(&cq, &g, &in);
				sw_cq_flush(&cq, &g);
				cr_assert_eq(sw_cq_poll(&cq, &out, 1), 1u);
				cr_assert_eq(out.cookie, in.cookie);
				/* carried where the caller reads them (hw/hw.h): a
				 * failure's and a partial copy's */
				if (st == HW_CQE_FAILED || st == HW_CQE_PARTIAL)
					cr_assert_eq(out.bytes, in.bytes, "bytes beyond 4 GiB survive");
				else
					cr_assert_eq(out.bytes, 0u, "a whole or flushed copy's bytes are not carried");
				cr_assert_eq(out.status, st);
				cr_assert_eq(out.error, (doca_error_t)err, "status %u error %u fatal %d: got %d", st,
					     err, fatal, out.error);
				cr_assert_eq(out.fatal, (bool)fatal);
				n++;
			}
	cr_assert_eq(n, 4u * DOCA_ERROR_COUNT * 2u);
	sw_ring_fini(&cq);
}

Test(sw_cq, a_ring_full_at_its_largest_has_no_room_until_the_consumer_takes_a_slot)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct hw_cqe out[SW_CQ_PACK];
	struct hw_cqe c = cqe_of(99);

	cr_assert(sw_ring_init(&cq, 2));
	for (uint64_t i = 0; i < 2u * SW_CQ_PACK; i++)
		add(&cq, &g, i);
	cr_assert_not(sw_cq_room(&cq, &g, 1), "2 slots of 6: full at 12");
	cr_assert_eq(g.count, 0);
	cr_assert_eq(sw_cq_poll(&cq, out, SW_CQ_PACK - 1u), SW_CQ_PACK - 1u);
	cr_assert_not(sw_cq_room(&cq, &g, 1), "a slot partly taken is still the consumer's");
	cr_assert_eq(sw_cq_poll(&cq, out, 1), 1u);
	expect_cqe(&out[0], SW_CQ_PACK - 1u);
	cr_assert(sw_cq_room(&cq, &g, 1), "released: room again");
	sw_cq_add(&cq, &g, &c);
	sw_cq_flush(&cq, &g);
	cr_assert_eq(sw_cq_poll(&cq, out, SW_CQ_PACK), SW_CQ_PACK);
	expect_cqe(&out[0], SW_CQ_PACK);
	expect_cqe(&out[SW_CQ_PACK - 1u], 2u * SW_CQ_PACK - 1u);
	cr_assert_eq(sw_cq_poll(&cq, out, SW_CQ_PACK), 1u);
	expect_cqe(&out[0], 99);
	sw_ring_fini(&cq);
}

Test(sw_cq, across_growth_every_completion_comes_out_once_in_order)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct hw_cqe out[7];
	uint64_t put = 0, got = 0;
	const uint32_t pass[] = { 1, 5, 32, 2, 17 }; /* completions per producer pass */

	cr_assert(sw_ring_init(&cq, 1024));
	for (uint32_t round = 0; round < 40; round++) {
		for (uint32_t k = 0; k < pass[round % 5]; k++)
			add(&cq, &g, put++);
		sw_cq_flush(&cq, &g);
		if (round % 8 != 7) /* the consumer looks every eighth pass: the ring grows */
			continue;
		uint32_t n;

		while ((n = sw_cq_poll(&cq, out, 1u + round % 7u)) != 0)
			for (uint32_t i = 0; i < n; i++)
				expect_cqe(&out[i], got++);
	}
	uint32_t n;

	while ((n = sw_cq_poll(&cq, out, 7)) != 0)
		for (uint32_t i = 0; i < n; i++)
			expect_cqe(&out[i], got++);
	cr_assert_eq(got, put, "%llu of %llu completions", (unsigned long long)got, (unsigned long long)put);
	cr_assert_gt(cq.cmask + 1u, SW_RING_INITIAL, "the ring grew on the way");
	cr_assert_not(sw_ring_unread(&cq));
	sw_ring_fini(&cq);
}

/* A caller's record for hw_ops.reap: its link word not first, so the
 * offset is taken; POISON marks a link the reap must leave unwritten. */
struct rec {
	uint64_t id;
	struct rec *next;
};

#define POISON ((struct rec *)(uintptr_t)0x5a5a5a5a5a5a5a5au)

static uint64_t cookie_of(struct rec *r)
{
	return (uint64_t)(uintptr_t)r;
}

#define REAP_MOST 256u /* the largest max of a reap here */

/* sw_cq_reap with @p *at as the link word (moved as the reap moves it).
 * Its records' addresses (recs) are exactly the ones it linked, in
 * order, and none is written past its count. */
static uint32_t reap_at(struct sw_ring *cq, struct rec ***at, uint32_t max, struct hw_cqe *odd, uint32_t *nodd)
{
	struct rec *vec[REAP_MOST + 1u];
	void *link = *at;

	cr_assert_leq(max, REAP_MOST);
	for (uint32_t i = 0; i <= REAP_MOST; i++)
		vec[i] = POISON;
	uint32_t n = sw_cq_reap(cq, &link, offsetof(struct rec, next), max, vec, odd, nodd);

	for (uint32_t i = 0; i < n; i++)
		cr_assert_eq(vec[i], i == 0 ? **at : vec[i - 1u]->next, "record %u of the reap's %u in hand", i, n);
	cr_assert_eq(vec[n], POISON, "nothing written past the %u records", n);
	*at = link;
	return n;
}

/* The records @p first.. linked in order up to recs[last], whose link
 * is the one *at names and is left unwritten. */
static void expect_linked(struct rec *const *head, struct rec *recs, uint32_t from, uint32_t last,
			  struct rec **at)
{
	cr_assert_eq(*head, &recs[from], "the caller's word names the first record");
	for (uint32_t i = from; i < last; i++)
		cr_assert_eq(recs[i].next, &recs[i + 1u], "record %u links the next", i);
	cr_assert_eq(at, &recs[last].next, "the link word is the last record's");
	cr_assert_eq(recs[last].next, POISON, "the last record's link is left unwritten");
}

/* hw_ops.reap's way (sw_cq_reap): the same entries as poll, in order,
 * their records linked by the cookies, and only those that are not whole
 * copies (a failure, a partial copy, a flush, a whole one marked fatal)
 * also whole in odd[], in order; a stop inside a slot resumes there, the
 * list going on from where the last reap left its link. */
Test(sw_cq, a_reap_links_every_record_and_gives_only_the_odd_completions_whole)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct rec recs[7];
	struct hw_cqe in[7] = {
		cqe_of(0),
		{ .status = HW_CQE_FAILED, .error = DOCA_ERROR_IO_FAILED },
		cqe_of(2),
		{ .bytes = 5, .status = HW_CQE_PARTIAL, .error = DOCA_ERROR_IO_FAILED },
		{ .status = HW_CQE_FLUSHED, .error = DOCA_ERROR_SHUTDOWN },
		cqe_of(5),
		{ .bytes = 8, .status = HW_CQE_OK, .error = DOCA_SUCCESS, .fatal = true },
	};
	struct rec *head = POISON, **at = &head;
	struct hw_cqe odd[7];
	uint32_t nodd = 99;

	cr_assert(sw_ring_init(&cq, 64));
	for (uint32_t i = 0; i < 7; i++) {
		recs[i] = (struct rec){ .id = i, .next = POISON };
		in[i].cookie = cookie_of(&recs[i]);
		cr_assert(room_for(&cq, &g, &in[i]));
		sw_cq_add(&cq, &g, &in[i]);
	}
	sw_cq_flush(&cq, &g); /* slots of 4 completions (6 entries: two with bytes) and 3 */
	cr_assert_eq(reap_at(&cq, &at, 2, odd, &nodd), 2u, "max reached inside the first slot");
	expect_linked(&head, recs, 0, 1, at);
	cr_assert_eq(nodd, 1u, "the failure, whole");
	cr_assert_eq(odd[0].cookie, cookie_of(&recs[1]));
	cr_assert_eq(odd[0].status, (uint32_t)HW_CQE_FAILED);
	cr_assert_eq(odd[0].error, DOCA_ERROR_IO_FAILED);
	cr_assert_eq(odd[0].bytes, 0u);
	cr_assert_not(odd[0].fatal);
	cr_assert_eq(reap_at(&cq, &at, 7, odd, &nodd), 5u, "the rest, from inside the slot on");
	expect_linked(&head, recs, 0, 6, at);
	cr_assert_eq(nodd, 3u, "the partial copy, the flush and the fatal one; not the whole ones");
	cr_assert_eq(odd[0].cookie, cookie_of(&recs[3]));
	cr_assert_eq(odd[0].status, (uint32_t)HW_CQE_PARTIAL);
	cr_assert_eq(odd[0].bytes, 5u);
	cr_assert_eq(odd[0].error, DOCA_ERROR_IO_FAILED);
	cr_assert_eq(odd[1].cookie, cookie_of(&recs[4]));
	cr_assert_eq(odd[1].status, (uint32_t)HW_CQE_FLUSHED);
	cr_assert_eq(odd[1].error, DOCA_ERROR_SHUTDOWN);
	cr_assert_eq(odd[2].cookie, cookie_of(&recs[6]));
	cr_assert_eq(odd[2].status, (uint32_t)HW_CQE_OK);
	cr_assert_eq(odd[2].bytes, 0u, "a whole copy's bytes are the caller's len: not carried");
	cr_assert(odd[2].fatal);
	for (uint32_t i = 0; i < 7; i++)
		cr_assert_eq(recs[i].id, i, "record %u: only its link written", i);
	cr_assert_not(sw_ring_unread(&cq), "every slot released with its last entry");
	struct rec **before = at;

	cr_assert_eq(reap_at(&cq, &at, 7, odd, &nodd), 0u);
	cr_assert_eq(nodd, 0u, "set by every call");
	cr_assert_eq(at, before, "nothing reaped: the link word stays");
	cr_assert_eq(recs[6].next, POISON);
	sw_ring_fini(&cq);
}

/* A reap of whole slots of whole copies (its way without an entry's
 * test) and of a slot partly taken before, and one that stops where a
 * whole slot no longer fits max: every record once, in order, no odd
 * one. */
Test(sw_cq, a_reap_of_whole_slots_links_their_records_in_order)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct rec recs[12];
	struct rec *head = POISON, **at = &head;
	struct hw_cqe odd[12];
	uint32_t nodd = 99;

	cr_assert(sw_ring_init(&cq, 64));
	for (uint32_t i = 0; i < 12; i++) {
		struct hw_cqe c = cqe_of(i);

		recs[i] = (struct rec){ .id = i, .next = POISON };
		c.cookie = cookie_of(&recs[i]);
		cr_assert(room_for(&cq, &g, &c));
		sw_cq_add(&cq, &g, &c); /* two full slots, each published */
	}
	cr_assert_eq(reap_at(&cq, &at, 1, odd, &nodd), 1u);
	expect_linked(&head, recs, 0, 0, at);
	cr_assert_eq(reap_at(&cq, &at, 7, odd, &nodd), 7u, "the first slot's rest, one whole, one of the next");
	expect_linked(&head, recs, 0, 7, at);
	cr_assert_eq(nodd, 0u);
	cr_assert_eq(reap_at(&cq, &at, 12, odd, &nodd), 4u, "that slot's rest, then the last whole");
	expect_linked(&head, recs, 0, 11, at);
	cr_assert_eq(nodd, 0u);
	cr_assert_not(sw_ring_unread(&cq));
	sw_ring_fini(&cq);
}

/* A reap's world for the tests below: a CQ, the producer's gathered
 * slot, the records, the caller's list head and where the reap left
 * its link, and the odd completions of the last reap. */
#define REAP_RECS (SW_CQ_PACK * (2u * SW_RING_INITIAL + 1u))

struct reap_world {
	struct sw_ring cq;
	struct sw_cq_slot g;
	struct rec recs[REAP_RECS];
	struct rec *head, **at;
	struct hw_cqe odd[REAP_RECS];
	uint32_t nodd;
};

static void reap_world_open(struct reap_world *w, uint32_t max)
{
	memset(w, 0, sizeof(*w));
	cr_assert(sw_ring_init(&w->cq, max));
	w->head = POISON;
	w->at = &w->head;
	w->nodd = 99;
}

/* The producer adds record i's completion (room first): whole, or
 * failed with @p failed. */
static void reap_world_add(struct reap_world *w, uint32_t i, bool failed)
{
	struct hw_cqe c = cqe_of(i);

	w->recs[i] = (struct rec){ .id = i, .next = POISON };
	c.cookie = cookie_of(&w->recs[i]);
	if (failed) {
		c.status = HW_CQE_FAILED;
		c.error = DOCA_ERROR_IO_FAILED;
	}
	cr_assert(room_for(&w->cq, &w->g, &c), "room for record %u", i);
	sw_cq_add(&w->cq, &w->g, &c);
}

/* A reap of up to @p max; the records 0..last linked (expect_linked),
 * none odd unless @p nodd says so. */
static void reap_world_expect(struct reap_world *w, uint32_t max, uint32_t n, uint32_t last, uint32_t nodd)
{
	cr_assert_eq(reap_at(&w->cq, &w->at, max, w->odd, &w->nodd), n, "a reap of up to %u", max);
	expect_linked(&w->head, w->recs, 0, last, w->at);
	cr_assert_eq(w->nodd, nodd);
}

/* A ring grows into the slot that held a whole slot of whole copies a
 * lap before: its link's payload is zero past the link (sw_ring_grow),
 * so the reap's whole-slot look refuses it and the reap follows it;
 * every record once, in order, none of the old slot's again. */
Test(sw_cq, a_reap_follows_a_link_written_over_a_whole_slot)
{
	static struct reap_world w;
	uint32_t put = 0;

	reap_world_open(&w, 4u * SW_RING_INITIAL);
	/* a lap of whole slots, each reaped at once: the segment's last slot holds one */
	for (; put < SW_CQ_PACK * SW_RING_INITIAL; put++) {
		reap_world_add(&w, put, false);
		if (w.g.count == 0)
			reap_world_expect(&w, SW_CQ_PACK, SW_CQ_PACK, put, 0);
	}
	cr_assert_eq(w.cq.pmask + 1u, SW_RING_INITIAL, "not grown yet");
	/* a second lap unreaped: the segment fills, and the ring grows with a
	 * link in that last slot */
	for (; put < REAP_RECS; put++)
		reap_world_add(&w, put, false);
	cr_assert_eq(w.cq.pmask + 1u, 2u * SW_RING_INITIAL, "grown once");
	reap_world_expect(&w, REAP_RECS, REAP_RECS - SW_CQ_PACK * SW_RING_INITIAL, REAP_RECS - 1u, 0);
	cr_assert_eq(w.cq.cmask + 1u, 2u * SW_RING_INITIAL, "the consumer followed the link");
	cr_assert_not(sw_ring_unread(&w.cq));
	sw_ring_fini(&w.cq);
}

/* A reap of short slots of whole copies (a pass's last, 1 to
 * SW_CQ_PACK - 1 entries; their way without an entry's test), one that
 * does not fit max taken in part the general way, and a short slot whose
 * gathered metas past its count hold an odd one from earlier in the
 * pass: only its own entry is taken, whole, and nothing is odd but that
 * earlier one. Every record once, in order. */
Test(sw_cq, a_reap_of_short_slots_links_their_records_and_looks_at_no_meta_past_the_count)
{
	static struct reap_world w;
	/* completions a slot, flushed after each count; record 10, the third
	 * of the fourth slot, fails: with its bytes that slot is full (6) */
	const uint32_t slot_of[14] = { 2, 2, 1, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1 };

	reap_world_open(&w, 64);
	for (uint32_t i = 0, in_slot = 0; i < 14; i++) {
		reap_world_add(&w, i, i == 10);
		if (++in_slot == slot_of[i]) {
			sw_cq_flush(&w.cq, &w.g);
			in_slot = 0;
		}
	}
	cr_assert_eq(w.cq.head, 5u, "slots of 2, 1, 5, 5 (6 entries) and 1");
	cr_assert_eq(w.g.meta[2], (uint8_t)HW_CQE_FAILED | (uint8_t)(DOCA_ERROR_IO_FAILED << SW_CQ_ERROR_SHIFT),
		     "the last slot's gathered metas keep the odd one past its count");
	reap_world_expect(&w, 1, 1, 0, 0);   /* a slot of 2 does not fit 1: taken in part */
	reap_world_expect(&w, 7, 7, 7, 0);   /* its rest, a slot of 1, a slot of 5 */
	reap_world_expect(&w, 14, 6, 13, 1); /* a slot of 5 with an odd one, then one of 1 */
	cr_assert_eq(w.odd[0].cookie, cookie_of(&w.recs[10]), "only the failure is odd");
	cr_assert_eq(w.odd[0].status, (uint32_t)HW_CQE_FAILED);
	cr_assert_not(sw_ring_unread(&w.cq));
	sw_ring_fini(&w.cq);
}

/* A partial copy's completion with SW_CQ_PACK - 1 entries gathered:
 * asked for two entries, the room publishes the gathered slot first, so
 * the completion and its bytes go into the next slot together; the poll
 * and the reap give the bytes exact and take the pair as one
 * completion, in order. */
Test(sw_cq, a_failed_or_partial_completion_and_its_bytes_never_split_across_slots)
{
	static struct reap_world w;
	struct hw_cqe part = { .bytes = 5, .status = HW_CQE_PARTIAL, .error = DOCA_ERROR_IO_FAILED };
	struct hw_cqe out[SW_CQ_PACK + 2u];
	uint32_t i;

	for (int way = 0; way < 2; way++) { /* the poll's, the reap's */
		reap_world_open(&w, 64);
		for (i = 0; i < SW_CQ_PACK - 1u; i++)
			reap_world_add(&w, i, false);
		cr_assert_eq(w.cq.head, 0u);
		w.recs[i] = (struct rec){ .id = i, .next = POISON };
		part.cookie = cookie_of(&w.recs[i]);
		cr_assert(sw_cq_room(&w.cq, &w.g, 2), "room for the pair");
		cr_assert_eq(w.cq.head, 1u, "the five gathered went out first");
		sw_cq_add(&w.cq, &w.g, &part);
		cr_assert_eq(w.g.count, 2, "the completion and its bytes, in a slot of their own");
		reap_world_add(&w, ++i, false);
		sw_cq_flush(&w.cq, &w.g);
		if (way == 0) {
			cr_assert_eq(sw_cq_poll(&w.cq, out, SW_CQ_PACK + 2u), SW_CQ_PACK + 1u, "one each");
			cr_assert_eq(out[SW_CQ_PACK - 1u].cookie, part.cookie);
			cr_assert_eq(out[SW_CQ_PACK - 1u].status, (uint32_t)HW_CQE_PARTIAL);
			cr_assert_eq(out[SW_CQ_PACK - 1u].error, DOCA_ERROR_IO_FAILED);
			cr_assert_eq(out[SW_CQ_PACK - 1u].bytes, part.bytes, "the bytes exact");
			cr_assert_eq(out[SW_CQ_PACK].cookie, cookie_of(&w.recs[SW_CQ_PACK]));
			cr_assert_eq(out[SW_CQ_PACK].status, (uint32_t)HW_CQE_OK);
		} else {
			reap_world_expect(&w, SW_CQ_PACK + 2u, SW_CQ_PACK + 1u, SW_CQ_PACK, 1);
			cr_assert_eq(w.odd[0].cookie, part.cookie);
			cr_assert_eq(w.odd[0].status, (uint32_t)HW_CQE_PARTIAL);
			cr_assert_eq(w.odd[0].bytes, part.bytes, "the bytes exact");
		}
		cr_assert_not(sw_ring_unread(&w.cq));
		sw_ring_fini(&w.cq);
	}
}

/* A reap that stops between a failed completion and the next one, and
 * one whose max ends at the pair: the pair is taken whole, never its
 * first entry alone (csub never rests on a bytes entry). */
Test(sw_cq, a_reap_that_stops_at_a_pair_takes_it_whole_and_goes_on_after_its_bytes)
{
	static struct reap_world w;

	reap_world_open(&w, 64);
	reap_world_add(&w, 0, false);
	reap_world_add(&w, 1, true);
	reap_world_add(&w, 2, false);
	reap_world_add(&w, 3, true);
	sw_cq_flush(&w.cq, &w.g); /* one slot of 6 entries, published when full */
	cr_assert_eq(w.cq.head, 1u);
	reap_world_expect(&w, 2, 2, 1, 1);
	cr_assert_eq(w.cq.csub, 3u, "past the failure's bytes");
	reap_world_expect(&w, 1, 1, 2, 0);
	reap_world_expect(&w, 1, 1, 3, 1);
	cr_assert_eq(w.odd[0].cookie, cookie_of(&w.recs[3]));
	cr_assert_eq(w.odd[0].bytes, cqe_of(3).bytes, "a failure's bytes as put");
	cr_assert_not(sw_ring_unread(&w.cq));
	sw_ring_fini(&w.cq);
}

/* A producer that asked room for one entry and then adds a completion
 * that needs two where one is left: a broken caller, stopped. */
Test(sw_cq, a_pair_without_its_room_aborts, .signal = SIGABRT)
{
	struct sw_ring cq;
	struct sw_cq_slot g = { .count = 0 };
	struct hw_cqe fail = { .status = HW_CQE_FAILED, .error = DOCA_ERROR_IO_FAILED };

	cr_assert(sw_ring_init(&cq, 64));
	for (uint64_t i = 0; i < SW_CQ_PACK - 1u; i++)
		add(&cq, &g, i);
	cr_assert(sw_cq_room(&cq, &g, 1));
	sw_cq_add(&cq, &g, &fail);
}
