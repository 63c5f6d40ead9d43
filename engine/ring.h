/*
 * engine/ring.h — the foreign submitter's descriptor rings (ring21 step 1):
 * the producer's side, inline on the submit path, and the PE's feed.
 * Why it is correct: engine/ring.c's top.
 *
 * A run has up to RING_SP single-producer rings (ring i written only by
 * the exclusive holder of thread slot i) and one multi-producer ring (any
 * other foreign submitter: slot >= RING_SP, a slot not held exclusively,
 * an exit-time destructor, a producer whose SP ring is full or that still
 * has MP entries undrained). A position p of a ring of capacity cap
 * (a power of two) lives in entry p & (cap - 1); its head word carries
 * the source buffer's address, the state and the lap bit (p / cap) & 1,
 * so a consumer tells a fresh entry from a stale one by its head alone,
 * with no producer index to read.
 */
#ifndef DOCA_ENGINE_RING_H
#define DOCA_ENGINE_RING_H

#include "actors/asym_fence.h"
#include "actors/thread_slot.h"
#include "engine/engine.h"

_Static_assert(RING_SP <= MAILBOX_SHARDS, "SP ring i announces mailbox shard i");

/* head = src | bits: a buffer is 64-byte aligned, so its low 6 bits are free */
#define RING_LAP ((uintptr_t)1)         /* (position / cap) & 1 */
#define RING_READY ((uintptr_t)2u << 1) /* state (bits 1-2): READY; 0 is EMPTY */
#define RING_STATE ((uintptr_t)3u << 1)
#define RING_PARTIAL ((uintptr_t)1u << 3) /* an ALLOW_PARTIAL copy to a short destination */
#define RING_BITS ((uintptr_t)63)
#define RING_SP_CAP_MAX 1024u /* an SP ring's capacity: pow2 >= min(max_tasks, this) */
/* Empty visits in a row after which a visit stops watching an SP ring
 * (engine/ring.c, ring_watch_visit): visits, not time (its time is the
 * turn rate's). 1 in the explorer's build, so its schedules reach the
 * unwatch; a scenario raises it (explore_watch_idle) to keep a bit set
 * across an arming. */
#ifdef DOCA_EXPLORE
extern uint32_t explore_watch_idle;
#define WATCH_IDLE explore_watch_idle
#else
#define WATCH_IDLE 256u
#endif

/* One task, 32 bytes: no event slot (slots are the guard holder's: the
 * PE's feed pops one per entry and fills it from the entry). Every field
 * an atomic: only the producer writes an entry, the PE reads it after
 * the head's acquire. */
struct ring_entry {
	_Atomic uintptr_t head;
	_Atomic(struct doca_buf *) dst;
	_Atomic uint64_t len;
	_Atomic uint64_t user_data;
};

_Static_assert(sizeof(struct ring_entry) == 32, "two entries a line");

struct task_ring {
	/* producer line. prod: SP, the end of the positions written (the
	 * producer's store, relaxed); MP, the end of the positions claimed
	 * (fetch_add). cons_seen, ret_seen, mp_until, on_mp: the SP
	 * producer's own (passed on with its slot: slot_release's release,
	 * slot_claim's acquire). */
	_Alignas(64) _Atomic uint64_t prod;
	uint64_t cons_seen;
	uint64_t ret_seen; /* the pool's returned as its last look saw it (task_pool_take_credits) */
	uint64_t mp_until; /* its last MP position while on_mp */
	uint32_t mask;     /* cap - 1 */
	bool on_mp;        /* diverted to the MP ring until its cons passes mp_until */
	bool roomy;        /* SP, cap >= the run's credits: never full (I3), set before its publish */
	/* consumer line: only guard holders store cons (release) */
	_Alignas(64) _Atomic uint64_t cons;
	/* mask's copy for the consumer, set before the publish and never
	 * changed: the feed reads its index mask here, not on the producer's
	 * line, which every submit writes (prod, ret_seen), so the PE's looks
	 * do not take that line from the producer (bench/README.md, prof58) */
	uint32_t cmask;
	_Alignas(64) struct ring_entry e[];
};

/* The largest SP capacity: RING_SP_CAP_MAX; tests and explorer scenarios
 * lower it to send a producer whose SP ring is full to the MP ring. */
extern uint32_t ring_sp_cap_max;

/* The capacity of a run's SP ring (@p sp) or MP ring for a pool of @p size
 * credits: pow2 >= min(size, ring_sp_cap_max) for SP, pow2 >= size for MP
 * (the MP ring can never hold more undrained positions than credits). */
uint32_t ring_cap(uint32_t size, bool sp);

/* A zeroed ring of @p cap (a power of two) entries, or NULL. Calls the
 * allocator: never inside a read-side section (design 1.5 step 1). */
struct task_ring *ring_alloc(uint32_t cap);

/* The tests' probe (tests/engine/ring.c): when set, ring_alloc calls it
 * first, on the allocating thread (it looks at the thread's read-side
 * nesting, or stops and destroys the context under the submit). */
extern void (*ring_alloc_probe)(void);

/* Publish @p r as run's SP ring @p which (< RING_SP) or, with which ==
 * RING_SP, its MP ring, if that place is still empty and r's capacity is
 * the one the run wants (ring_cap); false otherwise (the caller frees r:
 * nobody saw it). Inside a read-side section. */
bool ring_publish(struct ctx_run *run, uint32_t which, struct task_ring *r);

/* Free run's rings (run_free: no thread can reach the run any more). */
void ring_free_all(struct ctx_run *run);

/* The PE's feed (runner guard held, inside a read-side section or the
 * guard's brief one; after mailbox_take_flags): up to @p max READY
 * entries of run's rings as filled event slots, in the order they must
 * be posted: the SP rings, then the MP ring whose items are taken only
 * after a look at every SP ring made after their acquire found no READY
 * entry left (rule 1.6.6). *left: something may be left that no
 * producer's announce will bring (a limit reached, an MP position
 * claimed and not yet written): the caller keeps the flags
 * (mailbox_keep_flags). Returns the slots filled. */
uint32_t ring_feed(struct ctx_run *run, struct doca_event **evs, uint32_t max, bool *left);

#ifdef DOCA_EXPLORE
/* run_feed's batch (engine/pe_progress.c, POST_BATCH at most): explorer
 * scenarios lower it */
extern uint32_t explore_feed_batch;
#endif

/* The tests' probe (tests/engine/ring.c): when set, ring_feed calls it
 * after its first look at the SP rings and before it looks at the MP
 * ring (it writes entries there, as a producer running then would). */
extern void (*ring_feed_probe)(struct ctx_run *run);

/* The tests' probe (tests/engine/ring_watch.c): when set, ring_watch_look
 * calls it after its look found a ring to unwatch and before it clears
 * the bit (a producer running then sees the bit still set and announces
 * nothing: only the turn's relook brings its entry). */
extern void (*ring_unwatch_probe)(struct ctx_run *run);

/* True if one of run's rings holds an entry not drained: a READY head at
 * an SP ring's cons, or an MP position claimed and not drained. Runner
 * guard held. */
bool ring_any(const struct ctx_run *run);

/* The watch (engine/ring.c, I6). After a visit's feed in a turn (runner
 * guard held, inside the turn's read-side section): set the bits of the SP
 * rings that gave it entries and restart their empty-look counts. @p
 * armed: the PE is not DISARMED, so no bit is set. Returns the bits now
 * set: when not 0, the caller puts the context on its PE's watch list
 * (pe_watch_link), whose turns look at those rings. */
uint32_t ring_watch_visit(struct ctx_run *run, bool armed);

/* A turn's look at @p run's watched rings, before it collects its ready
 * set (pe_watch_turn; runner guard held, inside the turn's section):
 * returns the rings whose head at cons is READY (the caller signals the
 * context); counts an empty look for each other one and stops watching
 * those that reach WATCH_IDLE, which the turn then looks at again after
 * its heavy fence (ring_watch_relook). */
uint32_t ring_watch_look(struct ctx_run *run);

/* After the caller's asym_fence_heavy(): the rings whose watch ended
 * since the last call (ring_watch_look's unwatch, an arming's
 * ring_watch_clear) whose head at cons is READY — their producers may
 * have seen the bit still set and announced nothing — with their shards
 * flagged as those announces would have; the caller signals the context
 * when this is not 0. Runner guard held, inside a read-side section. */
uint32_t ring_watch_relook(struct ctx_run *run);

/* Stop watching every ring of @p run (arming, a stopping visit); returns
 * the bits it cleared. @p relook: the caller runs the heavy fence and
 * ring_watch_relook next (arming); a stopping visit needs none (the
 * stop's announce, ring_watch_stop). Runner guard held. */
uint32_t ring_watch_clear(struct ctx_run *run, bool relook);

/* The stop's half of I6 (a), after its grace period: every producer that
 * saw RUNNING has written its entries, some with no announce (its bit
 * set); announce for them, so the flush the stop hands to the PE looks
 * at the rings. Any thread; the stop keeps the run. */
void ring_watch_stop(struct ctx_run *run);

/* The SP producer's watch look, after its READY stores: true if the PE
 * watches its ring (@p bit: 1 << its slot), so it neither announces nor
 * runs the wake check (the watch pair, engine/ring.c I6). */
static inline __attribute__((always_inline)) bool ring_watched(const struct ctx_run *run, uint32_t bit)
{
	asym_fence_light(); /* our READY visible before we load the watch (the watch and arm pairs) */
	/* relaxed: the bit only chooses the way; the pairs' fences order it.
	 * (No explorer point between READY and this load: the PE's clear
	 * still falls on either side of the pair, at its own points.) */
	return (atomic_load_explicit(&run->ring_watch, memory_order_relaxed) & bit) != 0;
}

/* Is any SP ring of @p run watched? (A visit then feeds: a watched
 * ring's producer announces nothing.) Runner guard held: the bits are
 * ours. */
static inline bool ring_any_watched(const struct ctx_run *run)
{
	return atomic_load_explicit(&run->ring_watch, memory_order_relaxed) != 0;
}

/* May the calling thread, holding the PE's guard, post directly with
 * nothing of its own left in its SP ring unannounced (engine/ring.c, I7's
 * owner clause)? Yes if that ring is not watched (a bit it saw set was
 * cleared only with its entries drained, by the watch and arm pairs, or
 * by a stop), or if it is drained (cons == prod: the guard's cons, our
 * own prod; design 1.9). No call (the owner's way keeps its frame): the
 * slot is read as thread_slot_get's first look, and a thread with none
 * yet has written no ring. */
static inline __attribute__((always_inline)) bool ring_own_drained(const struct ctx_run *run)
{
	/* relaxed: only guard holders store it, and we hold the guard */
	uint32_t watch = atomic_load_explicit(&run->ring_watch, memory_order_relaxed);
	int slot = thread_slot_mine;

	if (__builtin_expect(watch == 0, 1) || slot < 0 || slot >= (int)RING_SP || ((watch >> slot) & 1u) == 0)
		return true;
	/* acquire: the zeroed ring (a bit is set only for a published one) */
	const struct task_ring *r = atomic_load_explicit(&run->sp[slot], memory_order_acquire);

	/* relaxed: cons is the guard's (ours now), prod our own (or, were
	 * another thread this slot's producer, a position it reserved: we
	 * then only go the ring's way) */
	return atomic_load_explicit(&r->cons, memory_order_relaxed) ==
	       atomic_load_explicit(&r->prod, memory_order_relaxed);
}

/* The lap bit of position @p pos in a ring of mask @p m. */
static inline uintptr_t ring_lap_of(uint32_t m, uint64_t pos)
{
	return (pos & ((uint64_t)m + 1u)) != 0 ? RING_LAP : 0;
}

/* The lap bit of position @p pos in @p r. */
static inline uintptr_t ring_lap(const struct task_ring *r, uint64_t pos)
{
	return ring_lap_of(r->mask, pos);
}

/* Write task @p pos of @p r, its state READY: the producer's one store
 * that hands it over. @p partial: the outcome of an ALLOW_PARTIAL copy to
 * a short destination (engine/task.c task_pin). @p watched: hb_watching(). */
static inline __attribute__((always_inline)) void ring_put(struct task_ring *r, uint64_t pos, struct doca_buf *src,
							   struct doca_buf *dst, uint64_t len, bool partial,
							   uint64_t user_data, bool watched)
{
	struct ring_entry *e = &r->e[pos & r->mask];
	uintptr_t h = (uintptr_t)src | RING_READY | ring_lap(r, pos) | (partial ? RING_PARTIAL : 0);
	bool early = DOCA_REVERTED("ring_ready_before_fields");

	if (early)
		atomic_store_explicit(&e->head, h, memory_order_release);
	EXPLORE_POINT(ATOMIC);
	/* relaxed: the head's release below publishes them */
	atomic_store_explicit(&e->dst, dst, memory_order_relaxed);
	atomic_store_explicit(&e->len, len, memory_order_relaxed);
	atomic_store_explicit(&e->user_data, user_data, memory_order_relaxed);
	if (watched)
		hb_release(e); /* before the head's store (D9) */
	EXPLORE_POINT(ATOMIC);
	if (!early) /* release: the fields before the PE's acquire of READY */
		atomic_store_explicit(&e->head, h, memory_order_release);
}

/* Room in SP ring @p r for @p k more positions (k: the tasks of a chunk,
 * before their credits)? A roomy ring always has room for the tasks
 * that will get a credit (I3), so a burst longer than it stays on SP;
 * otherwise looks at cons only when the producer's last view says full
 * (once a lap while the PE keeps up). The SP producer only. */
static inline bool ring_sp_room(struct task_ring *r, uint32_t k)
{
	uint64_t p = atomic_load_explicit(&r->prod, memory_order_relaxed); /* our own */

	if (r->roomy || p + k - r->cons_seen <= (uint64_t)r->mask + 1u)
		return true;
	EXPLORE_POINT(ATOMIC);
	/* acquire: the PE's reads of the entries it drained come before our
	 * writes over them (I3) */
	r->cons_seen = atomic_load_explicit(&r->cons, memory_order_acquire);
	hb_acquire(&r->cons);
	return p + k - r->cons_seen <= (uint64_t)r->mask + 1u;
}

/* Has the MP ring @p mp drained SP producer @p r's last MP position (its
 * stickiness ends, I7)? The SP producer only, while r->on_mp. */
static inline bool ring_mp_passed(const struct task_ring *mp, const struct task_ring *r)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: those MP entries were taken before our next SP entry is
	 * written (the PE posts what it took in order) */
	return atomic_load_explicit(&mp->cons, memory_order_acquire) > r->mp_until;
}

#endif /* DOCA_ENGINE_RING_H */
