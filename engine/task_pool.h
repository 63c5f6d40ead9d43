/*
 * engine/task_pool.h — taking and returning credits, inline on the submit
 * and free paths. Why it is correct: engine/task_pool.c.
 */
#ifndef DOCA_ENGINE_TASK_POOL_H
#define DOCA_ENGINE_TASK_POOL_H

#include "actors/asym_fence.h"
#include "engine/engine.h"

/* The pool's mode (engine/task_pool.c): plain takes of credits (taken)
 * by guard holders until a taker without the guard appears, CAS from
 * then on. */
enum { POOL_OWNER, POOL_SWITCHING, POOL_SHARED };

/* A thread that found mode not POOL_OWNER: returns once it is
 * POOL_SHARED (a guard holder that finds SWITCHING stores it:
 * task_pool.c). Out of line and cold: the owner's ways meet it once. */
__attribute__((cold)) void pool_settle(struct task_pool *p);

/* A return would put more slots back than were taken: a slot was
 * returned twice. Logs and aborts. */
__attribute__((cold, noreturn)) void pool_double_return(void);

/* Make chunk c unless another taker did; false when out of memory. */
bool task_pool_publish_chunk(struct task_pool *p, uint32_t c);

/* A guard holder about to take credits: true if it may store taken
 * plainly (then it calls pool_plain_end after it), false for the CAS.
 * @p kernel: the caller found asym_fence_kernel true
 * (asym_fence_light_known). */
static inline __attribute__((always_inline)) bool pool_plain_begin_as(struct task_pool *p, bool kernel)
{
	EXPLORE_POINT(ATOMIC);
	if (atomic_load_explicit(&p->mode, memory_order_relaxed) != POOL_OWNER) {
		pool_settle(p);
		return false;
	}
	atomic_store_explicit(&p->busy, 1, memory_order_relaxed);
	asym_fence_light_known(kernel); /* busy is visible before we load mode (task_pool.c) */
	EXPLORE_POINT(ATOMIC);
	if (atomic_load_explicit(&p->mode, memory_order_relaxed) == POOL_OWNER)
		return true;
	/* release, as pool_plain_end: nothing was updated, but a switcher that
	 * sees 0 must not depend on that (free on x86) */
	atomic_store_explicit(&p->busy, 0, memory_order_release);
	pool_settle(p);
	return false;
}

static inline __attribute__((always_inline)) bool pool_plain_begin(struct task_pool *p)
{
	return pool_plain_begin_as(p, false);
}

static inline void pool_plain_end(struct task_pool *p)
{
	EXPLORE_POINT(ATOMIC);
	/* release: a switcher that sees 0 sees our store to taken */
	atomic_store_explicit(&p->busy, 0, memory_order_release);
}

/* pool_plain_begin for the PE's parked owner inside a brief section it
 * entered by runner_unpark (false: the caller's CAS way calls pool_settle
 * first, out of its inline way: engine/task.c's task_owner_take_shared)
 * (the owner's doca_task_submit: engine/task.c task_one_owner): its entry
 * in its list is the busy flag, which task_pool_share waits out
 * (runner_quiesce_wait), so one look at mode decides and no
 * pool_plain_end follows (task_pool.c, "The parked owner's brief
 * sections"). */
_Static_assert(POOL_OWNER == 0, "the owner's mode is 0");
static inline __attribute__((always_inline)) bool pool_plain_begin_unparked(struct task_pool *p)
{
	EXPLORE_POINT(ATOMIC);
	/* one cmp with the word in memory (POOL_OWNER is 0): with a load,
	 * gcc kept its zero in rax as the submit's answer, one register
	 * fewer for the credit look (a callee-saved one pushed) */
	return ATOMIC_IS_ZERO(&p->mode, memory_order_relaxed);
}


static inline struct doca_event *pool_chunk_of(const struct task_pool *p, uint32_t c)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with task_pool_publish_chunk's release. */
	struct doca_event *evs = atomic_load_explicit(&p->chunks[c], memory_order_acquire);

	TSAN_ACQUIRE(evs);
	return evs;
}

static inline struct doca_event *pool_slot_of(const struct task_pool *p, uint32_t index)
{
	return &pool_chunk_of(p, index / POOL_CHUNK)[index % POOL_CHUNK];
}

/*
 * The split credits (ring21 step 2, bench/ring21-design.md 1.3 and the
 * review's D4, D5): the pool's credits (task_pool.c, "Credits before
 * slots"). free = size - (taken - returned): taken
 * grows by every take (a CAS, acq_rel), returned by every return (the
 * guard holder's alone: a release store), and returned <= taken at every
 * instant (each return follows its take). A taker keeps a cached view of
 * returned (ret_seen: an SP producer's own, on its ring's producer
 * line, also while it is diverted to MP; a thread with no SP ring starts
 * from 0 each submit: engine/task.c task_ret_seen), reloaded only when
 * that view says the pool is short, or that a chunk not made yet is
 * needed (below): a spinning submitter writes no shared line.
 *
 * The look (design 1.5 step 2) is exact: AGAIN only with a returned
 * loaded after the taken it compares: taken at r's load >= t, so
 * outstanding >= t - r >= size then. Every compare is signed (D5): a
 * cached r ahead of a stale t would wrap an unsigned t - r to a huge
 * value and answer AGAIN with nothing outstanding; (int64_t)(r - t) > 0
 * means t is stale, and t is reloaded (at that reload taken >= the
 * returned r was read from).
 *
 * Chunks before credits (D4): a take of m with expected t has
 * o = t + m - min(r, t), an upper bound on the outstanding credits after
 * it succeeds (returned at the take >= r). Every chunk below
 * min(o, size) must exist before the CAS, not only the one o falls in:
 * chunks_made = c means 0 .. c - 1 exist, and a taker makes c, then
 * moves chunks_made c -> c + 1 (release CAS; a loser reloads c), until
 * c * POOL_CHUNK >= min(o, size). So NO_MEMORY is answered before any
 * credit is taken, and the guard holder that needs a fresh slot (only
 * with its stack empty, at index slots in use < outstanding <= the
 * largest o of a take that succeeded) finds its chunk made. A cached
 * view may be far behind (0 for a thread with no SP ring, or an SP
 * ring's view from long ago): o then counts every credit taken since,
 * not those out, and a context with one task out would end with every
 * chunk made (the review of step 2, F1). So before it makes a chunk
 * by a cached view, a foreign take reloads returned (acquire, as the
 * look's) and bounds by that: chunks follow the credits out, not the
 * age of the view, and a spinning submitter that needs no chunk still
 * loads nothing.
 */

/* The tests' probes (tests/engine/task_pool.c): when set, the look
 * calls them just before it reloads returned and just before it reloads
 * taken (takes and returns landing there). */
extern void (*credit_look_returned_probe)(struct task_pool *p);
extern void (*credit_look_taken_probe)(struct task_pool *p);

/* The credits a take of up to @p k may get now: k, fewer (the free
 * ones), or 0 (AGAIN, exact). *t: the taken value the take must CAS from
 * (loaded here); *ret_seen: the caller's cached returned (reloaded here
 * when it says short). */
static inline uint32_t credit_split_look(struct task_pool *p, uint32_t k, uint64_t *t, uint64_t *ret_seen)
{
	uint64_t r = *ret_seen;
	bool r_after_t = false;

	EXPLORE_POINT(ATOMIC);
	/* acquire: returned, loaded after it for an exact AGAIN, is not read
	 * before it (a relaxed load may be satisfied later: D of the second
	 * review); the CAS checks it */
	*t = atomic_load_explicit(&p->taken, memory_order_acquire);
	for (;;) {
		/* (the explorer's revert: no such look, D5's wrap) */
		if ((int64_t)(r - *t) > 0 && !DOCA_REVERTED("again_unsigned")) { /* t older than r (D5): reload t */
			if (credit_look_taken_probe != NULL)
				credit_look_taken_probe(p);
			EXPLORE_POINT(ATOMIC);
			*t = atomic_load_explicit(&p->taken, memory_order_acquire); /* acquire: as the first load's */
			r_after_t = false; /* r was read before this t (the second review, E) */
			continue;
		}
		uint64_t out = *t - r;
		uint32_t free = out >= p->size ? 0 : p->size - (uint32_t)out;

		if (free >= k)
			return k;
		/* (the explorer's revert: AGAIN from the cached view, no
		 * reload: AGAIN while credits are back) */
		if (r_after_t || DOCA_REVERTED("again_on_cached_returned"))
			return free; /* exact: r read after t */
		if (credit_look_returned_probe != NULL)
			credit_look_returned_probe(p);
		EXPLORE_POINT(ATOMIC);
		/* acquire: the slots those returns freed (the guard holder's
		 * pushes) before our take's use of their credits */
		r = atomic_load_explicit(&p->returned, memory_order_acquire);
		*ret_seen = r;
		r_after_t = true;
	}
}

/* min(o, size): o, the bound on the credits out after a take of @p m
 * from @p t with returned view @p r ("Chunks before credits" above). */
static inline uint64_t credit_chunks_need(const struct task_pool *p, uint64_t t, uint32_t m, uint64_t r)
{
	uint64_t o = t + m - (r < t ? r : t);

	return o < p->size ? o : p->size;
}

/* Make every chunk below min(o, size) (credit_chunks_need) for a take of
 * @p m from @p t with returned view @p r. @p ret_seen: the caller's
 * cached view, which r is (reloaded into it before a chunk is made by
 * it), or NULL when r is exact (a guard holder's own). False: out of
 * memory (nothing taken). */
static inline bool credit_split_chunks(struct task_pool *p, uint64_t t, uint32_t m, uint64_t r, uint64_t *ret_seen)
{
	uint64_t need = credit_chunks_need(p, t, m, r);
	EXPLORE_POINT(ATOMIC);
	/* acquire: the chunks below it, published before its CAS */
	uint32_t c = atomic_load_explicit(&p->chunks_made, memory_order_acquire);

	/* (the explorer's revert: chunks made by the cached view, F1) */
	if ((uint64_t)c * POOL_CHUNK < need && ret_seen != NULL && !DOCA_REVERTED("chunks_on_cached_returned")) {
		EXPLORE_POINT(ATOMIC);
		/* acquire: as the look's (the slots those returns freed) */
		r = atomic_load_explicit(&p->returned, memory_order_acquire);
		*ret_seen = r;
		need = credit_chunks_need(p, t, m, r);
	}

	if (DOCA_REVERTED("chunk_only_last")) /* (the explorer's revert: v1's look, D4) */
		return need == 0 || pool_chunk_of(p, (uint32_t)((need - 1u) / POOL_CHUNK)) != NULL ||
		       task_pool_publish_chunk(p, (uint32_t)((need - 1u) / POOL_CHUNK));
	while ((uint64_t)c * POOL_CHUNK < need) {
		/* another taker may have published chunk c and not yet
		 * moved chunks_made: one made is only counted, not made again
		 * (a copy, then given back); acquire: its slots, as
		 * pool_chunk_of's */
		if (atomic_load_explicit(&p->chunks[c], memory_order_acquire) == NULL && !task_pool_publish_chunk(p, c))
			return false;
		EXPLORE_POINT(ATOMIC);
		/* release: chunk c (and those below) before a reader of c + 1;
		 * a failure loads the count another taker moved (acquire: its
		 * chunks) into c */
		if (atomic_compare_exchange_strong_explicit(&p->chunks_made, &c, c + 1u, memory_order_release,
							    memory_order_acquire))
			c++;
	}
	return true;
}

/* The tests' probe (tests/engine/task_pool.c): when set,
 * credit_split_take calls it between a partial look and its CAS (a
 * return landing there). */
extern void (*credit_partial_probe)(struct task_pool *p);

/* Take up to @p k credits (*ret_seen: the caller's cached returned):
 * the credits taken (0: AGAIN, exact; fewer than k: the free ones at the
 * look, more may be free by the CAS), or UINT32_MAX for NO_MEMORY
 * (nothing taken). */
static inline uint32_t credit_split_take(struct task_pool *p, uint32_t k, uint64_t *ret_seen)
{
	for (;;) {
		uint64_t t;
		uint32_t m = credit_split_look(p, k, &t, ret_seen);

		if (m == 0)
			return 0;
		if (m < k && credit_partial_probe != NULL)
			credit_partial_probe(p);
		if (!credit_split_chunks(p, t, m, *ret_seen, ret_seen))
			return UINT32_MAX;
		EXPLORE_POINT(ATOMIC);
		/* acq_rel: takes and returns form one order (the exact AGAIN);
		 * the acquire sees what the chunks' makers published */
		if (atomic_compare_exchange_strong_explicit(&p->taken, &t, t + m, memory_order_acq_rel,
							    memory_order_relaxed))
			return m;
	}
}

/* Return @p n credits: the guard holder only (returned's one writer). */
static inline void credit_split_return(struct task_pool *p, uint32_t n)
{
#ifdef OWNED_RMW_ASM
	/* the same load and store, as one unlocked add (OWNED_RMW_ASM: only
	 * the guard holder writes returned); its store an x86 store, a
	 * release (the slots pushed back before a taker's acquire of
	 * returned), the "memory" clobber keeping our accesses before it */
	__asm__ volatile("addq %1, %0" : "+m"(*(uint64_t *)&p->returned) : "er"((uint64_t)n) : "memory", "cc");
#else
	uint64_t r = atomic_load_explicit(&p->returned, memory_order_relaxed); /* our own */

	EXPLORE_POINT(ATOMIC);
	/* release: the slots pushed back before a taker's acquire of returned */
	atomic_store_explicit(&p->returned, r + n, memory_order_release);
#endif
}

/* The credits out, taken - returned, at most size, never fewer than
 * were out at the first load: returned first (acquire: a caller that
 * sees a credit back sees the PE done with its slot), so taken, loaded
 * after it, is at least it (each return follows its take, which happens
 * before it); a return and a take between the loads count one credit
 * twice, and takes after the first load may push the difference past
 * size, which counts as all out. An over-count is what its callers
 * want: the stop (run_outstanding) must never count a credit back that
 * is out, and the waiters' check (engine/ctx_credits.c credits_due)
 * needs only returned loaded after its fence (the Dekker pair with the
 * returner); a take between the loads that makes it miss a free credit
 * took that credit, a genuine steal, not a lost wake. An AGAIN is
 * decided by task_pool_all_out, exact. */
static inline uint32_t task_pool_out(const struct task_pool *p)
{
	EXPLORE_POINT(ATOMIC);
	uint64_t r = atomic_load_explicit(&p->returned, memory_order_acquire);
	EXPLORE_POINT(ATOMIC); /* (a preemption between the loads: the over-count above) */
	uint64_t out = atomic_load_explicit(&p->taken, memory_order_relaxed) - r;

	return out < p->size ? (uint32_t)out : p->size;
}

/* Are all size credits out (an AGAIN look without taking, a foreign
 * submit's before its pins)? Exact, by credit_split_look's argument:
 * taken first, then returned (acquire, as task_pool_out's), so taken at
 * r's load is >= t and outstanding then >= t - r; signed, as a returned
 * read after taken may be ahead of it (D5). task_pool_out's order would
 * count a return and a take between its loads twice: AGAIN with fewer
 * than size out (the review of step 2, F3). */
static inline bool task_pool_all_out(const struct task_pool *p)
{
	if (DOCA_REVERTED("again_look_returned_first")) /* (the explorer's revert: task_pool_out's order, F3) */
		return task_pool_out(p) == p->size;
	EXPLORE_POINT(ATOMIC);
	/* acquire: returned, loaded next, is not read before it (with a
	 * relaxed taken, C11 and ARMv8 may satisfy this load after that one:
	 * F3's double count) */
	uint64_t t = atomic_load_explicit(&p->taken, memory_order_acquire);
	EXPLORE_POINT(ATOMIC); /* (a preemption between the loads: the argument above) */
	uint64_t r = atomic_load_explicit(&p->returned, memory_order_acquire);

	return (int64_t)(t - r) >= (int64_t)p->size;
}

/*
 * The slots (task_pool.c, "Slots: the guard holder's"): a stack of
 * returned slots, top_ev, linked through each slot's pool_next_ev, with
 * its depth `stacked`, and the fresh slots from fresh_from on, in chunk
 * order. Only the runner guard's holder reads or writes them, so every
 * access is plain (relaxed atomics for top_ev and the links: a stale
 * free may read a slot's words meanwhile, "The link word").
 */

/* The stack's top slot, NULL when it is empty (the owner's fast ways'
 * first look; the single submit keeps it for pool_pop_top, one load).
 * The explorer's build checks the depth against it. */
static inline __attribute__((always_inline)) struct doca_event *pool_top_slot(const struct task_pool *p)
{
	struct doca_event *ev = atomic_load_explicit(&p->top_ev, memory_order_relaxed);

#ifdef DOCA_EXPLORE
	if ((ev != NULL) != (p->stacked != 0))
		abort(); /* the explorer's check of the stack's depth (verdict "abort") */
#endif
	return ev;
}

/* Is a slot on the stack? */
static inline __attribute__((always_inline)) bool pool_one_poppable(const struct task_pool *p)
{
	return pool_top_slot(p) != NULL;
}

/* Pop @p ev, the stack's top (pool_top_slot's answer, not NULL, with
 * nothing pushed or popped since: the guard's holder only). */
static inline __attribute__((always_inline)) void pool_pop_top(struct task_pool *p, struct doca_event *ev)
{
	atomic_store_explicit(&p->top_ev, atomic_load_explicit(&ev->pool_next_ev, memory_order_relaxed),
			      memory_order_relaxed);
	EXPLORE_POINT(QUEUE);
	p->stacked--;
}

/* The stack's top slot, popped (pool_one_poppable true). The guard's
 * holder only. */
static inline __attribute__((always_inline)) struct doca_event *pool_pop_one(struct task_pool *p)
{
	struct doca_event *ev = pool_top_slot(p);

	pool_pop_top(p, ev);
	return ev;
}

/* A pop from the stack, step by step, for a caller that handles each
 * slot as it takes it (the burst's fill under the guard, engine/task.c):
 * pool_pop_start once pool_one_poppable was true, then pool_pop_step
 * while pool_pop_more (at least once), then pool_pop_end;
 * pool_pop_more, called once after each step, counts it (a count down:
 * one decrement and its flags, not a count and a compare with a bound).
 * A caller's work on a popped slot before pool_pop_end touches only
 * that slot, which is its own once popped. */
struct pool_pop {
	struct doca_event *ev; /* the slot the next step takes (NULL: the stack's bottom) */
	/* most: the slots this pop may take, left: those of them not counted
	 * taken yet (pool_pop_more) */
	uint32_t most, left;
};

/* @p want >= 1, and a slot on the stack: most >= 1 and the first step's
 * count leaves left below it, never wrapping; the stack holds most slots
 * or more (stacked), so every step finds one (pool_pop_more tests no
 * link). */
static inline __attribute__((always_inline)) struct pool_pop pool_pop_start(struct task_pool *p, uint32_t want)
{
	/* (the explorer's revert pool_depth_ignores_fresh: the depth taken as
	 * the free slots, the fresh ones included) */
	uint32_t depth = DOCA_REVERTED("pool_depth_ignores_fresh") ? p->stacked + p->size - p->fresh_from : p->stacked;
	uint32_t most = want < depth ? want : depth;

	return (struct pool_pop){ .ev = atomic_load_explicit(&p->top_ev, memory_order_relaxed),
				  .most = most,
				  .left = most };
}

/* Take the stack's top: following the links' slot pointers. */
static inline __attribute__((always_inline)) struct doca_event *pool_pop_step(struct pool_pop *pp)
{
	struct doca_event *ev = pp->ev;

#ifdef DOCA_EXPLORE
	if (ev == NULL)
		abort(); /* the explorer's check of the stack's depth (verdict "abort") */
#endif
	pp->ev = atomic_load_explicit(&ev->pool_next_ev, memory_order_relaxed);
	return ev;
}

/* pool_pop_step for a caller that keeps the popped slots linked as the
 * stack linked them (task_pool.c, "The link word"): the slot under @p
 * ev, the last one taken, is the next step's; the caller counts the step
 * with pool_pop_more and leaves pp->ev as the slot under the last one it
 * took before pool_pop_taken and pool_pop_end. */
static inline __attribute__((always_inline)) struct doca_event *pool_pop_under(const struct doca_event *ev)
{
	struct doca_event *under = atomic_load_explicit(&ev->pool_next_ev, memory_order_relaxed);

#ifdef DOCA_EXPLORE
	if (under == NULL)
		abort(); /* the explorer's check of the stack's depth (verdict "abort") */
#endif
	return under;
}

/* After each step, once: counts it, and says whether another may come
 * (the stack holds most slots: pool_pop_start). */
static inline __attribute__((always_inline)) bool pool_pop_more(struct pool_pop *pp)
{
	return --pp->left != 0;
}

/* The slots taken (the steps pool_pop_more counted). */
static inline __attribute__((always_inline)) uint32_t pool_pop_taken(const struct pool_pop *pp)
{
	return pp->most - pp->left;
}

/* The pop's end: the stack below the slots taken. */
static inline __attribute__((always_inline)) void pool_pop_end(struct task_pool *p, const struct pool_pop *pp)
{
	atomic_store_explicit(&p->top_ev, pp->ev, memory_order_relaxed);
	EXPLORE_POINT(QUEUE);
	p->stacked -= pool_pop_taken(pp);
}


/* Do the chunks cover @p o credits out (every chunk below min(o, size)
 * made and counted in chunks_made: "Chunks before credits" above)? */
static inline __attribute__((always_inline)) bool credit_chunks_cover(const struct task_pool *p, uint64_t o)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: the chunks below it, as credit_split_chunks's */
	uint32_t c = atomic_load_explicit(&p->chunks_made, memory_order_acquire);

	return (uint64_t)c * POOL_CHUNK >= o;
}

/* min(@p k, the credits from @p out up to @p bound). */
static inline __attribute__((always_inline)) uint32_t credit_room(uint32_t out, uint32_t bound, uint32_t k)
{
	if (out >= bound)
		return 0;
	return bound - out < k ? bound - out : k;
}

/* A guard holder's count of the credits out, *@p t the taken it counted
 * from, *@p r the returned. Exact: returned is its own (only guard
 * holders store it, and it holds the guard), and taken, loaded after it,
 * is at least it. Inside a plain update while the pool is the owner's
 * (pool_plain_begin*) no other thread takes (a taker without the guard
 * first turns the pool shared: task_pool.c), so t stays taken until
 * credit_plain_take stores it. At most size (no take takes more than the
 * free credits), so it fits 32 bits: the callers compare 32-bit words
 * (gcc then compares with the bound in memory). */
static inline __attribute__((always_inline)) uint32_t credit_guarded_out(const struct task_pool *p, uint64_t *t,
									 uint64_t *r)
{
	*r = atomic_load_explicit(&p->returned, memory_order_relaxed); /* our own (the guard) */
	*t = atomic_load_explicit(&p->taken, memory_order_relaxed);   /* the CAS checks it, or ours (plain) */
	return (uint32_t)(*t - *r);
}

/* A guard holder's look at the credits: min(@p k, free), *@p t and *@p r
 * as credit_guarded_out's (exact). */
static inline __attribute__((always_inline)) uint32_t credit_guarded_look(const struct task_pool *p, uint32_t k,
									  uint64_t *t, uint64_t *r)
{
	return credit_room(credit_guarded_out(p, t, r), p->size, k);
}

/* credit_guarded_look for the owner's fast ways (pool_take's single take,
 * engine/task.c's burst fill and task_one_owner), in one compare: the
 * credits out after the take are to stay at or below fresh_from, the
 * slots ever taken fresh (0 otherwise: the caller's slow way,
 * pool_take_loop and credit_take_covered, then makes the chunks, outside
 * its update, or answers AGAIN, by the exact look). That bound answers
 * both of that look's questions. Free: fresh_from <= size, so the credits
 * taken are free ones (exact, as credit_guarded_out's count). Chunks
 * (D4, "Chunks before credits" above: every chunk below the credits out
 * after a take exists before it takes, as the feed may need a fresh slot
 * of any of them, task_pool.c "Slots: the guard holder's"): fresh slots
 * are taken in index order, each from a chunk pool_slots_loop found
 * published (its acquire, under the guard we hold), so every chunk below
 * fresh_from, and so below the credits out after the take, is published,
 * with no look at chunks_made (a published chunk it does not count yet
 * is counted by the next taker that needs it, not made again:
 * credit_split_chunks). With w the credits held without a slot (foreign
 * ones, whose slots the feed pops), out + k <= fresh_from is, by the
 * slot count (stack + slots in use = fresh_from), w + k <= stacked: the
 * bound holds when the stack has a slot for each of those credits and
 * for the k taken, so the feed needs no fresh slot for any credit out. */
static inline __attribute__((always_inline)) uint32_t credit_guarded_free(const struct task_pool *p, uint32_t k,
									  uint64_t *t)
{
	uint64_t r;
	/* (the explorer's revert: size, the free look alone with no chunk
	 * cover, the review's B) */
	uint32_t bound = DOCA_REVERTED("owner_fast_no_cover") ? p->size : p->fresh_from;
	uint32_t out = credit_guarded_out(p, t, &r);

	if (out < p->size) /* (nothing outside the explorer's build) */
		EXPLORE_POINT(ATOMIC); /* (where chunks_made was loaded, a credit free: the same schedules) */
	return credit_room(out, bound, k);
}

/* The plain take of @p n credits from credit_guarded_free's @p t: a
 * store, which the update's end publishes (the switcher's busy wait, or
 * its wait for the parked owner's brief section: task_pool.c). */
static inline __attribute__((always_inline)) void credit_plain_take(struct task_pool *p, uint64_t t, uint32_t n)
{
#ifdef OWNED_RMW_ASM
	/* t + n as one unlocked add of n (OWNED_RMW_ASM): taken is still t
	 * (no other thread takes inside a plain update: credit_guarded_out),
	 * so gcc need not keep t; its store an x86 store, a release (below),
	 * the "memory" clobber keeping our accesses before it */
	(void)t;
	__asm__ volatile("addq %1, %0" : "+m"(*(uint64_t *)&p->taken) : "er"((uint64_t)n) : "memory", "cc");
#else
	/* release: a foreign look that acquires this taken sees the guard
	 * holders' earlier returns with it, not a new taken with an old
	 * returned (task_pool_all_out in OWNER mode) */
	atomic_store_explicit(&p->taken, t + n, memory_order_release);
#endif
}

/* credit_plain_take, then the update's end (pool_plain_end): the store
 * before busy's release, so a switcher that sees busy 0 sees it (moved
 * after, a foreign CAS between them is overwritten: a credit lost, one
 * task over max_tasks accepted). */
static inline __attribute__((always_inline)) void credit_plain_take_end(struct task_pool *p, uint64_t t, uint32_t n)
{
	if (DOCA_REVERTED("owner_take_after_plain_end")) { /* (the explorer's revert: the store after busy's release) */
		pool_plain_end(p);
		EXPLORE_POINT(ATOMIC);
		credit_plain_take(p, t, n);
		return;
	}
	credit_plain_take(p, t, n);
	pool_plain_end(p);
}

/* A guard holder's take of up to @p k credits: k, fewer (the free ones),
 * or 0 with *@p why: DOCA_ERROR_AGAIN (exact: credit_guarded_look) or
 * DOCA_ERROR_NO_MEMORY (a chunk could not be made; nothing taken). Every
 * chunk below the credits out after it is made first (D4's rule for a
 * guard holder: the feed pops fresh slots for ring tasks' credits).
 * *@p plain: inside a plain update while the pool is the owner's (@p
 * busy: begun by pool_plain_begin_as, else by pool_plain_begin_unparked),
 * otherwise the CAS; the update is ended around the allocation and begun
 * again, *plain its new answer. On return *plain says whether the update
 * is still open: false once ended here (after a NO_MEMORY, or after a
 * plain take with @p busy: credit_plain_take_end), true (the caller ends
 * it) after an AGAIN, or after a take by the parked owner, whose brief
 * section's exit publishes it. */
static inline __attribute__((always_inline)) uint32_t credit_take_covered(struct task_pool *p, uint32_t k,
									  bool *plain, bool busy, bool kernel,
									  doca_error_t *why)
{
	for (;;) {
		uint64_t t, r;
		uint32_t m = credit_guarded_look(p, k, &t, &r);

		if (m == 0) {
			*why = DOCA_ERROR_AGAIN;
			return 0;
		}
		/* (the explorer's revert: 7314cfd's CAS take, no chunk made, F2) */
		if ((*plain || !DOCA_REVERTED("guarded_cas_take_no_chunks")) && !credit_chunks_cover(p, t + m - r)) {
			/* the allocator may wait: not inside an update (a brief
			 * section entered by runner_unpark is waited out whole) */
			if (*plain && busy)
				pool_plain_end(p);
			if (!credit_split_chunks(p, t, m, r, NULL)) {
				*plain = false;
				*why = DOCA_ERROR_NO_MEMORY;
				return 0;
			}
			/* (the explorer's revert: plain on after the allocation, no
			 * new look at the mode, the review's C) */
			if (*plain && busy && DOCA_REVERTED("chunk_take_no_mode_look"))
				continue;
			*plain = busy ? pool_plain_begin_as(p, kernel) : pool_plain_begin_unparked(p);
			if (!*plain)
				pool_settle(p); /* before the CAS (pool_plain_begin_unparked) */
			continue;
		}
		if (*plain && busy) {
			credit_plain_take_end(p, t, m);
			*plain = false;
			return m;
		}
		if (*plain) {
			credit_plain_take(p, t, m);
			return m;
		}
		EXPLORE_POINT(ATOMIC);
		/* acq_rel: as credit_split_take's (takes and returns in one order) */
		if (atomic_compare_exchange_strong_explicit(&p->taken, &t, t + m, memory_order_acq_rel,
							    memory_order_relaxed))
			return m;
	}
}

/* A popper found no slot while it holds a credit for it: the credits and
 * the slots disagree (task_pool.c, "Why a popper always finds its
 * slots"). Logs and aborts. */
__attribute__((cold, noreturn)) void pool_slots_short(void);

/* A guard holder's @p want slots, into evs: the caller holds a credit
 * for each that has no slot yet (its own take's, or ring tasks' it
 * feeds), so every one is there (task_pool.c, "Why a popper always finds
 * its slots"; pool_slots_short aborts if not): the stack's first, then
 * fresh ones in a chunk the credits' takers made (credit_split_chunks,
 * credit_take_covered). */
static inline __attribute__((always_inline)) void pool_slots_loop(struct task_pool *p, struct doca_event **evs,
								  uint32_t want)
{
	uint32_t got = 0;

	if (pool_one_poppable(p)) {
		struct pool_pop pp = pool_pop_start(p, want);

		do
			evs[got++] = pool_pop_step(&pp);
		while (pool_pop_more(&pp));
		pool_pop_end(p, &pp);
	}
	while (got < want) {
		/* fresh slots, in order, up to the end of their chunk (the
		 * stack is empty: a fresh slot is taken only then) */
		uint32_t fresh = p->fresh_from, room = POOL_CHUNK - fresh % POOL_CHUNK;
		uint32_t n = want - got < room ? want - got : room;

		if (fresh + n > p->size || pool_chunk_of(p, fresh / POOL_CHUNK) == NULL)
			pool_slots_short(); /* its credits' takers made the chunk first */
		EXPLORE_POINT(QUEUE);
		p->fresh_from = fresh + n;
		for (uint32_t i = 0; i < n; i++)
			evs[got + i] = pool_slot_of(p, fresh + i);
		got += n;
	}
}

/* pool_take after its first look (a guard holder's): @p plain,
 * pool_plain_begin_as's answer; @p busy: the plain update stores busy
 * (pool_plain_begin_as, pool_plain_end); false for the parked owner
 * inside a brief section it entered by runner_unpark, whose entry is the
 * flag (pool_plain_begin_unparked; task_pool.c). The credits first
 * (credit_take_covered: taken, returned, and the chunks they need), the
 * update ended, then a slot for each (pool_slots_loop). */
static inline __attribute__((always_inline)) uint32_t pool_take_loop(struct task_pool *p, struct doca_event **evs,
								     uint32_t want, bool kernel, doca_error_t *why,
								     bool plain, bool busy)
{
	want = credit_take_covered(p, want, &plain, busy, kernel, why);
	if (plain && busy)
		pool_plain_end(p);
	if (want != 0)
		pool_slots_loop(p, evs, want);
	return want;
}

/* task_pool_take_as's body. */
static inline __attribute__((always_inline)) uint32_t pool_take(struct task_pool *p, struct doca_event **evs,
								uint32_t want, bool kernel, doca_error_t *why)
{
	bool plain = pool_plain_begin_as(p, kernel);

	if (__builtin_constant_p(want) && want == 1u && plain && pool_one_poppable(p)) {
		uint64_t t;

		if (credit_guarded_free(p, 1, &t) != 0) { /* else pool_take_loop's look */
			credit_plain_take_end(p, t, 1);
			evs[0] = pool_pop_one(p);
			return 1;
		}
	}
	return pool_take_loop(p, evs, want, kernel, why, plain, true);
}

/* Take between 1 and @p want (>= 1) credits and their slots (into evs),
 * *why untouched; or 0 with *why: DOCA_ERROR_AGAIN (every credit is
 * out) or DOCA_ERROR_NO_MEMORY (a chunk could not be made; nothing
 * taken). Fewer than asked only when fewer are free; a caller that wants
 * the rest asks again (engine/task.c task_take_credits) and gets 0 with
 * the reason, so a take never returns tasks together with NO_MEMORY
 * (every chunk the credits it returns need was made before it took
 * them: credit_take_covered). The holder of the PE's runner guard only (a
 * thread without it takes credits alone: task_pool_take_credits); @p
 * kernel: as pool_plain_begin_as's. always_inline: gcc would otherwise
 * call it once per submit. */
static inline __attribute__((always_inline)) uint32_t task_pool_take_as(struct task_pool *p, struct doca_event **evs,
									uint32_t want, bool kernel,
									doca_error_t *why)
{
	EXPLORE_POINT(ATOMIC);
	return pool_take(p, evs, want, kernel, why);
}

/* task_pool_take_as for a caller that has not tested asym_fence_kernel. */
static inline __attribute__((always_inline)) uint32_t task_pool_take(struct task_pool *p, struct doca_event **evs,
								     uint32_t want, doca_error_t *why)
{
	return task_pool_take_as(p, evs, want, false, why);
}

/* The feed's slots (engine/ring.c): @p n (>= 1) into evs, for ring tasks
 * that hold their credits (task_pool_take_credits) and no slot. The
 * runner guard's holder only. */
static inline void task_pool_slots(struct task_pool *p, struct doca_event **evs, uint32_t n)
{
	pool_slots_loop(p, evs, n);
}

/* A taker without the PE's runner guard (a foreign submit, engine/task.c):
 * up to @p want credits and no slot (the PE's feed pops one per ring
 * entry, task_pool_slots): their count, or 0 with *@p why
 * (DOCA_ERROR_AGAIN: exact; DOCA_ERROR_NO_MEMORY: a chunk could not be
 * made, nothing taken); fewer than asked only when fewer are free (*why
 * then says AGAIN for the rest, exact: a look after the last take found
 * none free) or a chunk could not be made for the rest (*why: NO_MEMORY,
 * the credits already taken kept). *@p ret_seen: the caller's cached
 * returned (credit_split_look). While the pool is the owner's: with
 * the guard taken briefly if nobody holds it (the pool stays the
 * owner's), else after turning it shared (task_pool.c). */
uint32_t task_pool_take_credits(struct task_pool *p, uint32_t want, uint64_t *ret_seen, doca_error_t *why);

/* Put the chain @p first .. @p last (@p n slots, linked to each other as
 * pool_chain_add links them) on the stack, then give their credits back
 * (returned, after the slots: "Why a popper always finds its slots").
 * The guard's holder only, in any mode: neither the stack nor returned
 * has another writer. @p last's link is written here, so a one-slot
 * chain needs none written before (a single free, engine/event.c). */
static inline __attribute__((always_inline)) void pool_put_chain(struct task_pool *p, struct doca_event *first,
								 struct doca_event *last, uint32_t n)
{
	/* more on the stack than ever taken fresh: a slot returned twice */
	if (p->stacked + n > p->fresh_from)
		pool_double_return();
	atomic_store_explicit(&last->pool_next_ev, atomic_load_explicit(&p->top_ev, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&p->top_ev, first, memory_order_relaxed);
	EXPLORE_POINT(QUEUE);
	p->stacked += n;
	credit_split_return(p, n); /* its release: the slots' last use before a stop's or a waiter's acquire */
}

/* Return a chain's credits and slots, emptying it (the holder of the PE's
 * runner guard only). */
static inline void task_pool_put(struct task_pool *p, struct pool_chain *c)
{
	if (c->n == 0)
		return;
	pool_put_chain(p, c->first, c->last, c->n);
	*c = (struct pool_chain){ 0 };
}

#endif /* DOCA_ENGINE_TASK_POOL_H */
