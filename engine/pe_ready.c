/*
 * engine/pe_ready.c — a PE visits only the contexts that have work.
 *
 * Each PE has a ready set (actors/ready_set.h) and each context a node in
 * it. A turn (engine/pe_progress.c) visits only the contexts in the set:
 * an empty progress call costs a couple of loads however many contexts are
 * connected, and a busy context among thousands of idle ones runs as fast
 * as alone.
 *
 * Who signals (each after publishing the work and a full fence, inside a
 * read-side section that keeps the run, its context and its PE):
 * - a submitter that pushed into the mailbox (pe_wake_after_push), or that
 *   posted directly to a verbs queue pair (only polling finds its
 *   completions); one that posted to an inline queue pair (only progress
 *   runs them) holds the PE's guard, which makes it the set's consumer, and
 *   appends the context to the FIFO itself (engine/task.c);
 * - a free that sent a credit back through the mailbox (engine/event.c);
 * - an engine thread that put completions on the queue pair (pe_wake_cb);
 * - a stop handing the rest to the PE (engine/ctx_run.c);
 * - a start whose queue pair is always polled (hw_qp.always_polled: its
 *   polls do work nobody signals, so it never leaves the set while it
 *   runs; engine/ctx_run.c), or has a completion channel, which is not
 *   armed until the PE's next arming (a PE armed already wakes for it);
 * - a credit returned to a STOPPING context, whose last one lets the PE
 *   finish the stop (run_credits_returned, after its fence; a thread other
 *   than the PE's own, which took its guard to free, wakes it too);
 * - the PE itself, at a turn's start, for a context on its watch list
 *   whose watched SP ring has a READY head, or whose just-unwatched ring
 *   has one after the heavy fence (pe_watch_turn), and at an arming
 *   (pe_watch_arm_look): a watched ring's producer neither announces nor
 *   signals, and the turn's look stands in for both (engine/ring.c, the
 *   watch, rule L). Its push is the signal's (the set's mailbox, after
 *   those already signalled), so the context comes after them: a
 *   foreign task on a watched ring joins the visit order at the look of
 *   its context, at a turn's start (within ceil(listed / TURN_CTXS)
 *   turns, the list's round robin), not at its submit. So one thread's
 *   tasks of two contexts may be visited, and complete, out of their
 *   submission order; that order is not promised across contexts (on
 *   main neither: a context queued already is visited at its place, not
 *   its submit's). Within one context it is: one submitting thread's
 *   tasks reach the device in submission order, across its SP ring, the
 *   MP ring and the owner's direct post (engine/ring.c, I7), and on sw0
 *   complete in it (include/doca_pe.h, doca_pe_get_event).
 *
 * A signaller that then wakes a sleeping PE (pe_wake) must fence between
 * its push into the set and its load of the armed flag when the signal
 * pushed: an armed PE looks for work in the set (pe_notify.c), so the push
 * is the work of that Dekker pair. When the context was queued already it
 * is in the set (or its visit's release looks at the work again), and the
 * fence the signaller ran after its work serves.
 *
 * A context leaves the set only after a visit that produced no events (one
 * that did keeps it: likely busy at the next turn, engine/pe_progress.c)
 * and finds nothing left: its queue pair not always polled, its mailbox idle, no task the device
 * refused or a submit left for the turn (the run's backlog), nothing on
 * its queue pair that only polling would find (inline work, a CQ with
 * entries), no descriptor on the device at all (run->on_device: a context
 * with one is visited every turn, see run_needs_visit), and no stop to
 * flush or finish. So a completion an engine thread has put but not yet
 * signalled (the thread preempted in between) is found by the next turn,
 * not by its signal; an engine thread signals only a PE that is armed
 * (engine/pe_notify.c, "A backend's completions"), which relies on this
 * rule. A watched ring is no reason to stay: the context leaves after an
 * empty visit as any other, and its PE's next turns look at the ring
 * (pe_watch_turn) and signal it when an entry is there. The release clears its flag and fences, then this file looks at
 * the same things once more (ready_set.h: no signal lost between the
 * visit and the release). A context kept goes to the tail of the PE's FIFO,
 * so busy contexts take turns. A turn visits the contexts its FIFO holds
 * when it starts: those kept by the last turn plus up to TURN_CTXS newly
 * signalled (ready_collect_sc), stopping early only when TURN_CTXS visits
 * made records or TURN_EVENTS events are done (turn_collect): a kept
 * context whose visit is empty adds to neither, so the count of visits
 * is not bounded by TURN_CTXS.
 *
 * Lifetime: the set holds a context only while it is QUEUED. A destroy
 * detaches the node; if it was queued, the handle's last reference passes
 * to the PE, which drops it when it meets the node (or when the PE's memory
 * goes, pe_ready_fini, after every signaller's grace period).
 *
 * The watch list (pe->watch_head to pe->watch_tail, linked by
 * ctx->watch_next; the guard holder's): the contexts whose runs watch a
 * ring, FIFO (linked at the tail: the oldest is looked at first); a
 * turn looks at most TURN_CTXS of them from the head and moves each to
 * the tail (pe_watch_turn), so the head is the round robin's cursor. A context on it holds
 * a reference, taken by the running visit that set a bit (pe_watch_link)
 * and dropped when a turn's look finds its run gone or watching nothing,
 * when an arming empties the list, or when the PE's memory goes
 * (pe_ready_fini): so a listed context's memory stays, and its run is
 * read anew (rcu_dereference, inside a read-side section) at each look,
 * never kept across sections; a retired run is freed a grace period
 * after its unpublish, whoever retires it (engine/ring.c, "Lifetime of
 * the list").
 */
#include <stdlib.h>

#include "actors/asym_fence.h"
#include "actors/explore_revert.h"
#include "engine/pe_ready.h"
#include "engine/ring.h"

bool pe_ready_signal_fenced(struct doca_pe *pe, struct doca_ctx *ctx)
{
	return ready_signal_fenced(&pe->ready, &ctx->ready);
}

bool pe_ready_signal(struct doca_pe *pe, struct doca_ctx *ctx)
{
	/* seq_cst fence: the caller's work is visible before the flag load. */
	atomic_thread_fence(memory_order_seq_cst);
	return pe_ready_signal_fenced(pe, ctx);
}

void pe_ready_signal_wake_fenced(struct doca_pe *pe, struct doca_ctx *ctx)
{
	pe_ready_signal_wake_fenced_if(pe, ctx, NULL, NULL);
}

void pe_ready_signal_wake_fenced_if(struct doca_pe *pe, struct doca_ctx *ctx,
				    bool (*needed)(const void *), const void *what)
{
	if (pe_ready_signal_fenced(pe, ctx))
		pe_wake_if(pe, needed, what); /* its fence: our push is visible before the armed load */
	else
		pe_wake_fenced_if(pe, needed, what); /* queued already: the caller's fence serves */
}

void pe_ready_signal_wake(struct doca_pe *pe, struct doca_ctx *ctx)
{
	/* seq_cst fence: the caller's work is visible before the flag load. */
	atomic_thread_fence(memory_order_seq_cst);
	pe_ready_signal_wake_fenced(pe, ctx);
}

void pe_ready_credits_returned(struct ctx_run *run)
{
	if (ctx_state(run->ctx) != DOCA_CTX_STATE_STOPPING)
		return;
	EXPLORE_POINT(ATOMIC);
	/* A wake-up too when the PE's own thread (the one that ran its last
	 * turn) frees: it may have armed the PE, and another thread may sleep
	 * on its fd; the stop needs a progress call either way. It costs a
	 * fence only on a PE that ever armed (pe_wake). */
	pe_ready_signal_wake_fenced(run->pe, run->ctx);
}

/* run_needs_visit after its first looks found nothing (engine/pe_ready.h). */
__attribute__((noinline)) bool run_needs_visit_rest(struct doca_ctx *ctx, struct ctx_run *run,
							    enum doca_ctx_state st, bool idle_dev)
{
	struct hw_qp *qp = run->qp;

	EXPLORE_POINT(ATOMIC);
	/* Descriptors on the device: polled every turn. Only polling finds a
	 * verbs CQ's completions; an engine thread's are signalled too, but a
	 * turn that waited for that signal would see each completion one
	 * cross-core hop later (the engine's push into the set, then its CQ
	 * entry): +400 ns on a one-at-a-time copy. A busy context is visited
	 * anyway; an idle one has nothing on the device. Looked at first:
	 * the answer is then true whatever the looks below would find (none
	 * of them has an effect), so the look after a visit whose poll found
	 * nothing does not look at the CQ again (pending's call). on_device
	 * is exact: its one writer is the runner, every caller of this. */
	if (atomic_load_explicit(&run->on_device, memory_order_relaxed) != 0)
		return true;
	if (!idle_dev && qp->ops->pending(qp))
		return true;
	if (run_fatal_stop_due(run))
		return true;
	if (st != DOCA_CTX_STATE_STOPPING)
		return false;
	/* A stopping context is polled until the device has given back every
	 * descriptor (on_device, above), so its stop does not wait for an
	 * engine thread's signal (one preempted after its completions and
	 * before it). */
	return !run->flush_sent || atomic_load_explicit(&ctx->stop_report_owed, memory_order_relaxed) ||
	       (atomic_load_explicit(&ctx->may_finalize, memory_order_acquire) && run_outstanding(run) == 0);
}

bool run_needs_visit(struct doca_ctx *ctx, struct ctx_run *run)
{
	return run_needs_visit_in(ctx, run);
}

bool ctx_ready_detach(struct doca_ctx *ctx)
{
	return ready_node_detach(&ctx->ready);
}

/* ctx's run now, or NULL (inside a read-side section: it stays until the
 * section's end) */
static struct ctx_run *watch_run(struct doca_ctx *ctx)
{
	struct ctx_run *run = rcu_dereference(ctx->run);

	TSAN_ACQUIRE(run); /* what rcu_assign_pointer published (TSan does not see consume) */
	return run;
}

/* Take the head of @p pe's watch list off it, with the reference it held
 * (the caller touches it no more). */
static void watch_pop(struct doca_pe *pe)
{
	struct doca_ctx *ctx = pe->watch_head;

	pe->watch_head = ctx->watch_next;
	if (pe->watch_head == NULL)
		pe->watch_tail = NULL;
	ctx->watch_next = NULL;
	ctx->watch_listed = false;
	ctx_ref_put(ctx);
}

/* Put @p ctx (off the list, its reference held) at @p pe's list's tail. */
static void watch_append(struct doca_pe *pe, struct doca_ctx *ctx)
{
	ctx->watch_next = NULL;
	if (pe->watch_tail == NULL)
		pe->watch_head = ctx;
	else
		pe->watch_tail->watch_next = ctx;
	pe->watch_tail = ctx;
}

/* Move the head of @p pe's (non-empty) watch list to its tail. */
static void watch_rotate(struct doca_pe *pe)
{
	struct doca_ctx *ctx = pe->watch_head;

	if (ctx == pe->watch_tail)
		return;
	pe->watch_head = ctx->watch_next;
	watch_append(pe, ctx);
}

void pe_watch_link(struct doca_pe *pe, struct doca_ctx *ctx)
{
	/* (the explorer's revert: the bits set, the context on no list: no
	 * turn looks at its rings) */
	if (ctx->watch_listed || DOCA_REVERTED("ring_watch_unlisted"))
		return;
	/* A running visit's context is not destroyed (a destroy needs IDLE,
	 * after a stop whose grace period waits for our section): its handle
	 * still holds a reference. */
	if (!ctx_ref_get(ctx)) {
		doca_log(DOCA_LOG_ERROR, "a running context was destroyed");
		abort();
	}
	ctx->watch_listed = true;
	watch_append(pe, ctx); /* FIFO: the oldest watched context is looked at first */
}

void pe_watch_turn(struct doca_pe *pe, uint32_t max_looks)
{
	struct doca_ctx *last = pe->watch_tail, *looked = NULL;
	bool gone = false;

	/* Round robin: at most max_looks contexts from the head, each moved
	 * to the tail after its look (the head is the cursor), none twice. A
	 * context dropped from the list counts toward max_looks too, so a
	 * turn's work stays bounded by it (the ones left wait a turn more). */
	for (uint32_t n = 0; n < max_looks && pe->watch_head != NULL; n++) {
		struct doca_ctx *ctx = pe->watch_head;
		struct ctx_run *run = watch_run(ctx);
		bool end = ctx == last;

		/* stopped, restarted with nothing watched, unwatched by a look,
		 * an arming's walk or a stopping visit: off the list */
		if (run == NULL || !ring_any_watched(run)) {
			watch_pop(pe);
		} else {
			/* READY at cons: the visit its producer's announce would
			 * have brought (pe_ready_after_visit's rule is main's: a
			 * context leaves after an empty visit, a watched one too) */
			if (ring_watch_look(run) != 0)
				(void)pe_ready_signal_fenced(pe, ctx); /* (we are the set's consumer: no wake) */
			gone = gone || run->watch_gone != 0;
			watch_rotate(pe);
			if (looked == NULL)
				looked = ctx;
		}
		if (end)
			break;
	}
	if (!gone)
		return;
	asym_fence_heavy(); /* the looks' clears visible before the relooks; every producer's READY before its watch load */
	/* this turn's looked contexts: from the first moved to the tail */
	for (struct doca_ctx *ctx = looked; ctx != NULL; ctx = ctx->watch_next) {
		struct ctx_run *run = watch_run(ctx); /* (a stop may have retired it since the look) */

		if (run != NULL && ring_watch_relook(run) != 0 && !DOCA_REVERTED("ring_relook_no_signal"))
			(void)pe_ready_signal_fenced(pe, ctx);
	}
}

bool pe_watch_arm_clear(struct doca_pe *pe)
{
	bool cleared = false;

	/* (the explorer's revert: the rings stay watched while the PE sleeps) */
	if (pe->watch_head == NULL || DOCA_REVERTED("ring_arm_keeps_watch"))
		return false;
	doca_rcu_read_lock();
	for (struct doca_ctx *ctx = pe->watch_head; ctx != NULL; ctx = ctx->watch_next) {
		struct ctx_run *run = watch_run(ctx);

		if (run != NULL && ring_watch_clear(run, true) != 0)
			cleared = true;
	}
	doca_rcu_read_unlock();
	return cleared;
}

void pe_watch_arm_look(struct doca_pe *pe)
{
	if (pe->watch_head == NULL)
		return;
	doca_rcu_read_lock();
	while (pe->watch_head != NULL) {
		struct doca_ctx *ctx = pe->watch_head;
		struct ctx_run *run = watch_run(ctx);

		if (run != NULL && ring_watch_relook(run) != 0)
			(void)pe_ready_signal_fenced(pe, ctx); /* (we are the set's consumer: WALK_ARM walks it next) */
		watch_pop(pe);
	}
	doca_rcu_read_unlock();
}

void pe_ready_fini(struct doca_pe *pe)
{
	struct ready_node *n;

	(void)ready_collect_sc(&pe->ready, UINT32_MAX);
	while ((n = ready_pop_sc(&pe->ready)) != NULL) {
		struct doca_ctx *ctx = caa_container_of(n, struct doca_ctx, ready);

		if (ready_release_sc(n)) {
			doca_log(DOCA_LOG_ERROR, "a PE was destroyed with a context still connected");
			abort();
		}
		ctx_ref_put(ctx);
	}
	while (pe->watch_head != NULL)
		watch_pop(pe);
}
