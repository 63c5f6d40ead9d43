/*
 * engine/task.c — doca_task_submit(_batch): the one entry point from any
 * thread.
 *
 * Lock-free: validate, then inside an RCU read-side section (the PE
 * owner's single submit: its brief guard, below) check RUNNING, pin the
 * buffers, take a credit (a free event slot) and hand the tasks over in
 * chunks:
 *
 * - from any thread, through a ring (engine/ring.c, ring21 step 1): each
 *   task an entry of its thread's SP ring (the exclusive holder of a
 *   thread slot below RING_SP) or of the run's MP ring, carrying the slot
 *   its credit popped, which the PE fills; the write cannot fail (credits
 *   bound what a ring holds) and never waits for another submitter; then,
 *   unless the PE watches the caller's SP ring (engine/ring.c, the watch:
 *   its visits look at that ring with no announce), the announce
 *   (mailbox_announce of the caller's shard) and the wake check, and the
 *   PE's next feed posts them. A thread's first submit
 *   into a run makes its ring: the only allocation of the way, made
 *   outside the read-side section (task_ring_make);
 * - from the PE's own thread (the one that ran its last turn), straight to
 *   the queue pair, as that turn would, when the PE is not running a turn,
 *   the context still runs and nothing waits in the mailbox or the rings
 *   (mailbox_idle, ring_own_drained: so a task of ours queued there earlier still reaches
 *   the device first, engine/ring.c I7). This saves
 *   the ring round trip for the common "submit and progress on one
 *   thread" shape; the runner guard, taken briefly for the chunk
 *   (actors/runner.h), keeps it exclusive with turns without ever making
 *   another thread's call on the PE a refusal. That thread keeps the guard
 *   parked between its calls, so taking it is no atomic read-modify-write,
 *   and under it the buffers are pinned the same way (engine/buf.c): the
 *   owner fast path;
 * - from any thread while the PE sleeps armed in event mode (and no worker
 *   runs it), the same way, with the same look (mailbox_idle): the PE
 *   would only wake to move the tasks out of the rings, so the
 *   completion's wake-up is the only one.
 *
 * For an inline device (only a turn runs it) a chunk of fewer than
 * TASK_DEFER_BELOW tasks is not posted but left in the run's backlog,
 * which the next turn posts before anything newer, a chunk of up to 32 at
 * a time: the per-task loop then pays one device post per turn, not one
 * per task, and nothing the application can see changes (the same turn
 * runs them, in the same order). A device that runs descriptors at once
 * (hw_qp.executes_at_once) gets every chunk that way: the turn hands the
 * backlog to it to execute, with no post, ring or poll per task. A chunk prepared under the guard while
 * the backlog holds tasks (the device refused some) joins it too, so
 * nothing overtakes them. Either way the chunk queues its context for
 * the next turn as the ready set's consumer, which the guard makes us,
 * so it pays no fence (task_queue_visit).
 *
 * The owner's single submit takes no read-side section (task_one_owner):
 * doca_task_submit from the thread that finds its own parked word W in
 * the guard of the context's PE and enters it by runner_unpark (not
 * nested, no revoker or quiesce under way). What the section did, and
 * what does it instead:
 *  - before the guard, the call reads only words never written by plain
 *    stores, whatever the cells' fate: the context's handle head (its
 *    kind only, magic and epoch: the generation and the state only choose
 *    the way, and are checked under the guard) and PE (CTX_CELL_KEEP,
 *    reset atomically at the put), the PE's guard words (engine/pe.c,
 *    pe_get, says why the guard entered is W's);
 *  - under the guard it reads RUNNING (acquire: after the start's
 *    connect) and the handle's generation again (current now, so
 *    current at both loads; a kill is for ever). The context's PE needs
 *    no second look: within a generation it is written once, NULL to
 *    the PE, by doca_pe_connect_ctx (which refuses a context that has
 *    one: NOT_PERMITTED), and set NULL again only by the destroy
 *    (doca_ctx_destroy, before handle_kill) and the cell's put, both
 *    before the next generation; the load before the guard found it not
 *    NULL in the generation the handle compare finds current, so it is
 *    that generation's one PE, whose guard we hold. Its magic and epoch,
 *    found a live context's of this process before the guard, need no
 *    second look: only a kill changes them (handle_kill: DEAD, then the
 *    next generation) and then a create in the cell (a new generation
 *    again), and a kill comes after its context is IDLE
 *    (doca_ctx_destroy). A context found RUNNING under the guard is not
 *    made IDLE before we leave (below), so not killed either; a kill
 *    before that load made the context IDLE first (a turn or a stop whose
 *    quiesce we follow: engine/ctx_run.c), so the RUNNING we read is a
 *    later start's, which came after the create of a new generation that
 *    our generation compare then sees. A RUNNING context keeps its run
 *    while we hold the guard: a run is retired by a turn (which takes
 *    the guard) or by a stop after runner_quiesce_fenced and a second
 *    count, which waited for our brief section and counted our credit, or
 *    made us see STOPPING (engine/ctx_run.c); so
 *    ctx->run is read plainly, and the context and its PE stay;
 *  - the buffers' handles are checked only under the guard, each after
 *    its role's context copy (src_ctx or dst_ctx, BUF_CELL_KEEP) is found
 *    to be ours (task_buf_owned); a buffer of ours is handed on only after its
 *    destroy waits out our brief sections (engine/buf.c,
 *    buf_quiesce_owner), and one destroyed before we entered is seen
 *    dead; so its fields and counts are read, and pinned, as under the
 *    section;
 *  - after the guard goes no stop or destroy waits for us, so the tail's
 *    system calls (hw_qp_kick, pe_wake_fenced) run inside a section
 *    entered before it goes (task_post_guarded); the inline device's
 *    deferred post has neither.
 * Any look that fails (no record, not parked by us, nested, a revoker or
 * quiesce under way, not RUNNING, another PE, a stale handle, not the
 * PE's thread, a fatal or flushing run, a mailbox not idle, a buffer not
 * ours or stale) leaves the guard with nothing changed, and the whole call
 * is made the sectioned way (task_submit_sectioned), which answers it.
 * The explorer's owner_submit_destroy undoes each half
 * (DOCA_EXPLORE_REVERT=buf_destroy_no_quiesce, owner_submit_no_recheck).
 *
 * A burst shares one read-side section (left only to make a ring, after
 * the wake check for what it wrote so far), one announce per chunk and
 * one wake check.
 * The wake check runs after every burst that pushed, not only after a
 * push into an empty shard: a shard that held an item when we pushed may
 * have been drained, and its PE armed, before our push became visible. A
 * burst posted directly needs none: the device's completion wakes the PE,
 * or (inline device) the post queued its context and, if the PE was armed,
 * woke it.
 */
#include "engine/buf_pin.h"
#include "engine/engine.h"
#include "engine/ring.h"
#include "engine/task_pool.h"

#define TASK_FLAGS_KNOWN ((uint32_t)DOCA_TASK_FLAG_ALLOW_PARTIAL)
#define SUBMIT_CHUNK 32u /* events handed over at once */
#define TASK_DEFER_BELOW 8u /* smaller chunks for an inline device wait for the turn */

/* Is the aligned 64-bit atomic word at @p word @p v? A relaxed load and
 * a compare. With OWNED_RMW_ASM (engine/engine.h: x86-64, not the TSan
 * or explorer builds, which keep the C11 loads their tools watch) it is
 * one `cmp` with the word as its memory operand, a single-copy atomic
 * load as the relaxed one is (gcc keeps an atomic load apart from its
 * compare: two instructions); the "memory" clobber makes it a compiler
 * barrier, so it is ordered with the accesses around it at least as the
 * load was. The buffers' handle checks and context compares are made of
 * it (task_buf_of, task_buf_owned, task_buf_in). */
static inline __attribute__((always_inline)) bool task_word_is(const void *word, uint64_t v)
{
#ifdef OWNED_RMW_ASM
	bool eq;

	__asm__ volatile("cmpq %2, %1" : "=@cce"(eq) : "m"(*(const uint64_t *)word), "er"(v) : "memory");
	return eq;
#else
	return __atomic_load_n((const head_pair_t *)word, __ATOMIC_RELAXED) == v;
#endif
}

#ifdef OWNED_RMW_ASM
/* task_word_is for an aligned 32-bit atomic word: is it @p v (cmpl), or
 * has it a bit of @p mask (testl)? The same load, for the loads of the
 * owner's way below (an x86 load is an acquire too, so ctx_state's
 * acquire is kept: the clobber keeps later accesses after it). */
static inline __attribute__((always_inline)) bool task_word32_is(const void *word, uint32_t v)
{
	bool eq;

	__asm__ volatile("cmpl %2, %1" : "=@cce"(eq) : "m"(*(const uint32_t *)word), "ir"(v) : "memory");
	return eq;
}

static inline __attribute__((always_inline)) bool task_word32_has(const void *word, uint32_t mask)
{
	bool nz;

	__asm__ volatile("testl %2, %1" : "=@ccnz"(nz) : "m"(*(const uint32_t *)word), "ir"(mask) : "memory");
	return nz;
}
#endif

/* ctx_state(ctx) == DOCA_CTX_STATE_RUNNING, its acquire load made of
 * task_word32_is. */
static inline __attribute__((always_inline)) bool task_ctx_running(const struct doca_ctx *ctx)
{
#ifdef OWNED_RMW_ASM
	return task_word32_is(&ctx->state, DOCA_CTX_STATE_RUNNING);
#else
	return ctx_state(ctx) == DOCA_CTX_STATE_RUNNING;
#endif
}

/* buf_of_folded, made of task_word_is: a live buffer of this epoch with
 * h's generation when its handle word is h folded (buf_word_made). */
static inline __attribute__((always_inline)) struct doca_buf *task_buf_of(const struct doca_buf *h, uint64_t buf_fold)
{
#ifdef OWNED_RMW_ASM
	struct doca_buf *o = handle_addr(h);

	if (o == NULL || !task_word_is(&o->handle, buf_word_made(h, buf_fold)))
		return NULL;
	return o;
#else
	return buf_of_folded(h, buf_fold);
#endif
}

#ifdef OWNED_RMW_ASM
/* task_buf_of for a CPU with BMI1 (task_cpu_has_andn): the address as one
 * andn of h's tag bits (@p tags, ~HANDLE_ADDR_MASK, which the caller's
 * loop keeps in a register), its flags the NULL test; handle_addr's and
 * wanted a copy of h first (h is compared after it): one instruction a
 * handle less. An operation on registers only, no memory access: the
 * same answers as task_buf_of. */
static inline __attribute__((always_inline)) struct doca_buf *task_buf_of_andn(const struct doca_buf *h,
									       uint64_t buf_fold, uintptr_t tags)
{
	struct doca_buf *o;
	bool none;

	__asm__("andn %[h], %[tags], %[o]" : [o] "=r"(o), "=@ccz"(none) : [h] "r"(h), [tags] "r"(tags));
	if (none)
		return NULL;
	if (o == NULL)
		__builtin_unreachable(); /* the flag said so: the caller's NULL test is known */
	return task_word_is(&o->handle, buf_word_made(h, buf_fold)) ? o : NULL;
}

/* Has this CPU BMI1's andn (task_buf_of_andn)? One test of libgcc's CPU
 * model, once a chunk. */
static inline __attribute__((always_inline)) bool task_cpu_has_andn(void)
{
	return __builtin_cpu_supports("bmi");
}
#else
static inline __attribute__((always_inline)) bool task_cpu_has_andn(void)
{
	return false;
}
#endif

/* task_buf_of, or task_buf_of_andn when @p andn (a constant of the
 * caller's instance). */
static inline __attribute__((always_inline)) struct doca_buf *task_buf_of_as(const struct doca_buf *h,
									     uint64_t buf_fold, bool andn)
{
#ifdef OWNED_RMW_ASM
	if (andn)
		return task_buf_of_andn(h, buf_fold, ~(uintptr_t)HANDLE_ADDR_MASK);
#else
	(void)andn;
#endif
	return task_buf_of(h, buf_fold);
}

/* @p buf's context as a source (@p as_src) or a destination: its src_ctx
 * or dst_ctx word (engine/engine.h). */
static inline __attribute__((always_inline)) const _Atomic(const struct doca_ctx *) *
task_role_word(const struct doca_buf *buf, bool as_src)
{
	return as_src ? &buf->src_ctx : &buf->dst_ctx;
}

/* Is @p buf's context as a source (@p as_src) or a destination @p ctx? A
 * word fixed while the caller's handle check stands (a read-side section
 * or the guard's brief one): with OWNED_RMW_ASM one `cmp` with the word
 * as its memory operand, no clobber (gcc keeps an atomic load apart from
 * its compare); the owner's ordered look is task_buf_owned's. */
static inline __attribute__((always_inline)) bool task_role_is(const struct doca_buf *buf, bool as_src,
							       const struct doca_ctx *ctx)
{
#ifdef OWNED_RMW_ASM
	bool eq;

	__asm__("cmpq %2, %1" : "=@cce"(eq) : "m"(*(const uintptr_t *)task_role_word(buf, as_src)), "r"(ctx));
	return eq;
#else
	return atomic_load_explicit(task_role_word(buf, as_src), memory_order_relaxed) == ctx;
#endif
}

/* Is @p dst's length below @p len? A buffer's len is a plain field fixed
 * from its create on; with OWNED_RMW_ASM (x86-64) the compare takes it as
 * its memory operand: gcc loaded it into a register for the partial
 * copy's use as well (a load, then the compare: one instruction more per
 * task on the common way, where it is not used again). */
static inline __attribute__((always_inline)) bool task_len_below(const struct doca_buf *dst, uint64_t len)
{
#ifdef OWNED_RMW_ASM
	bool below;

	__asm__("cmpq %2, %1" : "=@ccb"(below) : "m"(dst->len), "r"(len));
	return below;
#else
	return dst->len < len;
#endif
}

/* desc->type == DOCA_TASK_COPY. With OWNED_RMW_ASM (x86-64) one cmpl with
 * the field in memory (the application's plain field: no volatile, no
 * clobber, as the plain load): on the owner's single way gcc loaded it
 * into a register first, one instruction more per task. */
static inline __attribute__((always_inline)) bool task_type_is_copy(const struct doca_task_desc *desc)
{
#ifdef OWNED_RMW_ASM
	bool eq;

	__asm__("cmpl %2, %1" : "=@cce"(eq) : "m"(desc->type), "i"(DOCA_TASK_COPY));
	return eq;
#else
	return desc->type == DOCA_TASK_COPY;
#endif
}

/* task_pin's checks' common way: true (with *len) if the task passes every
 * check, the buffers' own ones and their context compares made by one
 * compare each of their src_ctx / dst_ctx words (engine.h: the context,
 * or NULL if a check naming the buffer fails); false if one may fail: then
 * the full checks give the answer. @p roles_known: the caller compared
 * both words with ctx already (task_buf_owned, the owner's single way),
 * so they are not compared again. */
static inline __attribute__((always_inline)) bool
task_check_fast(const struct doca_ctx *ctx, const struct doca_task_desc *desc, const struct doca_buf *src,
		const struct doca_buf *dst, bool roles_known, uint64_t *len)
{
	if (!task_type_is_copy(desc) || (desc->flags & ~TASK_FLAGS_KNOWN) != 0 ||
	    (!roles_known && (!task_role_is(src, true, ctx) || !task_role_is(dst, false, ctx))))
		return false;
	/* one compare of the lengths: the whole source (the common case,
	 * its length at hand); a partial copy takes the full checks */
	uint64_t src_len = src->len;

	if (task_len_below(dst, src_len))
		return false;
	*len = src_len;
	return true;
}

/* The argument checks that come after the state check, in contract
 * order, when task_check_fast did not pass them: out of line (inline, gcc
 * shared their loads with the fast way's, loaded the source's length and
 * the flags before the fast way's compares and kept the length in memory).
 * @p ctx_known: the caller found both buffers' contexts ctx already
 * (task_buf_owned, under the guard: a buffer's context is written only by
 * its create, and another create in its cell needs a destroy, which waits
 * out our brief section; so a second load could only find ctx again). */
static __attribute__((noinline, cold)) doca_error_t task_check_full(const struct doca_ctx *ctx,
								    const struct doca_task_desc *desc,
								    const struct doca_buf *src,
								    const struct doca_buf *dst, bool ctx_known,
								    uint64_t *len)
{
	if (desc->type != DOCA_TASK_COPY || (desc->flags & ~TASK_FLAGS_KNOWN) != 0 || src->len == 0 ||
	    dst->len == 0 ||
	    (!ctx_known && (buf_ctx(src) != ctx || buf_ctx(dst) != ctx))) /* (the buffers' copies of their memories') */
		return DOCA_ERROR_INVALID_VALUE;
	if (src->remote && dst->remote) /* one RMA has one remote side */
		return DOCA_ERROR_NOT_SUPPORTED;
	if ((src->access & DOCA_ACCESS_FLAG_READ) == 0 || (dst->access & DOCA_ACCESS_FLAG_WRITE) == 0)
		return DOCA_ERROR_NOT_PERMITTED;
	if (dst->len < src->len && (desc->flags & DOCA_TASK_FLAG_ALLOW_PARTIAL) == 0)
		return DOCA_ERROR_INVALID_VALUE;
	*len = dst->len < src->len ? dst->len : src->len;
	return DOCA_SUCCESS;
}

/* A task of a chunk, validated and pinned, waiting for its credit; with
 * its event's outcome as the device's whole copy of len bytes gives it
 * (the fill stores it: task_fill), zero (DOCA_SUCCESS, SUCCESS) but for an
 * ALLOW_PARTIAL copy to a short destination (task_pin_partial). */
struct task_pinned {
	struct doca_buf *src, *dst;
	uint64_t len;
	doca_error_t error;
	uint32_t status; /* enum doca_event_status */
};

/* Guarded pins of src and dst counted, and a DEAD found by
 * buf_pin_guarded_alive (@p src_stood: the source's look passed, the
 * destination's did not): take both back, the one that stood as a task's
 * unpin. Returns the refusal. */
static inline __attribute__((always_inline)) doca_error_t task_pins_back(struct doca_buf *src, struct doca_buf *dst,
									 bool src_stood)
{
	buf_pin_guarded_undo(dst);
	if (src_stood)
		buf_unpin(src, true);
	else
		buf_pin_guarded_undo(src);
	return DOCA_ERROR_INVALID_VALUE;
}

/* Validate and pin one task (under the guard when @p guarded); @p first:
 * the chunk's first task, which also looks at the pool; @p kernel: the
 * caller found asym_fence_kernel true (asym_fence_light_known). */
static inline __attribute__((always_inline)) doca_error_t task_pin(struct doca_ctx *ctx, struct ctx_run *run,
				    const struct doca_task_desc *desc, struct doca_buf *src,
				    struct doca_buf *dst, bool guarded, bool first, bool kernel,
				    struct task_pinned *out)
{
	uint64_t len;

	/* stored before the pins, which the caller counts only if they
	 * stand: then len is no value kept across them */
	if (task_check_fast(ctx, desc, src, dst, false, &len)) {
		*out = (struct task_pinned){ .src = src, .dst = dst, .len = len };
	} else {
		doca_error_t err = task_check_full(ctx, desc, src, dst, false, &out->len);

		if (err != DOCA_SUCCESS)
			return err;
		out->src = src;
		out->dst = dst;
		/* the partial copy's outcome, which the turn's execute no longer
		 * tells by len against the source's (it copies len bytes) */
		bool partial = out->len < src->len;

		out->error = partial ? DOCA_ERROR_TOO_BIG : DOCA_SUCCESS;
		out->status = partial ? DOCA_EVENT_STATUS_PARTIAL : DOCA_EVENT_STATUS_SUCCESS;
	}
	if (guarded) {
		/* both pins counted, one fence, then both looks, in the order
		 * of two whole pins: the same answers (engine/buf_pin.h) */
		buf_pin_guarded_store(src);
		buf_pin_guarded_store(dst);
		asym_fence_light_known(kernel); /* our pins are visible before we look for DEAD (engine/buf.c) */
		unsigned dead = buf_pin_guarded_dead_pair(src, dst);

		if (dead != 0)
			return task_pins_back(src, dst, dead == 2);
	} else {
		/* An empty pool refuses another thread's chunk before its
		 * pins: a submitter retrying on AGAIN (spinning until the PE
		 * frees) then reads the pool's line and never writes the
		 * buffers' lines the PE unpins. (Pins under the guard are the
		 * holder's own counts: nothing shared.) */
		if (first && task_pool_all_out(&run->pool)) /* exact (engine/task_pool.h) */
			return DOCA_ERROR_AGAIN;
		if (!buf_pin_shared(src))
			return DOCA_ERROR_INVALID_VALUE;
		if (!buf_pin_shared(dst)) {
			buf_unpin(src, false);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	return DOCA_SUCCESS;
}

/* The handles, checks and pins of a chunk's tasks after its first (which
 * passed them, and the state): tasks 1 to n - 1 into tp while they pass,
 * then *err says why the next did not (DOCA_SUCCESS: none failed).
 * Returns the tasks pinned, the first counted. */
static inline __attribute__((always_inline)) uint32_t
task_pin_more(struct doca_ctx *ctx, struct ctx_run *run, const struct doca_task_desc *descs, uint32_t n,
	      uint64_t buf_fold, bool guarded, bool kernel, struct task_pinned *tp, doca_error_t *err)
{
	/* walked by pointers, the count made once at the end: no index
	 * beside them (one add a task less) */
	const struct doca_task_desc *d = descs + 1, *end = descs + n;
	struct task_pinned *out = tp + 1;

	for (; d < end; d++, out++) {
		struct doca_buf *src = task_buf_of(d->src, buf_fold), *dst;

		if (src == NULL) {
			*err = HANDLE_REFUSAL(d->src, MAGIC_BUF);
			break;
		}
		if ((dst = task_buf_of(d->dst, buf_fold)) == NULL) {
			*err = HANDLE_REFUSAL(d->dst, MAGIC_BUF);
			break;
		}
		if ((*err = task_pin(ctx, run, d, src, dst, guarded, false, kernel, out)) != DOCA_SUCCESS)
			break;
	}
	return (uint32_t)(d - descs);
}

/* Take a credit for each of the k pinned tasks, in as few atomic steps as
 * the pool allows; the tasks left without one are unpinned. Returns how
 * many got one (*why says why the others did not: AGAIN, or NO_MEMORY for
 * a chunk of slots). Under the guard each comes with its slot (evs);
 * without it (a ring's tasks) only the credits are taken, against the
 * cached returned @p ret_seen (task_pool_take_credits), and the PE's
 * feed pops the slots. @p kernel: as task_pin's. */
static inline __attribute__((always_inline)) uint32_t task_take_credits(struct ctx_run *run, const struct task_pinned *tp,
					 uint32_t k, bool guarded, bool kernel, struct doca_event **evs,
					 uint64_t *ret_seen, doca_error_t *why)
{
	uint32_t got = 0, m;

	if (!guarded)
		got = k == 0 ? 0 : task_pool_take_credits(&run->pool, k, ret_seen, why);
	while (guarded && got < k && (m = task_pool_take_as(&run->pool, &evs[got], k - got, kernel, why)) != 0)
		got += m;
	for (uint32_t i = got; i < k; i++) {
		buf_unpin(tp[i].dst, guarded);
		buf_unpin(tp[i].src, guarded);
	}
	return got;
}

/* Fill a slot taken for a pinned task (@p user_data: its descriptor's);
 * @p watched: hb_watching(), tested
 * once for a chunk (set before main, it cannot change between its tasks),
 * so the annotations of a chunk's fills cost one test, not two per task,
 * when no race detector watches. */
static inline __attribute__((always_inline)) void task_fill(struct doca_event *ev, const struct task_pinned *t,
							    union doca_data user_data, bool guarded, bool watched)
{
	TSAN_ACQUIRE(ev);
	if (watched)
		hb_acquire(ev); /* the slot's last free happens before its reuse */
	ev_set_queued_from_free(ev); /* a taken slot is FREE */
	ev->pins = guarded ? EV_PINS_GUARDED : EV_PINS_SHARED;
	/* (no type: DOCA_TASK_COPY, the one type task_pin lets through,
	 * was written when the slot was made, engine/task_pool.c chunk_make;
	 * no bytes: every completion writes them, event_flush and
	 * event_from_cqe and the turn's execute, before anyone can read
	 * them; and no flags: ALLOW_PARTIAL is decided by the checks, and the
	 * outcome below is what it means for a whole copy of len bytes) */
	/* the outcome of the device's whole copy of len bytes (one store, a
	 * constant for a task the fast checks passed: zero): the turn's
	 * execute, which makes that copy, stores none (engine/pe_progress.c),
	 * and every other completion overwrites it */
	ev->error = t->error;
	ev->status = t->status;
	ev->src = t->src;
	ev->dst = t->dst;
	ev->len = t->len;
	ev->user_data = user_data;
	if (watched)
		hb_release(ev); /* the caller's writes happen before the device's accesses */
}

static __attribute__((noinline)) uint32_t
task_pin_take_fill_rest(struct doca_ctx *ctx, struct ctx_run *run, const struct doca_task_desc *descs, uint32_t n,
			uint64_t buf_fold, bool kernel, struct task_pinned *tp, struct doca_event **evs, uint32_t filled,
			bool plain, doca_error_t *err, doca_error_t *why, uint32_t *k);

/* task_pin_take_fill_guarded's one loop, out of line: inline, gcc kept
 * the context and the pop's bound and count on the stack and copied the
 * last slot (the caller's values live across the loop took the
 * registers), ~5 instructions a task; here the loop has the registers to
 * itself for the one call a chunk. From @p d on (the task after the one @p ev was
 * popped and filled for), each task is handled, checked and pinned, then
 * popped (@p pp) and filled, its slot linked to the next one popped (the
 * stack's own link, task_pool.c "The link word"), while the pop has more; a stale handle, a task the fast checks do not pass
 * or a DEAD look (then *err) ends it. Returns the last slot filled. */
static inline __attribute__((always_inline)) struct doca_event *
task_pop_fill_loop_as(const struct doca_ctx *ctx, const struct doca_task_desc *d, uint64_t buf_fold, bool kernel,
		      bool andn, struct pool_pop *pp, struct doca_event *ev, doca_error_t *err)
{
	/* in registers: the count the steps change is loaded once and stored
	 * once, at the end (h is not needed here); the slot the next step
	 * takes is the last filled slot's link, which the stack left there
	 * (pool_pop_under: the popped slots stay linked in their pop order,
	 * the chunk's, task_pool.c "The link word"), so no step stores it */
	struct pool_pop q = { .most = pp->most, .left = pp->left };

	/* (d is descs + the slots taken, fewer than q.most <= n while the
	 * pop has more: no test of d against the chunk's end, nor of the
	 * stack's bottom, which holds q.most slots or more; and no exit
	 * but pool_pop_more's between a step and its count, so at every exit
	 * pool_pop_taken is the steps made) */
	for (; pool_pop_more(&q); d++) {
		struct doca_buf *src = task_buf_of_as(d->src, buf_fold, andn), *dst;
		uint64_t len;

		/* a stale handle, or a task that the fast checks do not
		 * pass, ends the loop: the rest's pins then make its answer
		 * (after pool_pop_end: a refusal logs) */
		if (src == NULL || (dst = task_buf_of_as(d->dst, buf_fold, andn)) == NULL ||
		    !task_check_fast(ctx, d, src, dst, false, &len))
			break;
		/* task_pin's, guarded */
		buf_pin_guarded_store(src);
		buf_pin_guarded_store(dst);
		asym_fence_light_known(kernel); /* our pins are visible before we look for DEAD (engine/buf.c) */
		unsigned dead = buf_pin_guarded_dead_pair(src, dst);

		if (dead != 0) {
			*err = task_pins_back(src, dst, dead == 2);
			break;
		}
		ev = pool_pop_under(ev);
		task_fill(ev, &(const struct task_pinned){ .src = src, .dst = dst, .len = len }, d->user_data, true,
			  false);
	}
	pp->ev = atomic_load_explicit(&ev->pool_next_ev, memory_order_relaxed); /* the new top */
	pp->left = q.left;
	return ev;
}

/* task_pop_fill_loop_as compiled for each value of @p kernel (one test a
 * chunk, not one a task), and with OWNED_RMW_ASM for the kernel's fence
 * on a CPU with andn too (task_cpu_has_andn, one more test a chunk; the
 * light fence's hosts, kernels without the expedited membarrier, keep
 * the one instance), with no padding before the loop's head: gcc
 * aligns it, and the pass that falls into it from the last one's exit
 * tests then runs the padding's nop (one a task, as the fill's size
 * makes it). */
#if defined(__GNUC__) && !defined(__clang__)
#define TASK_LOOP_UNPADDED __attribute__((optimize("align-loops=1")))
#else
#define TASK_LOOP_UNPADDED
#endif
static __attribute__((noinline)) TASK_LOOP_UNPADDED struct doca_event *
task_pop_fill_loop_kernel(const struct doca_ctx *ctx, const struct doca_task_desc *d, uint64_t buf_fold,
			  struct pool_pop *pp, struct doca_event *ev, doca_error_t *err)
{
	return task_pop_fill_loop_as(ctx, d, buf_fold, true, false, pp, ev, err);
}

#ifdef OWNED_RMW_ASM
static __attribute__((noinline)) TASK_LOOP_UNPADDED struct doca_event *
task_pop_fill_loop_kernel_andn(const struct doca_ctx *ctx, const struct doca_task_desc *d, uint64_t buf_fold,
			       struct pool_pop *pp, struct doca_event *ev, doca_error_t *err)
{
	return task_pop_fill_loop_as(ctx, d, buf_fold, true, true, pp, ev, err);
}
#else
#define task_pop_fill_loop_kernel_andn task_pop_fill_loop_kernel /* never called: task_cpu_has_andn is false */
#endif

static __attribute__((noinline)) TASK_LOOP_UNPADDED struct doca_event *
task_pop_fill_loop_light(const struct doca_ctx *ctx, const struct doca_task_desc *d, uint64_t buf_fold,
			 struct pool_pop *pp, struct doca_event *ev, doca_error_t *err)
{
	return task_pop_fill_loop_as(ctx, d, buf_fold, false, false, pp, ev, err);
}

/* The pins of a chunk's tasks after its first, with task_take_credits and
 * the fills, under the guard when no race detector watches (@p kernel: as
 * task_pin's): tp[0] is the first task, pinned by the caller, and the
 * rest pinned here (tasks 1 to n - 1 while they pass; *err says why the
 * next did not, *k counts those pinned, the first too). When the first
 * take pops the owner's stack plainly, each task is handled, checked and
 * pinned, then popped and filled, in one loop (task_pop_fill_loop_as,
 * out of line, its pops pool_pop_under's): its slot
 * linked to the next one popped, as run_defer wants them (the stack's
 * own links); the loop ends
 * at a refusal, at the end of the chunk, or when the stack or the credits
 * run out, and the tasks after it are pinned, taken and filled as
 * task_pin_more, task_take_credits and task_chunk's fill loop do. Any
 * other first take (the pool shared, no slot on the stack) pins them all,
 * then takes. The same takes, fills, links and answers as pinning the
 * whole chunk first, then taking (a task refused has no credit, and the
 * first task without one is refused with the take's reason, before a
 * later refusal), and no credit is held unused: a slot is popped only for
 * a task whose pins stood. The pins and looks inside the plain update
 * (between pool_plain_begin_as and pool_pop_end) touch only the buffers
 * and our own popped slots, which no pool switch reads; a switcher that
 * waits for busy waits out at most the chunk's checks and pins, which
 * wait for nothing and call nothing but the loop's one function (a handle refusal, which logs, is
 * made after pool_pop_end). Of the popped events only the first and the
 * last are stored in evs: the chunk's events are linked, and
 * task_post_guarded, their one reader, reads evs[0] and evs[n - 1] and
 * walks the links. */
static inline __attribute__((always_inline)) uint32_t
task_pin_take_fill_guarded(struct doca_ctx *ctx, struct ctx_run *run, const struct doca_task_desc *descs,
			   uint32_t n, uint64_t buf_fold, bool kernel, struct task_pinned *tp, struct doca_event **evs,
			   doca_error_t *err, doca_error_t *why, uint32_t *k)
{
	struct task_pool *p = &run->pool;

	/* task_pool_take_as's guarded first take (its point, then pool_take's look) */
	EXPLORE_POINT(ATOMIC);
	bool plain = pool_plain_begin_as(p, kernel);
	uint64_t t;
	uint32_t credits;

	/* the fast bound fails (no credit free, or the stack holds no slot
	 * beyond the credits held without one): the rest's slow take decides,
	 * by its exact look (chunks made, or AGAIN) */
	if (!plain || !pool_one_poppable(p) || (credits = credit_guarded_free(p, n, &t)) == 0)
		return task_pin_take_fill_rest(ctx, run, descs, n, buf_fold, kernel, tp, evs, 0, plain, err, why, k);
	struct pool_pop pp = pool_pop_start(p, credits);
	struct doca_event *ev = pool_pop_step(&pp);

	evs[0] = ev; /* the first one popped, linked to the next (task_pool.c, "The link word") */
	task_fill(ev, tp, descs[0].user_data, true, false);
	if (!kernel)
		ev = task_pop_fill_loop_light(ctx, descs + 1, buf_fold, &pp, ev, err);
	else if (task_cpu_has_andn())
		ev = task_pop_fill_loop_kernel_andn(ctx, descs + 1, buf_fold, &pp, ev, err);
	else
		ev = task_pop_fill_loop_kernel(ctx, descs + 1, buf_fold, &pp, ev, err);
	uint32_t got = pool_pop_taken(&pp);

	pool_pop_end(p, &pp);
	credit_plain_take_end(p, t, got); /* the credits of the tasks filled, inside the update */
	evs[got - 1u] = ev; /* the last */
	if (*err == DOCA_SUCCESS && got < n) /* the fast bound's credits taken, or a task left */
		return task_pin_take_fill_rest(ctx, run, descs, n, buf_fold, kernel, tp, evs, got, false, err, why, k);
	ev->next = NULL;
	evs[got] = NULL;
	*k = got;
	return got;
}

/* task_pin_take_fill_guarded's rest, out of line (its fast loop then
 * keeps its values in registers): @p filled tasks pinned, popped, filled
 * and linked (evs[0] the first, evs[filled - 1] the last), or none (then
 * @p plain is its first take's look); the tasks from filled on
 * pinned as task_pin_more pins them, taken as task_take_credits takes
 * them, unpinned if they got none, filled and linked. */
static __attribute__((noinline)) uint32_t
task_pin_take_fill_rest(struct doca_ctx *ctx, struct ctx_run *run, const struct doca_task_desc *descs, uint32_t n,
			uint64_t buf_fold, bool kernel, struct task_pinned *tp, struct doca_event **evs, uint32_t filled,
			bool plain, doca_error_t *err, doca_error_t *why, uint32_t *k)
{
	struct task_pool *p = &run->pool;
	uint32_t got = filled, m;

	if (filled != 0) { /* tasks filled to n - 1, task filled - 1 the first of task_pin_more's */
		*k = filled - 1u + task_pin_more(ctx, run, descs + filled - 1u, n - filled + 1u, buf_fold, true, kernel,
						 tp + filled - 1u, err);
	} else {
		*k = task_pin_more(ctx, run, descs, n, buf_fold, true, kernel, tp, err);
		got = pool_take_loop(p, evs, *k, kernel, why, plain, true);
	}
	while (got != 0 && got < *k && (m = task_pool_take_as(p, &evs[got], *k - got, kernel, why)) != 0)
		got += m;
	for (uint32_t i = got; i < *k; i++) {
		buf_unpin(tp[i].dst, true);
		buf_unpin(tp[i].src, true);
	}
	evs[got] = NULL;
	if (filled != 0)
		evs[filled - 1u]->next = evs[filled];
	for (uint32_t i = filled; i < got; i++) {
		task_fill(evs[i], &tp[i], descs[i].user_data, true, false);
		evs[i]->next = evs[i + 1u];
	}
	return got;
}

/* Post directly from this thread (@p self: runner_self())? Its own PE's
 * thread, or the PE asleep in event mode (not a worker's: its turns never
 * wait for a submitter). Either way only with nothing waiting in the
 * mailbox or the rings (task_guard_take's mailbox_idle: engine/ring.c
 * I7), so the thread's own earlier ring tasks were taken first. (The
 * design says foreign threads never post directly; the sleeping PE's way
 * stays in step 1: through the ring, the wake check's brief feed wakes
 * the PE once more per task for a device with its own thread,
 * tests/api/event_wakeups.c.) */
static inline __attribute__((always_inline)) bool task_may_post_direct(struct doca_pe *pe, const void *self)
{
	EXPLORE_POINT(ATOMIC);
#ifdef OWNED_RMW_ASM
	if (task_word_is(&pe->home, (uintptr_t)self))
		return true;
#else
	if (atomic_load_explicit(&pe->home, memory_order_relaxed) == self)
		return true;
#endif
	EXPLORE_POINT(ATOMIC);
	return atomic_load_explicit(&pe->armed, memory_order_relaxed) == PE_ARMED &&
	       !atomic_load_explicit(&pe->has_worker, memory_order_relaxed);
}

/* For a chunk about to be prepared: take the PE's guard briefly, to post
 * as a turn would, when the PE is not running a turn, the context still
 * runs and nothing waits in the mailbox (so a task of ours queued there
 * earlier still reaches the device first). True with the guard held. */
static inline __attribute__((always_inline)) bool task_guard_take(struct doca_ctx *ctx, struct ctx_run *run,
								  const void **unparked)
{
	struct doca_pe *pe = ctx_pe(ctx);
	struct runner *runner = &pe->runner;

	if (!task_may_post_direct(pe, runner_self()) || runner_enter_brief_from(runner, unparked) != RUNNER_ENTERED)
		return false;
	/* Holding the guard we are the mailbox's consumer and the qp's
	 * producer, and the flags below are ours to read. */
	if (ctx_state(ctx) == DOCA_CTX_STATE_RUNNING && !run->fatal && !run->flush_sent &&
	    ((mailbox_idle(&run->mbox) && ring_own_drained(run)) || DOCA_REVERTED("direct_post_ignores_rings")))
		return true;
	runner_exit_from(runner, *unparked);
	return false;
}

/* Under the PE's guard, which makes us its ready set's consumer: have the
 * next turn visit ctx, as a signal would, but with no fence: arming takes
 * the guard too, so it came before our entry (we see ARMED: true, wake
 * it) or comes after our exit, and its walk of the set finds ctx there. */
static inline __attribute__((always_inline)) bool task_queued(const struct doca_ctx *ctx)
{
	EXPLORE_POINT(ATOMIC);
	/* relaxed: only the consumer (we) clears QUEUED; a signaller that sets
	 * it meanwhile has pushed ctx itself, and our CAS below then fails */
#ifdef OWNED_RMW_ASM
	return task_word32_has(&ctx->ready.flags, READY_QUEUED);
#else
	return (atomic_load_explicit(&ctx->ready.flags, memory_order_relaxed) & READY_QUEUED) != 0;
#endif
}

/* task_queue_visit's second half: is the PE armed (a wake is due)? */
static inline __attribute__((always_inline)) bool task_pe_armed(const struct doca_pe *pe)
{
	EXPLORE_POINT(WAKE);
#ifdef OWNED_RMW_ASM
	return task_word32_is(&pe->armed, PE_ARMED);
#else
	return atomic_load_explicit(&pe->armed, memory_order_relaxed) == PE_ARMED;
#endif
}

/* task_queue_visit with ctx found not QUEUED (task_queued). */
static inline __attribute__((always_inline)) bool task_queue_visit_unqueued(struct doca_pe *pe, struct doca_ctx *ctx)
{
	/* the contexts signalled before us join the FIFO first: it stays in
	 * signal order, as if we had signalled */
	(void)ready_collect_sc(&pe->ready, UINT32_MAX);
	ready_requeue_sc(&pe->ready, &ctx->ready);
	return task_pe_armed(pe);
}

static inline __attribute__((always_inline)) bool task_queue_visit(struct doca_pe *pe, struct doca_ctx *ctx)
{
	return task_queued(ctx) ? task_pe_armed(pe) : task_queue_visit_unqueued(pe, ctx);
}

/* task_post_guarded's end: let go of the guard (entered as @p unparked),
 * then kick the executor if @p posted, wake the PE if @p wake; see there. */
static inline __attribute__((always_inline)) void task_post_leave(struct doca_pe *pe, struct ctx_run *run,
								  bool posted, bool wake, const void *unparked,
								  bool sectioned)
{
	bool section = !sectioned && (posted || wake);

	if (section)
		doca_rcu_read_lock(); /* before the guard goes (see task_post_guarded) */
	if (sectioned)
		runner_exit_from(&pe->runner, unparked);
	else /* the owner's way entered at depth 0 (task_one_owner) */
		runner_exit_unparked_at(&pe->runner, unparked, runner_parked_thread(unparked), 0);
	if (posted)
		hw_qp_kick(run->qp);
	if (wake)
		pe_wake_fenced(pe); /* the guard ordered our post before the armed load */
	if (section)
		doca_rcu_read_unlock();
}

/* Post a chunk prepared under the guard (entered as @p unparked:
 * runner_enter_from; its n events linked in order by their fills, of
 * which only evs[0] and evs[n - 1] are read), then let go of it; wake the PE
 * if only a progress call runs what we posted (an inline device) and it
 * sleeps armed, as the completion does otherwise. Both system calls
 * (kicking the executor, waking the PE) come after letting go of the
 * guard, so a thread they wake never waits for us. @p sectioned: the
 * caller is inside a read-side section; the owner's way is not, and once
 * it lets go of the guard no stop or destroy waits for it (the task's
 * event may be reaped and freed, the run retired and freed, the context
 * and its PE destroyed), so a kick or a wake enters one first. */
static inline __attribute__((always_inline)) void
task_post_guarded(struct doca_ctx *ctx, struct ctx_run *run, struct doca_event **evs, uint32_t n,
		  const void *unparked, bool sectioned)
{
	bool inline_dev = run->qp->runs_in_poll, posted = false, wake = false;

	if (n != 0 && ((inline_dev && (n < TASK_DEFER_BELOW || run->qp->executes_at_once)) ||
		       run->backlog_head != NULL)) {
		/* only a turn runs an inline device's descriptors, so the turn
		 * posts a few tasks submitted one by one a chunk at a time (or
		 * executes them all); and nothing may overtake what waits already */
		run_defer(run, evs, n);
	} else if (n != 0) {
		/* the chunk's events are linked (task_take_fill_guarded may
		 * have stored only the first and the last of them in evs) */
		if (run->qp->posts_chain) {
			run_post_chain(run, evs[0], n);
		} else {
			struct hw_desc descs[SUBMIT_CHUNK];
			const struct doca_event *ev = evs[0];

			for (uint32_t i = 0; i < n; i++, ev = ev->next)
				descs[i] = event_desc(ev);
			run_post(run, descs, n);
		}
		hw_qp_doorbell(run->qp);
		posted = true;
	}
	/* its PE's visits post or run them, find their completions (polled
	 * while on the device, engine/pe_ready.c), or post what the device
	 * refused (the run's backlog) */
	struct doca_pe *pe = ctx_pe(ctx);

	if (n != 0)
		wake = task_queue_visit(pe, ctx) && inline_dev;
	task_post_leave(pe, run, posted, wake, unparked, sectioned);
}

/* Where a chunk that is not posted under the guard goes (engine/ring.h):
 * its thread's SP ring or the run's MP ring, chosen before its pins and
 * credits; or the ring to make first. */
struct task_way {
	struct task_ring *ring; /* the chunk's ring */
	struct task_ring *sp;   /* the thread's SP ring (ring itself, or diverted from it to MP), or NULL */
	uint32_t make;          /* a ring to make first (ring_publish's which), or TASK_MAKE_NONE */
	uint32_t sp_bit;        /* 1 << the thread's slot when sp is not NULL: its watch bit (ring_watched) */
	uint64_t ret_none;      /* task_ret_seen's view without an SP ring */
};

/* Choose @p w's ring for up to @p n tasks of a foreign chunk: the SP ring
 * of the thread's slot when it holds it exclusively (I1), is not diverted
 * to MP (or MP has drained its last MP position since: I7) and has room
 * for n (then for the fewer that get a credit too: only we write it);
 * else the MP ring; w->make set instead if that ring is not made yet. */
static inline void task_ring_choose(struct ctx_run *run, uint32_t n, struct task_way *w)
{
	unsigned slot = thread_slot_get();
	struct task_ring *sp = NULL;

	if (slot < RING_SP && thread_slot_exclusive) {
		EXPLORE_POINT(ATOMIC);
		sp = atomic_load_explicit(&run->sp[slot], memory_order_acquire); /* acquire: the zeroed ring */
		if (sp == NULL) {
			w->make = slot;
			return;
		}
	}
	w->sp = sp;
	w->sp_bit = sp != NULL ? 1u << slot : 0; /* (slot < RING_SP then) */
	EXPLORE_POINT(ATOMIC);
	struct task_ring *mp = atomic_load_explicit(&run->mp, memory_order_acquire); /* as sp's */
	/* (the explorer's revert: a diverted producer goes back to SP as
	 * soon as its SP ring has room, D7's order defect) */
	bool sticky = !DOCA_REVERTED("ring_no_mp_stickiness");

	if (sp != NULL && (!sp->on_mp || !sticky || ring_mp_passed(mp, sp)) && ring_sp_room(sp, n)) {
		sp->on_mp = false;
		w->ring = sp;
		return;
	}
	if (mp == NULL)
		w->make = RING_SP;
	w->ring = mp;
}

/* The cached returned a chunk written into @p w's ring takes its credits
 * against (task_pool_take_credits): its thread's SP ring's, the
 * producer's own (also while diverted to MP), or, with none, a view of
 * nothing returned, which costs no load until the look says short or the
 * take would make a chunk by it: then it loads returned
 * (engine/task_pool.h, "Chunks before credits": chunks never follow the
 * view's age). */
static inline uint64_t *task_ret_seen(struct task_way *w)
{
	w->ret_none = 0;
	return w->sp != NULL ? &w->sp->ret_seen : &w->ret_none;
}

/* Write the @p got tasks that took a credit (tp[i], descs[i]) into @p
 * w's ring, then announce them unless the PE watches that ring (an SP
 * ring's bit, ring_watched: its visits look at it with no announce): the
 * PE's next feed pops their slots, fills and posts them (engine/ring.c).
 * True if announced: the caller then runs the wake check. */
static inline __attribute__((always_inline)) bool task_ring_write(struct ctx_run *run, const struct task_way *w,
								  const struct task_pinned *tp,
								  const struct doca_task_desc *descs, uint32_t got)
{
	struct task_ring *r = w->ring;
	bool watched = hb_watching();
	uint64_t x;

	if (r == w->sp) {
		/* the reservation, before the entries (relaxed: our own word) */
		x = atomic_load_explicit(&r->prod, memory_order_relaxed);
		atomic_store_explicit(&r->prod, x + got, memory_order_relaxed);
	} else {
		EXPLORE_POINT(ATOMIC);
		/* acq_rel: the claims form the chain through which the drain
		 * of position - cap reaches our rewrite of its entry (I3) */
		x = atomic_fetch_add_explicit(&r->prod, got, memory_order_acq_rel);
		if (w->sp != NULL) { /* diverted: on MP until those are taken (I7) */
			w->sp->on_mp = true;
			w->sp->mp_until = x + got - 1u;
		}
	}
	for (uint32_t i = 0; i < got; i++)
		ring_put(r, x + i, tp[i].src, tp[i].dst, tp[i].len, tp[i].status == DOCA_EVENT_STATUS_PARTIAL,
			 descs[i].user_data.u64, watched);
	/* the MP ring always takes the slow tail (engine/ring.c, I6) */
	if (r == w->sp && ring_watched(run, w->sp_bit))
		return false;
	mailbox_announce(&run->mbox);
	return true;
}

/* The state check of a chunk of up to @p n tasks, after its first task's
 * handles: RUNNING, the run read once (it cannot be retired while we are
 * in the section) and, when @p start is not 0, the run that start made,
 * and the guard taken (or not) for the chunk; not taken, the ring chosen
 * (@p w: its make set if a ring must be made first). */
static inline __attribute__((always_inline)) doca_error_t
task_chunk_enter(struct doca_ctx *ctx, struct ctx_run **run, uint64_t start, uint32_t n, bool *guarded,
		 const void **unparked, struct task_way *w)
{
	if (ctx_state(ctx) != DOCA_CTX_STATE_RUNNING)
		return DOCA_ERROR_BAD_STATE;
	if (*run == NULL) {
		EXPLORE_POINT(ATOMIC);
		*run = rcu_dereference(ctx->run);
		if (*run == NULL || (start != 0 && (*run)->start != start))
			return DOCA_ERROR_BAD_STATE;
		TSAN_ACQUIRE(*run);
	}
	*guarded = task_guard_take(ctx, *run, unparked);
	if (!*guarded)
		task_ring_choose(*run, n, w);
	return DOCA_SUCCESS;
}

/* Hand a chunk over: posted under the guard (which it lets go of, n = 0
 * too), or written into @p w's ring. True if written and announced (the
 * PE may need a wake-up to take them; a watched ring's needs none). */
static inline __attribute__((always_inline)) bool
task_hand_over(struct doca_ctx *ctx, struct ctx_run *run, struct doca_event **evs, uint32_t n, bool guarded,
	       const void *unparked, const struct task_way *w, const struct task_pinned *tp,
	       const struct doca_task_desc *descs)
{
	if (guarded) {
		task_post_guarded(ctx, run, evs, n, unparked, true);
		return false;
	}
	return n != 0 && task_ring_write(run, w, tp, descs, n);
}

/* Up to SUBMIT_CHUNK tasks of a burst, inside the read-side section. Each
 * task's handles, then (once, after the first task's) the state, then the
 * rest: the contract's order, the chunk's tasks seeing the state as its
 * first did. Then one take of credits for every task that passed, so no
 * credit is held unused. Returns the tasks accepted; *err says why the
 * next one was refused (DOCA_SUCCESS: none was). With w->make set on
 * return nothing was done: the ring must be made first. */
static inline __attribute__((always_inline)) uint32_t
task_chunk(struct doca_ctx *ctx, struct ctx_run **run, uint64_t start, const struct doca_task_desc *descs,
	   uint32_t n, uint64_t buf_fold, bool *queued, doca_error_t *err, struct task_way *w)
{
	struct task_pinned tp[SUBMIT_CHUNK];
	struct doca_event *evs[SUBMIT_CHUNK + 1u]; /* + 1: the fill's link past the last */
	bool guarded = false;
	const void *unparked = NULL;
	uint32_t k;
	doca_error_t why;

	struct doca_buf *src = task_buf_of(descs[0].src, buf_fold), *dst = task_buf_of(descs[0].dst, buf_fold);

	if (src == NULL)
		*err = HANDLE_REFUSAL(descs[0].src, MAGIC_BUF);
	else if (dst == NULL)
		*err = HANDLE_REFUSAL(descs[0].dst, MAGIC_BUF);
	else
		*err = task_chunk_enter(ctx, run, start, n, &guarded, &unparked, w);
	if (*err != DOCA_SUCCESS || w->make != TASK_MAKE_NONE)
		return 0;
	*err = task_pin(ctx, *run, &descs[0], src, dst, guarded, true, false, &tp[0]);
	uint32_t got;
	bool watched = hb_watching();

	/* the others, one loop per case, each compiled for its constants
	 * (the flag never changes once a thread of the library runs); under
	 * the guard each event is linked to the next as it is filled, as
	 * run_defer wants them (the last one to evs[got], NULL); a foreign
	 * chunk's slots are filled by the PE, from the ring's entries */
	if (*err != DOCA_SUCCESS)
		k = 0;
	if (*err == DOCA_SUCCESS && guarded && !watched && asym_fence_kernel) {
		got = task_pin_take_fill_guarded(ctx, *run, descs, n, buf_fold, true, tp, evs, err, &why, &k);
	} else if (*err == DOCA_SUCCESS && guarded && !watched) {
		got = task_pin_take_fill_guarded(ctx, *run, descs, n, buf_fold, false, tp, evs, err, &why, &k);
	} else {
		if (*err == DOCA_SUCCESS && guarded) /* (watched) */
			k = task_pin_more(ctx, *run, descs, n, buf_fold, true, false, tp, err);
		else if (*err == DOCA_SUCCESS)
			k = task_pin_more(ctx, *run, descs, n, buf_fold, false, false, tp, err);
		got = task_take_credits(*run, tp, k, guarded, false, evs, task_ret_seen(w), &why);
		evs[got] = NULL;
		if (guarded) /* (watched) */
			for (uint32_t i = 0; i < got; i++) {
				task_fill(evs[i], &tp[i], descs[i].user_data, true, true);
				evs[i]->next = evs[i + 1u];
			}
	}
	if (got < k)
		*err = why;
	*queued |= task_hand_over(ctx, *run, evs, got, guarded, unparked, w, tp, descs);
	return got;
}

/* One task's pin and credit (and fill, under the guard), its state
 * checked: the tasks that got a credit in evs[0] (0 or 1; *err says why
 * not), pinned in *tp. @p kernel: as task_pin's. */
static inline __attribute__((always_inline)) uint32_t
task_one_take(struct doca_ctx *ctx, struct ctx_run *run, const struct doca_task_desc *desc, struct doca_buf *src,
	      struct doca_buf *dst, bool guarded, bool kernel, struct doca_event **evs, struct task_pinned *tp,
	      uint64_t *ret_seen, doca_error_t *err)
{
	uint32_t got = 0;

	*err = task_pin(ctx, run, desc, src, dst, guarded, true, kernel, tp);
	/* (task_take_credits sets *err only when it takes none) */
	if (*err == DOCA_SUCCESS && (got = task_take_credits(run, tp, 1, guarded, kernel, evs, ret_seen, err)) == 1 &&
	    guarded)
		task_fill(evs[0], tp, desc->user_data, true, hb_watching());
	return got;
}

/* task_chunk for one task, with no arrays or loops: a single submit is the
 * common call (the owner's way is task_one_owner's). The same steps in
 * the same order, so the same answers. */
static inline __attribute__((always_inline)) uint32_t
task_one(struct doca_ctx *ctx, struct ctx_run **run, uint64_t start, const struct doca_task_desc *desc,
	 uint64_t buf_fold, bool *queued, doca_error_t *err, struct task_way *w)
{
	struct doca_buf *src = task_buf_of(desc->src, buf_fold), *dst = task_buf_of(desc->dst, buf_fold);
	struct doca_event *evs[SUBMIT_CHUNK]; /* one, but run_defer's loop may not see that */
	struct task_pinned tp;
	bool guarded = false;
	const void *unparked = NULL;

	if (src == NULL)
		*err = HANDLE_REFUSAL(desc->src, MAGIC_BUF);
	else if (dst == NULL)
		*err = HANDLE_REFUSAL(desc->dst, MAGIC_BUF);
	else
		*err = task_chunk_enter(ctx, run, start, 1, &guarded, &unparked, w);
	if (*err != DOCA_SUCCESS || w->make != TASK_MAKE_NONE)
		return 0;
	uint32_t got = task_one_take(ctx, *run, desc, src, dst, guarded, false, evs, &tp, task_ret_seen(w), err);

	*queued |= task_hand_over(ctx, *run, evs, got, guarded, unparked, w, &tp, desc);
	return got;
}

/* Publish @p r, made outside the section for ring @p which, into @p ctx's
 * run found now (ring_publish; a run made meanwhile may want another size:
 * then the next chunk asks again), or free it. Inside a read-side section. */
static void task_ring_publish(struct doca_ctx *ctx, uint32_t which, struct task_ring *r)
{
	EXPLORE_POINT(ATOMIC);
	struct ctx_run *now = rcu_dereference(ctx->run);

	if (now != NULL)
		TSAN_ACQUIRE(now); /* (rcu_dereference's consume, as task_chunk_enter's) */
	if (now == NULL || !ring_publish(now, which, r))
		doca_free(r); /* never published: nobody saw it */
}

/* A chunk found the ring of @p w->make not made (task_ring_choose): wake
 * for what the call wrote so far (@p queued), leave the read-side section,
 * make the ring, enter again and publish it (task_ring_publish). *ctx is
 * looked up anew from @p h and *run set NULL (the chunk reads it again,
 * its state first). NO_MEMORY if the allocation failed (nothing accepted
 * by this chunk); BAD_STATE if the context was destroyed meanwhile: the
 * handle was current when the call found it, so this is a context that
 * left RUNNING under the call (as submit_wait answers), never a stale
 * handle of the caller's. Called and returns inside the section. */
static __attribute__((noinline)) doca_error_t task_ring_make(struct doca_ctx *h, struct doca_ctx **ctx,
							      struct ctx_run **run, struct task_way *w, bool *queued)
{
	uint32_t which = w->make, cap = ring_cap((*run)->pool.size, which < RING_SP);

	if (*queued)
		pe_wake_after_push(*ctx, *run);
	*queued = false;
	*run = NULL;
	w->make = TASK_MAKE_NONE;
	doca_rcu_read_unlock();
	struct task_ring *r = ring_alloc(cap); /* outside the section (I8) */

	doca_rcu_read_lock();
	if (r == NULL)
		return DOCA_ERROR_NO_MEMORY;
	*ctx = ctx_of(h);
	if (*ctx == NULL) {
		doca_free(r);
		return DOCA_ERROR_BAD_STATE;
	}
	task_ring_publish(*ctx, which, r);
	return DOCA_SUCCESS;
}

doca_error_t task_ring_make_held(struct doca_ctx *ctx, uint64_t start, const struct task_ring_need *need)
{
	struct task_ring *r = ring_alloc(need->cap); /* outside any section (I8) */
	doca_error_t err = DOCA_SUCCESS;

	if (r == NULL)
		return DOCA_ERROR_NO_MEMORY;
	doca_rcu_read_lock();
	if (ctx_state(ctx) != DOCA_CTX_STATE_RUNNING || ctx_run_start(ctx) != start) {
		doca_free(r);
		err = DOCA_ERROR_BAD_STATE;
	} else {
		task_ring_publish(ctx, need->which, r);
	}
	doca_rcu_read_unlock();
	return err;
}

static __attribute__((noinline)) doca_error_t task_submit_sectioned(struct doca_ctx *ctx,
								    const struct doca_task_desc *desc, uint64_t start,
								    struct task_ring_need *need);

/*
 * The owner's single submit is task_one_owner, a lean function: every way
 * it does not finish itself is a tail call to one of the out-of-line rests
 * below, which takes over at the point it was left, with the same steps
 * in the same order (the same loads, stores, answers and explorer points)
 * as the whole way they replace. So the common way calls no function and
 * has no stack array: it saves only the registers its own values need
 * (issue 12's frame; three with gcc 12).
 */

/* A look under the guard failed, nothing changed: leave (entered at depth
 * 0 as @p cur), and make the whole call the sectioned way. */
static __attribute__((noinline)) doca_error_t task_owner_leave(struct doca_ctx *h, const struct doca_task_desc *desc,
								struct doca_pe *pe, const void *cur)
{
	runner_exit_unparked_first(&pe->runner, cur, runner_parked_thread(cur));
	return task_submit_sectioned(h, desc, 0, NULL);
}

/* The owner's way from its checks passed (nothing done under the guard
 * but looks): pin, take, fill, post and leave, as a chunk of one under
 * the guard. The way for a refused task and a device that runs
 * descriptors outside a turn (a post, a kick). */
static __attribute__((noinline)) doca_error_t task_owner_rest(struct ctx_run *run, const struct doca_task_desc *desc,
							       struct doca_buf *src, struct doca_buf *dst,
							       const void *cur)
{
	struct doca_event *evs[SUBMIT_CHUNK]; /* one, but run_defer's loop may not see that */
	struct task_pinned tp;
	doca_error_t err;

	evs[0] = NULL; /* for gcc, which cannot tell it is read only when taken */
	runner_unparked_first_count(runner_parked_thread(cur)); /* (task_one_owner's entry) */
	task_post_guarded(run->ctx, run, evs,
			  task_one_take(run->ctx, run, desc, src, dst, true, true, evs, &tp, NULL, &err), cur, false);
	return err;
}

/* The owner's way whose pins stood, from its take of a credit on: the
 * pool's first look made, @p plain its answer (when true, the plain
 * update is begun, busy-less).
 * An inline device, no race detector (task_one_owner tested both). The
 * length is the source's, loaded again (task_one_owner's fill says why):
 * the common way then keeps no register for it across its look. */
static inline __attribute__((always_inline)) doca_error_t
task_owner_take(struct ctx_run *run, const struct doca_task_desc *desc, struct doca_buf *src, struct doca_buf *dst,
		const void *cur, bool plain)
{
	struct doca_event *evs[SUBMIT_CHUNK]; /* one, but run_defer's loop may not see that */
	const struct task_pinned tp = { .src = src, .dst = dst, .len = src->len };
	doca_error_t err = DOCA_SUCCESS;

	evs[0] = NULL; /* for gcc, which cannot tell it is read only when taken */
	runner_unparked_first_count(runner_parked_thread(cur)); /* (task_one_owner's entry) */
	uint32_t got = pool_take_loop(&run->pool, evs, 1, true, &err, plain, false);

	if (got == 0) { /* task_take_credits's, for one task */
		buf_unpin(dst, true);
		buf_unpin(src, true);
	} else {
		task_fill(evs[0], &tp, desc->user_data, true, false);
	}
	task_post_guarded(run->ctx, run, evs, got, cur, false);
	return err;
}

static __attribute__((noinline)) doca_error_t task_owner_take_plain(struct ctx_run *run,
								     const struct doca_task_desc *desc,
								     struct doca_buf *src, struct doca_buf *dst,
								     const void *cur)
{
	return task_owner_take(run, desc, src, dst, cur, true);
}

static __attribute__((noinline)) doca_error_t task_owner_take_shared(struct ctx_run *run,
								      const struct doca_task_desc *desc,
								      struct doca_buf *src, struct doca_buf *dst,
								      const void *cur)
{
	pool_settle(&run->pool); /* POOL_SHARED before the CAS way (engine/task_pool.c) */
	return task_owner_take(run, desc, src, dst, cur, false);
}

/* The owner's guarded pins counted and a DEAD found (@p src_stood: as
 * task_pins_back's): take them back and leave; the refusal. */
static __attribute__((noinline)) doca_error_t task_owner_dead(struct ctx_run *run, struct doca_buf *src,
							       struct doca_buf *dst, const void *cur, bool src_stood)
{
	doca_error_t err = task_pins_back(src, dst, src_stood);

	runner_exit_unparked_first(&ctx_pe(run->ctx)->runner, cur, runner_parked_thread(cur));
	return err;
}

/* The owner's task left in the backlog of its inline device, and its
 * context found not QUEUED (@p unqueued: the run's context, then
 * task_queue_visit's rest) or its PE armed (@p unqueued NULL):
 * task_post_guarded's end. (The context, not a flag: the caller has it
 * in the argument's register already, and gcc set a flag's register
 * before the branch, on the common way.) */
static __attribute__((noinline)) doca_error_t task_owner_visited(struct ctx_run *run, const void *cur,
								  struct doca_ctx *unqueued)
{
	struct doca_pe *pe = ctx_pe(run->ctx);

	runner_unparked_first_count(runner_parked_thread(cur)); /* (task_one_owner's entry) */
	bool wake = unqueued != NULL ? task_queue_visit_unqueued(pe, unqueued) : true;

	task_post_leave(pe, run, false, wake, cur, false);
	return DOCA_SUCCESS;
}

/* A buffer's handle on the owner's way: the buffer, if h names a live
 * buffer of ctx that passes task_check_fast's checks of its role (a source
 * if @p as_src, else a destination). Its role's context word (src_ctx or
 * dst_ctx, BUF_CELL_KEEP: ctx or NULL, engine/engine.h) is loaded
 * before the generation is compared (the folded word, buf_word_made:
 * only a buffer's cell ever holds it, and a cell never changes kind, so
 * that compare also says the cell is a buffer's; the race detectors'
 * builds look at the magic first, as before, so their C11 loads never
 * read another kind's word; under OWNED_RMW_ASM a wrong kind's word at
 * the role's offset, on the head's 64-byte line, is loaded by the
 * compare's own instruction and its value never used: the folded
 * compare then fails): h is the caller's, made by a create
 * that happened before this call, so a generation still h's when compared
 * means the word loaded is h's buffer's (no other create in the cell
 * since); found ctx, the buffer's context is ctx (its create made both
 * from its memory's) and its role's checks pass, and a buffer of ctx is
 * destroyed only after its destroy waits out our section (engine/buf.c,
 * buf_quiesce_owner). Every word read before that is an atomic never
 * zeroed. A buffer of ctx whose role's word is NULL (a task the checks
 * refuse) is not ours here: the whole call goes the sectioned way, which
 * answers it. */
static inline __attribute__((always_inline)) struct doca_buf *
task_buf_owned(const struct doca_buf *h, bool as_src, const struct doca_ctx *ctx, uint64_t buf_fold)
{
	struct doca_buf *buf = handle_addr(h);

	EXPLORE_POINT(ATOMIC);
	if (buf == NULL ||
#ifdef OWNED_RMW_ASM
	    /* (task_word_is's clobber orders it before the handle's compare) */
	    !task_word_is(task_role_word(buf, as_src), (uintptr_t)ctx))
#else
	    !head_pair_is(buf, head_key(MAGIC_BUF)) || !task_role_is(buf, as_src, ctx))
#endif
		return NULL;
	EXPLORE_POINT(ATOMIC);
#ifdef OWNED_RMW_ASM
	return task_word_is(&buf->handle, buf_word_made(h, buf_fold)) ? buf : NULL;
#else
	return handle_tag_current((const void *)buf_word_made(h, buf_fold), (const struct handle_head *)buf) ? buf
														   : NULL;
#endif
}

/* task_may_post_direct for the thread @p t that entered the guard of @p pe
 * by its own parked word (task_one_owner): true, with no look at home.
 * Only doca_pe_progress parks the guard (runner_exit_park, after its
 * pe_turn, which stores home = runner_self(), t), and every pe_turn runs
 * under the guard: another thread's turn needs the guard out of t's
 * parked word first, and t parks it again only after a turn of its own.
 * So while the guard holds t's parked word, home is t (our own last store
 * to it, or later in its order than any other thread's). The explorer's
 * build keeps the load and aborts if it finds another home, at the point
 * where the load was (the same schedules). */
static inline __attribute__((always_inline)) bool task_owner_home(const struct doca_pe *pe,
								   const struct runner_thread *t)
{
	EXPLORE_POINT(ATOMIC);
#ifdef DOCA_EXPLORE
	if (atomic_load_explicit(&pe->home, memory_order_relaxed) != (const void *)t)
		abort(); /* the explorer's check of the above (verdict "abort") */
#else
	(void)pe;
	(void)t;
#endif
	return true;
}

/* No ring of @p run watched (engine/ring.h ring_any_watched; runner
 * guard held): with OWNED_RMW_ASM one cmpl, as the owner's way's other
 * looks. */
static inline __attribute__((always_inline)) bool task_none_watched(const struct ctx_run *run)
{
#ifdef OWNED_RMW_ASM
	return task_word32_is(&run->ring_watch, 0);
#else
	return !ring_any_watched(run);
#endif
}

/* task_one_owner's looks after the run's bytes: the mailbox idle, the
 * caller's own ring unwatched or drained (first one cmpl: is any ring
 * watched?) and both buffers the context's (@p src and @p dst set when
 * true). */
static inline __attribute__((always_inline)) bool task_owner_looks(struct ctx_run *run, const struct doca_ctx *ctx,
								   const struct doca_task_desc *desc,
								   uint64_t buf_fold, struct doca_buf **src,
								   struct doca_buf **dst)
{
	return mailbox_idle(&run->mbox) && (task_none_watched(run) || ring_own_drained(run)) &&
	       (*src = task_buf_owned(desc->src, true, ctx, buf_fold)) != NULL &&
	       (*dst = task_buf_owned(desc->dst, false, ctx, buf_fold)) != NULL;
}

/* task_one_owner's way when one of the run's bytes is set: a fatal or
 * flushing run leaves; a run whose device runs descriptors outside a turn
 * (posts_outside_poll) takes the same looks, in the same order, and then
 * task_owner_rest, as it did when the qp was looked at after them. */
static __attribute__((noinline)) doca_error_t task_owner_outside(struct doca_ctx *h,
								  const struct doca_task_desc *desc,
								  struct doca_pe *pe, const void *cur,
								  struct ctx_run *run)
{
	struct doca_buf *src, *dst;

	if (run->fatal || run->flush_sent ||
	    !task_owner_looks(run, handle_addr(h), desc, g_buf_fold, &src, &dst))
		return task_owner_leave(h, desc, pe, cur);
	TSAN_ACQUIRE(run);
	return task_owner_rest(run, desc, src, dst, cur);
}

/* The owner's single submit, without a read-side section: its answer, or
 * the sectioned way's when it is not the owner's (see the top for why),
 * and every rare way a tail call to its rest (above). */
static inline __attribute__((always_inline)) doca_error_t
task_one_owner(struct doca_ctx *h, const struct doca_task_desc *desc, uint64_t buf_fold)
{
	struct runner_thread *t = runner_me_owner_way;
	struct doca_ctx *ctx = handle_addr(h);

	/* The kernel's fences only (its light fence then a compiler
	 * barrier) with no race detector watching, both flags tested once
	 * as runner_owner_way (neither changes while a thread of the library
	 * runs; under a detector the whole call is the sectioned way, as
	 * doca_event_free's), and a thread in no parked section (depth 0:
	 * then not in one of this PE's either, never nested, and its entry
	 * is its list's first, at constant indexes; runner_unpark_at), as
	 * doca_event_free's owner way, all three read with the record as
	 * runner_me_owner_way (a twin otherwise: runner_depth_set, which
	 * fails runner_owner_enter); any other case is the sectioned way.
	 * Before the guard only the cell's kind is checked (its magic and
	 * epoch: a cell never changes kind), not its generation or state:
	 * they only choose the way, the words read before the guard are
	 * atomics never zeroed whatever the cell's fate (see the top), and
	 * the checks under the guard (state, PE, handle) are the ones that
	 * count; a stale or stopped context fails them and leaves. */
	if (ctx == NULL || !task_word_is(ctx, head_key(MAGIC_CTX)))
		return task_submit_sectioned(h, desc, 0, NULL);
	EXPLORE_POINT(ATOMIC); /* (where the state was loaded: the same schedules) */
	struct doca_pe *pe = ctx_pe(ctx);

	if (pe == NULL)
		return task_submit_sectioned(h, desc, 0, NULL);
	EXPLORE_POINT(GUARD);
	/* entered uncounted (runner_owner_enter): the common way calls
	 * nothing; task_owner_leave and task_owner_dead call nothing before
	 * they leave uncounted, every other rest counts the entry first
	 * (runner_unparked_first_count) and leaves as after runner_unpark_at */
	const void *cur;

	if (!runner_owner_enter(&pe->runner, t, true, true, &cur))
		return task_submit_sectioned(h, desc, 0, NULL);
	/* Inside our brief section: the checks again, state first (its
	 * acquire comes after the start's connect), then the handle (current
	 * now, so current at both loads before it). Not the PE: a context
	 * has one PE for its generation's life (see the top), so the pe
	 * loaded before is still its PE, the one whose guard we hold. */
	bool recheck = !DOCA_REVERTED("owner_submit_no_recheck");
	struct ctx_run *run;
	struct doca_buf *src, *dst;

	if ((recheck && (!task_ctx_running(ctx) || !task_word_is(&ctx->handle, (uintptr_t)h))) ||
	    (run = rcu_dereference(ctx->run), !task_owner_home(pe, t)))
		return task_owner_leave(h, desc, pe, cur);
	/* the run's three bytes in one test: a device that runs descriptors
	 * outside a turn goes on apart (task_owner_outside) */
	if (run->fatal || run->flush_sent || run->posts_outside_poll)
		return task_owner_outside(h, desc, pe, cur, run);
	if (!task_owner_looks(run, ctx, desc, buf_fold, &src, &dst))
		return task_owner_leave(h, desc, pe, cur);
	TSAN_ACQUIRE(run);
	/* task_one_take and task_post_guarded for one task on an inline
	 * device (left in the backlog: n = 1 < TASK_DEFER_BELOW), unwatched
	 * (runner_owner_way); a refused task and every other case take the
	 * rests */
	uint64_t len;

	if (!task_check_fast(ctx, desc, src, dst, true, &len))
		return task_owner_rest(run, desc, src, dst, cur);
	/* task_pin's, guarded */
	buf_pin_guarded_store(src);
	buf_pin_guarded_store(dst);
	asym_fence_light_known(true); /* our pins are visible before we look for DEAD (engine/buf.c) */
	unsigned dead = buf_pin_guarded_dead_pair(src, dst);

	if (dead != 0)
		return task_owner_dead(run, src, dst, cur, dead == 2);
	/* task_pool_take_as's, guarded, with no busy flag: our entry r|brief,
	 * pushed before runner_unpark_at's light fence, is the flag, which
	 * task_pool_share waits out (pool_plain_begin_unparked; task_pool.c) */
	EXPLORE_POINT(ATOMIC);
	if (!pool_plain_begin_unparked(&run->pool))
		return task_owner_take_shared(run, desc, src, dst, cur);
	uint64_t taken;

	/* the fast look's bound fails (none free, or the stack holds no slot
	 * beyond the credits held without one): task_owner_take's exact look
	 * decides; ev NULL only under the explorer's revert owner_fast_no_cover */
	if (credit_guarded_free(&run->pool, 1, &taken) == 0)
		return task_owner_take_plain(run, desc, src, dst, cur);
	struct doca_event *ev = pool_top_slot(&run->pool);

	if (ev == NULL)
		return task_owner_take_plain(run, desc, src, dst, cur);
	pool_pop_top(&run->pool, ev);
	credit_plain_take(&run->pool, taken, 1); /* inside the brief section: its exit publishes it */
	/* len is the source's (task_check_fast), a field fixed from its
	 * create on: loaded again here, not kept across the pins and the pop
	 * (kept, gcc saved one register more) */
	const struct task_pinned tp = { .src = src, .dst = dst, .len = src->len };

	task_fill(ev, &tp, desc->user_data, true, false);
	run_defer(run, &ev, 1);
	/* task_queue_visit's looks; a wake (the PE armed) needs a section.
	 * The context and its PE found again from the run (fixed for its
	 * life: the PE is the context's while it is not IDLE), and our
	 * record from the word we entered by: fewer values kept. */
	struct doca_ctx *rctx = run->ctx;

	if (!task_queued(rctx))
		return task_owner_visited(run, cur, rctx);
	/* (loaded once: after the armed look, an atomic, gcc loaded it again) */
	struct doca_pe *rpe = run->pe;

	if (task_pe_armed(rpe))
		return task_owner_visited(run, cur, NULL);
	runner_exit_unparked_first(&rpe->runner, cur, runner_parked_thread(cur));
	return DOCA_SUCCESS;
}

/* doca_task_submit_batch. */
static inline __attribute__((always_inline)) doca_error_t
task_submit_burst(struct doca_ctx *h, const struct doca_task_desc *descs, uint32_t n, uint64_t start,
		  uint32_t *accepted)
{
	doca_error_t err = DOCA_SUCCESS;
	struct doca_ctx *ctx;
	struct ctx_run *run = NULL;
	uint32_t i = 0;
	bool queued = false;
	/* the buffers' handle checks compare with this (once per call:
	 * handle_obj_keyed says why it cannot change meanwhile) */
	const uint64_t buf_fold = g_buf_fold;

	if (accepted != NULL)
		*accepted = 0;
	if (h == NULL || accepted == NULL || (descs == NULL && n != 0))
		return DOCA_ERROR_INVALID_VALUE;
	/* Validate inside the section: a racing destroy frees after a grace period. */
	doca_rcu_read_lock();
	ctx = ctx_of(h);
	if (ctx == NULL)
		err = HANDLE_REFUSAL(h, MAGIC_CTX);
	while (err == DOCA_SUCCESS && i < n) {
		uint32_t m = n - i < SUBMIT_CHUNK ? n - i : SUBMIT_CHUNK;
		struct task_way w = { .make = TASK_MAKE_NONE };

		i += task_chunk(ctx, &run, start, &descs[i], m, buf_fold, &queued, &err, &w);
		if (w.make != TASK_MAKE_NONE) {
			/* the rest of a burst that accepted tasks stays in their run */
			if (i != 0)
				start = run->start;
			err = task_ring_make(h, &ctx, &run, &w, &queued);
		}
	}
	if (queued)
		pe_wake_after_push(ctx, run);
	doca_rcu_read_unlock();
	*accepted = i;
	return err;
}

doca_error_t doca_task_submit_batch(struct doca_ctx *h, const struct doca_task_desc *descs,
				    uint32_t n, uint32_t *accepted)
{
	return task_submit_burst(h, descs, n, 0, accepted);
}

/* A single submit inside a read-side section (@p desc not NULL): every
 * way but the owner's, out of line, so the owner's way is the one
 * compiled into the callers. task_submit_burst's steps for one task
 * (task_one, no chunk loops; @p start 0: a call for any run, without the
 * run check), with no count to report and no array to check. @p need
 * not NULL: the caller holds a read-side section of its own around the
 * call (task_submit_in_run), so a ring is not made here (leaving our
 * section would not leave the caller's: I8) but named in *need, with
 * AGAIN. */
static __attribute__((noinline)) doca_error_t task_submit_sectioned(struct doca_ctx *h,
								    const struct doca_task_desc *desc, uint64_t start,
								    struct task_ring_need *need)
{
	doca_error_t err = DOCA_SUCCESS;
	struct ctx_run *run = NULL;
	bool queued = false;
	const uint64_t buf_fold = g_buf_fold; /* as task_submit_burst's */

	if (h == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	doca_rcu_read_lock();
	struct doca_ctx *ctx = ctx_of(h);

	if (ctx == NULL)
		err = HANDLE_REFUSAL(h, MAGIC_CTX);
	for (struct task_way w = { .make = TASK_MAKE_NONE }; err == DOCA_SUCCESS;) {
		if (task_one(ctx, &run, start, desc, buf_fold, &queued, &err, &w) != 0 || w.make == TASK_MAKE_NONE)
			break;
		if (need != NULL) { /* (nothing written: queued is false) */
			need->which = w.make;
			need->cap = ring_cap(run->pool.size, w.make < RING_SP);
			err = DOCA_ERROR_AGAIN;
			break;
		}
		if ((err = task_ring_make(h, &ctx, &run, &w, &queued)) != DOCA_SUCCESS)
			break;
	}
	if (queued)
		pe_wake_after_push(ctx, run);
	doca_rcu_read_unlock();
	return err;
}

/* A single submit: the owner's way, or the sectioned one. */
doca_error_t doca_task_submit(struct doca_ctx *ctx, const struct doca_task_desc *desc)
{
	if (desc == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return task_one_owner(ctx, desc, g_buf_fold);
}

/* (doca_task_submit_wait's, always the sectioned way: a waiter's submit
 * is not the owner's loop, and the owner's way compiled once keeps the
 * submit's helpers inlined) */
doca_error_t task_submit_in_run(struct doca_ctx *ctx, const struct doca_task_desc *desc, uint64_t start,
				struct task_ring_need *need)
{
	need->which = TASK_MAKE_NONE;
	return task_submit_sectioned(ctx, desc, start, need);
}
