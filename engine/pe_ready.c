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
 *   than the PE's own, which took its guard to free, wakes it too).
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
 * and finds nothing left: its queue pair not always polled, its mailbox
 * idle, none of its rings watched (engine/ring.c, rule W: a watched
 * ring's producer announces nothing), no task the device
 * refused or a submit left for the turn (the run's backlog), nothing on
 * its queue pair that only polling would find (inline work, a CQ with
 * entries), no descriptor on the device at all (run->on_device: a context
 * with one is visited every turn, see run_needs_visit), and no stop to
 * flush or finish. So a completion an engine thread has put but not yet
 * signalled (the thread preempted in between) is found by the next turn,
 * not by its signal; an engine thread signals only a PE that is armed
 * (engine/pe_notify.c, "A backend's completions"), which relies on this
 * rule. The release clears its flag and fences, then this file looks at
 * the same things once more (ready_set.h: no signal lost between the
 * visit and the release). A context kept goes to the tail of the PE's FIFO,
 * so busy contexts take turns. A turn visits the contexts its FIFO holds
 * at its start (kept ones included, so possibly more than TURN_CTXS),
 * stopping early when its records, events or unwatch list are full
 * (engine/pe_progress.c, turn_collect); the rest stay at the head.
 *
 * Lifetime: the set holds a context only while it is QUEUED. A destroy
 * detaches the node; if it was queued, the handle's last reference passes
 * to the PE, which drops it when it meets the node (or when the PE's memory
 * goes, pe_ready_fini, after every signaller's grace period).
 */
#include <stdlib.h>

#include "engine/pe_ready.h"

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
}
