/*
 * engine/pe_ready.h — the ready set's look after a visit, inline in the
 * turn (engine/pe_progress.c); the protocol is engine/pe_ready.c's.
 */
#ifndef DOCA_ENGINE_PE_READY_H
#define DOCA_ENGINE_PE_READY_H

#include "engine/engine.h"

/* run_needs_visit after its first looks found nothing: out of line, so
 * the common answer (nothing) pays no frame for the calls there
 * (engine/pe_ready.c). */
bool run_needs_visit_rest(struct doca_ctx *ctx, struct ctx_run *run, enum doca_ctx_state st, bool idle_dev);

/* run_needs_visit, inline for the release's look (pe_ready_after_visit) */
static inline __attribute__((always_inline)) bool run_needs_visit_in(struct doca_ctx *ctx, struct ctx_run *run)
{
	enum doca_ctx_state st = ctx_state(ctx);
	struct hw_qp *qp = run->qp;

	if (st != DOCA_CTX_STATE_RUNNING && st != DOCA_CTX_STATE_STOPPING)
		return false;
	/* An at-once device's poll does nothing while nothing is posted to it
	 * (hw.h), so it has nothing pending then: no call. on_device is
	 * exact: its one writer is the runner, every caller of this. */
	bool idle_dev = qp->executes_at_once && atomic_load_explicit(&run->on_device, memory_order_relaxed) == 0;

	if (!mailbox_idle(&run->mbox) || run->backlog_head != NULL || qp->always_polled)
		return true;
	if (!idle_dev || st != DOCA_CTX_STATE_RUNNING || run->fatal)
		return run_needs_visit_rest(ctx, run, st, idle_dev);
	/* What the rest finds for a running context with nothing posted to
	 * its at-once device and no fatal completion: no call of pending, no
	 * stop due, and on_device still 0 (exact, above); at the same
	 * explorer point. */
	EXPLORE_POINT(ATOMIC);
	return false;
}

/* The node of ctx, the head of its PE's FIFO (ready_peek_sc), after its
 * visit: kept for the next turn when `more`, else taken out, released and
 * looked at once more (runner guard held, inside a read-side section).
 * Inline in the turn (engine/pe_progress.c), its one caller. */
static inline __attribute__((always_inline)) void pe_ready_after_visit(struct doca_pe *pe, struct doca_ctx *ctx,
								       bool more)
{
	if (more) {
		ready_rotate_sc(&pe->ready);
		return;
	}
	(void)ready_pop_sc(&pe->ready); /* ctx's node */
	if (!ready_release_sc(&ctx->ready)) {
		ctx_ref_put(ctx); /* destroyed while queued: the reference it left us */
		return;
	}
	EXPLORE_POINT(ATOMIC);
	/* The look again after the fence (actors/ready_set.h). The run is
	 * read anew: a stop may have retired it, a start made another. */
	struct ctx_run *run = rcu_dereference(ctx->run);

	TSAN_ACQUIRE(run); /* what rcu_assign_pointer published (TSan does not see consume) */
	if (run != NULL && run_needs_visit_in(ctx, run))
		ready_requeue_sc(&pe->ready, &ctx->ready);
}

#endif /* DOCA_ENGINE_PE_READY_H */
