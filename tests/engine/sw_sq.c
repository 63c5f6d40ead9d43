/* tests/engine/sw_sq.c — the software device's packed submission queue
 * (hw/sw/sw_sq.h): a burst's descriptors two to a slot, a lone one whole,
 * each taken exactly once and in order, through growth, a full ring, a
 * flush and a delay. */
#include <criterion/criterion.h>

#include <string.h>
#include <time.h>

#include "hw/sw/sw.h"

#define NDESC 256u

static unsigned char src_mem[NDESC][8], dst_mem[NDESC][8];
static const struct hw_mr mr_a, mr_b; /* only their addresses matter */

/* Descriptor i: distinct cookie, buffers and length (under 4 GiB). */
static struct hw_desc desc_of(uint32_t i)
{
	return (struct hw_desc){ .cookie = (uint64_t)(uintptr_t)&dst_mem[i][1],
				 .src = src_mem[i],
				 .dst = dst_mem[i],
				 .len = 1u + i % 8u,
				 .src_mr = &mr_a,
				 .dst_mr = &mr_b };
}

static void descs_from(struct hw_desc *d, uint32_t first, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		d[k] = desc_of(first + k);
}

/* The executor takes the next descriptor: descriptor i, exactly. A
 * compact entry carries no memory registration; a whole one both. */
static void expect_take(struct sw_ring *sq, uint32_t i)
{
	struct sw_desc got;
	struct hw_desc want = desc_of(i);

	cr_assert(sw_sq_get(sq, &got), "descriptor %u is there", i);
	cr_assert_eq(got.d.cookie, want.cookie, "descriptor %u comes out in order", i);
	cr_assert_eq(got.d.src, want.src);
	cr_assert_eq(got.d.dst, want.dst);
	cr_assert_eq(got.d.len, want.len);
	cr_assert_eq(got.due_ns, 0u);
	cr_assert(got.d.src_mr == NULL || (got.d.src_mr == &mr_a && got.d.dst_mr == &mr_b));
}

Test(sw_sq, bursts_of_odd_and_even_sizes_take_half_a_slot_each_and_come_out_once_in_order)
{
	static const uint32_t sizes[] = { 1, 2, 3, 4, 5, 7, 8, 6, 9, 1 };
	struct sw_ring sq;
	struct hw_desc d[16];
	uint32_t next = 0, taken = 0;

	cr_assert(sw_ring_init(&sq, 256));
	for (size_t b = 0; b < sizeof(sizes) / sizeof(sizes[0]); b++) {
		uint32_t n = sizes[b], head = sq.head;

		descs_from(d, next, n);
		cr_assert_eq(sw_sq_post(&sq, d, n, 0, true), n);
		/* the ring grew once on the way: a link slot (16 slots, one kept) */
		uint32_t slots = sq.head - head - (sq.seg_start > head && sq.seg_start <= sq.head ? 1u : 0u);

		cr_assert_eq(slots, n / 2u + n % 2u, "a burst of %u takes %u slots (took %u)", n,
			     n / 2u + n % 2u, slots);
		next += n;
		/* the consumer keeps up with every other burst, and takes an
		 * odd count, stopping inside a pair */
		if (b % 2u == 1u) {
			for (uint32_t k = 0; k + 1u < next - taken; k++)
				expect_take(&sq, taken + k);
			taken = next - 1u;
			cr_assert(sw_ring_ready(&sq), "one descriptor left, and it is work");
			cr_assert(sw_ring_unread(&sq));
		}
	}
	while (taken < next)
		expect_take(&sq, taken++);
	struct sw_desc none;

	cr_assert_not(sw_sq_get(&sq, &none), "nothing more");
	cr_assert_not(sw_ring_ready(&sq));
	cr_assert_not(sw_ring_unread(&sq), "every slot was released with its last entry");
	cr_assert_eq(sq.csub, 0u);
	sw_ring_fini(&sq);
}

Test(sw_sq, a_lone_descriptor_goes_whole_with_its_registrations_and_due_time)
{
	struct sw_ring sq;
	struct hw_desc d = desc_of(3);
	struct sw_desc got;
	uint16_t tag = 7;

	cr_assert(sw_ring_init(&sq, 16));
	cr_assert_eq(sw_sq_post(&sq, &d, 1, 0, true), 1u);
	cr_assert(sw_sq_peek(&sq, &got, &tag));
	cr_assert_eq(tag, 0u, "alone in its slot: a whole descriptor");
	cr_assert_eq(got.d.src_mr, &mr_a);
	cr_assert_eq(got.d.dst_mr, &mr_b);
	sw_sq_take(&sq, tag);
	cr_assert_not(sw_ring_unread(&sq));
	/* a queue pair that does not pack (delay_us, ring_max): one a slot, due time kept */
	struct hw_desc two[2] = { desc_of(4), desc_of(5) };

	cr_assert_eq(sw_sq_post(&sq, two, 2, 12345u, false), 2u);
	cr_assert_eq(sq.head, 3u, "one slot each");
	for (uint32_t i = 4; i < 6; i++) {
		cr_assert(sw_sq_get(&sq, &got));
		cr_assert_eq(got.d.cookie, desc_of(i).cookie);
		cr_assert_eq(got.due_ns, 12345u);
		cr_assert_eq(got.d.src_mr, &mr_a);
	}
	sw_ring_fini(&sq);
}

Test(sw_sq, a_copy_of_4_gib_or_more_goes_alone_with_its_whole_length)
{
	struct sw_ring sq;
	struct hw_desc d[4] = { desc_of(0), desc_of(1), desc_of(2), desc_of(3) };
	struct sw_desc got;
	uint16_t tag;

	d[1].len = (uint64_t)UINT32_MAX + 1u;
	cr_assert(sw_ring_init(&sq, 16));
	cr_assert_eq(sw_sq_post(&sq, d, 4, 0, true), 4u);
	cr_assert_eq(sq.head, 3u, "the first alone (its partner is too long), the long one alone, then a pair");
	for (uint32_t i = 0; i < 4; i++) {
		cr_assert(sw_sq_peek(&sq, &got, &tag));
		cr_assert_eq(tag, i < 2 ? 0u : SW_SQ_PACK);
		cr_assert_eq(got.d.cookie, d[i].cookie);
		cr_assert_eq(got.d.len, d[i].len, "descriptor %u: length %llu", i, (unsigned long long)got.d.len);
		sw_sq_take(&sq, tag);
	}
	cr_assert_not(sw_ring_unread(&sq));
	sw_ring_fini(&sq);
}

Test(sw_sq, a_burst_that_fills_the_ring_takes_two_a_slot_and_a_refused_post_changes_nothing)
{
	struct sw_ring sq;
	struct hw_desc d[40];
	struct sw_desc none;

	cr_assert(sw_ring_init(&sq, 16)); /* 16 slots, never grows */
	descs_from(d, 0, 40);
	cr_assert_eq(sw_sq_post(&sq, d, 40, 0, true), 32u, "16 slots hold 32 descriptors");
	cr_assert_eq(sq.head, 16u);
	struct sw_slot before[16];

	memcpy(before, sq.pslots, sizeof(before));
	cr_assert_eq(sw_sq_post(&sq, &d[32], 8, 0, true), 0u, "full: refused");
	cr_assert_eq(sq.head, 16u, "and nothing changed");
	cr_assert_eq(memcmp(before, sq.pslots, sizeof(before)), 0);
	expect_take(&sq, 0);
	cr_assert_eq(atomic_load(&sq.tail), 0u, "half a slot taken: not released");
	cr_assert_eq(sw_sq_post(&sq, &d[32], 8, 0, true), 0u, "so still full");
	expect_take(&sq, 1);
	cr_assert_eq(atomic_load(&sq.tail), 1u, "released with its second entry");
	cr_assert_eq(sw_sq_post(&sq, &d[32], 3, 0, true), 2u, "one slot free: a pair, not the third");
	for (uint32_t i = 2; i < 34; i++)
		expect_take(&sq, i);
	cr_assert_not(sw_sq_get(&sq, &none));
	cr_assert_not(sw_ring_unread(&sq));
	sw_ring_fini(&sq);
}

Test(sw_sq, growth_across_segments_while_packed_entries_are_pending)
{
	struct sw_ring sq;
	struct hw_desc d[NDESC];
	uint32_t next = 0;

	cr_assert(sw_ring_init(&sq, 64));
	descs_from(d, 0, NDESC);
	cr_assert_eq(sw_sq_post(&sq, d, 30, 0, true), 30u, "15 pairs: the first segment but its link slot");
	next = 30;
	cr_assert_eq(sq.pslots, sq.cslots, "no growth yet");
	expect_take(&sq, 0); /* the consumer inside slot 0 */
	cr_assert_eq(sq.csub, 1u);
	cr_assert_eq(sw_sq_post(&sq, &d[next], 11, 0, true), 11u, "five pairs and a lone one, in a new segment");
	next += 11;
	cr_assert_neq(sq.pslots, sq.cslots, "the producer moved to a larger segment");
	cr_assert_eq(sq.pmask + 1u, 32u);
	for (uint32_t i = 1; i < 30; i++)
		expect_take(&sq, i);
	cr_assert_neq(sq.pslots, sq.cslots, "the consumer is not yet past the link");
	expect_take(&sq, 30); /* follows the link, freeing the first segment */
	cr_assert_eq(sq.pslots, sq.cslots, "the consumer followed the link");
	cr_assert_eq(sw_sq_post(&sq, &d[next], 64, 0, true), 64u, "and growth again, to 64 slots");
	next += 64;
	for (uint32_t i = 31; i < next; i++)
		expect_take(&sq, i);
	cr_assert_not(sw_ring_unread(&sq));
	cr_assert_eq(sq.csub, 0u);
	sw_ring_fini(&sq);
}

/* ---- through the device's queue pair (hw/sw/sw_qp.c) ---- */

static void no_wake(void *arg, hw_unread_fn unread, const void *cq)
{
	(void)arg;
	(void)unread;
	(void)cq;
}

static struct hw_qp *qp_open_waking(const char *params, struct hw_dev **dev, hw_wake_fn wake)
{
	struct hw_qp_attr attr = { .depth = 64, .wake = wake };
	struct hw_qp *qp;

	memset(dst_mem, 0, sizeof(dst_mem));
	for (uint32_t i = 0; i < NDESC; i++)
		memset(src_mem[i], 0xa0 + (int)(i % 16u), sizeof(src_mem[i]));
	cr_assert_eq(hw_sw_ops.open("sw0", params, dev), DOCA_SUCCESS);
	cr_assert_eq(hw_sw_ops.qp_create(*dev, &attr, &qp), DOCA_SUCCESS);
	return qp;
}

static struct hw_qp *qp_open(const char *params, struct hw_dev **dev)
{
	return qp_open_waking(params, dev, no_wake);
}

static void qp_close(struct hw_dev *dev, struct hw_qp *qp)
{
	hw_sw_ops.qp_destroy(qp);
	hw_sw_ops.close(dev);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Poll until @p n completions came (at most 5 s), then 10 ms more for any
 * extra one; returns how many came. */
static uint32_t poll_all(struct hw_qp *qp, struct hw_cqe *out, uint32_t n, uint32_t cap)
{
	uint32_t got = 0;
	uint64_t end = now_ns() + 5000000000u, quiet = 0;

	while (now_ns() < end && got < cap) {
		got += hw_sw_ops.poll(qp, out + got, cap - got);
		if (got >= n && quiet == 0)
			quiet = now_ns() + 10000000u;
		if (quiet != 0 && now_ns() >= quiet)
			break;
	}
	return got;
}

static void expect_flushed(const struct hw_cqe *c, uint32_t i)
{
	cr_assert_eq(c->cookie, desc_of(i).cookie, "descriptor %u's completion, in order", i);
	cr_assert_eq(c->status, (uint32_t)HW_CQE_FLUSHED, "descriptor %u flushed", i);
	cr_assert_eq(c->error, DOCA_ERROR_SHUTDOWN);
	cr_assert_eq(c->bytes, 0u);
	cr_assert_eq(dst_mem[i][0], 0u, "a flushed descriptor copied nothing");
}

static void expect_copied(const struct hw_cqe *c, uint32_t i)
{
	struct hw_desc d = desc_of(i);

	cr_assert_eq(c->cookie, d.cookie, "descriptor %u's completion, in order", i);
	cr_assert_eq(c->status, (uint32_t)HW_CQE_OK, "descriptor %u copied", i);
	/* (no look at c->bytes: a whole copy's are its len, which the caller
	 * holds, and an engine's CQ does not carry them, hw/hw.h) */
	cr_assert_eq(memcmp(dst_mem[i], src_mem[i], d.len), 0);
}

Test(sw_sq, a_flush_with_packed_entries_pending_flushes_each_exactly_once_inline)
{
	struct hw_dev *dev;
	struct hw_qp *qp = qp_open(NULL, &dev);
	struct sw_qp *sqp = (struct sw_qp *)qp;
	struct hw_desc d[5];
	struct hw_cqe c[8];

	descs_from(d, 0, 5);
	cr_assert(sqp->sq_pack, "no delay, no ring_max: it packs");
	cr_assert_eq(hw_sw_ops.post(qp, d, 5), 5u);
	cr_assert_eq(sqp->sq.head, 3u, "two pairs and a lone one");
	cr_assert_eq(hw_sw_ops.poll(qp, c, 1), 1u, "the first of the first pair runs");
	expect_copied(&c[0], 0);
	hw_sw_ops.flush(qp);
	cr_assert_eq(hw_sw_ops.poll(qp, c, 8), 4u, "its partner, the second pair and the lone one");
	for (uint32_t i = 1; i < 5; i++)
		expect_flushed(&c[i - 1u], i);
	cr_assert_eq(hw_sw_ops.poll(qp, c, 8), 0u, "each exactly once");
	cr_assert_not(hw_sw_ops.pending(qp));
	cr_assert_not(sw_ring_unread(&sqp->sq));
	qp_close(dev, qp);
}

Test(sw_sq, a_flush_with_packed_entries_pending_flushes_each_exactly_once_on_an_engine)
{
	struct hw_dev *dev;
	struct hw_qp *qp = qp_open("engines=1", &dev);
	struct hw_desc d[7];
	struct hw_cqe c[16];

	descs_from(d, 0, 7);
	hw_sw_ops.flush(qp); /* later posts are flushed too: none may run */
	cr_assert_eq(hw_sw_ops.post(qp, d, 7), 7u);
	hw_sw_ops.kick(qp);
	cr_assert_eq(poll_all(qp, c, 7, 16), 7u, "exactly one completion each");
	for (uint32_t i = 0; i < 7; i++)
		expect_flushed(&c[i], i);
	qp_close(dev, qp);
}

Test(sw_sq, packed_bursts_on_an_engine_complete_whole_and_in_order)
{
	struct hw_dev *dev;
	struct hw_qp *qp = qp_open("engines=1", &dev);
	struct hw_desc d[NDESC];
	struct hw_cqe c[NDESC + 1u];
	uint32_t next = 0;

	descs_from(d, 0, NDESC);
	for (uint32_t n = 1; next + n <= 60u; next += n, n++) {
		cr_assert_eq(hw_sw_ops.post(qp, &d[next], n), n);
		hw_sw_ops.kick(qp);
	}
	cr_assert_eq(poll_all(qp, c, next, NDESC + 1u), next);
	for (uint32_t i = 0; i < next; i++)
		expect_copied(&c[i], i);
	qp_close(dev, qp);
}

/* What the engine thread's wake calls saw: how many came, how many CQ
 * slots were published at the last one, and whether the first could look
 * at the CQ again (and found an entry unread). */
static struct {
	_Atomic uint32_t calls;
	_Atomic uint32_t cq_head;
	_Atomic uint32_t first_cq_head;
	_Atomic bool first_unread;
} seen;

static void record_wake(void *arg, hw_unread_fn unread, const void *cq)
{
	(void)arg;
	/* the engine thread is the CQ's producer: head is its own */
	atomic_store(&seen.cq_head, ((const struct sw_ring *)cq)->head);
	if (atomic_load(&seen.calls) == 0) {
		atomic_store(&seen.first_cq_head, ((const struct sw_ring *)cq)->head);
		atomic_store(&seen.first_unread, unread != NULL && unread(cq));
	}
	atomic_fetch_add(&seen.calls, 1);
}

/* A qp on one engine thread whose wake calls are recorded (seen, reset). */
static struct hw_qp *qp_open_recording(struct hw_dev **dev)
{
	memset(&seen, 0, sizeof(seen));
	return qp_open_waking("engines=1", dev, record_wake);
}

/* The wake (the PE's Dekker pair, hw/sw/sw_engine.c) comes after every
 * entry of its pass is out, the partly filled last slot too: an entry
 * published after the pass's last wake could be slept through. */
Test(sw_sq, an_engine_wakes_after_its_pass_published_every_completion)
{
	struct hw_dev *dev;
	struct hw_qp *qp = qp_open_recording(&dev);
	struct sw_qp *sqp = (struct sw_qp *)qp;
	struct hw_desc d[5];
	struct hw_cqe c[8];
	uint64_t end = now_ns() + 5000000000u;

	descs_from(d, 0, 5);
	cr_assert_eq(hw_sw_ops.post(qp, d, 5), 5u);
	hw_sw_ops.kick(qp);
	/* nothing polled before the first wake: it sees its entries unread */
	while (now_ns() < end && atomic_load(&seen.calls) == 0)
		;
	cr_assert_geq(atomic_load(&seen.calls), 1u, "a busy pass calls the wake");
	cr_assert(atomic_load(&seen.first_unread), "the wake may look at the CQ again, and sees entries");
	cr_assert_eq(poll_all(qp, c, 5, 8), 5u);
	for (uint32_t i = 0; i < 5; i++)
		expect_copied(&c[i], i);
	/* poll_all waited 10 ms after the last completion: every pass is over */
	cr_assert_eq(atomic_load(&seen.cq_head), atomic_load(&sqp->cq.tail),
		     "every CQ slot (%u, all taken) was out at the last wake, which saw %u",
		     atomic_load(&sqp->cq.tail), atomic_load(&seen.cq_head));
	qp_close(dev, qp);
}

/* A pass takes at most 32 descriptors (ENGINE_BATCH, hw/sw/sw_engine.c):
 * a lone one and 31 pairs, all posted before the one kick, make the
 * first pass stop after the first entry of the 16th pair, and the next
 * go on from its second. Each completes once, whole and in order. */
Test(sw_sq, a_pass_that_stops_inside_a_pair_goes_on_from_its_second_entry_on_an_engine)
{
	struct hw_desc d[63];
	struct hw_cqe c[64];
	struct hw_dev *dev;

	memset(dst_mem, 0, sizeof(dst_mem));
	descs_from(d, 0, 63);
	struct hw_qp *qp = qp_open_recording(&dev);
	struct sw_qp *sqp = (struct sw_qp *)qp;

	cr_assert_eq(hw_sw_ops.post(qp, d, 1), 1u);
	cr_assert_eq(hw_sw_ops.post(qp, &d[1], 62), 62u);
	cr_assert(sqp->sq_pack, "no delay, no ring_max: it packs");
	hw_sw_ops.kick(qp);
	cr_assert_eq(poll_all(qp, c, 63, 64), 63u, "exactly one completion each");
	for (uint32_t i = 0; i < 63; i++)
		expect_copied(&c[i], i);
	/* poll_all waited 10 ms after the last completion: every pass is over */
	cr_assert_eq(atomic_load(&seen.calls), 2u, "two busy passes, each with its wake");
	cr_assert_eq(atomic_load(&seen.first_cq_head), 6u, "the first pass's 32: 5 CQ slots of 6 and one of 2");
	cr_assert_eq(atomic_load(&seen.cq_head), atomic_load(&sqp->cq.tail),
		     "the second pass's 31 were all out at its wake");
	cr_assert_not(sw_ring_unread(&sqp->sq), "every descriptor taken");
	qp_close(dev, qp);
}

/* delay_us: every descriptor goes whole (its due time), none completes
 * before it is due, and they complete in the order posted. */
static void delay_keeps_order(const char *params)
{
	struct hw_dev *dev;
	struct hw_qp *qp = qp_open(params, &dev);
	struct hw_cqe c[16];
	struct hw_desc d[9];

	descs_from(d, 0, 9);
	cr_assert_not(((struct sw_qp *)qp)->sq_pack, "a delayed descriptor carries its due time: not packed");
	uint64_t t0 = now_ns();

	cr_assert_eq(hw_sw_ops.post(qp, d, 4), 4u);
	cr_assert_eq(hw_sw_ops.post(qp, &d[4], 5), 5u);
	cr_assert_eq(((struct sw_qp *)qp)->sq.head, 9u, "one slot each");
	hw_sw_ops.kick(qp);
	uint32_t got = 0;

	while (got == 0 && now_ns() - t0 < 5000000000u)
		got = hw_sw_ops.poll(qp, c, 16);
	cr_assert_geq(now_ns() - t0, 2000000u, "nothing completes before its delay");
	got += poll_all(qp, c + got, 9 - got, 16 - got);
	cr_assert_eq(got, 9u);
	for (uint32_t i = 0; i < 9; i++)
		expect_copied(&c[i], i);
	qp_close(dev, qp);
}

Test(sw_sq, delay_us_keeps_the_order_posted_inline)
{
	delay_keeps_order("delay_us=2000");
}

Test(sw_sq, delay_us_keeps_the_order_posted_on_an_engine)
{
	delay_keeps_order("engines=1,delay_us=2000");
}

/* hw_ops.post_chain's records: a link, a length and two buffers, laid out
 * unlike a descriptor (the engine's are its events and buffers). */
struct chain_buf {
	uint32_t pad;
	unsigned char *data;
};

struct chain_rec {
	uint16_t pad;
	struct chain_buf *dst;
	uint64_t len;
	struct chain_rec *next;
	struct chain_buf *src;
};

static const struct hw_chain rec_map = { .next = offsetof(struct chain_rec, next),
					 .len = offsetof(struct chain_rec, len),
					 .src = offsetof(struct chain_rec, src),
					 .dst = offsetof(struct chain_rec, dst),
					 .data = offsetof(struct chain_buf, data) };

static struct chain_buf rec_src[NDESC], rec_dst[NDESC];
static struct chain_rec recs[NDESC];

/* Records 0..n-1 linked in order, record i copying as desc_of(i), one of
 * them (@p long_at < n) 4 GiB long; descs[i]: what post would be given for
 * it (its cookie the record, no memory registration). */
static void chain_of(uint32_t n, uint32_t long_at, struct hw_desc *descs)
{
	for (uint32_t i = 0; i < n; i++) {
		struct hw_desc d = desc_of(i);

		rec_src[i] = (struct chain_buf){ .data = d.src };
		rec_dst[i] = (struct chain_buf){ .data = d.dst };
		recs[i] = (struct chain_rec){ .src = &rec_src[i], .dst = &rec_dst[i], .len = d.len,
					      .next = i + 1u < n ? &recs[i + 1u] : NULL };
		if (i == long_at)
			recs[i].len = (uint64_t)UINT32_MAX + 1u;
		descs[i] = (struct hw_desc){ .cookie = (uint64_t)(uintptr_t)&recs[i], .src = d.src, .dst = d.dst,
					     .len = recs[i].len };
	}
}

/* The SQ rings of two queue pairs hold the same slots: heads, tags and
 * every byte of what their items hold. */
static void expect_same_sq(struct sw_qp *a, struct sw_qp *b)
{
	cr_assert_eq(a->sq.head, b->sq.head, "as many slots");
	cr_assert_eq(a->sq.pmask, b->sq.pmask, "the same growth");
	for (uint32_t pos = atomic_load(&a->sq.tail); pos != a->sq.head; pos++) {
		const struct sw_slot *x = &a->sq.pslots[pos & a->sq.pmask], *y = &b->sq.pslots[pos & b->sq.pmask];

		cr_assert_eq(x->tag, y->tag, "slot %u: the same form", pos);
		cr_assert_eq(memcmp(x->payload, y->payload,
				    x->tag == 0 ? sizeof(struct sw_desc) : sizeof(struct sw_sq_pair)), 0,
			     "slot %u: the same entries", pos);
	}
}

/* post_chain of records queues what post of their descriptors queues, in
 * a packing queue (pairs, a lone last one, one 4 GiB long among them,
 * the room running out), one that does not pack (delay_us 0 but
 * ring_max), and one that refuses the rest when full. */
Test(sw_sq, a_chain_of_records_is_queued_as_post_would_queue_their_descriptors)
{
	static const struct {
		const char *params;
		uint32_t n, long_at, queued;
	} cases[] = {
		{ NULL, 1, NDESC, 1 },    { NULL, 2, NDESC, 2 },    { NULL, 7, NDESC, 7 },
		{ NULL, 32, NDESC, 32 },  { NULL, 40, NDESC, 40 },  { NULL, 9, 4, 9 },
		{ NULL, 9, 3, 9 },        { "ring_max=8", 5, NDESC, 5 }, { "ring_max=8", 12, NDESC, 8 },
	};
	struct hw_desc descs[64];

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct hw_dev *da, *db;
		struct hw_qp *a = qp_open(cases[k].params, &da), *b = qp_open(cases[k].params, &db);

		cr_assert(a->posts_chain);
		chain_of(cases[k].n, cases[k].long_at, descs);
		/* the packing queue's room runs out past 15 pairs (16 slots, one kept) */
		cr_assert_eq(hw_sw_ops.post_chain(a, recs, cases[k].n, &rec_map), cases[k].queued, "case %zu", k);
		cr_assert_eq(hw_sw_ops.post(b, descs, cases[k].n), cases[k].queued, "case %zu", k);
		expect_same_sq((struct sw_qp *)a, (struct sw_qp *)b);
		for (uint32_t i = 0; i < cases[k].queued; i++) {
			struct sw_desc got;

			cr_assert(sw_sq_get(&((struct sw_qp *)a)->sq, &got));
			cr_assert_eq(got.d.cookie, descs[i].cookie, "case %zu: record %u, in order", k, i);
			cr_assert_eq(got.d.len, descs[i].len);
			cr_assert(sw_sq_get(&((struct sw_qp *)b)->sq, &got));
		}
		qp_close(da, a);
		qp_close(db, b);
	}
}

/* A small deterministic generator (the same runs each time). */
static uint32_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*state >> 33);
}

/* Records first..first + n - 1 linked in order as chain_of's, the one at
 * @p long_at (< n) 4 GiB long; the last one's link a non-pointer, which
 * post_chain must never follow. descs[i]: post's descriptor for each. */
static void chain_at(uint32_t first, uint32_t n, uint32_t long_at, struct hw_desc *descs)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = first + i;
		struct hw_desc d = desc_of(r);

		rec_src[r] = (struct chain_buf){ .data = d.src };
		rec_dst[r] = (struct chain_buf){ .data = d.dst };
		recs[r] = (struct chain_rec){ .src = &rec_src[r], .dst = &rec_dst[r],
					      .len = i == long_at ? (uint64_t)UINT32_MAX + 1u : d.len,
					      .next = i + 1u < n ? &recs[r + 1u] : (struct chain_rec *)(uintptr_t)0xdead0 };
		descs[i] = (struct hw_desc){ .cookie = (uint64_t)(uintptr_t)&recs[r], .src = d.src, .dst = d.dst,
					     .len = recs[r].len };
	}
}

/* Take @p k from both queues: the same descriptors, the oldest posted
 * first (@p cookies[*taken] on). */
static void take_both(struct sw_qp *a, struct sw_qp *b, uint32_t k, const uint64_t *cookies, uint32_t *taken)
{
	for (uint32_t i = 0; i < k; i++, (*taken)++) {
		struct sw_desc x, y;

		cr_assert(sw_sq_get(&a->sq, &x));
		cr_assert(sw_sq_get(&b->sq, &y));
		cr_assert_eq(x.d.cookie, cookies[*taken], "taken in the order posted");
		cr_assert_eq(memcmp(&x.d, &y.d, sizeof(x.d)), 0, "the same descriptor either way");
	}
}

/* post_chain queues what post queues from rings in every state the
 * first test does not reach: wrapped round their segment, grown after a
 * wrap, partly taken (a packed slot half taken), full at ring_max (a
 * partial accept, its count the same). 160 seeded runs of STEPS steps,
 * each a chain of 1 to MOST (sometimes one 4 GiB long) or a take. */
Test(sw_sq, post_chain_queues_as_post_from_wrapped_grown_and_full_rings)
{
	static const char *const params[] = { NULL, "ring_max=8", "ring_max=32", "ring_max=64" };
	enum { STEPS = 300, MOST = 40 };
	struct hw_desc descs[MOST];
	static uint64_t cookies[STEPS * MOST]; /* each record posted, in order */

	for (size_t p = 0; p < sizeof(params) / sizeof(params[0]); p++)
		for (uint64_t seed = 1; seed <= 40; seed++) {
			struct hw_dev *da, *db;
			struct hw_qp *a = qp_open(params[p], &da), *b = qp_open(params[p], &db);
			uint32_t first = 0, posted = 0, taken = 0;
			uint64_t state = seed;

			for (int step = 0; step < STEPS; step++) {
				if (next_random(&state) % 2u != 0) {
					take_both((struct sw_qp *)a, (struct sw_qp *)b,
						  next_random(&state) % 48u % (posted - taken + 1u), cookies, &taken);
					continue;
				}
				uint32_t n = 1u + next_random(&state) % MOST;
				uint32_t long_at = next_random(&state) % 6u == 0 ? next_random(&state) % n : n;

				first = first + n > NDESC ? 0 : first;
				chain_at(first, n, long_at, descs);
				uint32_t queued = hw_sw_ops.post_chain(a, &recs[first], n, &rec_map);

				cr_assert_eq(hw_sw_ops.post(b, descs, n), queued, "%s, seed %u, step %d",
					     params[p] ? params[p] : "packing", (unsigned)seed, step);
				expect_same_sq((struct sw_qp *)a, (struct sw_qp *)b);
				for (uint32_t i = 0; i < queued; i++)
					cookies[posted++] = descs[i].cookie;
				first += n;
			}
			qp_close(da, a);
			qp_close(db, b);
		}
}

/* An engine's SQ spreads its slots (sw_ring_init_spread: the engine
 * thread reads it in order on another CPU), its CQ does not; an inline
 * queue pair's SQ, read by the PE's own thread, does not either. The
 * engine's bursts still complete whole and in order (the test above). */
Test(sw_sq, an_engines_sq_is_spread_and_an_inline_one_is_not)
{
	struct hw_dev *de, *di;
	struct hw_qp *e = qp_open("engines=1", &de), *in = qp_open(NULL, &di);
	const struct sw_qp *se = (const struct sw_qp *)e, *si = (const struct sw_qp *)in;

	cr_assert(se->sq.pspread && se->sq.cspread);
	cr_assert_not(se->cq.pspread || se->cq.cspread);
	cr_assert_not(si->sq.pspread || si->sq.cspread);
	qp_close(de, e);
	qp_close(di, in);
}
