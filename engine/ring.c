/*
 * engine/ring.c — the foreign submitter's descriptor rings, steps 1, 2
 * and 4 of bench/ring21-design.md: every foreign task travels as an entry
 * of a ring; the producer takes its credit alone (task_pool_take_credits:
 * the split credits), and the PE's feed pops its event slot (slots are
 * the guard holder's, engine/task_pool.c); its buffers are still pinned by the
 * producer before the entry is written (step 3 is not in). The producer
 * announces (mailbox_announce of its shard) and runs the wake check
 * (pe_wake_after_push) after a submit only when the PE does not watch
 * its SP ring (step 4, the watch, below); an MP producer always does.
 * Only the guard holder fills and posts the slots, from the entries.
 *
 * The producer (engine/task.c), inside its read-side section, after its
 * checks, its pins and its credit: chooses its ring
 * (its SP ring, or the MP ring: 1.9), writes each entry's fields
 * (relaxed), then its head src | READY | lap (release); then, SP, the
 * light fence and its load of ring_watch (ring_watched): its bit set, it
 * returns; else (and always for MP) the slow tail: the announce's fences
 * and the wake check. SP: prod is stored before the
 * entries (the reservation step 3's scan will read). MP: positions are
 * claimed by fetch_add on prod.
 *
 * The watch (ring_watch, bit i for SP ring i; written only by guard
 * holders). Set: by a turn's visit whose feed took from ring i, only while
 * the PE is DISARMED (ring_watch_visit), which puts the context on its
 * PE's watch list (pe_watch_link, engine/pe_ready.c). Cleared: by a
 * turn's look after WATCH_IDLE empty looks in a row at ring i (the
 * unwatch), by arming (pe_watch_arm_clear), and by a visit of a stopping
 * run. The watch keeps no context in the ready set: a watched context
 * leaves it after an empty visit as any other (pe_ready.c's rule, the
 * one fuzz/model.c restates). Instead, rule L: every set bit's context
 * is on its PE's watch list, and each turn, inside its read-side section
 * and before it collects the ready set, looks at the watched rings of
 * at most TURN_CTXS listed runs, round robin from the list's head (a
 * looked context goes to the tail; the list is FIFO, linked at the tail),
 * so a listed run is looked at within ceil(listed / TURN_CTXS) turns and
 * a turn's looks cost at most TURN_CTXS x RING_SP heads
 * (pe_watch_turn, ring_watch_look): a ring whose head at
 * cons is READY gets its context signalled into the ready set, the push
 * its producer's announce would have made, so that turn visits it and
 * its visit, a ring being watched, feeds. A look that finds ring i empty
 * counts toward WATCH_IDLE (looks, not turns); the unwatching look clears
 * the bit, and the turn, once its runs are looked at, runs
 * asym_fence_heavy() and looks again at each ring it unwatched (ring_watch_relook): a READY head there
 * gets its shard flagged (as that announce would have) and its context
 * signalled. The list: a context is put on it (with a reference) by the
 * visit that sets a bit and is taken off (the reference dropped) by a
 * turn's look that finds its run gone or watching nothing, or by
 * arming, which clears every bit first. A failed run not yet stopping
 * keeps its bits (its stop may be put off for ever, its report lock's
 * holder waiting for a credit only the flush returns) and stays listed,
 * so its rings are still looked at, and its flush looks at them while a
 * bit is set (run_drain).
 *
 * Lifetime of the list: it holds contexts, never runs. A listed context
 * holds a reference (taken by a running visit, which a destroy cannot
 * race: a destroy needs IDLE, after a stop whose grace period waits for
 * that visit's section), so its memory stays however it is stopped,
 * retired or destroyed; the PE's memory going drops what is left
 * (pe_ready_fini). A run is reached only as rcu_dereference(ctx->run)
 * inside a read-side section (the turn's, or the arming walk's own), so
 * a run retired by any path (the PE's ctx_try_finalize or a stop's idle
 * retire on another thread, run_retire_locked: unpublish, then
 * doca_call_rcu) is freed only after that section: no run outlives its
 * release on a list, as no list entry names a run. A restarted context's
 * new run starts with no bit (zeroed) and is looked at through the same
 * entry.
 *
 * Why no bit is set while the PE is armed: ARMED is stored only by a
 * guard holder's arming, after pe_watch_arm_clear cleared the bits of
 * every listed context, that is (rule L) every set bit (FIRED is stored
 * by any waker's CAS, but only over ARMED, pe_wake_fenced_if, so it too
 * follows such an arming); a visit sets bits only when it finds the PE
 * DISARMED (the store of DISARMED is a guard holder's too:
 * clear_notification), and no feed outside a turn's visit (the armed
 * brief feed, the walks, a stop's flush) sets any. So a producer always
 * takes the slow tail while the PE is armed or fired: today's armed
 * path, and the list is empty while armed. Its revert
 * (ring_watch_while_armed) is found by no scenario; the order that would
 * lose a wake is (review F2 of watch57): the PE armed; a producer writes
 * E1 (bit clear), announces, sees ARMED; an armed turn posts E1 and sets
 * the bit; the producer leaves the wake-up to E1's completion; the PE
 * sleeps armed with the bit set and E2's producer, seeing it, neither
 * announces nor wakes. The rule makes 'armed => the slow tail' true by
 * construction.
 *
 * The fences, each a Dekker pair with the producer's light fence between
 * its READY store and its ring_watch load (asym_fence.h):
 * - watch pair: the look's clear, the turn's heavy fence, the relook of
 *   the head at cons. Either the producer's load follows the clear (bit
 *   clear: the slow tail, its announce and signal) or the relook sees its
 *   READY (its shard flagged, its context signalled: this turn's visit
 *   feeds it).
 * - arm pair: pe_watch_arm_clear's clear, ARMED, pe_arm_check's heavy
 *   fence (the seq_cst one when nothing was cleared), pe_watch_arm_look's
 *   relook (the shard flagged, the context signalled) and WALK_ARM's walk
 *   of the set, which then holds that context, feeds it and fires only if
 *   work is then pending (ctx_has_pending), as for a producer that
 *   announced before the arming: its fed tasks' completions wake the PE.
 *   (Firing on the relook's find alone woke the PE for tasks just posted
 *   to an engine thread: an empty wake-up, found by
 *   event_wakeups/engine_loaded_by_other_threads_rarely_wakes_for_nothing.) Either the producer's load follows the clear (the slow
 *   tail: announce, then the armed look, today's pair with the arming)
 *   or the relook sees its READY.
 * - the stop: a producer that saw RUNNING wrote its entries inside its
 *   read-side section; after the stop's grace period ring_watch_stop
 *   announces once for every ring of the run (whatever the bits then:
 *   a stopping visit may have cleared one its producer saw set), so the
 *   flush the stop hands to the PE (its signal after that announce) looks
 *   at the rings.
 * - the owner's direct post (I7's owner clause): the PE's thread posts
 *   directly only with the mailbox idle and its own SP ring not watched
 *   or drained (ring_own_drained, under the guard). An entry of its own
 *   written with no announce was seen by its bit; that bit is cleared
 *   only by an unwatch or an arming, whose relook, seeing the entry,
 *   flagged its shard (the mailbox not idle until a feed finds the ring
 *   drained), or by a stop (no post); so a clear bit and an idle mailbox
 *   under the guard mean no such entry is left.
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
 *    STOPPING and its PE progresses or is armed. (watch form) An entry
 *    whose producer saw its bit set: (a) the stop's announce after its
 *    grace period (above) brings the flush; (b) the bit still set: the
 *    context is listed (rule L) and a turn's look reads ring i's head at
 *    cons at least every ceil(listed / TURN_CTXS) turns (the round
 *    robin), so one sees the entry's READY (or the bit is cleared first:
 *    (c)); that look signals the context, whose visit in that
 *    turn (or, a turn that stops early, the next: it stays in the FIFO)
 *    feeds while the bit is set or the shard is flagged; entries a feed
 *    leaves (its limit) are met by the context's next look as long as the
 *    bit is set, and by the flags that feed kept (below); (c) the bit
 *    cleared since: the watch pair or the arm pair (above) gave
 *    the entry to the PE, or the clear came before the producer's load,
 *    which then saw it clear. (announce form, every MP entry and every SP
 *    entry whose producer saw its bit clear) the producer's READY (release), the
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
 *    Owner: the PE's thread posts directly only with mailbox_idle and
 *    ring_own_drained under the guard (engine/task.c task_guard_take,
 *    task_one_owner); each of its own earlier ring submits that announced
 *    did so before it returned, so a feed took that flag after its READY,
 *    and that feed and every later one kept the flags until the rings
 *    were seen drained (I6): idle means every announced entry of ours was
 *    taken; and one that did not announce is in a drained ring, or its
 *    ring is still watched, or its shard is flagged (the owner's clause
 *    above). Foreign threads never post
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
 * own), the watch's line (64 bytes) and its private counts (40); a context
 * on a watch list, two words of its own; a producer
 * 32 B x pow2 >= min(max_tasks, 1024), the MP ring 32 B x pow2 >=
 * max_tasks, each made on the first submit that needs it.
 *
 * Not in: the PENDING state and the producer's DEAD look (the pins
 * stay before the entry, so a refusal never leaves an entry), SKIP (needs
 * the DEAD look after the entry) and the maker's heavy fence: step 3.
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
#ifdef DOCA_EXPLORE
uint32_t explore_watch_idle = 1;
#endif

uint32_t ring_cap(uint32_t size, bool sp)
{
	uint32_t want = sp && size > ring_sp_cap_max ? ring_sp_cap_max : size, cap = 1;

	while (cap < want)
		cap <<= 1;
	return cap;
}

void (*ring_alloc_probe)(void);
void (*ring_feed_probe)(struct ctx_run *run);
void (*ring_unwatch_probe)(struct ctx_run *run);

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

		uint32_t bit = *bits & -*bits, got = ring_take_sp(run, r, evs + n, max - n, watched, more);

		*bits &= *bits - 1u;
		if (got != 0)
			run->watch_took |= bit; /* (a visit's: ring_watch_visit) */
		n += got;
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

/* The SP rings among @p bits (published ones) whose head at cons is READY
 * (runner guard held: cons is ours). */
static uint32_t ring_ready_bits(const struct ctx_run *run, uint32_t bits)
{
	uint32_t ready = 0;

	for (; bits != 0; bits &= bits - 1u) {
		uint32_t i = (uint32_t)__builtin_ctz(bits);
		/* acquire: the zeroed ring (a bit is set only for a published one) */
		const struct task_ring *r = atomic_load_explicit(&run->sp[i], memory_order_acquire);
		uint64_t c = atomic_load_explicit(&r->cons, memory_order_relaxed); /* ours: the guard's */
		uint32_t m = r->cmask;

		if (ring_ready_at(m, c, ring_head(r, m, c)))
			ready |= 1u << i;
	}
	return ready;
}

bool ring_any(const struct ctx_run *run)
{
	if (ring_ready_bits(run, atomic_load_explicit(&run->sp_mask, memory_order_acquire)) != 0)
		return true;
	const struct task_ring *mp = atomic_load_explicit(&run->mp, memory_order_acquire);

	return mp != NULL && atomic_load_explicit(&mp->prod, memory_order_relaxed) !=
				     atomic_load_explicit(&mp->cons, memory_order_relaxed);
}

uint32_t ring_watch_visit(struct ctx_run *run, bool armed)
{
	/* relaxed: only guard holders store it */
	uint32_t took = run->watch_took, watch = atomic_load_explicit(&run->ring_watch, memory_order_relaxed);

	run->watch_took = 0;
	/* (the explorer's revert: bits set while the PE is armed; a producer
	 * that sees one skips the wake-up an armed PE needs) */
	if (armed && !DOCA_REVERTED("ring_watch_while_armed"))
		return watch;
	for (uint32_t bits = took; bits != 0; bits &= bits - 1u)
		run->watch_idle[__builtin_ctz(bits)] = 0;
	if ((watch | took) != watch) {
		EXPLORE_POINT(ATOMIC);
		/* relaxed: a set bit only lets producers skip their announce
		 * (the context is on its PE's watch list, whose turns look at
		 * the ring in round robin, pe_watch_turn) */
		atomic_store_explicit(&run->ring_watch, watch | took, memory_order_relaxed);
	}
	return watch | took;
}

uint32_t ring_watch_look(struct ctx_run *run)
{
	/* relaxed: only guard holders store it */
	uint32_t watch = atomic_load_explicit(&run->ring_watch, memory_order_relaxed);
	uint32_t ready = ring_ready_bits(run, watch), unwatch = 0;

	for (uint32_t bits = watch; bits != 0; bits &= bits - 1u) {
		uint32_t i = (uint32_t)__builtin_ctz(bits);

		if ((ready >> i) & 1u)
			run->watch_idle[i] = 0;
		else if (++run->watch_idle[i] >= WATCH_IDLE)
			unwatch |= 1u << i;
	}
	if (unwatch != 0) {
		if (ring_unwatch_probe != NULL)
			ring_unwatch_probe(run);
		EXPLORE_POINT(ATOMIC);
		/* relaxed: the turn's heavy fence orders the clear before its
		 * relook (the watch pair) */
		atomic_store_explicit(&run->ring_watch, watch & ~unwatch, memory_order_relaxed);
		run->watch_gone |= unwatch;
	}
	return ready;
}

uint32_t ring_watch_relook(struct ctx_run *run)
{
	uint32_t gone = run->watch_gone, ready;

	run->watch_gone = 0;
	/* (the explorer's revert: no look after the unwatch's fence) */
	if (gone == 0 || DOCA_REVERTED("ring_unwatch_no_relook"))
		return 0;
	ready = ring_ready_bits(run, gone);
	/* their producers may have seen the bit still set and announced
	 * nothing: flag their shards as those announces would have, so the
	 * next feed looks at the rings and the mailbox is not idle (the
	 * owner's direct post waits for that feed: I7's owner clause). (The
	 * explorer's revert: the flags not kept, the context only signalled.) */
	if (ready != 0 && !DOCA_REVERTED("ring_relook_no_flags"))
		mailbox_keep_flags(&run->mbox, ready);
	return ready;
}

uint32_t ring_watch_clear(struct ctx_run *run, bool relook)
{
	uint32_t watch = atomic_load_explicit(&run->ring_watch, memory_order_relaxed); /* ours: the guard's */

	if (watch == 0)
		return 0;
	EXPLORE_POINT(ATOMIC);
	/* relaxed: the caller's heavy fence (arming) or the stop's grace
	 * period and announce (ring_watch_stop) order what follows it */
	atomic_store_explicit(&run->ring_watch, 0, memory_order_relaxed);
	if (relook)
		run->watch_gone |= watch;
	return watch;
}

void ring_watch_stop(struct ctx_run *run)
{
	/* acquire: as the feed's; no ring, no producer to announce for */
	if (atomic_load_explicit(&run->sp_mask, memory_order_acquire) != 0)
		mailbox_announce(&run->mbox);
}
