/*
 * engine/pe.c — progress engines: creation, connecting contexts, the ready
 * list, teardown. The turn itself is in pe_progress.c, notification in
 * pe_notify.c, worker threads in pe_worker.c.
 */
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "actors/explore_revert.h"
#include "engine/cells.h"
#include "engine/engine.h"

#define PE_MEMBERS_INITIAL 8u
/* The bytes of a PE's cell not zeroed when it is put back: the head and
 * the runner guard right after it (pe_free_rcu, pe_get). */
#define PE_CELL_KEEP ((offsetof(struct doca_pe, runner) + sizeof(struct runner) + 7u) & ~(size_t)7u)
_Static_assert(offsetof(struct doca_pe, runner) == sizeof(struct handle_head),
	       "a PE's runner guard follows its handle head");

/* Give a PE's cell back (its PE destroyed after a grace period, or never
 * published): a getter that checked a handle of an earlier PE of the cell
 * just before that PE's destroy may still load the guard's words outside
 * a read-side section (pe_get), so they are reset by atomic stores and
 * kept out of the zeroing. */
static void pe_cell_put(struct doca_pe *pe)
{
	runner_reset(&pe->runner);
	cell_put_keep(CELL_PE, pe, sizeof(*pe), PE_CELL_KEEP);
}

static struct pe_members *members_alloc(uint32_t capacity)
{
	struct pe_members *m = doca_zalloc(sizeof(*m) + sizeof(m->ctx[0]) * capacity);

	if (m != NULL)
		m->capacity = capacity;
	return m;
}

static void members_free_rcu(struct rcu_head *head)
{
	DOCA_RCU_CALLBACK_ENTER(head);
	doca_free(caa_container_of(head, struct pe_members, rcu));
}

static doca_error_t pe_add_member_locked(struct doca_pe *pe, struct doca_ctx *ctx)
{
	struct pe_members *m = pe->members;
	uint32_t count = atomic_load_explicit(&m->count, memory_order_relaxed);

	if (count == m->capacity) {
		struct pe_members *bigger = members_alloc(m->capacity * 2);

		if (bigger == NULL)
			return DOCA_ERROR_NO_MEMORY;
		for (uint32_t i = 0; i < count; i++)
			atomic_store_explicit(&bigger->ctx[i],
					      atomic_load_explicit(&m->ctx[i], memory_order_relaxed),
					      memory_order_relaxed);
		atomic_store_explicit(&bigger->count, count, memory_order_relaxed);
		TSAN_RELEASE(bigger);
		EXPLORE_POINT(ATOMIC);
		rcu_assign_pointer(pe->members, bigger);
		doca_call_rcu(&m->rcu, members_free_rcu);
		m = bigger;
	}
	atomic_store_explicit(&m->ctx[count], ctx, memory_order_relaxed);
	EXPLORE_POINT(ATOMIC);
	/* release: a reader that sees the new count sees the new entry. */
	atomic_store_explicit(&m->count, count + 1, memory_order_release);
	return DOCA_SUCCESS;
}

void pe_remove_member_locked(struct doca_pe *pe, struct doca_ctx *ctx)
{
	struct pe_members *m = pe->members;
	uint32_t count = atomic_load_explicit(&m->count, memory_order_relaxed);

	for (uint32_t i = 0; i < count; i++) {
		if (atomic_load_explicit(&m->ctx[i], memory_order_relaxed) != ctx)
			continue;
		EXPLORE_POINT(ATOMIC);
		atomic_store_explicit(&m->ctx[i],
				      atomic_load_explicit(&m->ctx[count - 1], memory_order_relaxed),
				      memory_order_release);
		EXPLORE_POINT(ATOMIC);
		/* release: the moved entry is in place before the array shrinks. */
		atomic_store_explicit(&m->count, count - 1, memory_order_release);
		return;
	}
}

doca_error_t doca_pe_create(struct doca_pe **out)
{
	if (out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	struct doca_pe *pe = cell_get(CELL_PE, sizeof(*pe));

	if (pe == NULL)
		return DOCA_ERROR_NO_MEMORY;
	pe->ready_head = &pe_ready_end; /* empty */
	pe->members = members_alloc(PE_MEMBERS_INITIAL);
	if (pe->members == NULL) {
		pe_cell_put(pe);
		return DOCA_ERROR_NO_MEMORY;
	}
	pe->epfd = epoll_create1(EPOLL_CLOEXEC);
	pe->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event watch = { .events = EPOLLIN, .data.ptr = NULL };

	if (pe->epfd < 0 || pe->evfd < 0 || epoll_ctl(pe->epfd, EPOLL_CTL_ADD, pe->evfd, &watch) != 0) {
		if (pe->epfd >= 0)
			close(pe->epfd);
		if (pe->evfd >= 0)
			close(pe->evfd);
		doca_free(pe->members);
		pe_cell_put(pe);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	ready_set_init(&pe->ready);
	pe->worker.stop_fd = -1;
	head_store(&pe->epoch, g_fork_epoch);
	head_store(&pe->magic, MAGIC_PE);
	live_created(LIVE_PE, 0);
	*out = handle_of(pe);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_connect_ctx(struct doca_pe *ph, struct doca_ctx *h)
{
	bool unchecked = DOCA_REVERTED("connect_refusal_uncounted");
	doca_error_t err;
	struct doca_ctx *ctx = unchecked ? ctx_of(h) : NULL;
	struct doca_pe *pe;

	/* The read-side section keeps the objects from the check to the end: a
	 * concurrent destroy hands their cells on only after a grace period. */
	doca_rcu_read_lock();
	pe = pe_of(ph);
	if (!unchecked)
		ctx = ctx_of(h);
	if (pe == NULL || ctx == NULL) {
		err = pe == NULL ? HANDLE_REFUSAL(ph, MAGIC_PE) : HANDLE_REFUSAL(h, MAGIC_CTX);
		doca_rcu_read_unlock();
		return err;
	}
	pthread_mutex_lock(&g_config_lock);
	/* destroyed since the check above: used after its destroy, refused
	 * (and counted) as a stale handle is, below, once the lock is let go */
	bool pe_gone = pe_of(ph) != pe, ctx_gone = ctx_of(h) != ctx;

	if (pe_gone || ctx_gone)
		err = DOCA_ERROR_INVALID_VALUE;
	else if (ctx_state(ctx) != DOCA_CTX_STATE_IDLE)
		err = DOCA_ERROR_BAD_STATE;
	else if (ctx_pe(ctx) != NULL)
		err = DOCA_ERROR_NOT_PERMITTED;
	else
		err = pe_add_member_locked(pe, ctx);
	if (err == DOCA_SUCCESS)
		atomic_store_explicit(&ctx->pe, pe, memory_order_relaxed); /* (ctx_pe) */
	pthread_mutex_unlock(&g_config_lock);
	if ((pe_gone || ctx_gone) && !unchecked)
		err = pe_gone ? HANDLE_REFUSAL(ph, MAGIC_PE) : HANDLE_REFUSAL(h, MAGIC_CTX);
	doca_rcu_read_unlock();
	return err;
}

/* Its other fields hold values no refusal returns (a refused handle reads
 * 0 user data, 0 bytes, DOCA_ERROR_INVALID_VALUE), so a getter that took
 * the marker for an event would show it (tests/engine/handles.c). */
struct doca_event pe_ready_end = { .status = DOCA_EVENT_STATUS_FAILURE,
				   .error = DOCA_ERROR_UNEXPECTED,
				   .bytes = PE_READY_END_MARK,
				   .user_data = { .u64 = PE_READY_END_MARK } };

#ifdef OWNED_RMW_ASM
/* pe_ready_end's address in memory, for pe_ready_at_end's cmp */
static struct doca_event *const pe_ready_end_at = &pe_ready_end;
#endif

/* @p ev (a ready list's head or link) is its end: under OWNED_RMW_ASM one
 * cmp with the end's address in memory, as the NULL test was one test
 * (gcc makes the address with a lea first). */
static inline __attribute__((always_inline)) bool pe_ready_at_end(const struct doca_event *ev)
{
#ifdef OWNED_RMW_ASM
	bool at_end;

	__asm__("cmpq %[end], %[ev]" : "=@ccz"(at_end) : [end] "m"(pe_ready_end_at), [ev] "r"(ev));
	return at_end;
#else
	return ev == &pe_ready_end;
#endif
}

/* The state's bits (EV_STATE_BITS) in a register: gcc makes a 64-bit
 * constant with a movabs per use; the empty asm hides the value (nothing
 * is executed), so the take makes it once for its ors. */
static inline uint64_t ev_state_bits_reg(void)
{
	uint64_t m = EV_STATE_BITS;

	__asm__("" : "+r"(m));
	return m;
}

/* Store ev_gs_with(gs, EV_HELD) for a gs in state EV_QUEUED (@p gs, ev's
 * gs as the caller loaded it), which every event on the ready list is in:
 * a submit stores QUEUED (engine/task.c) and nobody changes it before the
 * handout (the turn appends or splices events as they are,
 * engine/pe_progress.c; a free's CAS wants HELD, so it fails on them).
 * HELD's bits are every state bit (engine.h), so one or of them (@p m,
 * ev_state_bits_reg), not a mask and an or; under OWNED_RMW_ASM one
 * unlocked or to the word: its load and store are single-copy atomic
 * accesses, the store a release on x86-64 (the clobber keeps the
 * compiler's order), and no other thread writes gs meanwhile (no handle
 * of this generation is out, so every free's CAS fails). */
static inline __attribute__((always_inline)) void ev_set_held_from_queued(struct doca_event *ev, uint64_t gs,
									   uint64_t m)
{
#ifdef DOCA_EXPLORE
	if (ev_state(gs) != EV_QUEUED)
		abort(); /* the explorer's check of the above (verdict "abort") */
#endif
	/* release: a free on any thread claims HELD with an acquire CAS
	 * (event_claim), so it sees the slot as the PE left it however the
	 * application passed the handle on (free on x86) */
#ifdef OWNED_RMW_ASM
	(void)gs;
	__asm__ volatile("orq %[m], %[gs]" : [gs] "+m"(ev->gs) : [m] "r"(m) : "memory", "cc");
#else
	atomic_store_explicit(&ev->gs, gs | m, memory_order_release);
#endif
}

/* The handle of a slot @p ev handed out from its QUEUED gs @p gs: the slot
 * plus the gs less QUEUED's bits (engine.h), one lea. */
static inline uintptr_t ev_queued_handle(const struct doca_event *ev, uint64_t gs)
{
	return (uintptr_t)ev + gs - ev_state_bits(EV_QUEUED);
}

/* The ready event @p ev HELD (@p m: ev_state_bits_reg): its QUEUED gs,
 * which its handle is made from. */
static inline __attribute__((always_inline)) uint64_t pe_hold(struct doca_event *ev, uint64_t m)
{
	uint64_t gs = atomic_load_explicit(&ev->gs, memory_order_relaxed);

	ev_set_held_from_queued(ev, gs, m);
	return gs;
}

/* Hand out the ready event @p ev into @p out (pe_take_ready_watched). */
static inline __attribute__((always_inline)) void pe_hand_out(struct doca_event *ev, struct doca_event **out,
							       uint64_t m, bool watched)
{
	uint64_t gs = pe_hold(ev, m);

	if (watched)
		hb_acquire(ev); /* the device's writes happen before the handout */
	*out = (struct doca_event *)ev_queued_handle(ev, gs);
}

/* pe_hand_out, then the event's link (the next ready one, or pe_ready_end). */
static inline __attribute__((always_inline)) struct doca_event *pe_hand_out_next(struct doca_event *ev,
										 struct doca_event **out,
										 uint64_t m, bool watched)
{
	pe_hand_out(ev, out, m, watched);
	return ev->next;
}

/* Whether the take of doca_pe_get_events_ok (@p ok) stops before the
 * ready event @p ev: its status is not SUCCESS. Looked at before the
 * handout (pe_hold), so the event stays QUEUED and first in line. Its
 * status is final once it is ready: stored by the fill at its submit or
 * by the PE's turn that completed it, both before its append to the
 * ready list (engine/pe_progress.c), which only this thread reads. */
static inline __attribute__((always_inline)) bool pe_take_stops_at(const struct doca_event *ev, bool ok)
{
	if (!ok)
		return false;
#ifdef OWNED_RMW_ASM
	/* one cmp with the status in memory (SUCCESS is 0): gcc loaded it
	 * into a register and tested that, one instruction an event more
	 * (a plain field, written before the append as above) */
	bool failed;

	_Static_assert(sizeof(ev->status) == 4 && DOCA_EVENT_STATUS_SUCCESS == 0, "cmpl $0 is the test");
	__asm__("cmpl $0, %[status]" : "=@ccnz"(failed) : [status] "m"(ev->status));
	return failed;
#else
	return ev->status != DOCA_EVENT_STATUS_SUCCESS;
#endif
}

/* Take up to max ready events (the caller holds the runner guard). The
 * list's head is kept in a local: the stores to the events would
 * otherwise make the compiler load it again after each one. An event's
 * link is left as it was: every append writes it (engine.h). @p watched:
 * hb_watching(), a constant in each of pe_take_ready's copies. @p ok
 * (a constant too): doca_pe_get_events_ok's take, which stops before the
 * first event that did not succeed (pe_take_stops_at) and then sets
 * *has_error (it leaves it alone otherwise: the caller cleared it);
 * without it every test of a status folds away.
 *
 * The list ends at pe_ready_end, whose status is not SUCCESS: the ok
 * form's status test stops there too, so it tests no link for the end
 * (found at the stop, once a call: no error); the other form tests each
 * link (`end`, in a register, as NULL was).
 *
 * The events the ready index names (engine.h) come first, from it: their
 * addresses are in hand, so the handouts do not wait in series for each
 * link's load (bench/README.md "### off59"); the events past it by the
 * links, as follows.
 *
 * Four events a round, written by hand: the rounds counted down (max / 4
 * of them, one decrement and branch a round), the list's end tested after
 * each event, and the output pointer moved once a round; the last max % 4
 * places are filled one at a time after the rounds. (gcc's unroll kept
 * both tests per event; two a round, the room's test and the pointer's
 * add came every second event.) The link is loaded last, into the slot's
 * own register (the handle is made in another), so no copy of the slot's
 * address per event. The ok form's status test rides in the same steps,
 * before each handout. */
static inline __attribute__((always_inline)) uint32_t pe_take_ready_watched(struct doca_pe *pe,
									     struct doca_event **evs,
									     uint32_t max, bool watched,
									     bool ok, bool *has_error)
{
	struct doca_event *const end = &pe_ready_end;
	struct doca_event *ev = pe->ready_head;
	/* a pointer, not an index: one add a round */
	struct doca_event **out = evs;
	const uint64_t m = ev_state_bits_reg();

	if (ev == end)
		return 0;
	if (pe->index_at != pe->index_end) {
		/* the ready index (engine.h) names the first events: each
		 * one's address is in hand, none waits for the last one's
		 * link. It names ev first (kept exact, engine.h). */
		uint32_t at = pe->index_at, avail = pe->index_end - at, k = max < avail ? max : avail, i;
		struct doca_event *const *v = &pe->ready_index[at];

		for (i = 0; i < k && !pe_take_stops_at(v[i], ok); i++)
			pe_hand_out(v[i], &out[i], m, watched);
		out += i;
		if (i < avail) {
			/* max reached, or (ok) stopped before v[i], which
			 * failed: it is first in line */
			pe->index_at = at + i;
			pe->ready_head = v[i];
			if (ok && i < k)
				*has_error = true;
			return (uint32_t)(out - evs);
		}
		/* the index taken whole: the rest by the links */
		pe->index_at = pe->index_end = 0;
		ev = v[i - 1u]->next;
		max -= i;
		if (ev == end || max == 0) {
			pe->ready_head = ev;
			return (uint32_t)(out - evs);
		}
	}
	for (uint32_t rounds = max / 4u; rounds != 0; rounds--) {
		if (pe_take_stops_at(ev, ok))
			goto stopped;
		if ((ev = pe_hand_out_next(ev, out, m, watched)) == end && !ok) {
			out += 1;
			goto done;
		}
		if (pe_take_stops_at(ev, ok)) {
			out += 1;
			goto stopped;
		}
		if ((ev = pe_hand_out_next(ev, out + 1, m, watched)) == end && !ok) {
			out += 2;
			goto done;
		}
		if (pe_take_stops_at(ev, ok)) {
			out += 2;
			goto stopped;
		}
		if ((ev = pe_hand_out_next(ev, out + 2, m, watched)) == end && !ok) {
			out += 3;
			goto done;
		}
		if (pe_take_stops_at(ev, ok)) {
			out += 3;
			goto stopped;
		}
		ev = pe_hand_out_next(ev, out + 3, m, watched);
		out += 4;
		if (ev == end && !ok)
			goto done;
	}
	for (uint32_t left = max % 4u; left != 0 && (ok || ev != end); left--) {
		if (pe_take_stops_at(ev, ok))
			goto stopped;
		ev = pe_hand_out_next(ev, out++, m, watched);
	}
done:
	pe->ready_head = ev; /* the tail is left as it was: see pe_splice_ready */
	return (uint32_t)(out - evs);
stopped:
	if (ev != end)
		*has_error = true;
	goto done;
}

/* pe_take_ready_watched for one event, unwatched (pe_get_one): inline
 * there, the rounds' loop cost gcc a register copy per event. The slot
 * handed out, or NULL, its QUEUED gs in *gs (QUEUED's bits alone for
 * NULL: a NULL handle, ev_queued_handle): the caller makes the handle
 * (pe_handle_after_exit) after the guard's exit. */
static inline __attribute__((always_inline)) struct doca_event *pe_take_ready_one(struct doca_pe *pe,
										   uint64_t *gs)
{
	struct doca_event *ev = pe->ready_head, *next;

	*gs = ev_state_bits(EV_QUEUED);
	if (pe_ready_at_end(ev))
		return NULL;
	*gs = pe_hold(ev, ev_state_bits_reg());
	next = ev->next;
	pe->ready_head = next; /* the tail is left as it was: see pe_splice_ready */
	/* the index (engine.h) named ev first if it named any: emptied
	 * (two constant stores; moving past ev wanted its two words loaded
	 * and compared on every single get) */
	pe->index_at = pe->index_end = 0;
	return ev;
}

/* The handle of the slot @p ev handed out with @p gs (NULL for NULL),
 * made after the guard's exit: the exit's CAS wants the owner word in the
 * return register, so a handle made before it is moved there after; made
 * after it, the handle (ev_queued_handle) is a lea into the return
 * register (one `mov` a get). The empty asm on gs (nothing is executed)
 * keeps gcc from making the handle before the exit. The handle reads
 * registers and constants only, so where it is made changes no access
 * and no order. */
static inline __attribute__((always_inline)) struct doca_event *pe_handle_after_exit(struct doca_event *ev,
										      uint64_t gs)
{
	uint64_t g = gs;

	__asm__("" : "+r"(g));
	return (struct doca_event *)ev_queued_handle(ev, g);
}

/* doca_pe_get_events_ok's take (pe_take_ready), out of line: the getters'
 * other ways keep one copy of each. */
static __attribute__((noinline)) uint32_t pe_take_ready_ok(struct doca_pe *pe, struct doca_event **evs,
							    uint32_t max, bool *has_error)
{
	if (hb_watching())
		return pe_take_ready_watched(pe, evs, max, true, true, has_error);
	return pe_take_ready_watched(pe, evs, max, false, true, has_error);
}

/* The annotation flag tested once per call, not per event (it is set
 * before main). @p has_error: NULL for every ready event
 * (doca_pe_get_events, doca_pe_get_event), else doca_pe_get_events_ok's
 * (pe_take_ready_watched's ok). */
static inline uint32_t pe_take_ready(struct doca_pe *pe, struct doca_event **evs, uint32_t max, bool *has_error)
{
	if (has_error != NULL)
		return pe_take_ready_ok(pe, evs, max, has_error);
	if (hb_watching())
		return pe_take_ready_watched(pe, evs, max, true, false, NULL);
	return pe_take_ready_watched(pe, evs, max, false, false, NULL);
}

/* The getters' way for every call but a parked owner's: the handle
 * checked and the guard taken inside one read-side section
 * (pe_lookup_lock says why). Out of line: the owner's way (pe_get) keeps
 * fewer values across it. @p sectioned false only for the explorer's
 * planted bug (pe_get). @p has_error: as pe_take_ready's (here and in
 * every getter's way below). */
static __attribute__((noinline)) uint32_t pe_get_locked(struct doca_pe *ph, struct doca_event **evs,
							 uint32_t max, bool *has_error, bool sectioned)
{
	if (sectioned)
		pe_lookup_lock();
	struct doca_pe *pe = pe_of(ph);

	if (pe == NULL) {
		if (sectioned)
			pe_lookup_unlock();
		(void)HANDLE_REFUSAL(ph, MAGIC_PE); /* a stale one is logged and counted */
		return 0;
	}
	/* A worker's PE delivers through callbacks: no other thread takes its events. */
	if (evs == NULL || max == 0 || pe_worker_elsewhere(pe)) {
		if (sectioned)
			pe_lookup_unlock();
		return 0;
	}
	const void *unparked = NULL;
	enum runner_entry entry = runner_enter_from(&pe->runner, &unparked);
	/* Entered the way of a parked owner: nobody else held the guard
	 * since before this call (runner_enter_from), and only a holder kills
	 * a PE's handle (doca_pe_destroy), so h, current when pe_of looked,
	 * still is and stays so until we leave: pe_entered_current's second
	 * look is needed only after the other entries. */
	bool current = entry != RUNNER_BUSY && (unparked != NULL || pe_entered_current(ph, pe, entry));

	if (sectioned)
		pe_lookup_unlock();
	if (!current)
		return 0;
	uint32_t n = pe_take_ready(pe, evs, max, has_error);

	if (entry == RUNNER_ENTERED)
		runner_exit_from(&pe->runner, unparked);
	return n;
}

/* The owner's way of both getters after its unpark (cur) when a worker
 * claimed the PE (@p worker: has_worker as loaded) or a race detector
 * watches: the rest of pe_get's steps, in its order. Out of line, so that
 * the owner's way calls no function and needs no frame. */
static __attribute__((noinline)) uint32_t pe_get_rest(struct doca_pe *pe, const void *cur, bool worker,
						       struct doca_event **evs, uint32_t max, bool *has_error)
{
	uint32_t n = 0;

	if (!worker || worker_is_self(&pe->worker))
		n = pe_take_ready(pe, evs, max, has_error);
	runner_exit_from(&pe->runner, cur);
	return n;
}

/* The getters' owner ways: pe_get's below, and its forms for a thread in
 * no parked section with runner_owner_way (doca_pe_get_events, which
 * calls pe_get for every other thread with a record and a current
 * handle; doca_pe_get_event's pe_get_one, for max = 1). pe_get takes the
 * PE as pe_of found the handle current (@p pe) and the calling thread's
 * record @p t.
 *
 * The owner's way: no read-side section. When the calling thread t finds
 * its own parked word W in the guard and enters it by runner_unpark (not
 * nested, no revocation under way), the call needs no section to keep
 * the cell from being zeroed and handed to a new PE under it:
 *  1. pe_of(h) found h current at a time t1, before the load of W (t2).
 *  2. The owner word was W at t2 and again at the unpark's load (t3):
 *     W, a parked word of t, is written only by t parking a guard it
 *     holds (runner_exit_park; a record another thread left is inherited
 *     before t runs), never during this call, and every other writer
 *     replaces it (a revoker's CAS, the holder's exit or park, a reset).
 *     So it stayed W from t2 to t3, and until t leaves it is W or W |
 *     REVOKING (a revoker's mark, actors/runner.c "The revoking mark"):
 *     a revoker finds t in its list from the push on (runner_unpark), and
 *     waits or refuses (runner_enter_from says why), never taking it.
 *  3. A PE's handle is killed, and its cell later zeroed, only by a
 *     doca_pe_destroy that holds the guard, after a grace period. A
 *     destroy on another thread took the guard by a CAS that replaced
 *     the owner word (a revoker's, when it was W); a destroy on t enters
 *     W by runner_unpark and leaves it in place (until pe_cell_put's
 *     reset), but t is in this call, not in a destroy. Had one held it
 *     at any time from t1 on, then, the owner word would not be W at t2
 *     or after (step 2; it held it before t2 only if it took it after t1
 *     and had given it back, and then W was replaced). So h is still
 *     current at t3, and stays so, the cell unzeroed and unreused, until
 *     we leave.
 *  4. Before t3 proves that, the call reads only words that are never
 *     written by plain stores, whatever the cell's fate meanwhile (a
 *     destroy, a zeroing, a new PE): the handle head (atomics, never
 *     zeroed) and the guard's owner and revoke words (atomics; cell_put_keep
 *     leaves them to pe_cell_put's runner_reset). It writes only its own
 *     list (a stale entry there is harmless: runner.h). Cells are never
 *     given back to the allocator while the library runs (engine/cells.c:
 *     a free list, or the retired list), so every such read is of mapped
 *     memory. Everything else (the worker flag, the ready list) is read
 *     after t3.
 * The parking generation restarts nowhere (runner_reset keeps park_gen),
 * but the proof does not need W to be unique across a cell's PEs: a W
 * left by t's parking of an earlier PE in the cell is gone by step 3
 * (that PE's destroy replaced it), and a W of a later PE is written only
 * by t, never during this call; h names one PE by its tag, checked at t1.
 * Every other case (no record, not parked by t, nested, a revoker under
 * way, a stale or refused handle, a full nesting list) takes the
 * sectioned way, which looks everything up again. The owner ways
 * (doca_pe_get_event, doca_pe_get_events: runner_owner_enter) load the
 * owner word once, after their push: t2 and t3 are that one load, and W
 * is whichever unmarked parked word of t's it finds (only t's last
 * parking's can be found; actors/runner.c, "One look after the push"). */
static __attribute__((noinline)) uint32_t pe_get(struct doca_pe *ph, struct doca_pe *pe, struct runner_thread *t,
					       struct doca_event **evs, uint32_t max, bool *has_error)
{
	EXPLORE_POINT(GUARD);
	const void *cur = atomic_load_explicit(&pe->runner.owner, memory_order_relaxed);

	if (!runner_parked_by(cur, t) || runner_in_parked(&pe->runner, t) ||
	    !runner_unpark(&pe->runner, cur, t, false))
		/* the explorer's planted bug: any entry outside a section */
		return pe_get_locked(ph, evs, max, has_error, !DOCA_REVERTED("pe_get_any_entry_outside_section"));
	uint32_t n = pe_worker_elsewhere(pe) ? 0 : pe_take_ready(pe, evs, max, has_error);

	runner_exit_unparked(&pe->runner, cur, t);
	return n;
}

/* pe_get_burst for a thread without a record (the sectioned way), or
 * without runner_owner_way, or inside a parked section, or whose owner
 * way found no parked word of its own (pe_get, which looks again). */
static __attribute__((noinline)) uint32_t pe_get_no_owner_way(struct doca_pe *ph, struct doca_pe *pe,
							      struct doca_event **evs, uint32_t max,
							      bool *has_error)
{
	struct runner_thread *t = runner_me;

	if (t == NULL)
		return pe_get_locked(ph, evs, max, has_error, true);
	return pe_get(ph, pe, t, evs, max, has_error);
}

/* doca_pe_get_events (@p has_error NULL) and doca_pe_get_events_ok
 * (@p has_error its caller's, not NULL: the take's ok), one copy each:
 * pe_get's steps for a thread in no parked section with the kernel's
 * fences and no race detector (runner_owner_way), arranged as
 * doca_pe_get_event's: never nested, the entry at its list's first index,
 * no annotations, and every way that calls a function (the sectioned
 * way, a worker's PE, pe_get itself for every other thread) a tail call.
 * (The take's loop still wants callee-saved registers.) */
static inline __attribute__((always_inline)) uint32_t pe_get_burst(struct doca_pe *ph, struct doca_event **evs,
								   uint32_t max, bool *has_error)
{
	/* the flag, the record and depth 0 in one word (runner_depth_set) */
	struct runner_thread *t = runner_me_owner_way;
	struct doca_pe *pe = pe_of(ph);

	if (pe == NULL || evs == NULL || max == 0)
		return pe_get_locked(ph, evs, max, has_error, true);
	EXPLORE_POINT(GUARD);
	/* entered uncounted (runner_owner_enter): the inline way calls
	 * nothing, the rest counts the entry first; every other case (a twin:
	 * no record, no flag, or inside a parked section) pe_get_no_owner_way,
	 * whose pe_get looks again */
	const void *cur;

	if (!runner_owner_enter(&pe->runner, t, false, false, &cur))
		return pe_get_no_owner_way(ph, pe, evs, max, has_error);
	EXPLORE_POINT(ATOMIC);
	/* acquire: as pe_worker_elsewhere's */
	bool worker = !ATOMIC_IS_ZERO(&pe->has_worker, memory_order_acquire);

	if (worker) {
		runner_unparked_first_count(t);
		return pe_get_rest(pe, cur, worker, evs, max, has_error);
	}
	uint32_t n = pe_take_ready_watched(pe, evs, max, false, has_error != NULL, has_error);

	runner_exit_unparked_first(&pe->runner, cur, t);
	return n;
}

uint32_t doca_pe_get_events(struct doca_pe *ph, struct doca_event **evs, uint32_t max)
{
	return pe_get_burst(ph, evs, max, NULL);
}

/* A NULL @p has_error refuses the call as a NULL evs does (the sectioned
 * way with max 0: a stale handle logged and counted, nothing taken). */
uint32_t doca_pe_get_events_ok(struct doca_pe *ph, struct doca_event **evs, uint32_t max, bool *has_error)
{
	if (has_error == NULL)
		return pe_get_locked(ph, evs, 0, NULL, true);
	*has_error = false;
	return pe_get_burst(ph, evs, max, has_error);
}

/* doca_pe_get_event's ways that need a call, out of line (below). */
static __attribute__((noinline)) struct doca_event *pe_get_one_locked(struct doca_pe *ph, bool sectioned)
{
	struct doca_event *ev = NULL;

	return pe_get_locked(ph, &ev, 1, NULL, sectioned) == 1 ? ev : NULL;
}

/* ... and pe_get_rest for one event. */
static __attribute__((noinline)) struct doca_event *pe_get_one_rest(struct doca_pe *pe, const void *cur,
								    bool worker)
{
	struct doca_event *ev = NULL;

	(void)pe_get_rest(pe, cur, worker, &ev, 1, NULL);
	return ev;
}

static struct doca_event *pe_get_one_slow(struct doca_pe *ph, struct doca_pe *pe, struct runner_thread *t);

/* The fast form's way when its owner way is not taken (pe_get_one): with
 * runner_owner_way false (its t, runner_me_owner_way, was a twin), the slow
 * form for a thread with a record, as doca_pe_get_event chose it before
 * it read the flag with the record; else the sectioned way. */
static __attribute__((noinline)) struct doca_event *pe_get_one_other(struct doca_pe *ph, struct doca_pe *pe)
{
	struct runner_thread *t = runner_me;

	if (!runner_owner_way && t != NULL)
		return pe_get_one_slow(ph, pe, t);
	/* the explorer's planted bug: any entry outside a section */
	return pe_get_one_locked(ph, !DOCA_REVERTED("pe_get_any_entry_outside_section"));
}

/* doca_pe_get_event past its handle's check (pe found), compiled for
 * @p fast: runner_owner_way as the caller found it (the kernel's fences,
 * no race detector: no flag tested again; @p t is runner_me_owner_way),
 * or false (each tested where it is used, as pe_get does; @p t is
 * runner_me). A NULL @p t of the slow form (no record) fails
 * runner_parked_by before t is read; the fast form's twin (no record, no
 * runner_owner_way, or inside a parked section) fails runner_owner_enter. */
static inline __attribute__((always_inline)) struct doca_event *pe_get_one(struct doca_pe *ph, struct doca_pe *pe,
									   struct runner_thread *t, bool fast)
{
	EXPLORE_POINT(GUARD);
	const void *cur;

	/* pe_get's entry for a thread in no parked section (depth 0: not
	 * nested in ours, its entry the list's first; runner_unpark_at),
	 * every other depth the sectioned way (the fast form's t,
	 * runner_me_owner_way, is a twin at any other depth) */
	/* entered uncounted (runner_unpark_first, the fast form's
	 * runner_owner_enter): the inline way calls nothing, the rest counts
	 * the entry first */
	if (fast) {
		if (!runner_owner_enter(&pe->runner, t, false, false, &cur))
			return pe_get_one_other(ph, pe);
	} else if (cur = atomic_load_explicit(&pe->runner.owner, memory_order_relaxed),
		   !runner_parked_by(cur, t) || runner_nested(t) ||
			   !runner_unpark_first(&pe->runner, cur, t, false, false)) {
		/* the explorer's planted bug: any entry outside a section */
		return pe_get_one_locked(ph, !DOCA_REVERTED("pe_get_any_entry_outside_section"));
	}
	EXPLORE_POINT(ATOMIC);
	/* acquire: as pe_worker_elsewhere's */
	bool worker = !ATOMIC_IS_ZERO(&pe->has_worker, memory_order_acquire);

	if (worker || (!fast && hb_watching())) {
		runner_unparked_first_count(t);
		return pe_get_one_rest(pe, cur, worker);
	}
	uint64_t gs;
	struct doca_event *ev = pe_take_ready_one(pe, &gs);

	runner_exit_unparked_first(&pe->runner, cur, t);
	return pe_handle_after_exit(ev, gs);
}

/* ... without the kernel's fences or with a race detector watching. */
static __attribute__((noinline)) struct doca_event *pe_get_one_slow(struct doca_pe *ph, struct doca_pe *pe,
								    struct runner_thread *t)
{
	return pe_get_one(ph, pe, t, false);
}

/* pe_get for one event, with every way that calls a function (the
 * sectioned way, a worker's PE, a race detector's annotations, a kernel
 * without membarrier) a tail call, so the owner's way keeps its values in
 * registers the caller may clobber and the function needs no frame (no
 * register saved or restored). The same steps in the same order as
 * pe_get (the load of has_worker is pe_worker_elsewhere's, split from its
 * worker_is_self), but for a thread inside any parked section (a
 * callback, or a call inside another PE's section), which takes the
 * sectioned way: the unparked way here enters at its list's first entry
 * only. Both flags are tested once, before the entry (runner_owner_way,
 * read with the record as runner_me_owner_way). */
struct doca_event *doca_pe_get_event(struct doca_pe *ph)
{
	/* the flag and the record in one word: a twin sends the fast form to
	 * pe_get_one_other, which tests the flag */
	struct runner_thread *t = runner_me_owner_way;
	struct doca_pe *pe = pe_of(ph);

	if (pe == NULL)
		return pe_get_one_locked(ph, true);
	return pe_get_one(ph, pe, t, true);
}

doca_error_t doca_pe_get_notification_handle(struct doca_pe *ph, int *fd)
{
	HANDLE_READ(pe_of, MAGIC_PE, ph, fd, DOCA_SUCCESS, obj->epfd);
}

static void pe_close_fds(struct doca_pe *pe)
{
	close(pe->evfd);
	close(pe->epfd);
}

/* The fds go with the memory: a waker still inside its read-side section
 * (a submit, a stop handing over, an engine thread's completion) may be
 * about to write the eventfd, and a number closed earlier could already
 * name the application's next file. */
static void pe_free_rcu(struct rcu_head *head)
{
	struct doca_pe *pe = caa_container_of(head, struct doca_pe, rcu);

	DOCA_RCU_CALLBACK_ENTER(head);
	if (!DOCA_REVERTED("pe_fd_close_early"))
		pe_close_fds(pe);
	pe_ready_fini(pe); /* after every signaller's read-side section */
	doca_free(pe->members);
	pe_cell_put(pe);
}

doca_error_t doca_pe_destroy(struct doca_pe *ph)
{
	doca_error_t err = DOCA_SUCCESS;
	struct doca_pe *pe;

	/* The read-side section keeps the PE while we look: a concurrent
	 * destroy that wins hands its cell on only after a grace period. */
	doca_rcu_read_lock();
	pe = pe_of(ph);
	if (pe == NULL) {
		doca_rcu_read_unlock();
		return HANDLE_REFUSAL(ph, MAGIC_PE);
	}
	/* Holding the guard proves no turn is running (and none starts). */
	if (runner_enter(&pe->runner) != RUNNER_ENTERED) {
		doca_rcu_read_unlock();
		return DOCA_ERROR_IN_USE;
	}
	pthread_mutex_lock(&g_config_lock);
	EXPLORE_POINT(ATOMIC);
	/* a concurrent destroy won: destroyed twice, refused (and counted) as
	 * a stale handle is, below, once the lock is let go */
	bool gone = pe_of(ph) != pe;

	if (gone)
		err = DOCA_ERROR_INVALID_VALUE;
	else if (atomic_load_explicit(&pe->members->count, memory_order_relaxed) != 0 ||
		 !pe_retire_unless_worker(pe))
		err = DOCA_ERROR_IN_USE;
	pthread_mutex_unlock(&g_config_lock);
	runner_exit(&pe->runner);
	doca_rcu_read_unlock();
	if (gone && !DOCA_REVERTED("pe_destroy_refusal_uncounted"))
		return HANDLE_REFUSAL(ph, MAGIC_PE);
	if (err != DOCA_SUCCESS)
		return err;
	worker_fini(&pe->worker); /* workers stopped before they ran: joined now */
	if (DOCA_REVERTED("pe_fd_close_early"))
		pe_close_fds(pe);
	doca_call_rcu(&pe->rcu, pe_free_rcu);
	live_destroyed(LIVE_PE, 0);
	return DOCA_SUCCESS;
}
