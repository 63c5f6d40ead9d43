/*
 * hw/verbs/verbs_qp.c — queue pairs: a completion channel, a CQ and an RC QP
 * connected to itself on port 1 (INIT → RTR → RTS with its own QPN, LID, and
 * on RoCE its own GID at index 0); teardown; the completion-channel notify ops.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "hw/verbs/verbs_internal.h"

/* Connection parameters of the loopback QP (the usual rc_pingpong values). */
enum {
	VERBS_PSN = 0,            /* sq_psn == rq_psn: the QP talks to itself */
	VERBS_MIN_RNR_TIMER = 12, /* 0.64 ms; no RNR can happen (no receives) */
	VERBS_TIMEOUT = 14,       /* 4.096 µs * 2^14 = 67 ms local ACK timeout */
	VERBS_RETRY_CNT = 7,
	VERBS_RNR_RETRY = 7,
	VERBS_RD_ATOMIC = 1,      /* the values every provider accepts */
	VERBS_HOP_LIMIT = 1,
};

/** Deepest queue pair accepted (keeps every counter and ring size in 32 bits). */
#define VERBS_MAX_DEPTH (1u << 30)

/** What the loopback path needs to know about port 1. */
struct verbs_port {
	struct ibv_port_attr attr;
	union ibv_gid gid;
	bool global; /* RoCE: address by GID (GRH), not by LID */
};

static uint32_t verbs_pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static uint32_t verbs_min_limit(uint32_t value, uint32_t limit)
{
	return limit && limit < value ? limit : value;
}

static doca_error_t verbs_qp_alloc_rings(struct verbs_qp *qp)
{
	uint32_t stage_slots = verbs_pow2_at_least(qp->depth);
	uint32_t hw_slots = verbs_pow2_at_least(qp->hw_cap);

	qp->stage = calloc(stage_slots, sizeof(*qp->stage));
	qp->hw_cookie = calloc(hw_slots, sizeof(*qp->hw_cookie));
	qp->hw_len = calloc(hw_slots, sizeof(*qp->hw_len));
	if (!qp->stage || !qp->hw_cookie || !qp->hw_len)
		return DOCA_ERROR_NO_MEMORY;
	qp->stage_mask = stage_slots - 1;
	qp->hw_mask = hw_slots - 1;
	return DOCA_SUCCESS;
}

/** Read port 1: it must be ACTIVE; on RoCE also read GID 0. */
static doca_error_t verbs_query_port(struct verbs_qp *qp, struct verbs_port *port)
{
	struct ibv_context *ctx = qp->dev->ctx;
	int rc;

	memset(port, 0, sizeof(*port));
	rc = verbs_calls->query_port(ctx, VERBS_PORT, &port->attr);
	if (rc)
		return verbs_errno_to_doca(verbs_rc_errno(rc));
	if (port->attr.state != IBV_PORT_ACTIVE)
		return DOCA_ERROR_NOT_CONNECTED;
	qp->max_len = port->attr.max_msg_sz ? port->attr.max_msg_sz : UINT32_MAX;
	port->global = port->attr.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (port->global) {
		rc = verbs_calls->query_gid(ctx, VERBS_PORT, VERBS_GID_INDEX, &port->gid);
		if (rc)
			return verbs_errno_to_doca(verbs_rc_errno(rc));
	}
	return DOCA_SUCCESS;
}

static doca_error_t verbs_set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return DOCA_ERROR_OPERATING_SYSTEM;
	return DOCA_SUCCESS;
}

/** Completion channel (non-blocking fd), CQ of hw_cap entries, RC QP. */
static doca_error_t verbs_qp_create_objects(struct verbs_qp *qp)
{
	struct ibv_context *ctx = qp->dev->ctx;
	struct ibv_qp_init_attr init;
	doca_error_t err;

	qp->channel = verbs_calls->create_comp_channel(ctx);
	if (!qp->channel)
		return verbs_errno_to_doca(errno);
	err = verbs_set_nonblocking(qp->channel->fd);
	if (err != DOCA_SUCCESS)
		return err;
	qp->cq = verbs_calls->create_cq(ctx, (int)qp->hw_cap, qp, qp->channel, 0);
	if (!qp->cq)
		return verbs_errno_to_doca(errno);
	memset(&init, 0, sizeof(init));
	init.qp_context = qp;
	init.send_cq = qp->cq;
	init.recv_cq = qp->cq;
	init.cap.max_send_wr = qp->hw_cap;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.qp_type = IBV_QPT_RC;
	init.sq_sig_all = 1;
	qp->qp = verbs_calls->create_qp(qp->dev->pd, &init);
	if (!qp->qp)
		return verbs_errno_to_doca(errno);
	return DOCA_SUCCESS;
}

static doca_error_t verbs_modify(struct verbs_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	int rc = verbs_calls->modify_qp(qp->qp, attr, mask);

	return rc ? verbs_errno_to_doca(verbs_rc_errno(rc)) : DOCA_SUCCESS;
}

/**
 * Connect the RC QP to itself: RESET → INIT (port 1, pkey 0, peers may
 * RDMA WRITE) → RTR (destination = its own QPN and LID, or on RoCE its own
 * GID 0 through a GRH) → RTS.
 */
static doca_error_t verbs_qp_connect(struct verbs_qp *qp, const struct verbs_port *port)
{
	struct ibv_qp_attr a;
	doca_error_t err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = VERBS_PORT;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	err = verbs_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err != DOCA_SUCCESS)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = port->attr.active_mtu;
	a.dest_qp_num = qp->qp->qp_num;
	a.rq_psn = VERBS_PSN;
	a.max_dest_rd_atomic = VERBS_RD_ATOMIC;
	a.min_rnr_timer = VERBS_MIN_RNR_TIMER;
	a.ah_attr.dlid = port->attr.lid;
	a.ah_attr.port_num = VERBS_PORT;
	if (port->global) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = port->gid;
		a.ah_attr.grh.sgid_index = VERBS_GID_INDEX;
		a.ah_attr.grh.hop_limit = VERBS_HOP_LIMIT;
	}
	err = verbs_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER);
	if (err != DOCA_SUCCESS)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = VERBS_PSN;
	a.timeout = VERBS_TIMEOUT;
	a.retry_cnt = VERBS_RETRY_CNT;
	a.rnr_retry = VERBS_RNR_RETRY;
	a.max_rd_atomic = VERBS_RD_ATOMIC;
	return verbs_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_MAX_QP_RD_ATOMIC);
}

/** Release whatever of the queue pair exists, in reverse order of creation. */
static void verbs_qp_release(struct verbs_qp *qp)
{
	int rc;

	if (qp->qp && (rc = verbs_calls->destroy_qp(qp->qp)))
		verbs_warn("ibv_destroy_qp", verbs_rc_errno(rc));
	if (qp->cq && (rc = verbs_calls->destroy_cq(qp->cq)))
		verbs_warn("ibv_destroy_cq", verbs_rc_errno(rc));
	if (qp->channel && (rc = verbs_calls->destroy_comp_channel(qp->channel)))
		verbs_warn("ibv_destroy_comp_channel", verbs_rc_errno(rc));
	free(qp->hw_len);
	free(qp->hw_cookie);
	free(qp->stage);
	free(qp);
}

doca_error_t verbs_qp_create(struct hw_dev *hw, const struct hw_qp_attr *attr, struct hw_qp **out)
{
	struct verbs_dev *dev = verbs_dev_of(hw);
	struct verbs_port port;
	struct verbs_qp *qp;
	doca_error_t err;

	if (!attr || attr->depth == 0 || attr->depth > VERBS_MAX_DEPTH)
		return DOCA_ERROR_INVALID_VALUE;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return DOCA_ERROR_NO_MEMORY;
	qp->hw.ops = &hw_verbs_ops;
	qp->dev = dev;
	qp->depth = attr->depth;
	qp->hw_cap = verbs_min_limit(verbs_min_limit(attr->depth, dev->max_qp_wr), dev->max_cqe);
	err = verbs_qp_alloc_rings(qp);
	if (err == DOCA_SUCCESS)
		err = verbs_query_port(qp, &port);
	if (err == DOCA_SUCCESS)
		err = verbs_qp_create_objects(qp);
	if (err == DOCA_SUCCESS)
		err = verbs_qp_connect(qp, &port);
	if (err != DOCA_SUCCESS) {
		verbs_qp_release(qp);
		return err;
	}
	*out = &qp->hw;
	return DOCA_SUCCESS;
}

void verbs_qp_destroy(struct hw_qp *hw)
{
	verbs_qp_release(verbs_qp_of(hw));
}

int verbs_notify_fd(struct hw_qp *hw)
{
	return verbs_qp_of(hw)->channel->fd;
}

/* Read every event the channel holds (the fd is non-blocking) and ack them. */
static void verbs_channel_drain(struct verbs_qp *qp)
{
	unsigned int events = 0;
	struct ibv_cq *cq;
	void *cq_context;

	while (verbs_calls->get_cq_event(qp->channel, &cq, &cq_context) == 0) {
		if (cq == qp->cq)
			events++;
		else
			verbs_calls->ack_cq_events(cq, 1);
	}
	if (errno != EAGAIN)
		verbs_warn("ibv_get_cq_event", errno);
	if (events) {
		verbs_calls->ack_cq_events(qp->cq, events);
		qp->event_owed = false; /* the arming's one event is spent */
	}
	qp->event_maybe = false; /* the channel is empty now */
}

/*
 * Arm the CQ for the next completion, then look once more: a completion that
 * arrived before the arm raises no event, so it is kept (stash) and
 * verbs_pending reports it — the engine must not sleep on the fd then.
 *
 * An earlier arming whose event was never read (the PE woke for something
 * else, and polling reaped the completion that raised it) may have left
 * that event in the channel: the fd would be readable with nothing to do,
 * waking the PE at once. So a channel is drained first when a completion
 * was polled since such an arming (an idle one costs no read).
 */
doca_error_t verbs_notify_arm(struct hw_qp *hw)
{
	struct verbs_qp *qp = verbs_qp_of(hw);

	if (qp->event_maybe)
		verbs_channel_drain(qp);
	int rc = ibv_req_notify_cq(qp->cq, 0);

	if (rc)
		return verbs_errno_to_doca(verbs_rc_errno(rc));
	qp->event_owed = true;
	verbs_qp_peek(qp);
	return DOCA_SUCCESS;
}

void verbs_notify_ack(struct hw_qp *hw)
{
	verbs_channel_drain(verbs_qp_of(hw));
}
