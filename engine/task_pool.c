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
 * The free slots are one 64-bit word, `head` (the credits are taken and
 * returned since ring21 step 2: "Credits before slots" below; what this
 * paragraph and the next say of head's credits holds of its slots, the
 * exact AGAIN of the credits): the top of a stack of
 * returned slots (a slot index + 1, 0 for none; linked through each
 * event's pool_next once the pool is shared, by address before: "The
 * index links" below), the number of free credits, and a tag. Only
 * holders of the PE's runner guard pop and push slots since ring21 step
 * 2 ("Slots: the guard holder's" below), with a CAS once the pool is
 * shared (the ABA argument below is then about one thread at a time). One CAS takes or returns many: a submit takes
 * a chunk's credits at once, a burst of frees returns its run's slots as
 * one chain. Free credits = slots on the stack + slots never
 * used yet; those are the indexes from size - free on, taken in order only
 * while the stack is empty (then every used slot is outstanding), so the
 * count alone says which slot a fresh credit gets.
 *
 * Why it is correct:
 * - Exactly one taker per credit: each take is one CAS of the whole word,
 *   so takes and returns are totally ordered on it and the count never goes
 *   below 0: a take that finds 0 free returns DOCA_ERROR_AGAIN, exactly
 *   when size tasks are outstanding (exact when no free races it; a task
 *   is outstanding until its credit is back, and a free on a thread
 *   without the PE's guard, the PE's former thread too once another
 *   thread's doca_pe_progress took the PE over, returns it at the PE's
 *   next turn, or later while another thread is preempted inside its
 *   marking of the context ready: include/doca_event.h). A
 *   submit asks for as many credits as it has tasks ready to use them
 *   (validated and pinned), so a take of many never holds one unused.
 * - ABA: a taker reads the links of the slots it pops (top's pool_next,
 *   then theirs) before its CAS; if any of them was taken and returned
 *   meanwhile, the tag changed (every CAS adds one) and the CAS fails, so
 *   a CAS that succeeds took exactly the slots on the stack at its load.
 *   A chain returned at once is linked by its returner before its CAS
 *   publishes it, as a single slot's link is. The tag has 22 bits: a taker preempted between its load
 *   and its CAS while a multiple of 2^22 other operations hit the pool could
 *   succeed with a stale next, the one case not detected.
 * - A taken slot's memory is its chunk's, published before any of its
 *   slots can be taken: a fresh credit whose chunk is missing makes it
 *   first (a CAS publishes it; a loser gives its copy back), then takes;
 *   a take of fresh slots stays inside one chunk.
 *   The return's CAS is a release and a take's an acquire, so a taker sees
 *   the slot as the PE left it.
 *
 * Credits before slots (ring21 step 2). The credits are taken and
 * returned (engine/task_pool.h, "The split credits"): free = size -
 * (taken - returned); head's count counts the slots alone (on the stack
 * or never used), and its AGAIN is the credits'.
 *
 * Slots: the guard holder's. A taker without the PE's runner guard (a
 * foreign submit: task_pool_take_credits, after the switch to shared or
 * with the guard taken briefly) takes credits and no slot; its task
 * travels in a ring (engine/ring.c), and the guard holder's feed pops
 * one slot per entry it takes (task_pool_slots). A guard holder's own
 * take (credit_take_covered, plain under the same plain update as
 * head's, or a CAS) pops its slots after its credits. Every return puts
 * its slots on head, then stores returned (release). So only guard
 * holders touch head, one at a time (the guard): its CAS ways once
 * shared meet no other thread (item 3 of step 2 deletes them).
 *
 * Why a popper always finds its slots (design 1.4, invariant S): a slot
 * is popped only for a credit held without one (the popper's own take,
 * or a ring entry's), and a credit is returned only after its slot went
 * back to head (the push, then the returned store; a ring entry's credit
 * holds no slot until the feed pops it, and is returned only through
 * that slot's free). So at every guard holder's step, slots out <=
 * credits held with a slot = outstanding - credits held without one <=
 * size - c, with c the credits the popper pops for: c slots are on the
 * stack or fresh. pool_slots_short aborts if not.
 *
 * Chunks before credits (D4): every take makes every chunk below the
 * credits out after it before it takes (credit_split_chunks; a guard
 * holder's credit_take_covered with its exact count, outside its plain
 * update), so a fresh slot the feed pops (index fresh_from = slots in
 * use < outstanding) lies in a chunk made: NO_MEMORY is answered before
 * a task is accepted, never by the feed.
 *
 * Without a read-modify-write while only guard holders use the pool (the
 * owner fast path, issue 12). Until a submitter without the PE's runner
 * guard first takes (a foreign submitter: the mailbox path), every taker
 * and every returner holds the guard, which already makes them one at a
 * time: each reads head, computes and stores the new word (mode
 * POOL_OWNER). The first foreign taker turns the pool shared for the rest
 * of the run (task_pool_share), and from then on every take and return is
 * the CAS above. The switch is a Dekker pair with an asymmetric fence
 * (actors/asym_fence.h): a guard holder stores busy = 1, runs the light
 * fence, loads mode, and updates plainly only if it is still POOL_OWNER,
 * then stores busy = 0 (release); the switcher stores mode = SWITCHING,
 * runs the heavy fence, then waits until it sees busy = 0 (acquire) and
 * stores mode = POOL_SHARED. So a plain update either saw the switch
 * (then it takes the CAS path) or had stored busy before the fence, and
 * the switcher waits for its store to head before any CAS: no update is
 * lost. The wait is for a bounded update of a few stores (a chunk is made
 * outside it), unless that thread is preempted in it, like the runner's
 * brief holds. Other foreign takers wait for POOL_SHARED too, each through
 * the same steps, so none CASes before the last plain update is visible.
 *
 * The parked owner's brief sections (doca_event_free's owner way, the
 * route of doca_event_free_bulk that engine/event.c route_begin_owner
 * enters, and the owner's single doca_task_submit, engine/task.c
 * task_one_owner: each enters the PE's guard by runner_unpark) update
 * plainly without busy: after its entry r|brief is pushed on its thread's
 * list and the light fence, it loads mode once (pool_plain_begin_unparked),
 * and its exit pops the entry with a release store after its store to
 * head. The switcher, after the busy wait, waits out such sections as a
 * stop does (runner_quiesce_wait, actors/runner.h). The same Dekker pair
 * with the entry as the flag and the same heavy fence: either the owner's
 * light half came first, and the switcher's look after the heavy half
 * finds the owner word W (while its thread t is inside a section entered
 * by runner_unpark only t's exit changes it: a revoker finds the entry and
 * waits) and t's entry, and waits for its pop (acquire: the head store
 * comes with it); or the owner's load of mode after its light half sees
 * the switch and takes the CAS way. A section the look finds that began
 * after the heavy half took the CAS way; waiting for it too costs a
 * bounded moment (brief sections never wait). The planted bug
 * pool_share_no_quiesce (no wait) loses the owner's update (stress/explore:
 * pool_share for a free's, pool_share_bulk for a burst's,
 * pool_share_submit and pool_share_chunk for a submit's). Every other
 * plain updater (a turn, a guard taken by a CAS, the rare ways of the
 * owner's submit, a burst's chunk) still stores busy: a burst's guarded
 * take is a brief section waited out only when runner_enter_brief_from
 * entered it by runner_unpark, not when by a CAS or nested in a turn.
 *
 * The single free's look. The parked owner's single free (engine/event.c
 * doca_event_free, pool_put_one_owner) looks at no mode: its put's
 * double-return compare, head_free_high(h) >= size_high, is its look. The
 * switcher stores size_high = POOL_SIZE_HIGH_SWITCHED (0: every compare
 * fails) before its mode (so before its heavy fence), and size_high never
 * changes back in the run; the free loads it after its entry and light
 * fence, as the look at mode above. So the same pair: either the free
 * saw 0 and takes its cold way (pool_put_one_refused: a double return if
 * the word it loaded has every credit free, else pool_put_shared, which
 * settles first), or its load came before the heavy half, and the
 * switcher's look finds its entry and waits for its exit, after its plain
 * store to head. Before the mode, not after: a guard holder may walk and
 * store SHARED on the switcher's SWITCHING while the switcher is still in
 * its waits (above), and an owner's free entering the guard after that
 * walker must fail its compare, as its mode look would have found
 * SHARED: the mode's CAS is a release, so the walker's acquire of
 * SWITCHING, its guard's order and the free's entry carry the 0 to the
 * free. (A free that sees 0 while the mode is still POOL_OWNER waits in
 * pool_settle for the switcher's next instruction, as for a walker.)
 * Every other user compares with size, which never changes: a plain
 * updater that saw mode POOL_OWNER may meet the switch's size_high in its
 * put. The planted bug pool_share_keeps_size_high (no
 * store) lets the owner's frees put plainly under the CAS users
 * (stress/explore's pool_revoke, pool_share, pool_share_again).
 *
 * Why the switcher does not count itself in the guard's revoke, as a stop
 * did before the same wait (runner_quiesce_begin, the first version). The count would only
 * bound the wait (no runner_unpark succeeds while it stands), and it
 * costs the exact AGAIN: while it stands, every runner_unpark of the
 * owner's fails, and its slow way enters by a CAS and leaves by storing
 * NULL, and a section it was already in leaves the count's mark on the
 * word, which sends its next entry the same slow way (actors/runner.c,
 * "The revoking mark"): either way the guard is free until the owner's
 * next turn parks it again. Meanwhile another thread's free
 * (engine/event.c route_begin) may take the free guard briefly, and an
 * owner's free that meets that hold is refused the guard and goes through
 * the mailbox: its credit comes back at the owner's next turn, after its
 * doca_event_free returned, and a submit between them is refused with
 * AGAIN while fewer than max_tasks credits are out. That was the reverted
 * first version of this way (stress_mixed --engines 0 under TSan; the
 * explorer's pool_share_again with DOCA_EXPLORE_REVERT=
 * pool_share_counts_revoke). Without the count the owner keeps its parked
 * guard through the switch and every free of its returns the credit
 * before it returns. The wait is then bounded as the busy wait is: each
 * section it finds is bounded, and it ends at the first look that finds
 * none (the owner is between sections whenever it progresses, gets an
 * event or runs its own code).
 *
 * The index links: the stack by address while the pool is the owner's,
 * by index once shared. While mode is POOL_OWNER the stack is linked
 * through each slot's pool_next_ev alone (the slot under it, NULL at the
 * bottom), and the pool keeps top_ev, the address of its top slot (NULL
 * when it is empty). A plain take starts at top_ev, follows the
 * addresses and moves top_ev to the slot it leaves on top; a plain
 * return links its chain's last slot to top_ev and moves top_ev to its
 * first. So while the pool is the owner's every link on the stack is the
 * address of the slot under it: true at init (top_ev NULL), and kept by
 * each plain update, one at a time; a fresh take leaves top_ev NULL (it
 * runs only on an empty stack).
 * The stack's depth: while the pool is the owner's the stack holds
 * exactly free - (size - fresh_from) slots, so a plain pop of that many
 * or fewer never meets its bottom and needs no test for NULL
 * (pool_pop_start, pool_pop_more). Every slot with an index below
 * fresh_from has been taken once in the run (fresh takes go in index
 * order from fresh_from, and only on an empty stack: pool_take_loop,
 * which moves fresh_from past what it takes), and each such slot is
 * either outstanding or on the stack; none above it is either. The
 * outstanding ones are size - free (the count is exact while the pool
 * is the owner's, "The owner's head"), so the stack holds
 * fresh_from - (size - free). Only guard holders update head's count,
 * top_ev and fresh_from while the pool is the owner's, one at a time
 * under the guard, so the three agree at each plain update's start; the
 * CAS ways never read fresh_from (the pool never goes back to
 * POOL_OWNER in a run). The explorer's build checks the depth at each
 * step (pool_pop_step: verdict "abort"); the planted bug
 * pool_depth_ignores_fresh (the depth taken as free) breaks it as soon
 * as a burst meets a stack shorter than the free count.
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
 * take, each ordered as the slot's other fields are (the guard, or the
 * shared pool's CAS). A plain pop leaves the popped slots linked by the
 * stack's own links, top first: the burst's fill (engine/task.c
 * task_pop_fill_loop_as) keeps them as the chunk's links and ends the
 * chunk with one NULL, rather than storing each slot's link again.
 * No index link (pool_next) is written by those updates: a return saves
 * a store and a load a slot, a take a load. A CAS take (shared) needs
 * the index links: it reads head's top and follows pool_next, finding
 * each slot through the chunk table, because a link it reads may be
 * stale (a slot taken and returned meanwhile: the tag fails its CAS) and
 * an index always names a slot of this pool.
 *
 * So the switch writes the index links before any CAS: once no plain
 * update is under way, one thread walks the stack from top_ev and stores
 * each slot's pool_next (its successor's pool_link, 0 at the bottom) and
 * head's top (top_ev's pool_link: "The owner's head" below),
 * then stores POOL_SHARED with a release; every CAS user first loads
 * POOL_SHARED with an acquire (task_pool_take_as for a foreign taker,
 * pool_settle for the others: pool_plain_begin_as when it fails,
 * pool_put_shared, and the CAS ways after pool_plain_begin_unparked), so it reads the links the walk wrote.
 * Once shared, a return writes its chain's index links itself
 * (pool_put_shared) and nobody follows an address link or top_ev again.
 * Who walks: the switcher (task_pool_share) after its busy wait and its
 * quiesce, or a guard holder that finds mode POOL_SWITCHING (in
 * pool_settle, which it calls before its first CAS). Whichever CASes mode
 * from POOL_SWITCHING to POOL_INDEXING walks; the other waits for
 * POOL_SHARED (a bounded walk of at most size slots, which waits for
 * nothing). Why the walk is alone on the stack: before the first
 * POOL_SHARED store every update of head is by a guard holder (a foreign
 * taker waits for POOL_SHARED in task_pool_share; one that finds the guard
 * free takes it), and a guard holder updates head only after a
 * pool_plain_begin* that either returned true while mode was POOL_OWNER
 * (a plain update) or called pool_settle (it waits for POOL_SHARED, or
 * is the walker). The switcher walks only after its waits: no plain update
 * is under way (the Dekker pairs above), and none starts (each looks at
 * mode). A guard holder walks holding the guard: no other guard holder
 * runs, so no plain update either (a switcher still in its waits does not
 * touch head). So either walker's store of head's top is the one update
 * of head then (the count and tag it loaded stay). The walk reads the
 * links and the word the last plain update wrote: the switcher acquires
 * them through busy and the quiesce, a guard holder through the guard.
 * And a guard holder may publish POOL_SHARED itself:
 * what the switcher's waits ensure, that the last plain update happens
 * before the first CAS, its guard already does (the CAS users acquire it
 * through POOL_SHARED), and a plain update after it, by a later guard
 * holder, sees the mode it stored (the guard's order). The planted bug
 * pool_switch_unindexed (the walk left out: CAS takers follow index
 * links of the slots' earlier lives) is caught by stress/explore's
 * pool_share* scenarios and tests/engine/task_pool.c.
 *
 * The owner's head: while mode is POOL_OWNER a plain update changes only
 * head's count (a take subtracts its slots, a return adds its slots: one
 * add or subtract of a constant for one slot), and head's top and tag are
 * stale, whatever the last CAS or the init left. Plain users decide by
 * top_ev (pool_one_poppable, pool_take_loop's plain way, the burst
 * fill's pops), and nobody reads the top or the tag before POOL_SHARED:
 * - the top names a slot only for a CAS taker, which loads head after it
 *   acquired POOL_SHARED (task_pool_take_as, pool_settle), and the walk
 *   stored top_ev's pool_link as head's top before that SHARED, alone on
 *   head (above);
 * - the tag tells a CAS that the word changed since its load; every CAS
 *   of head loads its expected word after it acquired POOL_SHARED, when
 *   no plain update comes any more (mode never goes back to POOL_OWNER in
 *   a run), so no CAS can have loaded a word a plain update left with
 *   its tag;
 * - the count stays exact (the exact AGAIN), and the double-return test
 *   reads the count alone (head_free_high: the stale top is below one
 *   unit of the count).
 * The planted bug pool_switch_top_stale (the walk leaves head's top
 * stale) sends the first CAS taker to a slot that is not on the stack:
 * stress/explore's pool_share* scenarios catch it.
 *
 * top_ev is read and written by guard holders only (plain takes and
 * returns), one at a time under the guard, as the plain updates of head,
 * and read by the walker, alone (above); relaxed atomics, so a stale value
 * is never a data race. The counts and the double-return check are
 * untouched: a plain take returns the same slots.
 *
 * The take and the return are inline (engine/task_pool.h): they run once
 * per submit and per free call.
 *
 * Progress: a take retries only when another take or a return changed the
 * word (lock-free); making a chunk calls the allocator and the cells'
 * mutex (engine/cells.c), which may wait: the first use of each chunk of a
 * run is the one case where a submit can block.
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
		ev->pool_link = c * POOL_CHUNK + i + 1u;
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
	atomic_init(&p->size_high, pool_size_high(size));
	p->nchunks = (size + POOL_CHUNK - 1u) / POOL_CHUNK;
	p->chunks = doca_zalloc(sizeof(*p->chunks) * p->nchunks);
	atomic_init(&p->head, head_next(0, size, 0));
	atomic_init(&p->mode, POOL_OWNER);
	atomic_init(&p->busy, 0);
	atomic_init(&p->top_ev, NULL);
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

/* Turn the pool shared; returns once no plain update is under way (the
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
	bool late = DOCA_REVERTED("pool_share_size_high_after_mode");

	EXPLORE_POINT(ATOMIC);
	/* the single free's look fails from here (top, "The single free's
	 * look"); before the mode, harmless if another switcher did */
	if (!DOCA_REVERTED("pool_share_keeps_size_high") && !late)
		atomic_store_explicit(&p->size_high, POOL_SIZE_HIGH_SWITCHED, memory_order_relaxed);
	/* release: a guard holder that walks on our SWITCHING (pool_settle's
	 * acquire) and the owner entering after it see size_high failed */
	(void)atomic_compare_exchange_strong_explicit(&p->mode, &owner, POOL_SWITCHING, memory_order_release,
						      memory_order_relaxed);
	if (late) { /* the planted bug: the store after the mode, a point between */
		EXPLORE_POINT(ATOMIC);
		atomic_store_explicit(&p->size_high, POOL_SIZE_HIGH_SWITCHED, memory_order_relaxed);
	}
	/* mode and size_high are visible before we read busy and the
	 * owner's list (the pairs, top) */
	asym_fence_heavy();
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with the plain update's release of busy (its head store) */
	while (!DOCA_REVERTED("pool_share_no_wait") && atomic_load_explicit(&p->busy, memory_order_acquire) != 0) {
		EXPLORE_YIELD();
		if (++spins % 64u == 0)
			sched_yield(); /* the guard holder may be preempted in its update */
	}
	TSAN_ACQUIRE(&p->busy);
	if (quiesce)
		runner_quiesce_wait(guard); /* the parked owner's brief sections (top) */
	pool_settle(p); /* the index links, then POOL_SHARED (top) */
	if (counted)
		runner_quiesce_end(guard);
}

/* Walk the owner's stack from top_ev and write its index links and
 * head's top (top, "The index links", "The owner's head"): the caller
 * alone on the stack and on head. */
static void pool_index_stack(struct task_pool *p)
{
	struct doca_event *ev = atomic_load_explicit(&p->top_ev, memory_order_relaxed);

	if (!DOCA_REVERTED("pool_switch_top_stale")) {
		uint64_t h = atomic_load_explicit(&p->head, memory_order_relaxed);

		/* relaxed: the SHARED store's release publishes it, as the links */
		atomic_store_explicit(&p->head, (h & ~(uint64_t)POOL_FIELD_MASK) | pool_top_of(ev),
				      memory_order_relaxed);
	}
	if (DOCA_REVERTED("pool_switch_unindexed"))
		return;
	while (ev != NULL) {
		struct doca_event *under = atomic_load_explicit(&ev->pool_next_ev, memory_order_relaxed);

		EXPLORE_POINT(QUEUE);
		atomic_store_explicit(&ev->pool_next, pool_top_of(under), memory_order_relaxed);
		ev = under;
	}
}

void pool_settle(struct task_pool *p)
{
	unsigned spins = 0;

	for (;;) {
		EXPLORE_POINT(ATOMIC);
		/* acquire: the walker's index links, before its SHARED (top) */
		uint32_t m = atomic_load_explicit(&p->mode, memory_order_acquire);

		if (m == POOL_SHARED)
			return;
		if (m == POOL_SWITCHING &&
		    atomic_compare_exchange_strong_explicit(&p->mode, &m, POOL_INDEXING, memory_order_relaxed,
							    memory_order_relaxed)) {
			pool_index_stack(p);
			EXPLORE_POINT(ATOMIC);
			/* release: the index links (and, for the switcher, the
			 * last plain update it waited for) before any CAS */
			atomic_store_explicit(&p->mode, POOL_SHARED, memory_order_release);
			return;
		}
		EXPLORE_YIELD();
		if (++spins % 64u == 0)
			sched_yield(); /* the walker may be preempted in its walk */
	}
}

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
	n = credit_split_take(p, want, ret_seen);
	if (n == UINT32_MAX) {
		*why = DOCA_ERROR_NO_MEMORY;
		return 0;
	}
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

void pool_put_one_refused(struct task_pool *p, struct doca_event *ev, uint64_t h)
{
	const struct pool_chain c = { .first = ev, .last = ev, .n = 1 };

	/* h is the word the owner's look loaded holding the guard and our
	 * credit (the slot's claim): free == size then is one credit too
	 * many, whatever the mode */
	if (head_free(h) >= p->size)
		pool_double_return();
	pool_put_shared(p, &c);
}

void pool_put_shared(struct task_pool *p, const struct pool_chain *c)
{
	pool_settle(p); /* the index links before any CAS (top) */
	/* the chain's index links from its address links (top, "The index
	 * links"); relaxed: the CAS's release publishes them */
	for (struct doca_event *ev = c->first; ev != c->last;) {
		struct doca_event *under = atomic_load_explicit(&ev->pool_next_ev, memory_order_relaxed);

		atomic_store_explicit(&ev->pool_next, under->pool_link, memory_order_relaxed);
		ev = under;
	}
	EXPLORE_POINT(QUEUE);
	uint64_t h = atomic_load_explicit(&p->head, memory_order_relaxed);

	for (;;) {
		if (head_free(h) + c->n > p->size)
			pool_double_return();
		atomic_store_explicit(&c->last->pool_next, head_top(h), memory_order_relaxed);
		EXPLORE_POINT(QUEUE);
		/* release: our last touch of the slots happens before their next takers'. */
		if (atomic_compare_exchange_weak_explicit(&p->head, &h, head_put(h, c->n, c->first->pool_link),
							  memory_order_release, memory_order_relaxed)) {
			credit_split_return(p, c->n); /* after the slots: a taker's credit finds its slot */
			return;
		}
	}
}
