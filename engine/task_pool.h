/*
 * engine/task_pool.h — taking and returning credits, inline on the submit
 * and free paths. Why it is correct: engine/task_pool.c.
 */
#ifndef DOCA_ENGINE_TASK_POOL_H
#define DOCA_ENGINE_TASK_POOL_H

#include "actors/asym_fence.h"
#include "engine/engine.h"

#define POOL_TOP_BITS 21u  /* slot index + 1, up to DOCA_CTX_MAX_TASKS_LIMIT */
#define POOL_FREE_BITS 21u /* free credits, up to DOCA_CTX_MAX_TASKS_LIMIT */
#define POOL_TAG_SHIFT (POOL_TOP_BITS + POOL_FREE_BITS)
#define POOL_FIELD_MASK ((1u << POOL_TOP_BITS) - 1u)

_Static_assert(DOCA_CTX_MAX_TASKS_LIMIT <= POOL_FIELD_MASK, "a slot index + 1 and a count fit 21 bits");

static inline uint32_t head_top(uint64_t h)
{
	return (uint32_t)h & POOL_FIELD_MASK;
}
static inline uint32_t head_free(uint64_t h)
{
	return (uint32_t)(h >> POOL_TOP_BITS) & POOL_FIELD_MASK;
}
/* h shifted up by the tag's width: the free count on the word's top
 * bits, the top below it (less than one count's unit). So
 * head_free(h) >= size exactly when head_free_high(h) >=
 * pool_size_high(size): one shift of h and a compare with the pool's
 * size_high, not a shift, a mask and a compare (pool_put_one_owner). */
static inline uint64_t head_free_high(uint64_t h)
{
#ifdef OWNED_RMW_ASM
	/* The shift as a three-operand imul by its power of two (the low 64
	 * bits of the product are the shifted word): the single put keeps h
	 * for its add (pool_put_one_owner), and gcc's shift wanted a copy of it first (a mov),
	 * gcc turning a multiply back into that shift. Arithmetic on a
	 * register only: no memory access the TSan and explorer builds
	 * would not see. */
	uint64_t high;

	__asm__("imulq %[m], %[h], %[high]"
		: [high] "=r"(high)
		: [h] "rm"(h), [m] "i"((int32_t)1 << (64u - POOL_TAG_SHIFT))
		: "cc");
	return high;
#else
	return h << (64u - POOL_TAG_SHIFT);
#endif
}
static inline uint64_t pool_size_high(uint32_t size)
{
	return (uint64_t)size << (64u - POOL_TAG_SHIFT + POOL_TOP_BITS);
}

/* The word after h: tag + 1 (mod 2^22), free and top. With every bit
 * below the tag set, adding 1 carries exactly into the tag, and one past
 * its top bit falls off the word, as (tag + 1) mod 2^22 would. */
static inline uint64_t head_next(uint64_t h, uint32_t free, uint32_t top)
{
	return ((h | (((uint64_t)1 << POOL_TAG_SHIFT) - 1u)) + 1u) | (uint64_t)free << POOL_TOP_BITS | top;
}

/* head_next(h, head_free(h) + n, top) for a return of n credits, which
 * the caller checked fit (head_free(h) + n <= size < 2^21): the count
 * grows by n in place (no carry out of its field), the tag by one (its
 * top bit falls off the word, as (tag + 1) mod 2^22 would), and top is
 * replaced: three operations, not unpacking the count. */
static inline uint64_t head_put(uint64_t h, uint32_t n, uint32_t top)
{
	return ((h & ~(uint64_t)POOL_FIELD_MASK) + ((uint64_t)1 << POOL_TAG_SHIFT) + ((uint64_t)n << POOL_TOP_BITS)) |
	       top;
}

/* One free credit in head's count field. While the pool is the owner's
 * a plain update adds or subtracts units of it and nothing else
 * (task_pool.c, "The owner's head"): its top and tag are stale there. */
#define POOL_FREE_ONE ((uint64_t)1 << POOL_TOP_BITS)

/* The pool's mode (engine/task_pool.c): plain updates by guard holders
 * until a taker without the guard appears, CAS from then on. INDEXING:
 * one thread writes the stack's index links before SHARED (task_pool.c,
 * "The index links"). */
enum { POOL_OWNER, POOL_SWITCHING, POOL_SHARED, POOL_INDEXING };

/* A thread that found mode not POOL_OWNER: returns once it is
 * POOL_SHARED, the stack's index links written (by us if nobody has:
 * task_pool.c). Out of line and cold: the owner's ways meet it once. */
__attribute__((cold)) void pool_settle(struct task_pool *p);

/* Make chunk c unless another taker did; false when out of memory. */
/* A return would make more credits free than the pool has: a slot was
 * returned twice. Logs and aborts. */
__attribute__((cold, noreturn)) void pool_double_return(void);

bool task_pool_publish_chunk(struct task_pool *p, uint32_t c);

/* A guard holder about to update head: true if it may do so with a plain
 * store (then it calls pool_plain_end after it), false for the CAS.
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
	/* release: a switcher that sees 0 sees our store to head */
	atomic_store_explicit(&p->busy, 0, memory_order_release);
}

/* pool_plain_begin for the PE's parked owner inside a brief section it
 * entered by runner_unpark (false: the caller's CAS way calls pool_settle
 * first, out of its inline way: pool_put_shared does, engine/task.c's
 * task_owner_take_shared too) (doca_event_free's owner way, and the owner's
 * doca_task_submit: engine/task.c task_one_owner): its entry in
 * its list is the busy flag, which task_pool_share waits out
 * (runner_quiesce_wait), so one look at mode decides and no pool_plain_end
 * follows (task_pool.c, "The parked owner's brief sections"). */
static inline __attribute__((always_inline)) bool pool_plain_begin_unparked(struct task_pool *p)
{
	EXPLORE_POINT(ATOMIC);
	return atomic_load_explicit(&p->mode, memory_order_relaxed) == POOL_OWNER;
}

/* pool_plain_begin_unparked for the owner's frees (engine/event.c): the
 * same relaxed look at mode, one cmp with the word in memory
 * (ATOMIC_IS_ZERO; POOL_OWNER is 0). Not for the owner's submit: there
 * gcc kept one register more for it (bench/README, reap4). */
_Static_assert(POOL_OWNER == 0, "the owner's mode is 0");
static inline __attribute__((always_inline)) bool pool_plain_begin_unparked_free(struct task_pool *p)
{
	EXPLORE_POINT(ATOMIC);
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
 * slots"; head's count is its slots'). free = size - (taken - returned): taken
 * grows by every take (a CAS, acq_rel), returned by every return (the
 * guard holder's alone: a release store), and returned <= taken at every
 * instant (each return follows its take). A taker keeps a cached view of
 * returned (ret_seen: an SP producer's own, on its ring's producer
 * line, also while it is diverted to MP; a thread with no SP ring starts
 * from 0 each submit: engine/task.c task_ret_seen), reloaded only when
 * that view says the pool is short: a spinning submitter writes no
 * shared line.
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
 * largest o of a take that succeeded) finds its chunk made.
 */

/* The credits a take of up to @p k may get now: k, fewer (the free
 * ones), or 0 (AGAIN, exact). *t: the taken value the take must CAS from
 * (loaded here); *ret_seen: the caller's cached returned (reloaded here
 * when it says short). */
static inline uint32_t credit_split_look(struct task_pool *p, uint32_t k, uint64_t *t, uint64_t *ret_seen)
{
	uint64_t r = *ret_seen;
	bool r_after_t = false;

	EXPLORE_POINT(ATOMIC);
	*t = atomic_load_explicit(&p->taken, memory_order_relaxed); /* the CAS checks it */
	for (;;) {
		/* (the explorer's revert: no such look, D5's wrap) */
		if ((int64_t)(r - *t) > 0 && !DOCA_REVERTED("again_unsigned")) { /* t older than r (D5): reload t */
			EXPLORE_POINT(ATOMIC);
			*t = atomic_load_explicit(&p->taken, memory_order_relaxed);
			r_after_t = false;
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
		EXPLORE_POINT(ATOMIC);
		/* acquire: the slots those returns freed (the guard holder's
		 * pushes) before our take's use of their credits */
		r = atomic_load_explicit(&p->returned, memory_order_acquire);
		*ret_seen = r;
		r_after_t = true;
	}
}

/* Make every chunk below min(o, size) (o: credit_split_look's bound for
 * a take of @p m from @p t with returned view @p r). False: out of
 * memory (nothing taken). */
static inline bool credit_split_chunks(struct task_pool *p, uint64_t t, uint32_t m, uint64_t r)
{
	uint64_t o = t + m - (r < t ? r : t);
	uint64_t need = o < p->size ? o : p->size;
	EXPLORE_POINT(ATOMIC);
	/* acquire: the chunks below it, published before its CAS */
	uint32_t c = atomic_load_explicit(&p->chunks_made, memory_order_acquire);

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

/* Take up to @p k credits (*ret_seen: the caller's cached returned):
 * the credits taken (0: AGAIN, exact), or UINT32_MAX for NO_MEMORY
 * (nothing taken). */
static inline uint32_t credit_split_take(struct task_pool *p, uint32_t k, uint64_t *ret_seen)
{
	for (;;) {
		uint64_t t;
		uint32_t m = credit_split_look(p, k, &t, ret_seen);

		if (m == 0)
			return 0;
		if (!credit_split_chunks(p, t, m, *ret_seen))
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
	uint64_t r = atomic_load_explicit(&p->returned, memory_order_relaxed); /* our own */

	EXPLORE_POINT(ATOMIC);
	/* release: the slots pushed back before a taker's acquire of returned */
	atomic_store_explicit(&p->returned, r + n, memory_order_release);
}

/* The credits out, taken - returned, at most size: returned first
 * (acquire: a caller that sees a credit back sees the PE done with its
 * slot), so taken, loaded after it, is at least it (each return follows
 * its take, which happens before it); takes after that load may push
 * the difference past size, which counts as all out. */
static inline uint32_t task_pool_out(const struct task_pool *p)
{
	EXPLORE_POINT(ATOMIC);
	uint64_t r = atomic_load_explicit(&p->returned, memory_order_acquire);
	uint64_t out = atomic_load_explicit(&p->taken, memory_order_relaxed) - r;

	return out < p->size ? (uint32_t)out : p->size;
}

/* Can a plain take pop the owner's stack (pool_take's first look, once
 * pool_plain_begin* found the pool the owner's, @p h its pool_head_look)?
 * Then pool_pop_one_plain or pool_pop_start takes it. While the pool is
 * the owner's the stack is top_ev's alone and head's top is stale
 * (task_pool.c, "The owner's head"), so top_ev decides. Free credits are
 * the slots on the stack plus the slots never used (task_pool.c), so a
 * stack with a slot comes with a free count of one or more (a return that
 * would break it aborts in pool_double_return; a take never takes more
 * than the stack and the fresh slots hold). The explorer's build checks
 * it. */
static inline __attribute__((always_inline)) bool pool_one_poppable(struct task_pool *p, uint64_t h)
{
	bool some = atomic_load_explicit(&p->top_ev, memory_order_relaxed) != NULL;

#ifdef DOCA_EXPLORE
	if (some && head_free(h) == 0)
		abort(); /* the explorer's check of the above (verdict "abort") */
#else
	(void)h;
#endif
	return some;
}

/* pool_take's first look at head, after pool_plain_begin_as. */
static inline __attribute__((always_inline)) uint64_t pool_head_look(struct task_pool *p)
{
	EXPLORE_POINT(QUEUE);
	/* acquire: pairs with task_pool_put's release (the slots as the PE left them). */
	return atomic_load_explicit(&p->head, memory_order_acquire);
}

/* The index + 1 an index link or head's top holds for the stack whose top
 * slot is @p ev (NULL: empty): the slot's own pool_link, the same for the
 * run's life (task_pool.c, "The index links"). */
static inline __attribute__((always_inline)) uint32_t pool_top_of(const struct doca_event *ev)
{
	return ev != NULL ? ev->pool_link : 0u;
}

/* A single take from the owner's stack, plain, with pool_one_poppable
 * true: pool_take_loop's steps for n = 1, the same loads, stores and
 * points; ends the plain update (@p busy: as pool_take_loop's). */
static inline __attribute__((always_inline)) struct doca_event *pool_pop_one_plain(struct task_pool *p, uint64_t h,
										    bool busy)
{
	struct doca_event *ev = atomic_load_explicit(&p->top_ev, memory_order_relaxed);
	struct doca_event *next = atomic_load_explicit(&ev->pool_next_ev, memory_order_relaxed);

	atomic_store_explicit(&p->top_ev, next, memory_order_relaxed);
	EXPLORE_POINT(QUEUE);
	/* release: as pool_take_loop's. The count less one, its top and tag
	 * left (task_pool.c, "The owner's head"); free is 1 or more: no
	 * borrow out of its field */
	atomic_store_explicit(&p->head, h - POOL_FREE_ONE, memory_order_release);
	if (busy)
		pool_plain_end(p);
	return ev;
}

#ifdef OWNED_RMW_ASM
/* pool_head_look, pool_one_poppable and pool_pop_one_plain for the parked
 * owner's single submit (engine/task.c task_one_owner, after
 * pool_plain_begin_unparked found the pool the owner's), with
 * OWNED_RMW_ASM (x86-64; the TSan and explorer builds keep those three):
 * the stack's top slot, popped, or NULL when the stack is empty (the
 * caller then takes the fresh way, pool_take_loop, which loads head
 * itself). While the pool is the owner's top_ev is the stack and a plain
 * take changes only head's count (task_pool.c, "The owner's head"), so no
 * load of head decides, and the new word is h less one unit of the count
 * (free is 1 or more with a slot on the stack: pool_one_poppable): one
 * unlocked subtract of a constant from head in memory, its load and its
 * store each a single-copy atomic access of the aligned word, as a
 * relaxed load and a store are (only guard holders write head while the
 * pool is the owner's, and we hold the guard: OWNED_RMW_ASM's case). The
 * store is an x86 store, a release, as pool_pop_one_plain's; the "memory"
 * clobber keeps our earlier accesses before it. The acquire of the head
 * look is not needed: every plain update of head was a guard holder's,
 * which the guard orders before us. */
static inline __attribute__((always_inline)) struct doca_event *pool_pop_one_owner(struct task_pool *p)
{
	struct doca_event *ev = atomic_load_explicit(&p->top_ev, memory_order_relaxed);

	if (ev == NULL)
		return NULL;
	atomic_store_explicit(&p->top_ev, atomic_load_explicit(&ev->pool_next_ev, memory_order_relaxed),
			      memory_order_relaxed);
	__asm__ volatile("subq %1, %0" : "+m"(*(uint64_t *)&p->head) : "i"(POOL_FREE_ONE) : "memory", "cc");
	return ev;
}
#endif

/* pool_take_loop's plain pop from the owner's stack, step by step, for a
 * caller that handles each slot as it takes it (the burst's fill under
 * the guard, engine/task.c): pool_pop_start once pool_plain_begin_as
 * returned true and pool_head_look's @p h passed pool_one_poppable, then
 * pool_pop_step while pool_pop_more (at least once), then pool_pop_end;
 * pool_pop_more, called once after each step, counts it (a count down:
 * one decrement and its flags, not a count and a compare with a bound).
 * The same loads, stores and points as a whole take; a caller's work on
 * a popped slot before pool_pop_end touches only that slot, which is
 * its own once popped (no one else takes while the pool is the owner's
 * and we are inside the plain update). */
struct pool_pop {
	uint64_t h;
	struct doca_event *ev; /* the slot the next step takes (NULL: the stack's bottom) */
	/* most: the slots this pop may take, left: those of them not counted
	 * taken yet (pool_pop_more) */
	uint32_t most, left;
};

/* The slots on the owner's stack: free - (size - fresh_from)
 * (task_pool.c, "The stack's depth"; the planted bug
 * pool_depth_ignores_fresh takes free). */
static inline __attribute__((always_inline)) uint32_t pool_stack_depth(const struct task_pool *p, uint64_t h)
{
	if (DOCA_REVERTED("pool_depth_ignores_fresh"))
		return head_free(h);
	return head_free(h) + p->fresh_from - p->size;
}

/* @p want >= 1 (task_pool_take's contract), and @p h poppable: the stack
 * holds a slot, so most >= 1 and the first step's count leaves left below
 * it, never wrapping; and the stack holds most slots or more, so every
 * step finds one (pool_pop_more tests no link). */
static inline __attribute__((always_inline)) struct pool_pop pool_pop_start(struct task_pool *p, uint64_t h,
									    uint32_t want)
{
	uint32_t depth = pool_stack_depth(p, h), most = want < depth ? want : depth;

	return (struct pool_pop){ .h = h,
				  .ev = atomic_load_explicit(&p->top_ev, memory_order_relaxed),
				  .most = most,
				  .left = most };
}

/* Take the stack's top: following the links' slot pointers (the one
 * link while the pool is the owner's: task_pool.c). */
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

/* The plain update's end (@p busy: as pool_take_loop's). */
static inline __attribute__((always_inline)) void pool_pop_end(struct task_pool *p, const struct pool_pop *pp,
							       bool busy)
{
	atomic_store_explicit(&p->top_ev, pp->ev, memory_order_relaxed);
	EXPLORE_POINT(QUEUE);
	/* release: as task_pool_put's, for readers of the count. The count
	 * less the slots taken, top and tag left (task_pool.c, "The owner's
	 * head") */
	atomic_store_explicit(&p->head, pp->h - (uint64_t)pool_pop_taken(pp) * POOL_FREE_ONE, memory_order_release);
	if (busy)
		pool_plain_end(p);
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

/* A guard holder's look at the credits: min(@p k, free), *@p t the taken
 * it counted from, *@p r the returned. Exact: returned is its own (only
 * guard holders store it, and it holds the guard), and taken, loaded
 * after it, is at least it. Inside a plain update while the pool is the
 * owner's (pool_plain_begin*) no other thread takes (a taker without
 * the guard first turns the pool shared: task_pool.c), so t stays taken
 * until credit_plain_take stores it. */
static inline __attribute__((always_inline)) uint32_t credit_guarded_look(const struct task_pool *p, uint32_t k,
									  uint64_t *t, uint64_t *r)
{
	*r = atomic_load_explicit(&p->returned, memory_order_relaxed); /* our own (the guard) */
	*t = atomic_load_explicit(&p->taken, memory_order_relaxed);   /* the CAS checks it, or ours (plain) */
	uint64_t out = *t - *r;
	uint32_t free = out >= p->size ? 0 : p->size - (uint32_t)out;

	return k < free ? k : free;
}

/* credit_guarded_look for the owner's fast ways (pool_take's single take,
 * engine/task.c's burst fill and task_one_owner): 0 also when the chunks
 * do not cover the credits out after the take (the feed may need a
 * fresh slot of any of them, task_pool.c "Slots: the guard holder's"):
 * then the caller's slow way (pool_take_loop, credit_take_covered) makes
 * them, outside its update, or answers AGAIN. */
static inline __attribute__((always_inline)) uint32_t credit_guarded_free(const struct task_pool *p, uint32_t k,
									  uint64_t *t)
{
	uint64_t r;
	uint32_t m = credit_guarded_look(p, k, t, &r);

	return m != 0 && credit_chunks_cover(p, *t + m - r) ? m : 0;
}

/* The plain take of @p n credits from credit_guarded_free's @p t: a
 * store, which the update's end publishes (the switcher's busy wait, or
 * its wait for the parked owner's brief section: task_pool.c). */
static inline __attribute__((always_inline)) void credit_plain_take(struct task_pool *p, uint64_t t, uint32_t n)
{
	atomic_store_explicit(&p->taken, t + n, memory_order_relaxed);
}

/* A guard holder's take of up to @p k credits: k, fewer (the free ones),
 * or 0 with *@p why: DOCA_ERROR_AGAIN (exact: credit_guarded_look) or
 * DOCA_ERROR_NO_MEMORY (a chunk could not be made; nothing taken). Every
 * chunk below the credits out after it is made first (D4's rule for a
 * guard holder: the feed pops fresh slots for ring tasks' credits).
 * *@p plain: inside a plain update while the pool is the owner's (@p
 * busy: begun by pool_plain_begin_as, else by pool_plain_begin_unparked),
 * otherwise the CAS; the update is ended around the allocation and begun
 * again, *plain its new answer (false after a NO_MEMORY: ended). */
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
		if (!credit_chunks_cover(p, t + m - r)) {
			/* the allocator may wait: not inside an update (a brief
			 * section entered by runner_unpark is waited out whole) */
			if (*plain && busy)
				pool_plain_end(p);
			if (!credit_split_chunks(p, t, m, r)) {
				*plain = false;
				*why = DOCA_ERROR_NO_MEMORY;
				return 0;
			}
			*plain = busy ? pool_plain_begin_as(p, kernel) : pool_plain_begin_unparked(p);
			if (!*plain)
				pool_settle(p); /* before the CAS (pool_plain_begin_unparked) */
			continue;
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

/* A taker's slot look found none on head while it holds a credit for it:
 * the credits and the slots disagree (task_pool.c, "Credits before
 * slots"). Logs and aborts. */
__attribute__((cold, noreturn)) void pool_slots_short(void);

/* A guard holder's @p want slots from head, into evs: the caller holds a
 * credit for each that has no slot yet (its own take's, or ring tasks'
 * it feeds), so every one is there (task_pool.c, "Credits before
 * slots"; pool_slots_short aborts if not), on the stack or fresh in a
 * chunk the credits' takers made (credit_split_chunks,
 * credit_take_covered). @p plain, @p h, @p busy, @p kernel: as
 * pool_take_loop's; one or more steps on head, each a plain update
 * while the pool is the owner's (ended here), a CAS once shared. */
static inline __attribute__((always_inline)) void pool_slots_loop(struct task_pool *p, struct doca_event **evs,
								  uint32_t want, bool kernel, bool plain, uint64_t h,
								  bool busy)
{
	uint32_t got = 0;

	for (;;) {
		/* head's top is stale while the pool is the owner's: a plain
		 * update decides by top_ev (pool_one_poppable) */
		uint32_t top = plain ? 0u : head_top(h), free = head_free(h), fresh = p->size - free, next = top, n = 0;
		uint32_t most = want - got < free ? want - got : free;
		bool popped = false; /* the owner's stack, its update ended */

		if (free == 0)
			pool_slots_short();
		if (plain && pool_one_poppable(p, h)) {
			struct pool_pop pp = pool_pop_start(p, h, want - got);

			do
				evs[got + n++] = pool_pop_step(&pp);
			while (pool_pop_more(&pp));
			pool_pop_end(p, &pp, busy);
			popped = true;
		} else if (top != 0) {
			/* pop from the stack (shared: its index links written,
			 * pool_settle); relaxed: a stale link fails the CAS below
			 * (the tag moved) */
			while (n < most && next != 0) {
				evs[got + n] = pool_slot_of(p, next - 1u);
				next = atomic_load_explicit(&evs[got + n++]->pool_next, memory_order_relaxed);
			}
		} else if (pool_chunk_of(p, fresh / POOL_CHUNK) == NULL) {
			pool_slots_short(); /* its credits' takers made it first */
		} else {
			/* fresh slots, in order, up to the end of their chunk */
			uint32_t room = POOL_CHUNK - fresh % POOL_CHUNK;

			n = most < room ? most : room;
		}
		if (!popped) {
			EXPLORE_POINT(QUEUE);
			if (plain) {
				p->fresh_from = fresh + n; /* fresh slots (a plain take's only way here) */
				/* release: as task_pool_put's, for readers of the count */
				atomic_store_explicit(&p->head, head_next(h, free - n, next), memory_order_release);
				if (busy)
					pool_plain_end(p);
			} else if (!atomic_compare_exchange_weak_explicit(&p->head, &h, head_next(h, free - n, next),
									  memory_order_acquire, memory_order_acquire)) {
				continue; /* acquire on success: as the load above, for the slots we take */
			}
			for (uint32_t i = 0; top == 0 && i < n; i++)
				evs[got + i] = pool_slot_of(p, fresh + i);
		}
		got += n;
		if (got == want)
			return;
		/* the end of the stack or of a chunk: the next step on head */
		plain = busy ? pool_plain_begin_as(p, kernel) : pool_plain_begin_unparked(p);
		if (!plain)
			pool_settle(p);
		h = atomic_load_explicit(&p->head, memory_order_acquire); /* as pool_head_look's */
	}
}

/* pool_take after its first look (a guard holder's): @p plain,
 * pool_plain_begin_as's answer, and @p h, the head pool_head_look
 * loaded. @p busy: the plain update stores busy (pool_plain_begin_as,
 * pool_plain_end); false for the parked owner inside a brief section it
 * entered by runner_unpark, whose entry is the flag
 * (pool_plain_begin_unparked; task_pool.c). The credits first
 * (credit_take_covered: taken, returned, and the chunks they need),
 * then a slot from head for each (pool_slots_loop). Only guard holders
 * update head (ring21 step 2: a taker without the guard takes credits
 * alone, task_pool_take_credits), and we hold it across the credits'
 * allocation too, so a plain update's h is still head's then. */
static inline __attribute__((always_inline)) uint32_t pool_take_loop(struct task_pool *p, struct doca_event **evs,
								     uint32_t want, bool kernel, doca_error_t *why,
								     bool plain, uint64_t h, bool busy)
{
	want = credit_take_covered(p, want, &plain, busy, kernel, why);
	if (want == 0) {
		if (plain && busy)
			pool_plain_end(p);
		return 0;
	}
	if (!plain)
		h = pool_head_look(p); /* after our credits (task_pool.c, "Credits before slots") */
	pool_slots_loop(p, evs, want, kernel, plain, h, busy);
	return want;
}

/* task_pool_take_as's body. */
static inline __attribute__((always_inline)) uint32_t pool_take(struct task_pool *p, struct doca_event **evs,
								uint32_t want, bool kernel, doca_error_t *why)
{
	bool plain = pool_plain_begin_as(p, kernel);
	uint64_t h = pool_head_look(p);

	if (__builtin_constant_p(want) && want == 1u && plain && pool_one_poppable(p, h)) {
		uint64_t t;

		if (credit_guarded_free(p, 1, &t) != 0) { /* else pool_take_loop's look */
			credit_plain_take(p, t, 1);
			evs[0] = pool_pop_one_plain(p, h, true);
			return 1;
		}
	}
	return pool_take_loop(p, evs, want, kernel, why, plain, h, true);
}

/* Take between 1 and @p want (>= 1) credits and their slots (into evs);
 * 0 with *why: DOCA_ERROR_AGAIN (every credit is out) or
 * DOCA_ERROR_NO_MEMORY (a chunk could not be made). Fewer than asked when
 * fewer are free, or at the end of the returned stack or of a chunk: the
 * caller asks again. The holder of the PE's runner guard only (a thread
 * without it takes credits alone: task_pool_take_credits); @p kernel: as
 * pool_plain_begin_as's. always_inline: gcc would otherwise call it once
 * per submit. */
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
	bool plain = pool_plain_begin(p);

	pool_slots_loop(p, evs, n, false, plain, pool_head_look(p), true);
}

/* A taker without the PE's runner guard (a foreign submit, engine/task.c):
 * up to @p want credits and no slot (the PE's feed pops one per ring
 * entry, task_pool_slots): their count, or 0 with *@p why
 * (DOCA_ERROR_AGAIN: exact; DOCA_ERROR_NO_MEMORY: a chunk could not be
 * made, nothing taken); fewer than asked only when fewer are free (*why
 * then says AGAIN for the rest). *@p ret_seen: the caller's cached
 * returned (credit_split_look). While the pool is the owner's: with
 * the guard taken briefly if nobody holds it (the pool stays the
 * owner's), else after turning it shared (task_pool.c). */
uint32_t task_pool_take_credits(struct task_pool *p, uint32_t want, uint64_t *ret_seen, doca_error_t *why);

/* task_pool_put's way while the pool is the owner's, after pool_plain_begin
 * returned true: the chain first..last (n slots, linked to each other as
 * pool_chain_add links them) goes on the stack with plain stores, then
 * pool_plain_end (@p busy; false after pool_plain_begin_unparked, which
 * stored no busy). Separate so that a single free (engine/event.c) can
 * return its one slot without building a chain: @p last's link is
 * written here, so a one-slot chain needs none written before. Only the
 * address link and the count: the index links and head's top are written
 * by the switch to shared (task_pool.c, "The index links", "The owner's
 * head"). */
static inline __attribute__((always_inline)) void pool_put_plain(struct task_pool *p, struct doca_event *first,
								 struct doca_event *last, uint32_t n, bool busy)
{
	/* the slot under the chain, and the new top (task_pool.c: top_ev is
	 * the stack while the pool is the owner's) */
	atomic_store_explicit(&last->pool_next_ev, atomic_load_explicit(&p->top_ev, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&p->top_ev, first, memory_order_relaxed);
	EXPLORE_POINT(QUEUE);
	uint64_t h = atomic_load_explicit(&p->head, memory_order_relaxed);

	/* free + n > size (not size_high: the switch may have failed it
	 * meanwhile, pool_put_one_owner) */
	if (head_free(h) + n > p->size)
		pool_double_return();
	EXPLORE_POINT(QUEUE);
	/* release: our last touch of the slots happens before their next
	 * takers'. The count plus n, top and tag left (task_pool.c, "The
	 * owner's head"; free + n <= size < 2^21: no carry out of its field);
	 * for a constant n of 1 one add of a 32-bit constant. */
	atomic_store_explicit(&p->head, h + (uint64_t)n * POOL_FREE_ONE, memory_order_release);
	credit_split_return(p, n); /* after the slots: a taker's credit finds its slot */
	if (busy)
		pool_plain_end(p);
}

/* head_free_high(h) @p high >= the pool's size_high, a relaxed load of
 * it (pool_put_one_owner's look); under OWNED_RMW_ASM one cmp with the
 * word in memory, as ATOMIC_IS_ZERO (engine/engine.h): the same
 * single-copy atomic load, which gcc would keep apart from its compare.
 * The TSan and explorer builds keep the C11 load. */
static inline __attribute__((always_inline)) bool pool_high_at_least_size(const struct task_pool *p, uint64_t high)
{
#ifdef OWNED_RMW_ASM
	bool at_least;

	__asm__ volatile("cmpq %[sh], %[high]" : "=@ccae"(at_least) : [high] "r"(high), [sh] "m"(p->size_high));
	return at_least;
#else
	return high >= atomic_load_explicit(&p->size_high, memory_order_relaxed);
#endif
}

/* size_high once the switch to shared has begun: every head_free_high is
 * at or above it (task_pool.c, "The single free's look"). */
#define POOL_SIZE_HIGH_SWITCHED 0u

/* The parked owner's single free inside its brief section, entered by
 * runner_unpark (engine/event.c doca_event_free): pool_plain_begin_unparked
 * and pool_put_plain for the one slot @p ev, with one look. The compare
 * the put makes anyway, its double-return test (head_free_high(h) against
 * size_high: free >= size), is the look at mode: the switch to shared
 * stores POOL_SIZE_HIGH_SWITCHED in size_high, which fails every compare,
 * before its mode (task_pool.c, "The single free's look"), so a
 * compare that passes is a plain put the switcher waits out, as
 * pool_plain_begin_unparked's look at mode. The head look and compare
 * come before the stack's stores. true: @p ev is back on the owner's
 * stack (head's count plus one, its top and tag left: task_pool.c, "The
 * owner's head"); false: nothing was written, and *@p hp is the word the
 * compare failed on: the caller's cold way is pool_put_one_refused. */
static inline __attribute__((always_inline)) bool pool_put_one_owner(struct task_pool *p, struct doca_event *ev,
								     uint64_t *hp)
{
	EXPLORE_POINT(ATOMIC);
	uint64_t h = atomic_load_explicit(&p->head, memory_order_relaxed);

	*hp = h;
	if (pool_high_at_least_size(p, head_free_high(h)))
		return false;
	EXPLORE_POINT(QUEUE);
	/* the slot under ours, and the new top (task_pool.c: top_ev is the
	 * stack while the pool is the owner's) */
	atomic_store_explicit(&ev->pool_next_ev, atomic_load_explicit(&p->top_ev, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&p->top_ev, ev, memory_order_relaxed);
	EXPLORE_POINT(QUEUE);
	/* release: our last touch of the slot happens before its next
	 * taker's (as pool_put_plain's); free + 1 <= size: no carry */
	atomic_store_explicit(&p->head, h + POOL_FREE_ONE, memory_order_release);
	credit_split_return(p, 1); /* after the slot: a taker's credit finds its slot */
	return true;
}

/* pool_put_one_owner's cold way, its compare failed on @p h: a double
 * return (free >= size: aborts, pool_double_return) or the switch to
 * shared begun (size_high POOL_SIZE_HIGH_SWITCHED): then pool_put_shared
 * of the one slot @p ev. Out of line. */
void pool_put_one_refused(struct task_pool *p, struct doca_event *ev, uint64_t h);

/* task_pool_put's way once the pool is not the owner's: pool_settle, the
 * chain's index links, then the CAS loop, out of line (task_pool.c) so that an inlined put keeps few values
 * live. */
void pool_put_shared(struct task_pool *p, const struct pool_chain *c);

/* Return a chain's credits in one atomic step, emptying it (the holder of
 * the PE's runner guard only: a plain store while the pool is the owner's). */
static inline void task_pool_put(struct task_pool *p, struct pool_chain *c)
{
	if (c->n == 0)
		return;
	if (pool_plain_begin(p))
		pool_put_plain(p, c->first, c->last, c->n, true);
	else
		pool_put_shared(p, c);
	*c = (struct pool_chain){ 0 };
}

#endif /* DOCA_ENGINE_TASK_POOL_H */
