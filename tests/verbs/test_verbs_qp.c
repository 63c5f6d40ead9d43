/*
 * tests/verbs/test_verbs_qp.c — the verbs backend's queue pairs against the
 * fake: the loopback connection (INIT → RTR → RTS on IB and on RoCE), queue
 * sizes, teardown order, every slow-path failure of qp_create, and the
 * completion-channel notify ops (fd, arm, ack, the arm/complete race).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tests/verbs/verbs_test.h"

TestSuite(verbs_qp, .init = vt_setup, .fini = vt_teardown);

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static struct fake_dev_config roce_config(void)
{
	struct fake_dev_config cfg = fake_verbs_default_config();

	cfg.link_layer = IBV_LINK_LAYER_ETHERNET;
	memset(cfg.gid.raw, 0, sizeof(cfg.gid.raw));
	cfg.gid.raw[10] = 0xff;
	cfg.gid.raw[11] = 0xff;
	cfg.gid.raw[12] = 192;
	cfg.gid.raw[13] = 168;
	cfg.gid.raw[14] = 7;
	cfg.gid.raw[15] = 9;
	return cfg;
}

/* ---- the loopback connection ---- */

VT_TEST(verbs_qp, create_connects_rc_qp_to_itself_on_infiniband)
{
	struct hw_dev *dev = vt_open("mlx5_0");
	struct hw_qp *qp;
	struct verbs_qp *vqp;
	struct fake_qp *f;
	const struct ibv_qp_attr *init, *rtr, *rts;

	fake_verbs_trace_clear();
	qp = vt_qp_create(dev, 64);
	vqp = verbs_qp_of(qp);
	f = fake_qp_of(vqp->qp);
	cr_assert_str_eq(fake_verbs_trace(), "query_port create_comp_channel create_cq create_qp "
					     "modify_qp:INIT modify_qp:RTR modify_qp:RTS");
	cr_assert_eq(vqp->qp->state, IBV_QPS_RTS);
	cr_assert_eq(f->n_modify, 3);
	init = &f->modify[0];
	rtr = &f->modify[1];
	rts = &f->modify[2];

	cr_assert_eq(init->qp_state, IBV_QPS_INIT);
	cr_assert_eq(init->port_num, 1);
	cr_assert_eq(init->pkey_index, 0);
	cr_assert_eq(init->qp_access_flags, IBV_ACCESS_REMOTE_WRITE, "only RDMA WRITE may land");

	cr_assert_eq(rtr->qp_state, IBV_QPS_RTR);
	cr_assert_eq(rtr->dest_qp_num, vqp->qp->qp_num, "connected to itself");
	cr_assert_eq(rtr->ah_attr.dlid, 0x11, "its own LID");
	cr_assert_eq(rtr->ah_attr.is_global, 0);
	cr_assert_eq(rtr->ah_attr.port_num, 1);
	cr_assert_eq(rtr->path_mtu, IBV_MTU_1024, "the port's active MTU");
	cr_assert_eq(rtr->rq_psn, rts->sq_psn, "it receives the PSNs it sends");
	cr_assert_eq(fake_verbs_calls(FAKE_QUERY_GID), 0, "no GID on InfiniBand");

	cr_assert_eq(rts->qp_state, IBV_QPS_RTS);
	cr_assert_eq(rts->retry_cnt, 7, "the most retries a QP may have");
	cr_assert_eq(rts->timeout, 14, "4.096 us * 2^14: a 67 ms ACK timeout");

	cr_assert_eq(f->init.qp_type, IBV_QPT_RC);
	cr_assert_eq(f->init.sq_sig_all, 1, "every WR signalled");
	cr_assert_eq(f->init.cap.max_send_wr, 64);
	cr_assert_eq(f->init.cap.max_send_sge, 1);
	cr_assert_eq(f->init.send_cq, vqp->cq);
	cr_assert_eq(f->init.recv_cq, vqp->cq);
	cr_assert_eq(vqp->cq->cqe, 64);
	cr_assert_eq(vqp->cq->channel, vqp->channel);
	cr_assert_eq(vqp->depth, 64);
	cr_assert_eq(vqp->hw_cap, 64);
	cr_assert_eq(vqp->max_len, 1u << 31);

	fake_verbs_trace_clear();
	hw_verbs_ops.qp_destroy(qp);
	cr_assert_str_eq(fake_verbs_trace(), "destroy_qp destroy_cq destroy_comp_channel");
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_qp, create_on_roce_addresses_its_own_gid_index_0)
{
	struct fake_dev_config cfg = roce_config();
	struct hw_dev *dev;
	struct hw_qp *qp;
	const struct ibv_qp_attr *rtr;

	vt_reset_fake();
	fake_verbs_add_device("rxe0", &cfg);
	dev = vt_open("rxe0");
	qp = vt_qp_create(dev, 8);
	rtr = &fake_qp_of(verbs_qp_of(qp)->qp)->modify[1];
	cr_assert_eq(fake_verbs_calls(FAKE_QUERY_GID), 1);
	cr_assert_eq(rtr->ah_attr.is_global, 1, "RoCE needs a GRH");
	cr_assert_eq(rtr->ah_attr.grh.sgid_index, 0);
	cr_assert_arr_eq(rtr->ah_attr.grh.dgid.raw, cfg.gid.raw, 16, "its own GID");
	cr_assert_eq(rtr->ah_attr.grh.hop_limit, 1, "a loopback QP: one hop");
	hw_verbs_ops.qp_destroy(qp);
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_qp, queues_are_capped_by_device_limits_depth_is_kept)
{
	struct fake_dev_config cfg = fake_verbs_default_config();
	struct hw_dev *dev;
	struct hw_qp *qp;
	struct verbs_qp *vqp;

	vt_reset_fake();
	cfg.max_qp_wr = 8;
	cfg.max_cqe = 4;
	fake_verbs_add_device("mlx5_0", &cfg);
	dev = vt_open("mlx5_0");
	qp = vt_qp_create(dev, 100);
	vqp = verbs_qp_of(qp);
	cr_assert_eq(vqp->depth, 100);
	cr_assert_eq(vqp->hw_cap, 4);
	cr_assert_eq(vqp->cq->cqe, 4);
	cr_assert_eq(fake_qp_of(vqp->qp)->init.cap.max_send_wr, 4);
	cr_assert_eq(vqp->stage_mask + 1, 128, "staging ring: a power of two >= depth");
	hw_verbs_ops.qp_destroy(qp);
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_qp, create_rejects_zero_or_huge_depth)
{
	struct hw_dev *dev = vt_open("mlx5_0");
	struct hw_qp_attr attr = { .depth = 0 };
	struct hw_qp *qp = NULL;

	cr_assert_eq(hw_verbs_ops.qp_create(dev, &attr, &qp), DOCA_ERROR_INVALID_VALUE);
	attr.depth = (1u << 30) + 1;
	cr_assert_eq(hw_verbs_ops.qp_create(dev, &attr, &qp), DOCA_ERROR_INVALID_VALUE);
	cr_assert_null(qp);
	cr_assert_eq(fake_verbs_calls(FAKE_CREATE_QP), 0);
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_qp, create_on_a_down_port_is_not_connected)
{
	struct fake_dev_config cfg = fake_verbs_default_config();
	struct hw_dev *dev;
	struct hw_qp_attr attr = { .depth = 4 };
	struct hw_qp *qp = NULL;

	vt_reset_fake();
	cfg.state = IBV_PORT_DOWN;
	fake_verbs_add_device("mlx5_0", &cfg);
	dev = vt_open("mlx5_0");
	cr_assert_eq(hw_verbs_ops.qp_create(dev, &attr, &qp), DOCA_ERROR_NOT_CONNECTED);
	cr_assert_null(qp);
	cr_assert_eq(fake_verbs_live(), 2, "only the device's context and PD");
	hw_verbs_ops.close(dev);
}

/* Each slow-path call of qp_create failing in turn: its error, and everything
 * created before it destroyed in reverse order. */
VT_TEST(verbs_qp, create_failures_return_mapped_errors_and_unwind_in_reverse)
{
	static const char *const unwind[] = {
		"", " destroy_comp_channel", " destroy_cq destroy_comp_channel",
		" destroy_qp destroy_cq destroy_comp_channel",
	};
	static const struct {
		bool roce;
		enum fake_call call;
		unsigned int nth;
		int err;
		doca_error_t expect;
		const char *failed; /* the trace up to the failure */
		int objects;        /* objects made before the failure: index into unwind */
	} cases[] = {
		{ false, FAKE_QUERY_PORT, 1, EIO, DOCA_ERROR_DRIVER, "query_port!", 0 },
		{ true, FAKE_QUERY_GID, 1, EINVAL, DOCA_ERROR_DRIVER, "query_port query_gid!", 0 },
		{ false, FAKE_CREATE_COMP_CHANNEL, 1, EMFILE, DOCA_ERROR_DRIVER,
		  "query_port create_comp_channel!", 0 },
		{ false, FAKE_CREATE_COMP_CHANNEL, 1, ENOMEM, DOCA_ERROR_NO_MEMORY,
		  "query_port create_comp_channel!", 0 },
		{ false, FAKE_CREATE_CQ, 1, ENOMEM, DOCA_ERROR_NO_MEMORY,
		  "query_port create_comp_channel create_cq!", 1 },
		{ false, FAKE_CREATE_QP, 1, ENOMEM, DOCA_ERROR_NO_MEMORY,
		  "query_port create_comp_channel create_cq create_qp!", 2 },
		{ false, FAKE_CREATE_QP, 1, EPERM, DOCA_ERROR_NOT_PERMITTED,
		  "query_port create_comp_channel create_cq create_qp!", 2 },
		{ false, FAKE_MODIFY_QP, 1, EINVAL, DOCA_ERROR_DRIVER,
		  "query_port create_comp_channel create_cq create_qp modify_qp:INIT!", 3 },
		{ false, FAKE_MODIFY_QP, 2, EINVAL, DOCA_ERROR_DRIVER,
		  "query_port create_comp_channel create_cq create_qp modify_qp:INIT "
		  "modify_qp:RTR!", 3 },
		{ true, FAKE_MODIFY_QP, 2, ETIMEDOUT, DOCA_ERROR_DRIVER,
		  "query_port query_gid create_comp_channel create_cq create_qp modify_qp:INIT "
		  "modify_qp:RTR!", 3 },
		{ false, FAKE_MODIFY_QP, 3, EOPNOTSUPP, DOCA_ERROR_NOT_SUPPORTED,
		  "query_port create_comp_channel create_cq create_qp modify_qp:INIT "
		  "modify_qp:RTR modify_qp:RTS!", 3 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake_dev_config cfg = cases[i].roce ? roce_config() : fake_verbs_default_config();
		struct hw_qp_attr attr = { .depth = 16 };
		struct hw_qp *qp = NULL;
		struct hw_dev *dev;
		char expect[512];

		vt_reset_fake();
		fake_verbs_add_device("mlx5_0", &cfg);
		dev = vt_open("mlx5_0");
		fake_verbs_trace_clear();
		fake_verbs_fail(cases[i].call, cases[i].nth, cases[i].err);
		cr_assert_eq(hw_verbs_ops.qp_create(dev, &attr, &qp), cases[i].expect, "case %zu", i);
		cr_assert_null(qp, "case %zu", i);
		cr_assert_eq(fake_verbs_live(), 2, "case %zu leaked", i);
		cr_assert_eq(fake_verbs_violations(), 0, "case %zu: %s", i, fake_verbs_violation_text());
		snprintf(expect, sizeof(expect), "%s%s", cases[i].failed, unwind[cases[i].objects]);
		cr_assert_str_eq(fake_verbs_trace(), expect, "case %zu", i);
		hw_verbs_ops.close(dev);
	}
}

VT_TEST(verbs_qp, destroy_goes_on_when_a_destroy_fails)
{
	struct hw_dev *dev = vt_open("mlx5_0");
	struct hw_qp *qp = vt_qp_create(dev, 4);

	fake_verbs_trace_clear();
	fake_verbs_fail(FAKE_DESTROY_QP, 1, EBUSY);
	hw_verbs_ops.qp_destroy(qp);
	/* The CQ and channel are refused too (the QP still holds them); all attempted. */
	cr_assert_str_eq(fake_verbs_trace(), "destroy_qp! destroy_cq destroy_comp_channel");
	hw_verbs_ops.close(dev); /* refused by the fake too: the QP holds the PD */
	vt_reset_fake();
}

VT_TEST(verbs_qp, full_teardown_is_reverse_order_and_complete)
{
	struct vt_rig rig;

	vt_rig_up(&rig, 16);
	vt_post1(&rig, 1, 0, 64);
	hw_qp_doorbell(rig.qp);
	fake_verbs_trace_clear();
	vt_rig_down(&rig);
	cr_assert_str_eq(fake_verbs_trace(), "destroy_qp destroy_cq destroy_comp_channel dereg_mr "
					     "dereg_mr dealloc_pd close_device");
}

/* ---- notification: completion channel ---- */

VT_TEST(verbs_qp, notify_fd_is_the_nonblocking_channel_fd)
{
	struct hw_dev *dev = vt_open("mlx5_0");
	struct hw_qp *qp = vt_qp_create(dev, 4);
	int fd = hw_verbs_ops.notify_fd(qp);

	cr_assert_eq(fd, verbs_qp_of(qp)->channel->fd);
	cr_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
	cr_assert_not(fd_readable(fd));
	hw_verbs_ops.qp_destroy(qp);
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_qp, armed_channel_wakes_on_completion_and_ack_consumes_it)
{
	struct vt_rig rig;
	struct hw_cqe cqe;
	int fd;

	vt_rig_up(&rig, 8);
	fd = hw_verbs_ops.notify_fd(rig.qp);
	fake_verbs_hold(true);
	vt_post1(&rig, 7, 0, 128);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(hw_verbs_ops.notify_arm(rig.qp), DOCA_SUCCESS);
	cr_assert_eq(fake_verbs_calls(FAKE_REQ_NOTIFY_CQ), 1);
	cr_assert_not(hw_verbs_ops.pending(rig.qp), "the NIC owes it: the channel will wake");
	cr_assert_not(fd_readable(fd));

	cr_assert_eq(fake_verbs_run(), 1); /* the NIC completes it */
	cr_assert(fd_readable(fd));
	hw_verbs_ops.notify_ack(rig.qp);
	cr_assert_not(fd_readable(fd));
	cr_assert_eq(fake_verbs_cq_unacked(rig.vqp->cq), 0, "every event read is acked");
	cr_assert_eq(fake_verbs_calls(FAKE_ACK_CQ_EVENTS), 1);

	cr_assert_eq(hw_qp_poll(rig.qp, &cqe, 1), 1);
	cr_assert_eq(cqe.cookie, 7);
	cr_assert_eq(cqe.status, HW_CQE_OK);
	vt_rig_down(&rig);
}

/* A completion that lands before the arm raises no event: arm stashes it and
 * pending says "poll now", so the engine does not sleep on a silent fd. */
VT_TEST(verbs_qp, arm_catches_a_completion_that_beat_it)
{
	struct vt_rig rig;
	struct hw_cqe cqe[2];

	vt_rig_up(&rig, 8);
	fake_verbs_hold(true);
	vt_post1(&rig, 1, 0, 16);
	vt_post1(&rig, 2, 16, 16);
	hw_qp_doorbell(rig.qp);
	fake_verbs_run(); /* both complete before anyone arms */
	cr_assert_not(hw_verbs_ops.pending(rig.qp));
	cr_assert_eq(hw_verbs_ops.notify_arm(rig.qp), DOCA_SUCCESS);
	cr_assert_not(fd_readable(hw_verbs_ops.notify_fd(rig.qp)), "no event for old completions");
	cr_assert(hw_verbs_ops.pending(rig.qp), "the stashed completion must be reported");
	cr_assert_eq(hw_verbs_ops.notify_arm(rig.qp), DOCA_SUCCESS, "arming twice keeps one stash");
	cr_assert_eq(hw_qp_poll(rig.qp, cqe, 2), 2);
	cr_assert_eq(cqe[0].cookie, 1, "the stash comes first");
	cr_assert_eq(cqe[1].cookie, 2);
	cr_assert_eq(cqe[0].bytes, 16);
	cr_assert_not(hw_verbs_ops.pending(rig.qp));
	vt_rig_down(&rig);
}

VT_TEST(verbs_qp, ack_without_event_does_nothing)
{
	struct hw_dev *dev = vt_open("mlx5_0");
	struct hw_qp *qp = vt_qp_create(dev, 4);

	hw_verbs_ops.notify_ack(qp);
	cr_assert_eq(fake_verbs_calls(FAKE_GET_CQ_EVENT), 1);
	cr_assert_eq(fake_verbs_calls(FAKE_ACK_CQ_EVENTS), 0);
	/* A failing read is reported, not fatal: nothing is acked, and the
	 * queue pair arms and acks as before. */
	fake_verbs_fail(FAKE_GET_CQ_EVENT, 1, EIO);
	hw_verbs_ops.notify_ack(qp);
	cr_assert_eq(fake_verbs_calls(FAKE_GET_CQ_EVENT), 2);
	cr_assert_eq(fake_verbs_calls(FAKE_ACK_CQ_EVENTS), 0);
	cr_assert_eq(hw_verbs_ops.notify_arm(qp), DOCA_SUCCESS);
	hw_verbs_ops.notify_ack(qp);
	cr_assert_eq(fake_verbs_calls(FAKE_GET_CQ_EVENT), 3);
	cr_assert_eq(fake_verbs_calls(FAKE_ACK_CQ_EVENTS), 0);
	hw_verbs_ops.qp_destroy(qp);
	hw_verbs_ops.close(dev);
}

/* An arming whose event nobody read (polling reaped its completion) left
 * that event in the channel: the next arming reads and acks it first, so
 * the fd is not readable with nothing to do. */
VT_TEST(verbs_qp, arming_again_reads_the_event_an_earlier_arming_left)
{
	struct vt_rig rig;
	struct hw_cqe cqe;
	int fd;

	vt_rig_up(&rig, 8);
	fd = hw_verbs_ops.notify_fd(rig.qp);
	fake_verbs_hold(true);
	vt_post1(&rig, 0, 0, 8);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(hw_verbs_ops.notify_arm(rig.qp), DOCA_SUCCESS);
	fake_verbs_run();
	cr_assert(fd_readable(fd), "the armed CQ raised its event");
	cr_assert_eq(vt_poll_all(rig.qp, &cqe, 1), 1); /* reaped by polling, the event unread */
	cr_assert_eq(cqe.cookie, 0);
	cr_assert_eq(fake_verbs_calls(FAKE_GET_CQ_EVENT), 0);
	cr_assert_eq(hw_verbs_ops.notify_arm(rig.qp), DOCA_SUCCESS);
	cr_assert_not(fd_readable(fd), "the old event was read before the arming");
	cr_assert_eq(fake_verbs_calls(FAKE_GET_CQ_EVENT), 2, "the event, then EAGAIN");
	cr_assert_eq(fake_verbs_calls(FAKE_ACK_CQ_EVENTS), 1);
	cr_assert_eq(fake_verbs_cq_unacked(rig.vqp->cq), 0);
	/* the new arming raises an event for the next completion */
	vt_post1(&rig, 1, 8, 8);
	hw_qp_doorbell(rig.qp);
	fake_verbs_run();
	cr_assert(fd_readable(fd));
	hw_verbs_ops.notify_ack(rig.qp);
	cr_assert_not(fd_readable(fd));
	cr_assert_eq(fake_verbs_calls(FAKE_GET_CQ_EVENT), 4);
	cr_assert_eq(fake_verbs_calls(FAKE_ACK_CQ_EVENTS), 2);
	cr_assert_eq(fake_verbs_cq_unacked(rig.vqp->cq), 0);
	/* its event was read: the next arming reads nothing first */
	cr_assert_eq(hw_verbs_ops.notify_arm(rig.qp), DOCA_SUCCESS);
	cr_assert_eq(fake_verbs_calls(FAKE_GET_CQ_EVENT), 4);
	cr_assert_eq(vt_poll_all(rig.qp, &cqe, 1), 1);
	cr_assert_eq(cqe.cookie, 1);
	vt_rig_down(&rig);
}

/* Armings of an idle queue pair read nothing from the channel: only a
 * completion polled since an arming can have left an event there. */
VT_TEST(verbs_qp, idle_armings_read_nothing)
{
	struct vt_rig rig;

	vt_rig_up(&rig, 8);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(hw_verbs_ops.notify_arm(rig.qp), DOCA_SUCCESS);
	cr_assert_eq(fake_verbs_calls(FAKE_GET_CQ_EVENT), 0);
	cr_assert_eq(fake_verbs_calls(FAKE_REQ_NOTIFY_CQ), 100);
	cr_assert_not(fd_readable(hw_verbs_ops.notify_fd(rig.qp)));
	vt_rig_down(&rig);
}

VT_TEST(verbs_qp, arm_failure_is_mapped)
{
	struct hw_dev *dev = vt_open("mlx5_0");
	struct hw_qp *qp = vt_qp_create(dev, 4);

	fake_verbs_fail(FAKE_REQ_NOTIFY_CQ, 1, EIO);
	cr_assert_eq(hw_verbs_ops.notify_arm(qp), DOCA_ERROR_DRIVER);
	fake_verbs_fail(FAKE_REQ_NOTIFY_CQ, 1, ENOMEM);
	cr_assert_eq(hw_verbs_ops.notify_arm(qp), DOCA_ERROR_NO_MEMORY);
	cr_assert_eq(hw_verbs_ops.notify_arm(qp), DOCA_SUCCESS);
	hw_verbs_ops.qp_destroy(qp);
	hw_verbs_ops.close(dev);
}
