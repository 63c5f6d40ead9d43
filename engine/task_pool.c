/*
 * engine/task_pool.c — a context's credits and event slots, grown as the
 * credits are first used.
 *
 * A pool of `size` credits holds its slots in chunks of POOL_CHUNK events,
 * each a cell (engine/cells.h: a stale handle always reads an event's
 * generation there). The first chunk is made with the run; the others the
 * first time a credit needs one of their slots, so an idle context costs
 * one chunk (4 KiB), and one that keeps n tasks outstanding about n slots.
 *
 * Credits (ring21 step 2; engine/task_pool.h, "The split credits"): two
 * counters that only grow, free = size - (taken - returned). Every take
 * adds to taken (a CAS, or a guard holder's plain store while the pool is
 * the owner's, below), every return adds to returned (the runner guard's
 * holder alone: a release store). A take that finds 0 free returns
 * DOCA_ERROR_AGAIN, exactly when size tasks are outstanding (the look
 * compares taken with a returned loaded after it; a task is outstanding
 * until its credit is back, and a free on a thread without the PE's
 * guard, the PE's former thread too once another thread's
 * doca_pe_progress took the PE over, returns it at the PE's next turn, or
 * later while another thread is preempted inside its marking of the
 * context ready: include/doca_event.h). A submit asks for as many credits
 * as it has tasks ready to use them (validated and pinned), so a take of
 * many never holds one unused.
 *
 * Slots: the guard holder's (design 1.4). A taker without the PE's
 * runner guard (a foreign submit: task_pool_take_credits) takes credits
 * and no slot; its task travels in a ring (engine/ring.c), and the guard
 * holder's feed pops one slot per entry it takes (task_pool_slots). A
 * guard holder's own take (credit_take_covered) pops its slots after its
 * credits. Every return (task_pool_put: the guard holder's, directly or
 * from the mailbox's RETURNING chains) puts its slots back and stores
 * returned (release: the slots' last use before a stop's or a waiter's
 * acquire of it). So only the guard's holder touches the slots, one at
 * a time:
 * a stack of returned slots (top_ev, linked through each slot's
 * pool_next_ev, `stacked` deep) and the fresh slots from fresh_from on,
 * taken in index order only while the stack is empty; plain loads and
 * stores, no tag, no index, in every mode.
 *
 * Why a popper always finds its slots (invariant S): a slot is popped
 * only for a credit held without one (the popper's own take, or a ring
 * entry's), and a credit is returned only with its slot (the push and
 * the returned store in one guard holder's step, so their order does
 * not matter here: every popper holds the guard too; a ring entry's
 * credit holds no slot until the feed pops it, and comes back only
 * through that slot's free).
 * So at every guard holder's step, slots out <= credits held with a slot
 * = outstanding - credits held without one <= size - c, with c the
 * credits the popper pops for: c slots are on the stack or fresh.
 * pool_slots_short aborts if not; the explorer's build checks the
 * stack's depth at every pop (pool_top_slot, pool_pop_step).
 *
 * Chunks before credits (D4): every take makes every chunk below the
 * credits out after it before it takes (credit_split_chunks with a bound
 * from its view of returned, loaded again before a chunk is made by a
 * cached view; a guard holder's credit_take_covered with its exact
 * count, outside its plain update, on its plain and its CAS way alike),
 * so a fresh slot the feed
 * pops (index f = fresh_from = slots in use < outstanding) lies in a
 * chunk made: NO_MEMORY is answered before a task is accepted, never by
 * the feed. And its making happens before the pop: of the f + 1 credits
 * held then (f slots in use, the entry's), the last one taken, T, left
 * f + 1 or more out, so T made chunk f / POOL_CHUNK first; T is a guard
 * holder's take (the guard orders it before the pop) or a ring task's,
 * whose READY this feed, or an earlier one under the guard, acquired.
 * The owner's fast ways (credit_guarded_free: the single submit, the
 * burst's first take, pool_take's single take) look at no count of
 * chunks: they take only while the credits out after the take stay at or
 * below fresh_from, and every chunk below fresh_from is published (fresh
 * slots are taken in index order, each from a chunk pool_slots_loop found
 * published). Such a take is never the T above: it left at most
 * fresh_from out, and fresh_from, which only grows, is f at the feed's
 * pop, so T would have left f or fewer. A chunk's slots are published by
 * a release CAS on chunks[c] (a loser gives its copy back) and counted
 * in chunks_made after it.
 *
 * Without a read-modify-write while only guard holders take (the owner
 * fast path, issue 12). Until a submitter without the PE's runner guard
 * first takes (a foreign submitter), every taker holds the guard, which
 * already makes them one at a time: each reads taken, computes and
 * stores the new count (mode POOL_OWNER). The first foreign taker turns
 * the pool shared for the rest of the run (task_pool_share), and from
 * then on every take is a CAS. The switch is a Dekker pair with an
 * asymmetric fence (actors/asym_fence.h): a guard holder stores busy = 1,
 * runs the light fence, loads mode, and takes plainly only if it is
 * still POOL_OWNER, then stores busy = 0 (release); the switcher stores
 * mode = SWITCHING, runs the heavy fence, then waits until it sees busy
 * = 0 (acquire) and stores mode = POOL_SHARED. So a plain take either
 * saw the switch (then it takes the CAS path) or had stored busy before
 * the fence, and the switcher waits for its store to taken before any
 * CAS: no take is lost. The wait is for a bounded update of a few stores
 * (a chunk is made outside it), unless that thread is preempted in it,
 * like the runner's brief holds. Other foreign takers wait for
 * POOL_SHARED too, each through the same steps, so none CASes before the
 * last plain take is visible. A guard holder that finds SWITCHING
 * stores SHARED itself (pool_settle) and never waits: what the
 * switcher's waits ensure, that the last plain take happens before the
 * first CAS, its guard already does (the CAS users acquire it through
 * POOL_SHARED), and a plain take after it, by a later guard holder, sees
 * the mode it stored (the guard's order). Returns never look at the
 * mode: returned and the slots have one writer in every mode.
 *
 * The parked owner's brief sections (the owner's single doca_task_submit,
 * engine/task.c task_one_owner, which enters the PE's guard by
 * runner_unpark) take plainly without busy: after its entry r|brief is
 * pushed on its thread's list and the light fence, it loads mode once
 * (pool_plain_begin_unparked), and its exit pops the entry with a release
 * store after its store to taken. The switcher, after the busy wait,
 * waits out such sections as a stop does (runner_quiesce_wait,
 * actors/runner.h). The same Dekker pair with the entry as the flag and
 * the same heavy fence: either the owner's light half came first, and
 * the switcher's look after the heavy half finds the owner word W (while
 * its thread t is inside a section entered by runner_unpark only t's
 * exit changes it: a revoker finds the entry and waits) and t's entry,
 * and waits for its pop (acquire: the store to taken comes with it); or
 * the owner's load of mode after its light half sees the switch and
 * takes the CAS way. A section the look finds that began after the heavy
 * half took the CAS way; waiting for it too costs a bounded moment: a
 * brief section waits on nothing but the allocator, when the parked
 * owner's take makes a chunk inside it (credit_take_covered's unparked
 * way: task_pool_publish_chunk's cell_get, the cells' mutex and
 * doca_zalloc), so the switcher (and a stop) may wait that long. The planted bug pool_share_no_quiesce (no
 * wait) loses the owner's take (stress/explore: pool_share_submit and
 * pool_share_chunk). Every other plain taker (a turn, a guard taken by a
 * CAS, the rare ways of the owner's submit, a burst) still stores busy:
 * a burst's guarded take is a brief section waited out only when
 * runner_enter_brief_from entered it by runner_unpark, not when by a CAS
 * or nested in a turn.
 *
 * Why the switcher does not count itself in the guard's revoke, as a stop
 * did before the same wait (runner_quiesce_begin, the first version). The
 * count would only bound the wait (no runner_unpark succeeds while it
 * stands), and it costs the exact AGAIN: while it stands, every
 * runner_unpark of the owner's fails, and its slow way enters by a CAS
 * and leaves by storing NULL, and a section it was already in leaves the
 * count's mark on the word, which sends its next entry the same slow way
 * (actors/runner.c, "The revoking mark"): either way the guard is free
 * until the owner's next turn parks it again. Meanwhile another thread's
 * free (engine/event.c route_begin) may take the free guard briefly, and
 * an owner's free that meets that hold is refused the guard and goes
 * through the mailbox: its credit comes back at the owner's next turn,
 * after its doca_event_free returned, and a submit between them is
 * refused with AGAIN while fewer than max_tasks credits are out. That was
 * the reverted first version of this way (stress_mixed --engines 0 under
 * TSan; the explorer's pool_share_again with DOCA_EXPLORE_REVERT=
 * pool_share_counts_revoke). Without the count the owner keeps its
 * parked guard through the switch and every free of its returns the
 * credit before it returns. The wait is then bounded as the busy wait
 * is: each section it finds is bounded, and it ends at the first look
 * that finds none (the owner is between sections whenever it progresses,
 * gets an event or runs its own code).
 *
 * The stack's depth: `stacked` counts the slots on the stack (each push
 * adds its chain's, each pop subtracts its own), so a pop of that many or
 * fewer never meets the bottom and needs no test for NULL
 * (pool_pop_start, pool_pop_more). A return that would put more slots on
 * the stack than were ever taken fresh (stacked + n > fresh_from) is a
 * slot returned twice: pool_double_return aborts.
 *
 * The link word: a slot's pool_next_ev is its next (engine/engine.h,
 * one word). A slot is on the stack or in a returned chain only between
 * its release (engine/event.c event_release_to and the frees' routes,
 * the turn's callback release, the feed's release of a task freed on
 * another thread) and its take, and on a list linked by next (the ready
 * list, the backlog, a chunk, a reap's links) only between its take and
 * its hand-out or flush, when it is QUEUED or HELD and owned by the one
 * thread that links it: every reader of next follows it from a slot it
 * has not released yet (a walk that hands out reads the link before the
 * caller can free: pe.c, pe_progress.c; a callback's free comes after
 * the turn copied the list into its done array), and no free slot's
 * link is written by a list's user. So the two uses never overlap in
 * time on a slot, and the word's owner changes at the release and the
 * take, each ordered as the slot's other fields are (the guard). A pop
 * leaves the popped slots linked by the stack's own links, top first:
 * the burst's fill (engine/task.c task_pop_fill_loop_as) keeps them as
 * the chunk's links and ends the chunk with one NULL, rather than
 * storing each slot's link again.
 *
 * The take and the return are inline (engine/task_pool.h): they run once
 * per submit and per free call.
 *
 * Progress: a take retries only when another take changed taken
 * (lock-free); making a chunk calls the allocator and the cells' mutex
 * (engine/cells.c), which may wait: the first use of each chunk of a run
 * is the one case where a submit can block.
 */
#include <sched.h>
#include <stdlib.h>

#include "actors/asym_fence.h"
#include "actors/explore_revert.h"
#include "actors/runner.h"

#include "engine/cells.h"
#include "engine/engine.h"
#include "engine/task_pool.h"

static uint32_t chunk_slots(const struct task_pool *p, uint32_t c)
{
	uint32_t first = c * POOL_CHUNK;

	return p->size - first < POOL_CHUNK ? p->size - first : POOL_CHUNK;
}

/* Chunk c's events as a fresh run's slots: a new generation each, so no
 * handle of the cell's last life matches. */
static struct doca_event *chunk_make(struct task_pool *p, uint32_t c)
{
	uint32_t n = chunk_slots(p, c);
	struct doca_event *evs = cell_get(CELL_EVENTS, sizeof(*evs) * n);

	for (uint32_t i = 0; evs != NULL && i < n; i++) {
		struct doca_event *ev = &evs[i];
		uint32_t gen = ev_gen(atomic_load_explicit(&ev->gs, memory_order_relaxed));

		head_store(&ev->magic, MAGIC_EVENT);
		head_store(&ev->epoch, p->run->ctx->epoch);
		atomic_store_explicit(&ev->gs, ev_gs(gen + 1u, EV_FREE), memory_order_relaxed);
		ev->ctx = p->run->ctx;
		ev->run = p->run;
		/* atomic: a stale free of the cell's last life may read it
		 * meanwhile (the same value: it depends on the address alone) */
		atomic_store_explicit(&ev->claim_bias, ev_claim_bias((uintptr_t)ev), memory_order_relaxed);
		/* atomic, as the bias: a stale free may read it meanwhile (a
		 * free finds the PE by it before it claims: engine/event.c) */
		atomic_store_explicit(&ev->pe, p->run->pe, memory_order_relaxed);
		/* once for the slot's life: DOCA_TASK_COPY is the one type
		 * (task_check refuses any other), so no fill writes it and
		 * nothing else ever does (a second type would make the fill
		 * write its task's) */
		ev->type = DOCA_TASK_COPY;
	}
	return evs;
}

bool task_pool_publish_chunk(struct task_pool *p, uint32_t c)
{
	struct doca_event *expect = NULL, *evs = chunk_make(p, c);

	if (evs == NULL)
		return false;
	TSAN_RELEASE(evs);
	EXPLORE_POINT(ATOMIC);
	/* release: a taker that loads the chunk sees its slots initialised. */
	if (!atomic_compare_exchange_strong_explicit(&p->chunks[c], &expect, evs, memory_order_release,
						     memory_order_acquire))
		cell_put(CELL_EVENTS, evs, sizeof(*evs) * chunk_slots(p, c)); /* lost: never handed out */
	return true;
}

doca_error_t task_pool_init(struct task_pool *p, struct ctx_run *run, uint32_t size)
{
	p->run = run;
	p->size = size;
	p->nchunks = (size + POOL_CHUNK - 1u) / POOL_CHUNK;
	p->chunks = doca_zalloc(sizeof(*p->chunks) * p->nchunks);
	atomic_init(&p->mode, POOL_OWNER);
	atomic_init(&p->busy, 0);
	atomic_init(&p->top_ev, NULL);
	p->stacked = 0;
	p->fresh_from = 0;
	atomic_init(&p->taken, 0);
	atomic_init(&p->returned, 0);
	atomic_init(&p->chunks_made, 1);
	if (p->chunks == NULL || !task_pool_publish_chunk(p, 0))
		return DOCA_ERROR_NO_MEMORY;
	return DOCA_SUCCESS;
}

void task_pool_fini(struct task_pool *p)
{
	for (uint32_t c = 0; p->chunks != NULL && c < p->nchunks; c++) {
		struct doca_event *evs = atomic_load_explicit(&p->chunks[c], memory_order_relaxed);
		uint32_t n = chunk_slots(p, c);

		if (evs == NULL)
			continue;
		/* the slots keep their magic, epoch, generation, claim bias and
		 * PE word (atomics a stale free may read), and nothing else */
		for (uint32_t i = 0; i < n; i++) {
			struct doca_event *ev = &evs[i];

			ev->ctx = NULL;
			ev->src = ev->dst = NULL;
			ev->run = NULL;
			ev->next = NULL;
			ev->user_data.u64 = 0;
			atomic_store_explicit(&ev->mbox_node.next, NULL, memory_order_relaxed);
		}
		cell_put(CELL_EVENTS, evs, sizeof(*evs) * n);
	}
	doca_free(p->chunks);
	p->chunks = NULL;
}

/* Turn the pool shared; returns once no plain take is under way (the
 * Dekker pair and the parked owner's brief sections, top). Called only
 * by a taker that found the PE's guard held by another thread
 * (task_pool_take_credits): never inside a brief hold of it. */
static void task_pool_share(struct task_pool *p)
{
	struct runner *guard = &p->run->pe->runner;
	bool quiesce = !DOCA_REVERTED("pool_share_no_quiesce");
	/* the reverted first version: counted in revoke (top, "Why the
	 * switcher does not count itself") */
	bool counted = quiesce && DOCA_REVERTED("pool_share_counts_revoke");
	uint32_t owner = POOL_OWNER;
	unsigned spins = 0;

	if (counted)
		runner_revoke_announce(guard);
	EXPLORE_POINT(ATOMIC);
	(void)atomic_compare_exchange_strong_explicit(&p->mode, &owner, POOL_SWITCHING, memory_order_relaxed,
						      memory_order_relaxed);
	/* mode is visible before we read busy and the owner's list (the
	 * pairs, top) */
	asym_fence_heavy();
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with the plain take's release of busy (its store to taken) */
	while (!DOCA_REVERTED("pool_share_no_wait") && atomic_load_explicit(&p->busy, memory_order_acquire) != 0) {
		EXPLORE_YIELD();
		if (++spins % 64u == 0)
			sched_yield(); /* the guard holder may be preempted in its update */
	}
	TSAN_ACQUIRE(&p->busy);
	if (quiesce)
		runner_quiesce_wait(guard); /* the parked owner's brief sections (top) */
	pool_settle(p); /* POOL_SHARED (top) */
	if (counted)
		runner_quiesce_end(guard);
}

void pool_settle(struct task_pool *p)
{
	unsigned spins = 0;

	for (;;) {
		EXPLORE_POINT(ATOMIC);
		/* acquire: the last plain take, before the SHARED store (top) */
		uint32_t m = atomic_load_explicit(&p->mode, memory_order_acquire);

		/* release: the switcher's last plain take it waited for (or,
		 * for a guard holder, every plain take before its guard)
		 * before any CAS */
		if (m == POOL_SHARED ||
		    (m == POOL_SWITCHING && atomic_compare_exchange_strong_explicit(
						    &p->mode, &m, POOL_SHARED, memory_order_release, memory_order_relaxed)))
			return;
		EXPLORE_YIELD();
		if (++spins % 64u == 0)
			sched_yield(); /* a switcher may be preempted between its stores */
	}
}

void (*credit_partial_probe)(struct task_pool *p);
void (*credit_look_returned_probe)(struct task_pool *p);
void (*credit_look_taken_probe)(struct task_pool *p);

uint32_t task_pool_take_credits(struct task_pool *p, uint32_t want, uint64_t *ret_seen, doca_error_t *why)
{
	struct runner *guard = &p->run->pe->runner;
	uint32_t n;

	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with pool_settle's release of SHARED (the last plain
	 * update of taken before it) */
	if (atomic_load_explicit(&p->mode, memory_order_acquire) != POOL_SHARED) {
		/* Nobody runs the PE (no turn ran yet, or its runner let go):
		 * take the guard for the moment of the take, so a submit
		 * before the first turn leaves the pool the owner's. NESTED:
		 * ours already. */
		enum runner_entry e = runner_enter_brief(guard);

		if (e != RUNNER_BUSY) {
			bool plain = pool_plain_begin(p);

			n = credit_take_covered(p, want, &plain, true, false, why);
			if (plain)
				pool_plain_end(p);
			if (n != 0 && n < want)
				*why = DOCA_ERROR_AGAIN; /* the free ones taken, exactly */
			if (e == RUNNER_ENTERED)
				runner_exit(guard);
			return n;
		}
		task_pool_share(p);
	}
	n = 0;
	/* A partial take's look was exact at its load of returned, but a
	 * return may land before its CAS, which still succeeds: ask again
	 * for the rest until a look finds none free, so AGAIN comes from an
	 * exact look (the review of step 2's second pass, A). (the
	 * explorer's revert: one take, AGAIN for the rest of a partial one) */
	do {
		uint32_t m = credit_split_take(p, want - n, ret_seen);

		if (m == UINT32_MAX) {
			*why = DOCA_ERROR_NO_MEMORY; /* for the rest: the n taken are kept */
			return n;
		}
		if (m == 0)
			break;
		n += m;
	} while (n < want && !DOCA_REVERTED("batch_take_once"));
	if (n < want)
		*why = DOCA_ERROR_AGAIN;
	return n;
}

uint32_t task_pool_free(const struct task_pool *p)
{
	return p->size - task_pool_out(p);
}

void pool_slots_short(void)
{
	doca_log(DOCA_LOG_ERROR, "task pool: a credit taken found no slot");
	abort();
}

void pool_double_return(void)
{
	doca_log(DOCA_LOG_ERROR, "task pool full on a release: a slot was returned twice");
	abort();
}
