/*
 * hw/fabric/fabric_fastpath.c — post, doorbell, poll, pending, flush of a
 * fab0 queue pair (only the thread running its PE calls them).
 *
 * A copy with a remote source is fi_readmsg; with a remote destination it
 * is fi_writemsg with FI_DELIVERY_COMPLETE passed in the call's flags (a
 * tx attribute default is not enough: libfabric 1.17's tcp ignores it), so
 * the completion means the bytes are in the peer's memory. A copy between
 * two local memories is a memmove made at doorbell, its completion queued.
 * The provider may refuse an operation with -FI_EAGAIN (connecting; or a
 * dead peer, for as long as it likes): it stays first in line and is
 * retried by every poll until its deadline (retry_ms), then fails with
 * DOCA_ERROR_CONNECTION_RESET, so no task waits forever for a peer. A PE
 * in event mode sleeps between those retries (a backoff, the queue pair's
 * timer: struct fab_qp's retry_at_ns) instead of finding work at every arm.
 *
 * An operation the provider accepted has a deadline too, retry_ms after
 * it was accepted: a peer that stops serving with the connection up (its
 * PE stopped, or never runs) never completes it, and neither TCP nor the
 * provider would say so. The poll that finds one past its deadline
 * replaces the endpoint and its CQ (fab_qp_remake), which drops every
 * operation the old one held (none touches our memory after the close),
 * fails each with CONNECTION_RESET, and holds the late one's peer down as
 * for a refusal. The queue pair's timer wakes a PE asleep in event mode
 * for it; if no new CQ can be made, for the next attempt, a backoff as for
 * a refusal (expire_step_ns).
 *
 * A reset connection. rxm learns that a peer dropped the connection (an
 * exporter cuts them all when it destroys an exported memory) only from
 * the next operation on it, which fails with a connection error however
 * long after the cut it was posted. So an operation the provider failed
 * that way is issued once more, on the new endpoint made once nothing is
 * in flight (ep_broken), before anything newer: the first access after a
 * cut connects again instead of failing, and one in flight during it ends
 * as its memory decides (done, or NOT_PERMITTED through a revoked key). A
 * second failure is final. Issuing again is safe: a READ reads the same
 * bytes, a WRITE writes the same bytes to the same place, and the peer's
 * key check applies again.
 */
#include <string.h>

#include "actors/hb_annotate.h"
#include "hw/fabric/fabric_internal.h"

#define CQ_BATCH 32u

/* A completion made here, as a device's: what moved its bytes (a memmove
 * here, the provider's calls on this thread) happens before whoever gets
 * the event (actors/hb_annotate.h; sw0 does the same in sw_qp.c). */
static void done_push(struct fab_qp *qp, uint64_t cookie, uint64_t bytes, uint32_t status,
		      doca_error_t error)
{
	hb_release((const void *)(uintptr_t)cookie);
	qp->done[qp->done_tail++ & qp->mask] =
		(struct hw_cqe){ .cookie = cookie, .bytes = bytes, .status = status, .error = error };
}

static uint32_t done_take(struct fab_qp *qp, struct hw_cqe *cqes, uint32_t max)
{
	uint32_t n = 0;

	while (n < max && qp->done_head != qp->done_tail)
		cqes[n++] = qp->done[qp->done_head++ & qp->mask];
	return n;
}

uint32_t fab_post(struct hw_qp *hw, const struct hw_desc *descs, uint32_t n)
{
	struct fab_qp *qp = fab_qp_of(hw);
	uint32_t i;

	for (i = 0; i < n && qp->pend_tail - qp->pend_head <= qp->mask; i++)
		qp->pend[qp->pend_tail++ & qp->mask] = (struct fab_pending){ .d = descs[i] };
	return i;
}

/* Hand one RMA to the provider: 0, or its -FI_E* refusal. */
static ssize_t rma_issue(struct fab_qp *qp, const struct hw_desc *d, struct fab_slot *slot)
{
	const struct fab_mr *src = fab_mr_of(d->src_mr), *dst = fab_mr_of(d->dst_mr);
	bool write = dst->remote;
	const struct fab_mr *local = write ? src : dst, *remote = write ? dst : src;
	/* A remote memory's address is NULL: the buffer's address is its offset. */
	uint64_t off = (uint64_t)(uintptr_t)(write ? d->dst : d->src);
	struct iovec iov = { .iov_base = write ? d->src : d->dst, .iov_len = d->len };
	void *desc = local->desc;
	struct fi_rma_iov rma = { .addr = remote->base + off, .len = d->len, .key = remote->key };
	struct fi_msg_rma msg = {
		.msg_iov = &iov,
		.desc = &desc,
		.iov_count = 1,
		.addr = remote->peer->fa,
		.rma_iov = &rma,
		.rma_iov_count = 1,
		.context = &slot->fctx,
	};

	return write ? fi_writemsg(qp->ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE)
		     : fi_readmsg(qp->ep, &msg, FI_COMPLETION);
}

/* True while the peer is held down (its operations ran out their retry
 * time not long ago): fail at once rather than wait again. */
static bool peer_held_down(struct fab_peer *peer)
{
	uint64_t until = atomic_load_explicit(&peer->dead_until_ns, memory_order_relaxed);

	return until != 0 && fab_now_ns() < until;
}

/* The provider refused the next descriptor for now, at @p now (its
 * deadline: @p deadline): an armed PE tries again after a backoff. */
/* The next step of a backoff after @p step (0: none yet). */
static uint64_t backoff_step(uint64_t step)
{
	return step == 0 ? FAB_RETRY_STEP_MIN_NS
	       : step * 2u > FAB_RETRY_STEP_MAX_NS ? FAB_RETRY_STEP_MAX_NS : step * 2u;
}

static void refused_for_now(struct fab_qp *qp, uint64_t now, uint64_t deadline)
{
	qp->retry_step_ns = backoff_step(qp->retry_step_ns);
	qp->retry_at_ns = now + qp->retry_step_ns < deadline ? now + qp->retry_step_ns : deadline;
}

/* The provider took @p slot's operation, due by @p deadline. */
static void slot_accepted(struct fab_qp *qp, struct fab_slot *slot, struct fab_peer *peer,
			  uint64_t deadline)
{
	slot->deadline_ns = deadline;
	slot->peer = peer;
	slot->in_flight = true;
	if (fab_in_flight(qp) == 1) /* the only one: every other deadline went */
		qp->next_expiry_ns = deadline;
	/* A PE asleep in event mode (it armed once: watching) wakes for it
	 * even if this was posted while it slept; a timer set earlier rings
	 * first, and the arm after it sets the next. */
	if (qp->watching && qp->timer_at_ns == 0)
		fab_qp_timer_set(qp, deadline);
}

/* If an operation in flight is past its deadline: replace the endpoint
 * and fail everything it held (see the top). */
static void expire_stalled(struct fab_qp *qp)
{
	uint64_t now = fab_now_ns(), first = UINT64_MAX;

	if (now < qp->next_expiry_ns)
		return;
	for (uint32_t i = 0; i <= qp->mask; i++)
		if (qp->slots[i].in_flight && qp->slots[i].deadline_ns < first)
			first = qp->slots[i].deadline_ns;
	qp->next_expiry_ns = first;
	if (first > now)
		return;
	if (!fab_qp_remake(qp)) {
		/* No memory for a new CQ: tried again after a backoff, the
		 * timer of an armed PE set for it. Left at the deadline gone,
		 * the arm kept the timer that rang (unread, readable) and an
		 * event-mode PE woke at once for as long as it failed (a
		 * review). */
		qp->expire_step_ns = backoff_step(qp->expire_step_ns);
		qp->next_expiry_ns = now + qp->expire_step_ns;
		return;
	}
	qp->expire_step_ns = 0;
	uint64_t retry = (uint64_t)qp->dev->params.retry_ms * 1000000ull;

	for (uint32_t i = 0; i <= qp->mask; i++) {
		struct fab_slot *slot = &qp->slots[i];

		if (!slot->in_flight)
			continue;
		if (slot->deadline_ns <= now) /* its peer is held down, as for a refusal */
			atomic_store_explicit(&slot->peer->dead_until_ns, now + retry, memory_order_relaxed);
		slot->in_flight = false;
		done_push(qp, slot->cookie, 0, HW_CQE_FAILED, DOCA_ERROR_CONNECTION_RESET);
		qp->free_slots[qp->nfree++] = slot;
	}
	qp->next_expiry_ns = 0;
}

/* End a slot that waited to be issued again: @p status, @p error. */
static void again_end(struct fab_qp *qp, struct fab_slot *slot, uint32_t status, doca_error_t error)
{
	slot->again = false;
	qp->nagain--;
	done_push(qp, slot->cookie, 0, status, error);
	qp->free_slots[qp->nfree++] = slot;
}

/* Issue again the operations whose connection was found reset (see the
 * top), on the endpoint made since; or end them: flushed by a stop (after
 * what the provider holds, as a descriptor never issued), failed with no
 * endpoint or their peer held down. False while the provider refuses one
 * for now: nothing newer may go first. */
static bool issue_again(struct fab_qp *qp)
{
	uint64_t now = fab_now_ns(), retry = (uint64_t)qp->dev->params.retry_ms * 1000000ull;

	for (uint32_t i = 0; i <= qp->mask && qp->nagain != 0; i++) {
		struct fab_slot *slot = &qp->slots[i];

		if (!slot->again)
			continue;
		if (qp->flushed) {
			again_end(qp, slot, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN);
			continue;
		}
		if (qp->ep == NULL || peer_held_down(slot->peer)) {
			again_end(qp, slot, HW_CQE_FAILED, DOCA_ERROR_CONNECTION_RESET);
			continue;
		}
		ssize_t rc = rma_issue(qp, &slot->d, slot);

		if (rc == 0) {
			slot->again = false;
			slot->issued_again = true;
			qp->nagain--;
			slot_accepted(qp, slot, slot->peer, now + retry);
		} else if (rc != -FI_EAGAIN) {
			again_end(qp, slot, HW_CQE_FAILED, fab_errno_to_doca((int)-rc, 0));
		} else if (slot->again_by_ns == 0 || now < slot->again_by_ns) {
			if (slot->again_by_ns == 0)
				slot->again_by_ns = now + retry;
			refused_for_now(qp, now, slot->again_by_ns);
			return false; /* poll retries it */
		} else { /* out of time, as a descriptor refused for now */
			atomic_store_explicit(&slot->peer->dead_until_ns, now + retry, memory_order_relaxed);
			again_end(qp, slot, HW_CQE_FAILED, DOCA_ERROR_CONNECTION_RESET);
		}
	}
	return true;
}

/* A flush completes what waits here only after the operations the
 * provider holds, which are older: a stop's events come in submission
 * order. */
static bool flush_waits(const struct fab_qp *qp)
{
	return qp->flushed && fab_in_flight(qp) != 0;
}

/* Give the doorbelled descriptors to the provider (or complete them here)
 * in order, until one is refused for now. */
static void issue(struct fab_qp *qp)
{
	if (qp->ep_broken && !qp->flushed) {
		if (fab_in_flight(qp) != 0)
			return; /* poll reaps the endpoint's last operations first */
		/* Failed (no CQ could be made): the next issue tries again,
		 * and this one goes on with the old endpoint, which still
		 * reaches the peers whose connections it kept; an operation on
		 * a closed one fails, is issued again on it, and its second
		 * failure is final (CONNECTION_RESET): one event each
		 * (test_fab_unit: broken_endpoint_not_replaceable_one_event_each). */
		(void)fab_qp_remake(qp);
	}
	if (flush_waits(qp))
		return; /* poll reaps the provider's operations first: they are older */
	/* (an endpoint made, or none could be: then they fail) */
	if (qp->nagain != 0 && !issue_again(qp))
		return; /* they are older than anything pending */
	while (qp->pend_head != qp->pend_rung) {
		struct fab_pending *p = &qp->pend[qp->pend_head & qp->mask];
		const struct hw_desc *d = &p->d;
		const struct fab_mr *src = fab_mr_of(d->src_mr), *dst = fab_mr_of(d->dst_mr);

		hb_acquire((const void *)(uintptr_t)d->cookie); /* the submitter's writes first */
		if (qp->flushed) {
			done_push(qp, d->cookie, 0, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN);
		} else if (!src->remote && !dst->remote) {
			memmove(d->dst, d->src, d->len); /* the ranges may overlap, as on sw0 */
			done_push(qp, d->cookie, d->len, HW_CQE_OK, DOCA_SUCCESS);
		} else if (src->remote && dst->remote) { /* the engine refuses it first */
			done_push(qp, d->cookie, 0, HW_CQE_FAILED, DOCA_ERROR_NOT_SUPPORTED);
		} else if (d->len > qp->dev->max_msg) {
			done_push(qp, d->cookie, 0, HW_CQE_FAILED, DOCA_ERROR_NOT_SUPPORTED);
		} else if (qp->ep == NULL || peer_held_down((src->remote ? src : dst)->peer)) {
			/* (no endpoint: a stalled one was closed and no new one
			 * could be made yet) */
			done_push(qp, d->cookie, 0, HW_CQE_FAILED, DOCA_ERROR_CONNECTION_RESET);
		} else {
			struct fab_peer *peer = (src->remote ? src : dst)->peer;
			struct fab_slot *slot = qp->free_slots[--qp->nfree];

			slot->cookie = d->cookie;
			slot->len = d->len;
			slot->d = *d;
			slot->again_by_ns = 0;
			slot->issued_again = false;
			ssize_t rc = rma_issue(qp, d, slot);
			uint64_t now = fab_now_ns();
			uint64_t retry = (uint64_t)qp->dev->params.retry_ms * 1000000ull;

			if (rc == 0)
				slot_accepted(qp, slot, peer, now + retry);
			else
				qp->free_slots[qp->nfree++] = slot;
			if (rc == -FI_EAGAIN) {
				if (p->deadline_ns == 0)
					p->deadline_ns = now + retry;
				if (now < p->deadline_ns) {
					refused_for_now(qp, now, p->deadline_ns);
					return; /* poll retries it */
				}
				/* Out of time: fail it, and the peer's next ones at once
				 * for as long again. */
				atomic_store_explicit(&peer->dead_until_ns, now + retry, memory_order_relaxed);
				done_push(qp, d->cookie, 0, HW_CQE_FAILED, DOCA_ERROR_CONNECTION_RESET);
			} else if (rc != 0) {
				done_push(qp, d->cookie, 0, HW_CQE_FAILED, fab_errno_to_doca((int)-rc, 0));
			}
		}
		qp->pend_head++;
	}
	qp->retry_at_ns = qp->retry_step_ns = 0; /* nothing refused waits */
}

void fab_doorbell(struct hw_qp *hw)
{
	struct fab_qp *qp = fab_qp_of(hw);
	uint32_t before = qp->done_tail;

	qp->pend_rung = qp->pend_tail;
	issue(qp);
	if (qp->done_tail != before) {
		/* Completions made here, not by the provider: the PE may be
		 * armed and asleep, so wake it (hw_qp_attr.wake: after a fence). */
		atomic_thread_fence(memory_order_seq_cst);
		qp->wake(qp->wake_arg, NULL, NULL);
	}
}

void fab_kick(struct hw_qp *hw)
{
	(void)hw; /* the doorbell reached the provider */
}

/* Read up to max completions of the queue pair's CQ into cqes. */
static uint32_t cq_take(struct fab_qp *qp, struct hw_cqe *cqes, uint32_t max)
{
	struct fi_cq_entry ents[CQ_BATCH];
	uint32_t n = 0;

	while (n < max) {
		size_t want = max - n < CQ_BATCH ? max - n : CQ_BATCH;
		ssize_t rc = fi_cq_read(qp->cq, ents, want);

		if (rc > 0) {
			for (ssize_t i = 0; i < rc; i++) {
				struct fab_slot *slot = ents[i].op_context;

				slot->in_flight = false;
				/* the provider moved the bytes in calls on this thread */
				hb_release((const void *)(uintptr_t)slot->cookie);
				cqes[n++] = (struct hw_cqe){ .cookie = slot->cookie, .bytes = slot->len,
							     .status = HW_CQE_OK };
				qp->free_slots[qp->nfree++] = slot;
			}
			continue;
		}
		if (rc != -FI_EAVAIL)
			break;
		struct fi_cq_err_entry e = { 0 };

		if (fi_cq_readerr(qp->cq, &e, 0) != 1)
			break;
		struct fab_slot *slot = e.op_context;

		/* Any failed RMA: 1.17's tcp target closes the connection after
		 * refusing a key, and rxm keeps the closed one. */
		qp->ep_broken = true;
		if (slot == NULL)
			continue; /* the endpoint's own error (rxm writes one with no
				   * operation): its operations end by their deadline */
		doca_error_t error = fab_errno_to_doca(e.err, e.prov_errno);

		slot->in_flight = false;
		if (error == DOCA_ERROR_CONNECTION_RESET && !slot->issued_again && !qp->flushed) {
			slot->again = true; /* once more, on the new endpoint (see the top) */
			qp->nagain++;
			continue;
		}
		hb_release((const void *)(uintptr_t)slot->cookie);
		cqes[n++] = (struct hw_cqe){ .cookie = slot->cookie, .status = HW_CQE_FAILED, .error = error };
		qp->free_slots[qp->nfree++] = slot;
	}
	return n;
}

/* Progress the service endpoint (peers' RMA into our exported memory):
 * its CQ reports nothing of its own, reading it is what moves the data. */
static void serve(struct fab_dev *dev)
{
	struct fi_cq_entry ents[CQ_BATCH];
	struct fi_cq_err_entry e;

	/* relaxed: an export made on another thread is served from the next
	 * poll that sees it; the peer's first operations retry until then. */
	if (!atomic_load_explicit(&dev->exported, memory_order_relaxed))
		return;
	if (pthread_mutex_trylock(&dev->serve_lock) != 0)
		return; /* another queue pair's PE is at it */
	/* a renew failed (the port taken, memory short): try again each
	 * retry_ms, so the other exports come back without a new export */
	if (dev->ep == NULL && fab_now_ns() >= dev->renew_after_ns)
		(void)fab_service_renew(dev);
	while (dev->cq != NULL) {
		ssize_t rc = fi_cq_read(dev->cq, ents, CQ_BATCH);

		if (rc == -FI_EAVAIL)
			rc = fi_cq_readerr(dev->cq, &e, 0);
		if (rc <= 0)
			break;
	}
	pthread_mutex_unlock(&dev->serve_lock);
}

uint32_t fab_poll(struct hw_qp *hw, struct hw_cqe *cqes, uint32_t max)
{
	struct fab_qp *qp = fab_qp_of(hw);
	uint32_t n = done_take(qp, cqes, max);

	qp->must_poll = false;
	/* Nothing of ours in flight: no completion to read (and each read is
	 * a provider progress call, a system call with tcp). */
	if (n < max && fab_in_flight(qp) != 0)
		n += cq_take(qp, cqes + n, max - n);
	if (fab_in_flight(qp) != 0) {
		expire_stalled(qp);
		n += done_take(qp, cqes + n, max - n);
	}
	serve(qp->dev);
	if (qp->pend_head != qp->pend_rung || qp->nagain != 0) {
		issue(qp);
		n += done_take(qp, cqes + n, max - n);
	}
	return n;
}

bool fab_pending(struct hw_qp *hw)
{
	struct fab_qp *qp = fab_qp_of(hw);
	/* What waits for a flush, or for a broken endpoint's last operations
	 * (issue replaces it only then), is not work yet: their completions
	 * (the CQ's fd) or deadlines (the timer's) bring the poll that moves
	 * it. Counted as work, it made an armed PE fire at every arm: a busy
	 * loop (found by a review). */
	bool blocked = flush_waits(qp) || (qp->ep_broken && !qp->flushed && fab_in_flight(qp) != 0);

	/* Nor is one the provider refused for now, until its retry (the
	 * timer's, fab_notify_arm) */
	if (!blocked && qp->retry_at_ns != 0 && fab_now_ns() < qp->retry_at_ns)
		blocked = true;
	return qp->must_poll || qp->done_head != qp->done_tail ||
	       (!blocked && (qp->nagain != 0 || qp->pend_head != qp->pend_rung));
}

void fab_flush(struct hw_qp *hw)
{
	struct fab_qp *qp = fab_qp_of(hw);

	qp->flushed = true;
	qp->pend_rung = qp->pend_tail;
	issue(qp);
}
