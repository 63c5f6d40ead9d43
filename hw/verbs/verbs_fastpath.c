/*
 * hw/verbs/verbs_fastpath.c — the verbs backend's fast path: post stages
 * RDMA WRITE work requests, doorbell hands every staged one to the NIC with
 * one ibv_post_send, poll maps work completions to hw_cqe, flush moves the QP
 * to the error state. Only the thread running the owning PE calls these; no
 * allocation, no lock, no system call but the provider's own.
 *
 * The stage ring / hw FIFO layout is described on struct verbs_qp.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hw/verbs/verbs_internal.h"

/** Work completions read per ibv_poll_cq call. */
#define VERBS_POLL_BATCH 32u

static inline struct verbs_slot *verbs_stage_slot(struct verbs_qp *qp, uint32_t i)
{
	return &qp->stage[i & qp->stage_mask];
}

static inline uint32_t verbs_hw_owned(const struct verbs_qp *qp)
{
	return qp->hw_tail - qp->hw_head;
}

/**
 * Stop giving descriptors to the NIC; staged and later ones complete locally
 * with @p status. The first reason wins, except flush, which always sets
 * FLUSHED (verbs_flush).
 */
static void verbs_qp_break(struct verbs_qp *qp, uint32_t status, doca_error_t error, bool fatal)
{
	if (qp->broken)
		return;
	qp->broken = true;
	qp->local.status = status;
	qp->local.error = error;
	qp->local.fatal = fatal;
}

/* Move the QP to the error state: the NIC stops taking WRs and completes
 * (flushes) every one it owns that it has not started. */
static void verbs_qp_to_error(struct verbs_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	int rc = verbs_calls->modify_qp(qp->qp, &attr, IBV_QP_STATE);

	if (rc)
		verbs_warn("ibv_modify_qp(ERR)", verbs_rc_errno(rc));
}

/** ibv_poll_cq failed: the CQ can no longer be trusted; what the NIC owns
 *  fails, and the QP goes to the error state so that the NIC does not go
 *  on writing destinations whose tasks were reported FAILED. */
static void verbs_qp_cq_failed(struct verbs_qp *qp)
{
	qp->cq_lost = true;
	verbs_qp_break(qp, HW_CQE_FAILED, DOCA_ERROR_DRIVER, true);
	verbs_qp_to_error(qp);
}

/** True if the oldest staged descriptor completes without the NIC now. */
static bool verbs_qp_local_ready(struct verbs_qp *qp)
{
	if (qp->stage_head == qp->stage_tail)
		return false;
	/* Broken (flushed, or an error): the NIC's descriptors are older, so
	 * the staged ones complete after the NIC has given every one back
	 * (its flush completions), unless its CQ is lost: then they fail here. */
	if (qp->broken)
		return qp->cq_lost || verbs_hw_owned(qp) == 0;
	/* Longer than one WRITE may be: refused once doorbelled. */
	return qp->stage_head != qp->stage_rung &&
	       verbs_stage_slot(qp, qp->stage_head)->len > qp->max_len;
}

uint32_t verbs_post(struct hw_qp *hw, const struct hw_desc *descs, uint32_t n)
{
	struct verbs_qp *qp = verbs_qp_of(hw);
	uint32_t room = qp->depth - qp->inflight;

	if (n > room)
		n = room;
	for (uint32_t i = 0; i < n; i++) {
		const struct hw_desc *d = &descs[i];
		struct verbs_slot *s = verbs_stage_slot(qp, qp->stage_tail++);

		s->len = d->len;
		s->sge.addr = (uintptr_t)d->src;
		s->sge.length = (uint32_t)d->len; /* used only when len <= max_len */
		s->sge.lkey = verbs_mr_of(d->src_mr)->mr->lkey;
		s->wr.wr_id = d->cookie;
		s->wr.next = NULL;
		s->wr.sg_list = &s->sge;
		s->wr.num_sge = 1;
		s->wr.opcode = IBV_WR_RDMA_WRITE;
		s->wr.send_flags = IBV_SEND_SIGNALED;
		s->wr.wr.rdma.remote_addr = (uintptr_t)d->dst;
		s->wr.wr.rdma.rkey = verbs_mr_of(d->dst_mr)->mr->rkey;
	}
	qp->inflight += n;
	return n;
}

/**
 * Hand the doorbelled descriptors to the NIC, as many as its queues have room
 * for, as one chain and one ibv_post_send. A refused post breaks the queue
 * pair: the refused descriptors and every later one fail (fatal).
 */
static void verbs_qp_push(struct verbs_qp *qp)
{
	uint32_t room = qp->hw_cap - verbs_hw_owned(qp);
	struct verbs_slot *first = NULL, *prev = NULL;
	struct ibv_send_wr *bad = NULL;
	uint32_t count = 0, posted;
	int rc;

	if (qp->broken)
		return;
	while (count < room && qp->stage_head + count != qp->stage_rung) {
		struct verbs_slot *s = verbs_stage_slot(qp, qp->stage_head + count);

		if (s->len > qp->max_len)
			break;
		s->wr.next = NULL;
		if (prev)
			prev->wr.next = &s->wr;
		else
			first = s;
		prev = s;
		count++;
	}
	if (!count)
		return;
	rc = ibv_post_send(qp->qp, &first->wr, &bad);
	posted = count;
	if (rc) {
		/* WRs before bad_wr were posted; bad_wr and the rest were not. */
		for (posted = 0; bad && posted < count; posted++)
			if (&verbs_stage_slot(qp, qp->stage_head + posted)->wr == bad)
				break;
		if (!bad)
			posted = 0;
		verbs_qp_break(qp, HW_CQE_FAILED, verbs_errno_to_doca(verbs_rc_errno(rc)), true);
	}
	for (uint32_t i = 0; i < posted; i++) {
		struct verbs_slot *s = verbs_stage_slot(qp, qp->stage_head++);
		uint32_t h = qp->hw_tail++ & qp->hw_mask;

		qp->hw_cookie[h] = s->wr.wr_id;
		qp->hw_len[h] = s->len;
	}
}

void verbs_doorbell(struct hw_qp *hw)
{
	struct verbs_qp *qp = verbs_qp_of(hw);

	qp->stage_rung = qp->stage_tail;
	verbs_qp_push(qp);
}

/** Turn the completion of the oldest WR the NIC owns into @p cqe. */
static void verbs_qp_complete_wc(struct verbs_qp *qp, const struct ibv_wc *wc, struct hw_cqe *cqe)
{
	uint32_t h = qp->hw_head++ & qp->hw_mask;

	if (wc->wr_id != qp->hw_cookie[h]) {
		/* An RC send queue completes in posting order: broken invariant. */
		fprintf(stderr, "doca-core verbs: completion %#llx out of order (expected %#llx)\n",
			(unsigned long long)wc->wr_id, (unsigned long long)qp->hw_cookie[h]);
		abort();
	}
	cqe->cookie = wc->wr_id;
	verbs_wc_status_to_cqe(wc->status, cqe);
	/* A send completion's byte_len is undefined: the length is ours. */
	cqe->bytes = cqe->status == HW_CQE_OK ? qp->hw_len[h] : 0;
	if (wc->status == IBV_WC_SUCCESS)
		return;
	/* A flush nothing explains: the QP died on an asynchronous error. */
	if (wc->status == IBV_WC_WR_FLUSH_ERR && !qp->broken)
		cqe->fatal = true;
	/* The QP is in the error state: what was not posted is flushed. */
	verbs_qp_break(qp, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
}

/** Reap completions of the WRs the NIC owns (all fail if the CQ was lost). */
static uint32_t verbs_qp_reap(struct verbs_qp *qp, struct hw_cqe *cqes, uint32_t max)
{
	struct ibv_wc wc[VERBS_POLL_BATCH];
	uint32_t n = 0;

	while (n < max && verbs_hw_owned(qp)) {
		uint32_t want = max - n;
		int got;

		if (qp->cq_lost) {
			uint32_t h = qp->hw_head++ & qp->hw_mask;

			cqes[n++] = (struct hw_cqe){ .cookie = qp->hw_cookie[h],
						     .status = HW_CQE_FAILED,
						     .error = DOCA_ERROR_DRIVER,
						     .fatal = true };
			continue;
		}
		if (want > VERBS_POLL_BATCH)
			want = VERBS_POLL_BATCH;
		if (want > verbs_hw_owned(qp))
			want = verbs_hw_owned(qp);
		got = ibv_poll_cq(qp->cq, (int)want, wc);
		if (got < 0) {
			verbs_qp_cq_failed(qp);
			continue;
		}
		if (got > 0 && qp->event_owed)
			qp->event_maybe = true; /* it may have raised the arming's event */
		for (int i = 0; i < got; i++)
			verbs_qp_complete_wc(qp, &wc[i], &cqes[n++]);
		if ((uint32_t)got < want)
			break;
	}
	return n;
}

/** Complete staged descriptors that will never reach the NIC. */
static uint32_t verbs_qp_complete_local(struct verbs_qp *qp, struct hw_cqe *cqes, uint32_t max)
{
	uint32_t n = 0;

	while (n < max && verbs_qp_local_ready(qp)) {
		struct verbs_slot *s = verbs_stage_slot(qp, qp->stage_head);
		struct hw_cqe *cqe = &cqes[n++];

		cqe->cookie = s->wr.wr_id;
		cqe->bytes = 0;
		if (qp->broken) {
			cqe->status = qp->local.status;
			cqe->error = qp->local.error;
			cqe->fatal = qp->local.fatal;
		} else {
			cqe->status = HW_CQE_FAILED;
			cqe->error = DOCA_ERROR_NOT_SUPPORTED;
			cqe->fatal = false;
		}
		/* Keep stage_head <= stage_rung: a flush also takes un-rung slots. */
		if (qp->stage_rung == qp->stage_head)
			qp->stage_rung++;
		qp->stage_head++;
	}
	return n;
}

uint32_t verbs_poll(struct hw_qp *hw, struct hw_cqe *cqes, uint32_t max)
{
	struct verbs_qp *qp = verbs_qp_of(hw);
	uint32_t n = 0;

	if (qp->stash_valid && max) {
		qp->stash_valid = false;
		verbs_qp_complete_wc(qp, &qp->stash, &cqes[n++]);
	}
	n += verbs_qp_reap(qp, cqes + n, max - n);
	n += verbs_qp_complete_local(qp, cqes + n, max - n);
	qp->inflight -= n;
	/* Completions made room in the NIC's queues: send what waits for it. */
	verbs_qp_push(qp);
	return n;
}

void verbs_qp_peek(struct verbs_qp *qp)
{
	int got;

	if (qp->stash_valid || qp->cq_lost || !verbs_hw_owned(qp))
		return;
	got = ibv_poll_cq(qp->cq, 1, &qp->stash);
	if (got > 0) {
		qp->stash_valid = true;
		qp->event_maybe = qp->event_owed; /* before or after the arming: unknown */
	}
	else if (got < 0)
		verbs_qp_cq_failed(qp);
}

/*
 * True when poll would return a completion right now without the NIC
 * raising an event: a stashed completion, or descriptors that complete
 * locally (flushed, refused, too long). Completions the NIC still owes wake
 * the engine through the completion channel (notify_fd), not through here.
 */
bool verbs_pending(struct hw_qp *hw)
{
	struct verbs_qp *qp = verbs_qp_of(hw);

	return qp->stash_valid || verbs_qp_local_ready(qp) || (qp->cq_lost && verbs_hw_owned(qp));
}

/*
 * Move the QP to the error state: the NIC completes every WR it owns with
 * IBV_WC_WR_FLUSH_ERR (a WR it had already finished completes normally);
 * staged and later descriptors complete locally as FLUSHED.
 */
void verbs_flush(struct hw_qp *hw)
{
	struct verbs_qp *qp = verbs_qp_of(hw);

	if (qp->flushed)
		return;
	qp->flushed = true;
	qp->broken = true;
	qp->local = (struct verbs_local_status){ .status = HW_CQE_FLUSHED,
						 .error = DOCA_ERROR_SHUTDOWN,
						 .fatal = false };
	verbs_qp_to_error(qp);
}
