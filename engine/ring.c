/*
 * engine/ring.c — the foreign submitter's descriptor rings, steps 1 and
 * 2 of bench/ring21-design.md: every foreign task travels as an entry of
 * a ring; the producer takes its credit alone (task_pool_take_credits:
 * the split credits), and the PE's feed pops its event slot (slots are
 * the guard holder's, engine/task_pool.c); its buffers are still pinned by the
 * producer before the entry is written, and the producer still announces
 * (mailbox_announce of its shard) and runs the wake check
 * (pe_wake_after_push) after every submit. Only the guard holder fills
 * and posts the slots, from the entries.
 *
 * The producer (engine/task.c), inside its read-side section, after its
 * checks, its pins and its credit: chooses its ring
 * (its SP ring, or the MP ring: 1.9), writes each entry's fields
 * (relaxed), then its head src | READY | lap (release); then the
 * announce's fences and the wake check. SP: prod is stored before the
 * entries (the reservation step 3's scan will read). MP: positions are
 * claimed by fetch_add on prod.
 *
 * The consumer (any guard holder: ring_feed from run_feed, the stop's
 * flush in run_drain, the armed brief feed, the arming walks), after
 * mailbox_take_flags: for each SP ring in sp_mask, from cons while the
 * head is READY with cons's lap: pop a slot and fill it from the entry
 * (task_pool_slots: each entry holds a credit, so a slot is there);
 * then store cons
 * (release). Then the MP ring, by rule 1.6.6 (below). Entries are never
 * cleared: a position's lap tells a fresh head from the last lap's.
 *
 * Why a foreign task is accepted exactly once, completes exactly once,
 * and is never lost, overwritten or overtaken by its thread's later task
 * (the design's section 2 as far as step 1 has it; credits and pins are
 * today's, engine/task_pool.c and engine/buf.c):
 *
 * I1 One producer per SP ring: the exclusive holder of its thread slot
 *    (thread_slot_exclusive: set by the winning claim, cleared before the
 *    release), handed on by slot_release's release and slot_claim's
 *    acquire, which also pass on the producer's own fields (prod,
 *    cons_seen, on_mp, mp_until). A slot >= RING_SP, an overflow thread
 *    or an exit-time destructor after the release finds no exclusive
 *    slot and uses the MP ring.
 * I3 No overwrite. SP: position p + cap is written only once the
 *    producer's acquire of cons found cons > p (ring_sp_room), and the
 *    PE stores cons (release) only after its reads of the entries
 *    below it; or, in a roomy ring (cap >= size, the run's credits),
 *    with no look, by the credit argument below. MP: a position is
 *    claimed only with a credit taken, and a credit comes back only
 *    after its task's slot was delivered, so after its entry was
 *    drained. The credit argument: let X write position p + cap with
 *    the credit it took just before. The cap positions p .. p + cap - 1
 *    were claimed before X's claim (SP: by X or, through the slot's
 *    release and acquire, its slot's earlier holder; MP: the claims are
 *    acq_rel RMWs on prod, one chain), each after its own credit take,
 *    so those cap takes and X's happen before X's write, and the last of
 *    them, T (taken is one order: RMWs, or a guard holder's plain store
 *    while the pool is the owner's), took with a look at a returned r
 *    (returned's one writer, the guard holder; T's acquire of it, or
 *    its own) that left at most size - 1 other credits out: one of those
 *    cap credits, of position q >= p, was back in r, by a return R. p
 *    was drained no later than q (a ring is drained in position order,
 *    under the guard), q's drain happens before R, R (its release store
 *    of returned) before T's look, and T before X's write (program
 *    order; for MP, T's claim then X's claim in the chain). So the PE's reads of p happen
 *    before X's rewrite of its entry.
 * I5 Every READY entry becomes exactly one slot: only guard holders read
 *    entries and advance cons, one at a time (the guard), and an entry is
 *    taken only at cons, with cons's lap.
 * I6 No READY entry waits forever while its context is RUNNING or
 *    STOPPING: (announce form) the producer's READY (release), the
 *    announce's full fence, its summary load and flag set; the feed's
 *    summary exchange, its full fence (mailbox_take_flags), then the
 *    ring looks. Either the producer saw its bit clear and set it (a
 *    later feed, which the wake check brings, sees the entry), or it saw
 *    the bit still set, so the feed's exchange follows that load and by
 *    the two fences the feed's looks see READY. A feed that leaves an
 *    entry it saw (its limit, an MP position claimed and not yet
 *    written) keeps its flags (mailbox_keep_flags), so mailbox_idle stays
 *    false and the context queued (run_needs_visit) until a feed finds
 *    the rings drained. The stop: every producer that saw RUNNING wrote
 *    READY inside its section, so after the stop's grace period every
 *    accepted entry is READY and holds its credit; the flush drains the
 *    rings as the feed does (backlog, SP rings, MP ring, then the lists),
 *    and the stop ends only with every credit back.
 * I7 Per-thread order. In one ring, entries are taken in position order,
 *    and a thread's positions are in its submission order. SP -> MP:
 *    the PE takes MP items only after a look at every SP ring, made after
 *    its acquire of those items' heads, found no READY entry at cons; the
 *    thread wrote its earlier SP entries before its MP entry, so that look
 *    saw them, and they were taken (posted first) or it would not have
 *    found the ring drained. MP -> SP: a producer diverted to MP (its SP
 *    ring full) stays on MP (on_mp) until an acquire of MP's cons finds
 *    its last MP position (mp_until) taken; so its next SP entry is
 *    written after the PE stored that cons, and is taken by a later feed.
 *    Owner: the PE's thread posts directly only with mailbox_idle under
 *    the guard (engine/task.c task_guard_take, task_one_owner); each of
 *    its own earlier ring submits announced before it returned, so a
 *    feed took that flag after its READY, and that feed and every later
 *    one kept the flags until the rings were seen drained (I6): idle
 *    means every entry of ours was taken. Foreign threads never post
 *    directly.
 * I8 Lifetimes: a ring is allocated outside any read-side section
 *    (engine/task.c leaves it, allocates, enters again and looks at the
 *    run anew; submit_wait's retry, nested in a section of its own, is
 *    told the ring to make and makes it after leaving that section:
 *    task_ring_make_held), published by a release CAS into a run it found in its
 *    section, and freed by run_free, after the run's grace period. Every
 *    access is inside a section or the guard's brief one.
 *
 * The PE indexes a ring with cmask, mask's copy on the consumer's line
 * (written by ring_alloc before the publish, as mask, never changed), so
 * its looks leave the producer's line, which every submit writes, alone;
 * and the feed's rotation (sp_first) lives with the runner's fields, not
 * on the line of the pointers every submit loads (bench/README.md,
 * prof58).
 *
 * Memory per run: 17 pointers and a mask (140 bytes, on lines of their
 * own); a producer
 * 32 B x pow2 >= min(max_tasks, 1024), the MP ring 32 B x pow2 >=
 * max_tasks, each made on the first submit that needs it.
 *
 * Not in step 1: the PENDING state and the producer's DEAD look (the pins
 * stay before the entry, so a refusal never leaves an entry), SKIP (needs
 * the DEAD look after the entry: step 3), the credit split, the watch
 * bits and the maker's heavy fence (steps 2-4).
 */
#include "engine/ring.h"
#include "engine/task_pool.h"

/* The PE's fields off the producers' lines (prof58): the consumer's mask
 * with cons, away from prod; the feed's rotation away from the pointers
 * every submit loads. */
_Static_assert(offsetof(struct task_ring, cmask) / 64 == offsetof(struct task_ring, cons) / 64 &&
		       offsetof(struct task_ring, cmask) / 64 != offsetof(struct task_ring, prod) / 64,
	       "the consumer's mask is on the consumer's line");
_Static_assert(offsetof(struct ctx_run, sp_first) / 64 != offsetof(struct ctx_run, mp) / 64 &&
		       offsetof(struct ctx_run, sp_first) / 64 != offsetof(struct ctx_run, sp) / 64,
	       "the feed's rotation is off the rings' pointers' lines");

uint32_t ring_sp_cap_max = RING_SP_CAP_MAX;

uint32_t ring_cap(uint32_t size, bool sp)
{
	uint32_t want = sp && size > ring_sp_cap_max ? ring_sp_cap_max : size, cap = 1;

	while (cap < want)
		cap <<= 1;
	return cap;
}

void (*ring_alloc_probe)(void);
void (*ring_feed_probe)(struct ctx_run *run);

struct task_ring *ring_alloc(uint32_t cap)
{
	if (ring_alloc_probe != NULL)
		ring_alloc_probe();
	struct task_ring *r = doca_zalloc(sizeof(*r) + (size_t)cap * sizeof(struct ring_entry));

	if (r != NULL) {
		r->mask = cap - 1u;
		r->cmask = cap - 1u;
	}
	return r;
}

bool ring_publish(struct ctx_run *run, uint32_t which, struct task_ring *r)
{
	_Atomic(struct task_ring *) *place = which < RING_SP ? &run->sp[which] : &run->mp;
	struct task_ring *none = NULL;

	if ((uint64_t)r->mask + 1u != ring_cap(run->pool.size, which < RING_SP))
		return false; /* made for another run of the context */
	r->roomy = which < RING_SP && r->mask >= run->pool.size - 1u; /* nobody sees r yet */
	EXPLORE_POINT(ATOMIC);
	/* release: the zeroed ring before a reader's acquire of the pointer */
	if (!atomic_compare_exchange_strong_explicit(place, &none, r, memory_order_release, memory_order_relaxed))
		return false;
	if (which < RING_SP) /* release: a feed that finds the bit loads the pointer after it */
		atomic_fetch_or_explicit(&run->sp_mask, 1u << which, memory_order_release);
	return true;
}

void ring_free_all(struct ctx_run *run)
{
	for (uint32_t i = 0; i < RING_SP; i++)
		doca_free(atomic_load_explicit(&run->sp[i], memory_order_relaxed));
	doca_free(atomic_load_explicit(&run->mp, memory_order_relaxed));
}

/* Is the head @p h, loaded at position @p pos of a ring of mask @p m
 * (its cmask), that position's READY entry? */
static inline bool ring_ready_at(uint32_t m, uint64_t pos, uintptr_t h)
{
	return (h & (RING_STATE | RING_LAP)) == (RING_READY | ring_lap_of(m, pos));
}

/* The head of position @p pos of @p r, of mask @p m (its cmask; acquire:
 * the entry's fields and the producer's slot pop, when READY). */
static inline uintptr_t ring_head(const struct task_ring *r, uint32_t m, uint64_t pos)
{
	EXPLORE_POINT(ATOMIC);
	return atomic_load_explicit(&r->e[pos & m].head, memory_order_acquire);
}

/* Fill slot @p ev (the feed's, task_pool_slots) from the READY entry of
 * head @p h at @p e, as the producer's task_fill filled it before step 1
 * (shared pins: the producer pinned the buffers before writing the
 * entry). */
static void ring_fill(struct doca_event *ev, struct ring_entry *e, uintptr_t h, bool watched)
{
	bool partial = (h & RING_PARTIAL) != 0;

	TSAN_ACQUIRE(ev);
	if (watched) {
		hb_acquire(ev); /* the slot's last free happens before its reuse */
		hb_acquire(e);  /* the producer's hb_release before READY */
	}
	ev_set_queued_from_free(ev); /* a taken slot is FREE */
	ev->pins = EV_PINS_SHARED;
	ev->error = partial ? DOCA_ERROR_TOO_BIG : DOCA_SUCCESS;
	ev->status = partial ? DOCA_EVENT_STATUS_PARTIAL : DOCA_EVENT_STATUS_SUCCESS;
	ev->src = (struct doca_buf *)(h & ~RING_BITS);
	ev->dst = atomic_load_explicit(&e->dst, memory_order_relaxed);
	ev->len = atomic_load_explicit(&e->len, memory_order_relaxed);
	ev->user_data.u64 = atomic_load_explicit(&e->user_data, memory_order_relaxed);
	if (watched)
		hb_release(ev); /* the fill happens before the device's accesses */
}

/* Slots for the @p n READY entries of @p r from position @p c on (their
 * heads acquired), filled into evs. Each holds its credit and no slot
 * (task_pool_take_credits), so the pool has one for each
 * (task_pool_slots). */
static void ring_fill_n(struct ctx_run *run, struct task_ring *r, uint64_t c, struct doca_event **evs, uint32_t n,
			bool watched)
{
	if (n == 0)
		return;
	uint32_t m = r->cmask;

	task_pool_slots(&run->pool, evs, n);
	for (uint32_t i = 0; i < n; i++) {
		struct ring_entry *e = &r->e[(c + i) & m];

		/* (relaxed: our acquire saw it READY, and only our cons store
		 * lets its producer write it again) */
		ring_fill(evs[i], e, atomic_load_explicit(&e->head, memory_order_relaxed), watched);
	}
}

/* Take SP ring @p r's READY entries from cons, at most @p max, into evs.
 * *more: a READY entry is left (the limit was reached before a head that
 * is not READY). */
static uint32_t ring_take_sp(struct ctx_run *run, struct task_ring *r, struct doca_event **evs, uint32_t max,
			     bool watched, bool *more)
{
	/* relaxed: only guard holders store it, and the guard orders them */
	uint64_t c = atomic_load_explicit(&r->cons, memory_order_relaxed);
	uint32_t n = 0, m = r->cmask; /* once: the acquires below would reload it */

	for (; ring_ready_at(m, c + n, ring_head(r, m, c + n)); n++) {
		if (n == max) {
			/* (the explorer's revert: the entry left unsaid, so the
			 * feed drops the flags that would bring it) */
			*more = !DOCA_REVERTED("ring_limit_drops_flags");
			break;
		}
	}
	ring_fill_n(run, r, c, evs, n, watched);
	if (n != 0) {
		hb_release(&r->cons);
		/* release: our reads of the entries before the producer's
		 * rewrite of their positions + cap (I3) */
		atomic_store_explicit(&r->cons, c + n, memory_order_release);
	}
	return n;
}

/* ring_take_sp for every published SP ring, from ring sp_first on
 * (rotated a call, so a ring that fills every batch delays another's
 * entry by at most RING_SP calls); returns the slots taken, *more as
 * there. */
static uint32_t ring_take_sp_all(struct ctx_run *run, struct doca_event **evs, uint32_t max, bool watched,
				 bool *more)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: a bit set means its ring's pointer is published */
	uint32_t mask = atomic_load_explicit(&run->sp_mask, memory_order_acquire), n = 0;
	uint32_t first = run->sp_first, from = mask & (~0u << first);

	run->sp_first = (first + 1u) % RING_SP;
	/* the rings first .. 15, then 0 .. first - 1 */
	for (mask ^= from; from != 0 || mask != 0;) {
		uint32_t *bits = from != 0 ? &from : &mask;
		struct task_ring *r =
			atomic_load_explicit(&run->sp[__builtin_ctz(*bits)], memory_order_acquire); /* the zeroed ring */

		*bits &= *bits - 1u;
		n += ring_take_sp(run, r, evs + n, max - n, watched, more);
	}
	return n;
}

uint32_t ring_feed(struct ctx_run *run, struct doca_event **evs, uint32_t max, bool *left)
{
	bool watched = hb_watching(), more = false;
	/* the explorer's revert: the MP ring first, the SP rings after it
	 * (a thread's SP task then follows its later MP task) */
	bool mp_first = DOCA_REVERTED("ring_mp_before_sp");
	uint32_t n = mp_first ? 0 : ring_take_sp_all(run, evs, max, watched, &more);

	EXPLORE_POINT(ATOMIC);
	/* acquire: the zeroed ring */
	struct task_ring *mp = atomic_load_explicit(&run->mp, memory_order_acquire);
	uint64_t c = 0;
	uint32_t j = 0;

	if (mp != NULL && !more) {
		if (ring_feed_probe != NULL)
			ring_feed_probe(run);
		/* The MP items READY from cons (their heads acquired: every
		 * entry their producers wrote before them is visible to the
		 * looks below), at most the room left. */
		c = atomic_load_explicit(&mp->cons, memory_order_relaxed); /* the guard orders its stores */
		uint32_t m = mp->cmask;

		while (j < max - n && ring_ready_at(m, c + j, ring_head(mp, m, c + j)))
			j++;
		/* Rule 1.6.6: the SP rings looked at again, after those
		 * acquires; the MP items only if that look found them drained
		 * (a READY entry left behind the room may be its thread's
		 * earlier task). */
		if (j != 0 && !mp_first && !DOCA_REVERTED("ring_mp_no_second_look"))
			n += ring_take_sp_all(run, evs + n, max - j - n, watched, &more);
		if (more)
			j = 0;
		ring_fill_n(run, mp, c, evs + n, j, watched);
		n += j;
		if (j != 0) {
			hb_release(&mp->cons);
			/* release: as the SP rings' (I3); and a diverted producer's
			 * acquire of it orders its next SP entry after these (I7) */
			atomic_store_explicit(&mp->cons, c + j, memory_order_release);
		}
	}
	if (mp_first)
		n += ring_take_sp_all(run, evs + n, max - n, watched, &more);
	/* An MP position claimed and not yet READY, or past our room: looked
	 * at again by the next feed (I6, I7's owner clause). relaxed: a claim
	 * announced before our take of the flags is seen (its announce's
	 * release, our acquire of the summary). */
	EXPLORE_POINT(ATOMIC);
	*left = more || (mp != NULL && atomic_load_explicit(&mp->prod, memory_order_relaxed) != c + j);
	return n;
}

bool ring_any(const struct ctx_run *run)
{
	uint32_t mask = atomic_load_explicit(&run->sp_mask, memory_order_acquire);

	for (; mask != 0; mask &= mask - 1u) {
		const struct task_ring *r = atomic_load_explicit(&run->sp[__builtin_ctz(mask)], memory_order_acquire);
		uint64_t c = atomic_load_explicit(&r->cons, memory_order_relaxed);
		uint32_t m = r->cmask;

		if (ring_ready_at(m, c, ring_head(r, m, c)))
			return true;
	}
	const struct task_ring *mp = atomic_load_explicit(&run->mp, memory_order_acquire);

	return mp != NULL && atomic_load_explicit(&mp->prod, memory_order_relaxed) !=
				     atomic_load_explicit(&mp->cons, memory_order_relaxed);
}
