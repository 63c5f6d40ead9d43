/*
 * engine/event.c — event getters and freeing. An event is its task's pool
 * slot: freeing it returns the credit and unpins the buffers.
 *
 * Why freeing from any thread is correct. A slot's word `gs` holds its
 * generation and state (engine.h). The application holds a slot only in
 * state HELD, and the one way out of HELD for anybody but the PE is the claim
 * HELD → FREE of the next generation, from the HELD of the generation its
 * handle names: a CAS (event_claim_cas), or the parked owner's plain load
 * and store where no CAS can race it ("The owner's plain claim", below):
 * of any number of threads freeing one event,
 * exactly one wins, and a stale handle (an older generation) can never
 * win, because every claim, and every other return to the pool, bumps the
 * generation. The winner then owns the slot. The pool's returns have a
 * single producer, the thread holding the PE's runner guard, so the winner
 * returns the credit itself if it holds the guard or can take it without
 * waiting; otherwise it unpins the buffers itself (engine/buf.c says how a
 * guarded pin is dropped without the guard), pushes the slot into its
 * run's mailbox (a wait-free push, actors/mailbox.h) and the PE's next
 * turn, finding a RETURNING slot among the tasks, puts it back in the
 * pool. A burst returns the slots of
 * one run with one CAS (engine/task_pool.c). Until then the slot counts as
 * outstanding, so a stop cannot finish and free the run under it; the
 * freeing thread stays inside a read-side section from before the credit
 * goes back (or the slot into the mailbox) until its last touch of the
 * run and the PE. But for a free by the PE's parked owner entering its
 * guard by runner_unpark (doca_event_free's owner way, and a route of
 * doca_event_free_bulk that entered so): that one takes no section, and a
 * stop's retirement waits for its brief section instead (engine/ctx_run.c,
 * "The owner's frees"; doca_event_free below).
 *
 * The owner's plain claim. The CAS is a locked instruction, a full
 * barrier an event (bench/README.md "### claim16": the owner's bursts
 * wait there for their stores). So the PE's parked owner claims with a
 * plain load, compare and store instead, while no claim outside the
 * guard can race it, and the claims pair with the guard's own Dekker
 * handshake (actors/runner.h, top; actors/asym_fence.h):
 *  - The plain claimer: only the parked owner T, inside a brief section
 *    it entered by the owner way (runner_owner_enter, or
 *    route_begin_owner's runner_unpark_at: its entry pushed on its list,
 *    the light half of the fence, the owner word loaded and found its
 *    parked word W unmarked), and only with runner_owner_way (the
 *    kernel's fences, no race detector). After the entry it loads the
 *    PE guard's claim flag (runner.claims); 0: it claims plainly, else by
 *    CAS. Its pop at the exit (release) ends the section.
 *  - Every other claimer that holds the guard (entered by a CAS, by
 *    runner_unpark on another way, or nested in its own section) claims
 *    by CAS: while it holds the guard no owner-way section is in
 *    progress (a section runs only while the word is W or W | REVOKING,
 *    and nobody takes the guard from W while T is inside: the revoker
 *    finds T's entry), or the section is its own.
 *  - A claimer that finds the guard busy runs the outside protocol
 *    (runner_claims_share): the flag 0 → SETTING by CAS (or SETTING
 *    found), the heavy half, runner_quiesce_wait (the parked owner's
 *    brief sections waited out), SET (release) by the setter; then it
 *    claims by CAS. Found SET (acquire), at once.
 * Why exactly one free of a HELD generation wins. Two CAS claims: as
 * before. A plain claim of T in section S against a claim C of another
 * thread U: C is a CAS made after U's protocol or while U holds the
 * guard. Holding the guard excludes S (above). After the protocol: U
 * stored SETTING (or read it, acquire) before its heavy half; T pushed
 * its entry before its light half and loaded the flag after. By the
 * fence pair, either T's load sees SETTING or later (the flag only
 * grows: then T claims by CAS, and two CAS claims race fairly), or U's
 * loads after its heavy half see T's push: runner_quiesce_wait then
 * finds the owner word parked by T (or a later word: T's section then
 * ended before it, as the guard changes hands only once T is out) and
 * waits for T's pop (release; our load acquires), so T's plain store
 * happens before U's CAS, which then finds the next generation and
 * refuses. A U that found SET reads it after the setter's wait, so after
 * every section that loaded 0 (each one either waited out by the setter
 * or loading SETTING); one that found SETTING ran its own fence and wait
 * (it cannot count on the setter's, not yet returned: librseq's biased
 * lock has the same two states for the same reason). A stale handle's
 * plain claim compares the slot's gs with its own HELD, like the CAS:
 * it stores only over that exact word.
 * The entry comes before the claim (the first order, the claim first,
 * is stress/explore's owner_claim_revoke, revert owner_claim_before_entry:
 * T plain-loads HELD and is preempted; another thread revokes the guard,
 * parks it and frees the event plainly too; both win). So a free needs
 * the PE before its claim: the slot's type-stable PE word (engine.h),
 * exact whenever the claim then wins (the handle's holder happens after
 * the chunk_make of its generation; a new chunk life bumps the
 * generation). A burst (event_free_burst) begins its route to a PE
 * before its first claim of that PE's event, compares each event's PE
 * word with the route's before claiming it, and ends the route before
 * it claims another PE's event: no thread claims one PE's event inside
 * another PE's section, and none waits inside a brief section (the
 * protocol runs between routes), so two owners freeing each other's
 * events cannot deadlock.
 * The cost: the first claims outside the guard of each PE's life run a
 * membarrier and wait for an owner's brief section in progress (not
 * wait-free while the owner is preempted inside it); once SET, every
 * outside claim is a CAS at once and the owner's claims are CAS again.
 */
#include <stdlib.h>

#include "actors/explore_revert.h"
#include "engine/buf_pin.h"
#include "engine/engine.h"
#include "engine/handle.h"
#include "engine/task_pool.h"

/* The slot behind a handle if it is an event of this process (not one
 * inherited across fork); its generation may still be stale. @p key:
 * g_event_key, read once by a burst. */
static inline struct doca_event *event_slot_keyed(const struct doca_event *h, uint64_t key)
{
	struct doca_event *ev = handle_addr(h);

	if (ev == NULL || !head_pair_is(ev, key))
		return NULL;
	return ev;
}

static struct doca_event *event_slot(const struct doca_event *h)
{
	return event_slot_keyed(h, g_event_key);
}

/* The slot if the handle names its current generation while the
 * application or a callback holds it. */
static struct doca_event *event_current(const struct doca_event *h)
{
	struct doca_event *ev = event_slot(h);

	if (ev == NULL)
		return NULL;
	uint64_t gs = atomic_load_explicit(&ev->gs, memory_order_relaxed);

	if (ev_gen(gs) != handle_gen(h) || (ev_state(gs) != EV_HELD && ev_state(gs) != EV_CALLBACK))
		return NULL;
	return ev;
}

enum doca_event_status doca_event_get_status(const struct doca_event *h)
{
	const struct doca_event *ev = event_current(h);

	return ev != NULL ? (enum doca_event_status)ev->status : DOCA_EVENT_STATUS_FAILURE;
}

doca_error_t doca_event_get_error(const struct doca_event *h)
{
	const struct doca_event *ev = event_current(h);

	return ev != NULL ? ev->error : DOCA_ERROR_INVALID_VALUE;
}

size_t doca_event_get_bytes(const struct doca_event *h)
{
	const struct doca_event *ev = event_current(h);

	return ev != NULL ? (size_t)ev->bytes : 0;
}

union doca_data doca_event_get_user_data(const struct doca_event *h)
{
	const struct doca_event *ev = event_current(h);
	union doca_data none = { .u64 = 0 };

	return ev != NULL ? ev->user_data : none;
}

enum doca_task_type doca_event_get_type(const struct doca_event *h)
{
	const struct doca_event *ev = event_current(h);

	return ev != NULL ? (enum doca_task_type)ev->type : (enum doca_task_type)0;
}

struct doca_ctx *doca_event_get_ctx(const struct doca_event *h)
{
	const struct doca_event *ev = event_current(h);

	return ev != NULL ? handle_of(ev->ctx) : NULL;
}

/* ev->pins == EV_PINS_GUARDED, under OWNED_RMW_ASM as one cmp with the
 * byte in memory: gcc loads a byte that two tests read into a register
 * first (the slot is the caller's since its claim or take: nobody else
 * writes pins, a plain field). */
static inline __attribute__((always_inline)) bool ev_pins_guarded(const struct doca_event *ev)
{
#ifdef OWNED_RMW_ASM
	bool guarded;

	__asm__("cmpb %[g], %[pins]" : "=@ccz"(guarded) : [pins] "m"(ev->pins), [g] "i"(EV_PINS_GUARDED));
	return guarded;
#else
	return ev->pins == EV_PINS_GUARDED;
#endif
}

/* Caller: the holder of the PE's runner guard (the pool's one returner),
 * inside a read-side section: the credit we return can let a stop retire
 * the run at once, and the pool's CAS still reads the run's memory after
 * publishing it; the grace period before the run is freed covers that
 * tail (and shows TSan the order). Or, without one, the parked owner in a
 * brief guard entered by runner_unpark, which the stop waits out instead
 * (doca_event_free, doca_event_free_bulk's routes). The caller puts the chain back, then
 * runs run_credits_returned once after its burst of releases. @p next: the
 * slot's next generation, FREE (ev_gs_next_free of its gs now); @p
 * watched: hb_watching() as the caller found it, or true (each annotation
 * then tests it itself); @p claimed: the claim stored the next
 * generation already (@p next unused, 0), so no store. */
static inline __attribute__((always_inline)) void event_release_slot(struct doca_event *ev, uint64_t next,
								  bool watched, bool claimed)
{
	/* the guarded case first: the owner's, one test, and laid out on the
	 * straight line (no jump back from an out-of-line block) */
	if (__builtin_expect(ev_pins_guarded(ev), 1)) {
		buf_unpin_watched(ev->src, true, watched);
		buf_unpin_watched(ev->dst, true, watched);
	} else if (ev->pins != EV_PINS_DROPPED) {
		buf_unpin_watched(ev->src, false, watched);
		buf_unpin_watched(ev->dst, false, watched);
	}
	/* the next generation: every handle of this use is stale from now on
	 * (a claim stored it already: event_claim_cas, event_claim_plain) */
	if (!claimed)
		atomic_store_explicit(&ev->gs, next, memory_order_relaxed);
	TSAN_RELEASE(ev);
	TSAN_RELEASE(&ev->run->pool);
	EXPLORE_POINT(QUEUE);
	if (watched)
		hb_release(ev); /* the application is done with the task before the slot's reuse */
	/* release: our last touch of the slot happens before whoever sees the
	 * credit back (a submitter, or a stop that counts none outstanding and
	 * frees the run); task_pool_put's store of returned is a release too. */
	atomic_thread_fence(memory_order_release);
}

/* event_release_slot, the slot then added to the caller's chain @p c. */
static inline __attribute__((always_inline)) void event_release_gs(struct doca_event *ev,
								struct pool_chain *c, uint64_t next,
								bool watched, bool claimed)
{
	event_release_slot(ev, next, watched, claimed);
	pool_chain_add(c, ev);
}

/* The same, for a slot whose gs the caller does not know. */
static inline void event_release_inline(struct doca_event *ev, struct pool_chain *c)
{
	event_release_gs(ev, c, ev_gs_next_free(atomic_load_explicit(&ev->gs, memory_order_relaxed)), true, false);
}

void event_release_to(struct doca_event *ev, struct pool_chain *c)
{
	event_release_inline(ev, c);
}

void event_release(struct doca_event *ev)
{
	struct pool_chain c = { 0 };
	struct task_pool *pool = &ev->run->pool; /* read before the slot is anybody's again */

	event_release_inline(ev, &c);
	task_pool_put(pool, &c);
}

/* The slot behind a handle if it is an event inherited across fork (the
 * ones event_slot refuses), else NULL. */
static const struct doca_event *event_inherited(const struct doca_event *h)
{
	const struct doca_event *ev = handle_addr(h);

	if (ev == NULL || head_load(&ev->magic) != MAGIC_EVENT || head_load(&ev->epoch) == g_fork_epoch)
		return NULL;
	return ev;
}

/* Log a refused free; a stale handle is counted, an inherited one too when
 * the parent had freed it before the fork (README "fork()": it stays what it
 * was there, stale), as handle_refusal counts the other objects' handles.
 * @p ev NULL: event_slot refused the handle (@p gs unused). A NULL handle
 * is no refusal: freeing it does nothing, silently (the frees leave that
 * test to this cold way: its address is NULL too). Cold and out of
 * line: the frees' fast ways then keep fewer values across its calls. */
static __attribute__((cold, noinline)) void event_refused(const char *who, const struct doca_event *h,
							  const struct doca_event *ev, uint64_t gs)
{
	if (h == NULL)
		return;
	const struct doca_event *inherited = ev == NULL ? event_inherited(h) : NULL;

	if (inherited != NULL)
		gs = atomic_load_explicit(&inherited->gs, memory_order_relaxed);
	if (ev == NULL && inherited == NULL) {
		doca_log(DOCA_LOG_ERROR, "%s: not an event of this process", who);
	} else if (ev_gen(gs) != handle_gen(h) || ev_state(gs) == EV_RETURNING) {
		handle_count_stale();
		doca_log(DOCA_LOG_ERROR, "%s: event already freed (a stale or double free)", who);
	} else if (inherited != NULL) {
		doca_log(DOCA_LOG_ERROR, "%s: an event inherited from the parent process (fork)", who);
	} else {
		doca_log(DOCA_LOG_ERROR, "%s: event not held by the application (%s)", who,
			 ev_state(gs) == EV_CALLBACK ? "owned by an event callback" : "not handed out yet");
	}
}

/* The HELD gs of the generation @p h names, @p ev its slot
 * (event_slot_keyed(h)): h plus the slot's claim bias (ev_claim_bias says
 * why that is ev_gs(h's generation, EV_HELD)), one add. The bias is an
 * atomic only because a stale free may read it while a chunk_make stores
 * it again (the same value); under OWNED_RMW_ASM the add takes it as its
 * memory operand (gcc keeps an atomic load apart from its use). */
static inline __attribute__((always_inline)) uint64_t ev_handle_held_gs(const struct doca_event *h,
									 const struct doca_event *ev)
{
	uint64_t gs = (uintptr_t)h;

#ifdef OWNED_RMW_ASM
	__asm__("addq %[b], %[gs]" : [gs] "+r"(gs) : [b] "m"(ev->claim_bias) : "cc");
#else
	gs += atomic_load_explicit(&ev->claim_bias, memory_order_relaxed);
#endif
	return gs;
}

/* The state RETURNING in place of HELD in a gs the claim made: one
 * subtract (RETURNING's bits are HELD's less bit 6, no borrow leaves
 * them). */
static inline uint64_t ev_held_to_returning(uint64_t held)
{
	return held - (EV_STATE_HELD - EV_STATE_RETURNING);
}

#ifdef OWNED_RMW_ASM
/* ev_held_next_free's mask in memory: the and's operand, not a movabs */
static const uint64_t ev_tag_bits = ~EV_STATE_BITS;
#endif

/* ev_gs_next_free for the slot a claim wins, from the HELD gs @p held it
 * compares: its state's bits are all 1 already (engine.h), so the next
 * generation is held + 1 with them cleared: a lea and an and (under
 * OWNED_RMW_ASM with the mask as its memory operand: gcc makes the
 * 64-bit constant in a register first, a movabs a single free and a
 * register the burst keeps). (The explorer's event_wrap_free finds the
 * carry left out, event_claim_no_carry: the generation after one whose
 * low 6 bits are all 1 is then 63 generations back, an earlier handle
 * current again.) */
static inline uint64_t ev_held_next_free(uint64_t held)
{
	if (DOCA_REVERTED("event_claim_no_carry"))
		return (held - EV_STATE_HELD + 1u) & ~EV_STATE_BITS;
#ifdef OWNED_RMW_ASM
	uint64_t to;

	__asm__("leaq 1(%[held]), %[to]\n\tandq %[m], %[to]"
		: [to] "=&r"(to)
		: [held] "r"(held), [m] "m"(ev_tag_bits)
		: "cc");
	return to;
#else
	return (held + 1u) & ~EV_STATE_BITS;
#endif
}

/* The claim's three parts: the look (the slot behind a handle and the
 * HELD gs its claim wants), and the claim proper, a plain one (a load, a
 * compare and a store: only the PE's parked owner inside its brief
 * section entered by the owner way, while the PE's runner claim flag is
 * 0: "The owner's plain claim", below) or a CAS (every other claimer).
 * The look: @p h's slot (NULL: event_slot_keyed refused it), *want the
 * HELD gs of h's generation. */
static inline __attribute__((always_inline)) struct doca_event *event_claim_look(const struct doca_event *h,
										 uint64_t key, uint64_t *want)
{
	struct doca_event *ev = event_slot_keyed(h, key);

	if (ev != NULL)
		*want = ev_handle_held_gs(h, ev);
	return ev;
}

/* The plain claim of @p ev for the HELD gs @p want: true, the next
 * generation's FREE stored, if the slot's gs was want; else false, *gs
 * the word found (for event_refused). Correct only where no other thread
 * can claim the slot meanwhile (event.c top, "The owner's plain claim"). */
static inline __attribute__((always_inline)) bool event_claim_plain(struct doca_event *ev, uint64_t want,
								     uint64_t *gs)
{
	/* acquire: pairs with the handout's release (pe_take_ready), as the
	 * CAS's */
	*gs = atomic_load_explicit(&ev->gs, memory_order_acquire);
	EXPLORE_POINT(ATOMIC);
	if (*gs != want)
		return false;
	atomic_store_explicit(&ev->gs, ev_held_next_free(want), memory_order_relaxed);
	return true;
}

/* The CAS claim of @p ev for the HELD gs @p want: as event_claim_plain,
 * the one winner among any number of CAS claimers. */
static inline __attribute__((always_inline)) bool event_claim_cas(struct doca_event *ev, uint64_t want,
								   uint64_t *gs_out)
{
	uint64_t gs = want;
	uint64_t to = ev_held_next_free(want);
	bool won;

	EXPLORE_POINT(ATOMIC);
	if (DOCA_REVERTED("event_claim_load_store")) {
		gs = atomic_load_explicit(&ev->gs, memory_order_relaxed);
		EXPLORE_POINT(ATOMIC);
		won = gs == want;
		if (won)
			atomic_store_explicit(&ev->gs, to, memory_order_relaxed);
	} else {
		/* acquire: pairs with the handout's release (pe_take_ready). */
#ifdef OWNED_RMW_ASM
		/* The same CAS as one lock cmpxchg on the word in place, its
		 * zero flag the answer (a locked instruction is a full
		 * barrier; the clobber orders the compiler as the acquire
		 * does): gcc's builtin copies the address and the expected
		 * value into registers first and compares again after. */
		__asm__ volatile("lock cmpxchgq %[to], %[gs]"
				 : [gs] "+m"(ev->gs), "+a"(gs), "=@ccz"(won)
				 : [to] "r"(to)
				 : "memory");
#else
		won = atomic_compare_exchange_strong_explicit(&ev->gs, &gs, to,
							      memory_order_acquire, memory_order_relaxed);
#endif
	}
	*gs_out = gs;
	return won;
}

/* The claim (event_claim_look, then event_claim_cas or, by the owner,
 * event_claim_plain) takes the event from the application: the one
 * winner of HELD → FREE of the next generation for the handle's
 * generation; a loser is refused (logged, nothing changed).
 *
 * The claim stores the next generation's FREE gs at once, not RETURNING
 * (the release stored the next generation after the unpins until
 * 2026-12-06): the winner owns the slot from its CAS on either way, and
 * no other thread can tell FREE of a generation no handle names from
 * RETURNING. Every other claim of the slot fails (it wants a HELD gs)
 * and event_refused counts it stale in both (its generation is not the
 * gs's, or the state is RETURNING); a getter refuses both (not HELD or
 * CALLBACK); no taker reaches the slot before its return to the pool
 * publishes it (the pool's release), after the claim; and no handle of
 * the next generation exists before a take and a handout. The state
 * RETURNING is still what marks a slot in its run's mailbox as a free,
 * not a task (event_returning): a claimed slot routed there is stored
 * RETURNING of its generation (@p ret) before its push (route_event),
 * and the turn that takes it back stores the next FREE gs again. A
 * released slot's gs store is then left out (event_release_slot's
 * claimed). */
/* Where claimed events go: straight to their pool when the freeing thread
 * runs (or can take without waiting) their PE, else through their run's
 * mailbox. One route serves a run of events of one PE. */
struct free_route {
	struct doca_pe *pe;
	bool direct;           /* we may return credits to this PE's pools */
	bool entered;          /* we took its guard: give it back */
	const void *unparked;  /* entered as its parked owner: the word (runner_exit_from) */
	bool sectioned;        /* we are inside a read-side section (doca_event_free_bulk) */
	struct ctx_run *mbox_run; /* a run we pushed into and have not announced */
	struct ctx_run *released; /* a run we returned credits to and have not told */
	struct pool_chain chain;  /* released's slots, not yet put back */
};

/* Put the slots released back and tell their run. */
static void route_return(struct free_route *r)
{
	uint32_t n = r->chain.n;

	task_pool_put(&r->released->pool, &r->chain);
	if (!r->sectioned)
		asym_fence_light(); /* as doca_event_free's, outside a section */
	run_credits_returned(r->released, n);
	r->released = NULL;
}

static void route_flush(struct free_route *r)
{
	if (r->mbox_run != NULL) {
		mailbox_announce(&r->mbox_run->mbox);
		/* its PE visits the run to take the credits back (the
		 * announce fenced after the pushes) */
		(void)pe_ready_signal_fenced(r->mbox_run->pe, r->mbox_run->ctx);
		r->mbox_run = NULL;
	}
}

static inline __attribute__((always_inline)) void route_end(struct free_route *r)
{
	route_flush(r);
	if (r->released != NULL)
		route_return(r);
	if (r->entered)
		runner_exit_from(&r->pe->runner, r->unparked);
	else if (r->pe != NULL && !r->direct)
		pe_wake(r->pe); /* its next turn puts the credits back */
	r->pe = NULL;
	r->entered = false;
}

/* Start routing to pe: ours already (NESTED: a callback, or a turn), ours
 * for a moment (ENTERED), or another thread's: through the mailbox. */
static inline __attribute__((always_inline)) void route_begin(struct free_route *r, struct doca_pe *pe)
{
	r->unparked = NULL;
	enum runner_entry e = runner_enter_brief_from(&pe->runner, &r->unparked);

	/* Entered as the parked owner by runner_unpark, the route returns
	 * its credits and runs the tail after them inside that brief guard,
	 * which a stop's retirement waits out (doca_event_free says why that
	 * needs no section); every other route takes the section before
	 * the first credit goes anywhere, and keeps it to the burst's end. */
	if (r->unparked == NULL && !r->sectioned) {
		doca_rcu_read_lock();
		r->sectioned = true;
	}
	r->pe = pe;
	r->direct = e != RUNNER_BUSY;
	r->entered = e == RUNNER_ENTERED;
}

/* Route a slot event_claim won (@p ret: its RETURNING gs, as the claim
 * reported it). */
static inline __attribute__((always_inline)) void route_event(struct free_route *r, struct doca_event *ev,
							      uint64_t ret)
{
	struct doca_pe *pe = ctx_pe(ev->ctx);

	if (r->pe != pe) {
		if (r->pe != NULL)
			route_end(r);
		route_begin(r, pe);
	}
	if (r->direct) {
		if (r->released != ev->run && r->released != NULL)
			route_return(r);
		r->released = ev->run;
		event_release_gs(ev, &r->chain, 0, true, true);
		return;
	}
	/* the buffers are free at once; only the credit waits for the turn
	 * (the push publishes pins with the slot) */
	buf_unpin_foreign(ev->src, ev->pins == EV_PINS_GUARDED);
	buf_unpin_foreign(ev->dst, ev->pins == EV_PINS_GUARDED);
	ev->pins = EV_PINS_DROPPED;
	/* a free, not a task, for the turn that drains it (event_claim);
	 * relaxed: the push publishes it */
	atomic_store_explicit(&ev->gs, ret, memory_order_relaxed);
	if (r->mbox_run != ev->run)
		route_flush(r);
	r->mbox_run = ev->run;
	mailbox_push_mpsc(&ev->run->mbox, &ev->mbox_node);
}

/* route_event for an event the burst's fast way does not take: out of
 * line, so that the fast way's state stays in registers, and cold (once
 * per run a burst meets), so that gcc keeps the fast way's registers for
 * the loop and lays the call off it. */
static __attribute__((noinline, cold)) void route_event_slow(struct free_route *r, struct doca_event *ev,
								     uint64_t ret)
{
	route_event(r, ev, ret);
}

/* route_begin for the burst's first route when the calling thread t is
 * the PE's parked owner in no parked section and runner_owner_way holds:
 * the entry doca_event_free's owner way makes (runner_unpark_at, index
 * 0, the kernel's fence), recorded in the route as route_begin records
 * an entry by runner_unpark (no read-side section: route_begin says why).
 * False, nothing changed, for every other case (@p t, runner_me_owner_way,
 * is a twin when runner_owner_way does not hold: no owner word names it,
 * so runner_parked_by fails): route_begin then makes
 * the whole entry (a failed runner_unpark_at restored t's list; the
 * general entry looks again, as a later call would). */
static inline __attribute__((always_inline)) bool route_begin_owner(struct free_route *r, struct doca_pe *pe,
								     struct runner_thread *t)
{
	EXPLORE_POINT(GUARD);
	const void *cur = atomic_load_explicit(&pe->runner.owner, memory_order_relaxed);

	if (!runner_parked_by(cur, t) || !runner_unpark_at(&pe->runner, cur, t, 0, true, true))
		return false;
	r->unparked = cur;
	r->pe = pe;
	r->direct = true;
	r->entered = true;
	return true;
}

/* route_end for a route route_begin_owner began and nothing else used:
 * one run's chain (@p run, @p c: not empty, passed by value so that the
 * burst keeps it in registers), no mailbox, no section. route_return's
 * steps, then the exit at t's list's first entry; the chain goes back
 * with no look at the pool's mode (returns have one writer in every
 * mode: engine/task_pool.c). */
static inline __attribute__((always_inline)) void route_end_owner(struct free_route *r, struct ctx_run *run,
								   const struct pool_chain c, struct runner_thread *t)
{
	pool_put_chain(&run->pool, c.first, c.last, c.n);
	asym_fence_light_known(true); /* as route_return's, outside a section */
	run_credits_returned(run, c.n);
	runner_exit_unparked_at(&r->pe->runner, r->unparked, t, 0);
}

/* Why burst_take did not take an event into the chain. */
enum burst_left {
	BURST_REFUSED,  /* refused (logged): nothing to route */
	BURST_CLAIMED,  /* claimed, an event of another run of the route's PE */
	BURST_OTHER_PE, /* unclaimed: its slot names another PE */
};

/* One event of the burst's fast way (event_free_burst): claimed and
 * released into @p chain, true, if it is an event of @p run; else false,
 * *left telling why. The event's PE word is compared with the route's
 * PE @p pe before the claim (event.c top, "The owner's plain claim": no
 * claim of another PE's event inside this PE's section); the claim is
 * plain when the route's entry is the owner way's and the PE's flag was
 * 0 after it (@p plain), else a CAS. */
static inline __attribute__((always_inline)) bool burst_take(const struct doca_event *h, uint64_t key,
							      const struct doca_pe *pe, const struct ctx_run *run,
							      struct pool_chain *chain, bool watched, bool plain,
							      enum burst_left *left)
{
	uint64_t want, gs;
	struct doca_event *ev = event_claim_look(h, key, &want);

	if (__builtin_expect(ev == NULL, 0)) {
		event_refused("doca_event_free_bulk", h, NULL, 0);
		*left = BURST_REFUSED;
		return false;
	}
	if (__builtin_expect(atomic_load_explicit(&ev->pe, memory_order_relaxed) != pe, 0)) {
		*left = BURST_OTHER_PE;
		return false;
	}
	bool won = plain ? event_claim_plain(ev, want, &gs) : event_claim_cas(ev, want, &gs);

	if (__builtin_expect(!won, 0)) {
		event_refused("doca_event_free_bulk", h, ev, gs);
		*left = BURST_REFUSED;
		return false;
	}
	if (__builtin_expect(ev->run != run, 0)) {
		*left = BURST_CLAIMED;
		return false;
	}
	event_release_slot(ev, 0, watched, true);
	pool_chain_link_more(chain, ev);
	return true;
}

/* The burst's fast way from *@p pp (event_free_burst), two events a
 * round written by hand: the bound tested once a round and the pointer
 * moved once, and the round's first event linked to the chain's first
 * slot, the second to the first event. True at @p end, every event
 * taken; false at an event it does not take (*@p pp then points at it,
 * *@p left says why). Compiled once for each value of @p plain (its
 * test out of the loop, and the plain claim on the straight line). */
static inline __attribute__((always_inline)) bool burst_rounds(struct doca_event *const **pp,
							       struct doca_event *const *end, uint64_t key,
							       const struct doca_pe *pe, const struct ctx_run *run,
							       struct pool_chain *chain, bool watched, bool plain,
							       enum burst_left *left)
{
	struct doca_event *const *p = *pp, *const *last = end - 1; /* last: where a round may no longer start */
	bool all = false;

	for (;;) {
		if (p >= last) {
			if (p == end) {
				all = true;
				break;
			}
			if (!burst_take(p[0], key, pe, run, chain, watched, plain, left))
				break;
			p++;
			all = true;
			break;
		}
		if (!burst_take(p[0], key, pe, run, chain, watched, plain, left))
			break;
		if (!burst_take(p[1], key, pe, run, chain, watched, plain, left)) {
			p++;
			break;
		}
		p += 2;
	}
	*pp = p;
	return all;
}

/* The end of the burst's route (@p run, @p chain: the fast way's; @p
 * owner_only: begun by route_begin_owner and used by nothing else), before
 * a route to another PE or at the burst's end. */
static inline __attribute__((always_inline)) void burst_route_end(struct free_route *r, struct ctx_run *run,
								   const struct pool_chain chain, bool owner_only,
								   struct runner_thread *t)
{
	if (owner_only) {
		if (run != NULL)
			route_end_owner(r, run, chain, t);
		else /* its first claim refused: nothing to return */
			runner_exit_unparked_at(&r->pe->runner, r->unparked, t, 0);
		r->pe = NULL;
		r->entered = false;
		return;
	}
	r->released = run;
	r->chain = chain;
	route_end(r);
}

/* doca_event_free_bulk's body, compiled once for each value of @p watched
 * (hb_watching(), tested once per call: it is set before main), so its
 * fast way tests no annotation flag per event when no race detector
 * watches; with one, every annotation is made as before. */
static inline __attribute__((always_inline)) void event_free_burst(struct doca_event **evs, uint32_t n,
								   bool watched)
{
	struct free_route route = { 0 };
	/* The fast way: route.released and route.chain in locals while the
	 * route returns straight to the pool (route.direct). An event of
	 * `run` belongs to route.pe (a run's context keeps its PE while the
	 * run lives), so it is released into the chain as route_event would. */
	struct ctx_run *run = NULL;
	struct pool_chain chain = { 0 };
	const uint64_t key = g_event_key; /* once for the burst's handles */
	/* the burst's route is the owner's (route_begin_owner) and no other
	 * run was routed: burst_route_end ends it by route_end_owner */
	bool owner_only = false;
	/* the route's claims are plain (its entry the owner way's, the PE's
	 * claim flag 0 after it) */
	bool plain = false;
	/* the flag, the record and depth 0 in one word (runner_depth_set) */
	struct runner_thread *t = runner_me_owner_way;
	/* The fast way links its slots into chain without counting them
	 * (pool_chain_link_more): chain.n lacks the events from index base
	 * on that it linked, all but the `refused` ones among them, and
	 * gets them where it is used (before route_event_slow, a route's
	 * end, and at the end): one add a slot less. */
	uint32_t base = 0, refused = 0;

	struct doca_event *const *p = evs, *const *end = evs + n;

	while (p < end) {
		/* route.pe in a register for the fast way (route is in memory) */
		const struct doca_pe *route_pe = route.pe;
		const struct doca_event *h;
		struct doca_event *ev;
		uint32_t i;

		if (__builtin_expect(route_pe == NULL, 0)) {
			/* No route (the burst's first event, or one after
			 * refusals before any route began: a failed look, or
			 * the general entry's second look): nothing to end, so
			 * this event's look alone, then a route to its PE
			 * below. */
			i = (uint32_t)(p - evs);
			p++;
			h = evs[i];
			ev = event_slot_keyed(h, key);
			if (ev == NULL) {
				event_refused("doca_event_free_bulk", h, NULL, 0);
				refused++;
				continue;
			}
		} else {
			enum burst_left left;

			/* The fast way (burst_rounds). An event of `run` is
			 * released into the chain as route_event would (the
			 * claim won h's generation and stored the next; run is
			 * not NULL only once the chain holds a slot). Plain
			 * only unwatched (route_begin_owner's route), so the
			 * watched build has no plain copy. */
			if ((!watched && plain) ? burst_rounds(&p, end, key, route_pe, run, &chain, watched, true, &left)
					      : burst_rounds(&p, end, key, route_pe, run, &chain, watched, false, &left))
				goto done;
			i = (uint32_t)(p - evs);
			p++;
			if (left == BURST_REFUSED) {
				refused++;
				continue;
			}
			h = evs[i];
			ev = handle_addr(h);
			if (left == BURST_CLAIMED) {
				/* evs[i]'s claim won (another run of the route's
				 * PE): h names its slot's generation */
				owner_only = false;
				chain.n += i - base - refused;
				route.released = run;
				route.chain = chain;
				route_event_slow(&route, ev, ev_held_to_returning(ev_handle_held_gs(h, ev)));
				run = route.direct ? route.released : NULL;
				chain = route.chain; /* counted whole by the route */
				base = i + 1u;
				refused = 0;
				continue;
			}
			/* Another PE's event, unclaimed: end the route first (no
			 * claim of its event in this PE's section, and no wait
			 * below inside a brief section), then begin one to its
			 * PE, then claim. */
			chain.n += i - base - refused;
			burst_route_end(&route, run, chain, owner_only, t);
			run = NULL;
			chain = (struct pool_chain){ 0 };
			owner_only = false;
			plain = false;
		}
		base = i; /* evs[i] is linked uncounted, or routed (base moves on) */
		refused = 0;

		struct doca_pe *pe = atomic_load_explicit(&ev->pe, memory_order_relaxed);
		uint64_t want = ev_handle_held_gs(h, ev), gs;

		if (!watched && pe != NULL && route_begin_owner(&route, pe, t)) {
			plain = runner_claims_plain(&pe->runner);
			owner_only = true;
			if (!(plain ? event_claim_plain(ev, want, &gs) : event_claim_cas(ev, want, &gs))) {
				event_refused("doca_event_free_bulk", h, ev, gs);
				refused++;
				continue;
			}
			/* route_event's direct way for the route's first event */
			run = ev->run;
			event_release_slot(ev, 0, false, true);
			chain.last = ev; /* pool_chain_add on the empty chain */
			pool_chain_link_more(&chain, ev);
			continue;
		}
		/* The general entry, inside a read-side section from before a
		 * second look (doca_event_free's event_free_enter says why: a
		 * stale slot's PE word may name a PE being destroyed); kept to
		 * the burst's end. */
		if (!route.sectioned) {
			doca_rcu_read_lock();
			route.sectioned = true;
		}
		EXPLORE_POINT(ATOMIC);
		gs = atomic_load_explicit(&ev->gs, memory_order_acquire);
		if (gs != want) {
			event_refused("doca_event_free_bulk", h, ev, gs);
			refused++;
			continue;
		}
		route_begin(&route, pe);
		if (!route.direct && runner_owner_way)
			runner_claims_share(&pe->runner); /* the outside claimer's protocol */
		if (!event_claim_cas(ev, want, &gs)) {
			event_refused("doca_event_free_bulk", h, ev, gs);
			refused++;
			continue;
		}
		route.released = NULL;
		route.chain = chain;
		route_event_slow(&route, ev, ev_held_to_returning(want));
		run = route.direct ? route.released : NULL;
		chain = route.chain; /* counted whole by the route */
		base = i + 1u;
	}
done:
	chain.n += n - base - refused;
	burst_route_end(&route, run, chain, owner_only, t);
	if (route.sectioned)
		doca_rcu_read_unlock();
}

void doca_event_free_bulk(struct doca_event **evs, uint32_t n)
{
	if (evs == NULL || n == 0)
		return; /* nothing to free (event_free_burst wants n >= 1) */
	/* Each PE's events claimed inside that PE's route (event.c top, "The
	 * owner's plain claim"): the owner's route by runner_unpark takes no
	 * read-side section, every other one takes it before its look
	 * (event_free_burst) and keeps it to the burst's end. */
	if (hb_watching())
		event_free_burst(evs, n, true);
	else
		event_free_burst(evs, n, false);
}

/* doca_event_free's way when another thread runs the PE: through the
 * mailbox (route_event and route_end for one event), out of line so that
 * the owner's way keeps few registers. */
static __attribute__((noinline)) void event_free_foreign(struct doca_event *ev, struct doca_pe *pe, uint64_t ret)
{
	struct free_route route = { .pe = pe, .sectioned = true };

	route_event(&route, ev, ret);
	route_end(&route);
}

/* doca_event_free past its entry (@p e, @p unparked as runner_enter_brief_from
 * reported them), for the entries the owner's way below does not finish:
 * out of line, so that that way needs no frame. */
static __attribute__((noinline)) void event_free_entered(struct doca_event *ev, const struct doca_event *h,
							 struct doca_pe *pe, enum runner_entry e,
							 const void *unparked)
{
	/* The owner's way: entered our parked guard by runner_unpark. The
	 * credit's return and the tail after it then need no read-side
	 * section: a stop retires the run only after waiting out such brief
	 * sections (engine/ctx_run.c, runner_quiesce_fenced), a turn that
	 * retires it holds the guard, and a PE's destroy takes the guard
	 * too (its revoker waits for a brief hold), so nothing we touch
	 * before we leave is freed. Every other way (nested in a turn or a
	 * callback, the guard taken by a CAS, another thread's guard: the
	 * mailbox) takes a section before the credit goes anywhere. */
	bool section = unparked == NULL;

	if (section)
		doca_rcu_read_lock();
	if (e != RUNNER_BUSY) {
		struct ctx_run *run = ev->run;
		struct pool_chain c = { 0 };

		/* the claim won h's generation and stored the next */
		event_release_gs(ev, &c, 0, true, true);
		task_pool_put(&run->pool, &c);
		/* Outside a section the grace period of a context's first
		 * credit waiter does not order our ring stores before its
		 * check: this light half pairs with the heavy half it runs
		 * after storing `used` (engine/ctx_credits.c, top). (A
		 * compiler barrier when membarrier works.) */
		if (!section)
			asym_fence_light();
		run_credits_returned(run, 1);
		if (e == RUNNER_ENTERED)
			runner_exit_from(&pe->runner, unparked);
	} else {
		event_free_foreign(ev, pe, ev_held_to_returning(ev_handle_held_gs(h, ev)));
	}
	if (section)
		doca_rcu_read_unlock();
}

/* doca_event_free's entry that its owner's way does not make itself
 * (runner_owner_enter failed: the calling thread has no record yet, or no
 * owner way, or the owner word is not its parked word unmarked), then
 * the claim: the whole entry, runner_enter_brief_from, which loads the
 * owner word again (a marked word of ours is its CAS). All of it inside
 * a read-side section, taken before the look: the PE the slot's word
 * names is entered before the claim, and a stale handle's slot may name
 * a PE being destroyed; a look that finds the handle's HELD gs (acquire)
 * proves the run, so its PE, alive at that moment, and its grace period
 * (pe_free_rcu) then waits for us. A look that finds another gs refuses
 * the free without touching the PE. Entered (by a CAS, by runner_unpark
 * not by the owner way, or nested), the claim is a CAS: the parked owner
 * claims plainly only inside its owner way's section, which our holding
 * the guard excludes (or which is ours). Busy: the outside claimer's
 * protocol first (runner_claims_share), then the CAS. It takes the
 * handle first, the slot second, as doca_event_free receives the handle
 * (its slot's address is then made in another register than the
 * handle's: one `mov` a free). */
static __attribute__((noinline)) void event_free_enter(const struct doca_event *h, struct doca_event *ev)
{
	const void *unparked = NULL;
	uint64_t want = ev_handle_held_gs(h, ev), gs;

	doca_rcu_read_lock();
	EXPLORE_POINT(ATOMIC);
	gs = atomic_load_explicit(&ev->gs, memory_order_acquire);
	if (gs != want) {
		doca_rcu_read_unlock();
		event_refused("doca_event_free", h, ev, gs);
		return;
	}
	struct doca_pe *pe = atomic_load_explicit(&ev->pe, memory_order_relaxed);
	enum runner_entry e = runner_enter_brief_from(&pe->runner, &unparked);

	if (e == RUNNER_BUSY && runner_owner_way)
		runner_claims_share(&pe->runner);
	if (!event_claim_cas(ev, want, &gs)) {
		if (e == RUNNER_ENTERED)
			runner_exit_from(&pe->runner, unparked);
		doca_rcu_read_unlock();
		event_refused("doca_event_free", h, ev, gs);
		return;
	}
	event_free_entered(ev, h, pe, e, unparked);
	doca_rcu_read_unlock();
}

/* The reverted first order (explorer switch owner_claim_before_entry):
 * the claim before the entry, plain when the flag is 0, as the claim16
 * sketch had it. Wrong: a revoke between the owner's plain load and its
 * store lets the next owner win too (stress/explore owner_claim_revoke). */
static __attribute__((noinline)) void event_free_claim_first(const struct doca_event *h, struct doca_event *ev,
							     struct doca_pe *pe, struct runner_thread *t)
{
	uint64_t want = ev_handle_held_gs(h, ev), gs;
	const void *cur, *unparked = NULL;
	bool won = runner_claims_plain(&pe->runner) ? event_claim_plain(ev, want, &gs)
						     : event_claim_cas(ev, want, &gs);

	if (!won) {
		event_refused("doca_event_free", h, ev, gs);
		return;
	}
	EXPLORE_POINT(GUARD);
	if (runner_owner_enter(&pe->runner, t, true, false, &cur)) {
		runner_unparked_first_count(t);
		event_free_entered(ev, h, pe, RUNNER_ENTERED, cur);
		return;
	}
	enum runner_entry e = runner_enter_brief_from(&pe->runner, &unparked);

	event_free_entered(ev, h, pe, e, unparked);
}

/* The owner's way when its claim lost (a stale or double free): leave
 * the section, then refuse (logged, counted). */
static __attribute__((noinline, cold)) void event_free_owner_refused(const struct doca_event *h,
								    struct doca_event *ev, uint64_t gs,
								    struct doca_pe *pe, const void *cur,
								    struct runner_thread *t)
{
	runner_exit_unparked_first(&pe->runner, cur, t);
	event_refused("doca_event_free", h, ev, gs);
}

/* The owner's way past its credit's return when run_credits_returned must
 * wake somebody (the way found run_credits_waiting's byte set): its slow
 * part, then the exit. `waited` is read from the byte again: its bits are
 * only ever set, so a later load holds at least the bits the way saw, and
 * one set since only makes the slow part look at the waiters as well
 * (the explorer takes no point between the two loads). */
static __attribute__((noinline)) void event_free_credits_slow(struct ctx_run *run, const void *cur)
{
	bool waited;

	(void)run_credits_waiting_byte(run, &waited);
	run_credits_returned_slow(run, 1, waited);
	runner_exit_from(&run->pe->runner, cur);
}

/* The steps of route_begin, route_event and route_end for one event (the
 * route's bookkeeping left out when we return it ourselves), arranged as
 * doca_pe_get_event's (engine/pe.c): the parked owner's way, entering by
 * runner_unpark with no race detector watching and no credit waiter to
 * wake, is inline and calls no function, so it keeps its values in
 * registers the caller may clobber and saves almost none; every other way
 * (a refusal, a thread without a record, a guard not parked by us, a
 * nested entry, runner_unpark failing, a race detector, the credit
 * waiters' slow part) is a tail call to an out-of-line rest that makes
 * the same steps in the same order (event_free_entered and the three
 * above). */
void doca_event_free(struct doca_event *h)
{
	/* The look outside a read-side section: the slot's handle head, its
	 * PE word and the PE's guard and claim flag are atomics of
	 * type-stable cells (engine/cells.c: a retired pool scrubs its slots
	 * but keeps those; a PE's cell keeps its guard), never written by
	 * plain stores. The slot's PE word is its run's PE whenever the
	 * claim below wins (engine.h); for a stale handle it may be any PE,
	 * or a PE's cell between two lives: the owner way enters only a
	 * guard parked by us, so a live PE's, and then refuses. A claim that
	 * wins holds its run's credit: the run, its context and the
	 * context's PE stay (a run is retired only with every credit back,
	 * a context destroyed only IDLE, a PE only without contexts), so the
	 * slot's fields may be read until the credit goes back. */
	struct doca_event *ev = event_slot_keyed(h, g_event_key);

	if (__builtin_expect(ev == NULL, 0)) {
		event_refused("doca_event_free", h, NULL, 0);
		return;
	}
	struct doca_pe *pe = atomic_load_explicit(&ev->pe, memory_order_relaxed);
	struct runner_thread *t = runner_me_owner_way;

	/* Both flags once, as runner_owner_way (neither changes while a
	 * thread of the library runs), read with the record: the owner's way
	 * below is for the kernel's fences (its three light fences compiler
	 * barriers, no flag tested again) with no race detector watching;
	 * otherwise (t a twin, as for a thread without a record: it fails
	 * runner_owner_enter) the whole
	 * entry and its rest (event_free_enter: a section, the look, the
	 * entry, the CAS claim). */
	/* And the thread in no parked section (depth 0: then not nested
	 * in ours either, and its entry is its list's first, at constant
	 * indexes); a nested or deeper call takes the whole entry too
	 * (runner_me_owner_way is a twin there: runner_depth_set), as does
	 * an owner word that is not our parked word unmarked (the general
	 * entry looks again: a marked word of ours is its CAS). A NULL PE
	 * word (a handle into a cell whose first chunk_make is under way:
	 * no event's) takes the whole entry too, whose look refuses it. */
	/* Entered uncounted (runner_owner_enter): the inline way below
	 * calls nothing; each rest it tail-calls counts the entry first and
	 * leaves as after runner_unpark_at. */
	EXPLORE_POINT(GUARD);
	const void *cur;

	if (DOCA_REVERTED("owner_claim_before_entry") && pe != NULL &&
	    runner_parked_by(atomic_load_explicit(&pe->runner.owner, memory_order_relaxed), t)) {
		event_free_claim_first(h, ev, pe, t);
		return;
	}
	if (__builtin_expect(pe == NULL, 0) || !runner_owner_enter(&pe->runner, t, true, false, &cur)) {
		event_free_enter(h, ev);
		return;
	}
	/* The claim, inside the section (event.c top, "The owner's plain
	 * claim"): plain while the PE's claim flag, loaded after the entry's
	 * light half, is 0; a CAS once a claimer outside the guard set it. */
	uint64_t want = ev_handle_held_gs(h, ev), gs;
	/* the plain claim expected: laid out on the straight line */
	bool won = __builtin_expect(runner_claims_plain(&pe->runner), 1) ? event_claim_plain(ev, want, &gs)
									 : event_claim_cas(ev, want, &gs);

	if (__builtin_expect(!won, 0)) {
		event_free_owner_refused(h, ev, gs, pe, cur, t);
		return;
	}
	/* the PE from the slot, the run now (the won claim's credit keeps it) */
	struct ctx_run *run = ev->run;

	/* event_free_entered's way for ENTERED by runner_unpark (no
	 * section), its annotations left out. The exit's guard is the
	 * entry's, kept in a register across the put (the out-of-line rests
	 * find it from the run: a run's context keeps its PE, and its run
	 * records it, while the run lives): with the guard's looks compared
	 * in memory (RUNNER_WORD_ASM) gcc keeps the runner's address for
	 * them, and finding it from the run again cost a load and an add.
	 * (Our record t stays live: with the put's busy flag gone it no
	 * longer costs a save, and finding it from cur again cost two
	 * instructions.)
	 * The put is task_pool_put's for a chain of this one slot; the
	 * slot's link is written by the put alone (the chain's would be
	 * overwritten). It looks at no mode: the slots and returned are the
	 * guard holder's in every mode (engine/task_pool.c). */

	event_release_slot(ev, 0, false, true);
	pool_put_chain(&run->pool, ev, ev, 1);
	asym_fence_light_known(true); /* as event_free_entered's, outside a section */
	/* run_credits_waiting's point and look, one cmp with the byte */
	EXPLORE_POINT(WAKE);
	if (!ATOMIC_IS_ZERO(&run->credit_watch, memory_order_relaxed)) {
		runner_unparked_first_count(t);
		event_free_credits_slow(run, cur);
		return;
	}
	runner_exit_unparked_first(&pe->runner, cur, t);
}
