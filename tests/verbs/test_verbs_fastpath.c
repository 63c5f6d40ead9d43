/*
 * tests/verbs/test_verbs_fastpath.c — the verbs backend's fast path against
 * the fake NIC: RDMA WRITE copies, the WR fields, doorbell batching (one
 * ibv_post_send per doorbell), depth and NIC-queue limits, the mapping of
 * every work-completion status, the fatal flag, flush, refused posts, a
 * failing CQ, and over-long descriptors.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tests/verbs/verbs_test.h"

TestSuite(verbs_fastpath, .init = vt_setup, .fini = vt_teardown);

static void assert_cqe(const struct hw_cqe *c, uint64_t cookie, uint32_t status, doca_error_t error,
		       bool fatal)
{
	cr_assert_eq(c->cookie, cookie, "cookie %llu, want %llu", (unsigned long long)c->cookie,
		     (unsigned long long)cookie);
	cr_assert_eq(c->status, status, "cookie %llu: status %u, want %u",
		     (unsigned long long)cookie, c->status, status);
	cr_assert_eq(c->error, error, "cookie %llu: error %d, want %d", (unsigned long long)cookie,
		     c->error, error);
	cr_assert_eq(c->fatal, fatal, "cookie %llu: fatal %d", (unsigned long long)cookie, c->fatal);
}

/** A rig on a device with custom limits. */
static void rig_up_with(struct vt_rig *rig, uint32_t depth, const struct fake_dev_config *cfg)
{
	vt_reset_fake();
	fake_verbs_add_device("mlx5_0", cfg);
	vt_rig_up(rig, depth);
}

/* ---- copies ---- */

VT_TEST(verbs_fastpath, copy_is_an_rdma_write_of_every_size)
{
	static const size_t sizes[] = { 1, 7, 64, 1000, 4096 };
	struct hw_cqe cqe[5];
	struct vt_rig rig;

	vt_rig_up(&rig, 16);
	for (size_t i = 0; i < 5; i++) {
		memset(rig.dst, 0, sizeof(rig.dst));
		vt_post1(&rig, 100 + i, 0, sizes[i]);
		hw_qp_doorbell(rig.qp);
		cr_assert_eq(vt_poll_all(rig.qp, cqe, 1), 1);
		assert_cqe(&cqe[0], 100 + i, HW_CQE_OK, DOCA_SUCCESS, false);
		cr_assert_eq(cqe[0].bytes, sizes[i], "bytes from the descriptor, not wc.byte_len");
		cr_assert_arr_eq(rig.dst, rig.src, sizes[i]);
		if (sizes[i] < sizeof(rig.dst))
			cr_assert_eq(rig.dst[sizes[i]], 0, "no byte beyond len");
	}
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, wr_is_a_signalled_rdma_write_from_lkey_to_rkey)
{
	struct vt_rig rig;
	struct fake_wr *wr;
	struct hw_cqe cqe;

	vt_rig_up(&rig, 4);
	fake_verbs_hold(true);
	vt_post1(&rig, 0xabcdef, 100, 200);
	hw_qp_doorbell(rig.qp);
	wr = &fake_qp_of(rig.vqp->qp)->sq[0];
	cr_assert_eq(wr->wr_id, 0xabcdef, "wr_id is the cookie");
	cr_assert_eq(wr->opcode, IBV_WR_RDMA_WRITE);
	cr_assert(wr->send_flags & IBV_SEND_SIGNALED);
	cr_assert_eq(wr->laddr, (uintptr_t)(rig.src + 100));
	cr_assert_eq(wr->length, 200);
	cr_assert_eq(wr->lkey, verbs_mr_of(rig.src_mr)->mr->lkey);
	cr_assert_eq(wr->raddr, (uintptr_t)(rig.dst + 100));
	cr_assert_eq(wr->rkey, verbs_mr_of(rig.dst_mr)->mr->rkey);
	fake_verbs_hold(false);
	cr_assert_eq(vt_poll_all(rig.qp, &cqe, 1), 1);
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, nothing_reaches_the_nic_before_the_doorbell)
{
	struct vt_rig rig;
	struct hw_cqe cqe[2];

	vt_rig_up(&rig, 8);
	vt_post1(&rig, 1, 0, 32);
	cr_assert_eq(hw_qp_poll(rig.qp, cqe, 2), 0);
	cr_assert_not(hw_verbs_ops.pending(rig.qp));
	cr_assert_eq(fake_verbs_calls(FAKE_POST_SEND), 0);
	cr_assert_eq(rig.dst[0], 0);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(fake_verbs_calls(FAKE_POST_SEND), 1);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 1), 1);
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, one_doorbell_is_one_post_send_for_every_post_before_it)
{
	struct vt_rig rig;
	struct hw_desc d[5];
	struct hw_cqe cqe[5];

	vt_rig_up(&rig, 16);
	for (int i = 0; i < 5; i++)
		d[i] = vt_desc(&rig, (uint64_t)i, (size_t)i * 100, 100);
	cr_assert_eq(hw_qp_post(rig.qp, d, 2), 2);
	cr_assert_eq(hw_qp_post(rig.qp, d + 2, 3), 3);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(fake_verbs_calls(FAKE_POST_SEND), 1, "one chain of five WRs");
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(fake_verbs_calls(FAKE_POST_SEND), 1, "an empty doorbell posts nothing");
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 5), 5);
	for (int i = 0; i < 5; i++)
		assert_cqe(&cqe[i], (uint64_t)i, HW_CQE_OK, DOCA_SUCCESS, false);
	cr_assert_arr_eq(rig.dst, rig.src, 500);
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, post_accepts_at_most_depth_outstanding)
{
	struct vt_rig rig;
	struct hw_desc d[6];
	struct hw_cqe cqe[6];

	vt_rig_up(&rig, 4);
	for (int i = 0; i < 6; i++)
		d[i] = vt_desc(&rig, (uint64_t)i, (size_t)i * 8, 8);
	cr_assert_eq(hw_qp_post(rig.qp, d, 6), 4);
	cr_assert_eq(hw_qp_post(rig.qp, d + 4, 2), 0);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 4), 4);
	/* Polled completions give the room back. */
	cr_assert_eq(hw_qp_post(rig.qp, d + 4, 2), 2);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 2), 2);
	cr_assert_eq(cqe[0].cookie, 4);
	cr_assert_eq(cqe[1].cookie, 5);
	cr_assert_eq(rig.vqp->inflight, 0);
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, poll_returns_at_most_max)
{
	struct vt_rig rig;
	struct hw_desc d[5];
	struct hw_cqe cqe[5];

	vt_rig_up(&rig, 8);
	for (int i = 0; i < 5; i++)
		d[i] = vt_desc(&rig, (uint64_t)i, (size_t)i, 1);
	hw_qp_post(rig.qp, d, 5);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(hw_qp_poll(rig.qp, cqe, 2), 2);
	cr_assert_eq(hw_qp_poll(rig.qp, cqe + 2, 2), 2);
	cr_assert_eq(hw_qp_poll(rig.qp, cqe + 4, 2), 1);
	cr_assert_eq(hw_qp_poll(rig.qp, cqe, 0), 0);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(cqe[i].cookie, (uint64_t)i);
	vt_rig_down(&rig);
}

/* A depth beyond what the NIC's queues hold waits in the staging ring and is
 * posted as completions make room; the fake reports any SQ/CQ overflow. */
VT_TEST(verbs_fastpath, depth_beyond_nic_limits_is_posted_in_waves)
{
	struct fake_dev_config cfg = fake_verbs_default_config();
	struct vt_rig rig;
	struct hw_desc d[10];
	struct hw_cqe cqe[10];

	cfg.max_qp_wr = 3;
	cfg.max_cqe = 3;
	rig_up_with(&rig, 10, &cfg);
	for (int i = 0; i < 10; i++)
		d[i] = vt_desc(&rig, (uint64_t)i, (size_t)i * 10, 10);
	cr_assert_eq(hw_qp_post(rig.qp, d, 10), 10);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(fake_verbs_calls(FAKE_POST_SEND), 1);
	cr_assert_eq(fake_qp_of(rig.vqp->qp)->sq_count, 3, "the NIC got as many as it holds");
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 10), 10);
	for (int i = 0; i < 10; i++)
		assert_cqe(&cqe[i], (uint64_t)i, HW_CQE_OK, DOCA_SUCCESS, false);
	cr_assert_arr_eq(rig.dst, rig.src, 100);
	cr_assert_eq(fake_verbs_calls(FAKE_POST_SEND), 4, "3 + 3 + 3 + 1");
	vt_rig_down(&rig);
}

/* ---- completion statuses ---- */

/* The table itself, for every status libibverbs defines. */
VT_TEST(verbs_fastpath, wc_status_table_maps_every_status)
{
	for (int st = IBV_WC_SUCCESS; st <= IBV_WC_TM_RNDV_INCOMPLETE; st++) {
		struct hw_cqe c;
		uint32_t status = HW_CQE_FAILED;
		doca_error_t error = DOCA_ERROR_DRIVER;
		bool fatal = true;

		switch (st) {
		case IBV_WC_SUCCESS:
			status = HW_CQE_OK;
			error = DOCA_SUCCESS;
			fatal = false;
			break;
		case IBV_WC_WR_FLUSH_ERR:
			status = HW_CQE_FLUSHED;
			error = DOCA_ERROR_SHUTDOWN;
			fatal = false;
			break;
		case IBV_WC_REM_ACCESS_ERR:
		case IBV_WC_LOC_PROT_ERR:
		case IBV_WC_LOC_ACCESS_ERR:
			error = DOCA_ERROR_NOT_PERMITTED;
			break;
		case IBV_WC_RETRY_EXC_ERR:
			error = DOCA_ERROR_IO_FAILED;
			break;
		default:
			break;
		}
		memset(&c, 0xff, sizeof(c));
		verbs_wc_status_to_cqe((enum ibv_wc_status)st, &c);
		cr_assert_eq(c.status, status, "%s", ibv_wc_status_str((enum ibv_wc_status)st));
		cr_assert_eq(c.error, error, "%s", ibv_wc_status_str((enum ibv_wc_status)st));
		cr_assert_eq(c.fatal, fatal, "%s", ibv_wc_status_str((enum ibv_wc_status)st));
	}
}

/* Every error status, coming out of a real poll on the first WR: FAILED (or
 * FLUSHED), bytes 0, and fatal — a flush nothing explains is fatal too. */
VT_TEST(verbs_fastpath, poll_maps_every_error_status_of_the_nic)
{
	for (int st = IBV_WC_LOC_LEN_ERR; st <= IBV_WC_TM_RNDV_INCOMPLETE; st++) {
		struct hw_cqe expect, cqe[2];
		struct vt_rig rig;

		rig_up_with(&rig, 4, NULL);
		verbs_wc_status_to_cqe((enum ibv_wc_status)st, &expect);
		fake_verbs_inject_wc(1, (enum ibv_wc_status)st);
		vt_post1(&rig, 1, 0, 64);
		vt_post1(&rig, 2, 64, 64);
		hw_qp_doorbell(rig.qp);
		cr_assert_eq(vt_poll_all(rig.qp, cqe, 2), 2);
		assert_cqe(&cqe[0], 1, expect.status, expect.error, true);
		cr_assert_eq(cqe[0].bytes, 0);
		/* The QP is in ERR now: the second WR is flushed, not fatal again. */
		assert_cqe(&cqe[1], 2, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
		vt_rig_down(&rig);
		vt_assert_clean();
	}
}

VT_TEST(verbs_fastpath, remote_access_error_is_fatal_and_flushes_the_rest)
{
	struct vt_rig rig;
	struct hw_cqe cqe[6];

	vt_rig_up(&rig, 8);
	fake_verbs_inject_wc(2, IBV_WC_REM_ACCESS_ERR);
	for (uint64_t i = 0; i < 4; i++)
		vt_post1(&rig, i, i * 16, 16);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 4), 4);
	assert_cqe(&cqe[0], 0, HW_CQE_OK, DOCA_SUCCESS, false);
	assert_cqe(&cqe[1], 1, HW_CQE_FAILED, DOCA_ERROR_NOT_PERMITTED, true);
	assert_cqe(&cqe[2], 2, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
	assert_cqe(&cqe[3], 3, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
	cr_assert_eq(cqe[0].bytes, 16);
	/* Later posts never reach the broken QP: flushed locally. */
	vt_post1(&rig, 9, 0, 16);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(fake_verbs_calls(FAKE_POST_SEND), 1);
	cr_assert(hw_verbs_ops.pending(rig.qp));
	cr_assert_eq(hw_qp_poll(rig.qp, cqe, 6), 1);
	assert_cqe(&cqe[0], 9, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
	cr_assert_not(hw_verbs_ops.pending(rig.qp));
	vt_rig_down(&rig);
}

/* No injection: a destination registered without WRITE really is refused by
 * the NIC — least privilege is enforced, and reported as NOT_PERMITTED. */
VT_TEST(verbs_fastpath, destination_without_write_access_is_refused_by_the_nic)
{
	struct vt_rig rig;
	struct hw_mr *ro;
	struct hw_desc d;
	struct hw_cqe cqe;

	vt_rig_up(&rig, 4);
	ro = vt_register(rig.dev, rig.dst, sizeof(rig.dst), HW_ACCESS_READ);
	d = vt_desc(&rig, 5, 0, 32);
	d.dst_mr = ro;
	cr_assert_eq(hw_qp_post(rig.qp, &d, 1), 1);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(vt_poll_all(rig.qp, &cqe, 1), 1);
	assert_cqe(&cqe, 5, HW_CQE_FAILED, DOCA_ERROR_NOT_PERMITTED, true);
	cr_assert_eq(rig.dst[0], 0);
	hw_verbs_ops.mem_deregister(ro);
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, retry_exceeded_is_io_failed_and_fatal)
{
	struct vt_rig rig;
	struct hw_cqe cqe;

	vt_rig_up(&rig, 4);
	fake_verbs_inject_wc(1, IBV_WC_RETRY_EXC_ERR);
	vt_post1(&rig, 3, 0, 8);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(vt_poll_all(rig.qp, &cqe, 1), 1);
	assert_cqe(&cqe, 3, HW_CQE_FAILED, DOCA_ERROR_IO_FAILED, true);
	vt_rig_down(&rig);
}

/* The QP dies on an asynchronous error (no error completion, no flush call):
 * the first flush completion says so (fatal), the rest are plain flushes. */
VT_TEST(verbs_fastpath, unexplained_flush_is_fatal_once)
{
	struct vt_rig rig;
	struct hw_cqe cqe[3];

	vt_rig_up(&rig, 4);
	fake_verbs_hold(true);
	for (uint64_t i = 0; i < 3; i++)
		vt_post1(&rig, i, i, 1);
	hw_qp_doorbell(rig.qp);
	fake_verbs_kill_qp(rig.vqp->qp);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 3), 3);
	assert_cqe(&cqe[0], 0, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, true);
	assert_cqe(&cqe[1], 1, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
	assert_cqe(&cqe[2], 2, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
	vt_rig_down(&rig);
}

/* ---- flush ---- */

/* Flush: the NIC flushes what it owns (WR_FLUSH_ERR), the backend flushes
 * what it never posted (staged, even not doorbelled, and later posts). */
VT_TEST(verbs_fastpath, flush_completes_every_descriptor_exactly_once)
{
	struct vt_rig rig;
	struct hw_cqe cqe[8];
	unsigned int seen = 0;

	vt_rig_up(&rig, 8);
	fake_verbs_hold(true); /* the NIC has started none */
	for (uint64_t i = 0; i < 3; i++)
		vt_post1(&rig, i, i * 8, 8);
	hw_qp_doorbell(rig.qp);            /* 0..2 owned by the NIC */
	vt_post1(&rig, 3, 24, 8);          /* 3: staged, not doorbelled */
	fake_verbs_trace_clear();
	hw_verbs_ops.flush(rig.qp);
	cr_assert_str_eq(fake_verbs_trace(), "modify_qp:ERR");
	cr_assert_eq(rig.vqp->qp->state, IBV_QPS_ERR);
	/* 3 waits for the NIC's flush completions of 0..2 (older): no work
	 * of the queue pair's own yet, the CQ brings them */
	cr_assert_not(hw_verbs_ops.pending(rig.qp));
	vt_post1(&rig, 4, 32, 8);          /* 4: posted after the flush */
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(fake_verbs_calls(FAKE_POST_SEND), 1, "nothing posted after the flush");
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 8), 5);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(cqe[i].cookie, (uint64_t)i, "completion %d is of descriptor %llu: not in order", i,
			     (unsigned long long)cqe[i].cookie);
		cr_assert_eq(cqe[i].status, HW_CQE_FLUSHED);
		cr_assert_eq(cqe[i].error, DOCA_ERROR_SHUTDOWN);
		cr_assert_not(cqe[i].fatal);
		cr_assert_eq(cqe[i].bytes, 0);
		seen |= 1u << cqe[i].cookie;
	}
	cr_assert_eq(seen, 0x1f, "every cookie once");
	cr_assert_eq(rig.dst[0], 0, "nothing was copied");
	cr_assert_not(hw_verbs_ops.pending(rig.qp));
	cr_assert_eq(rig.vqp->inflight, 0);
	hw_verbs_ops.flush(rig.qp);
	cr_assert_eq(fake_verbs_calls(FAKE_MODIFY_QP), 4, "INIT, RTR, RTS, one ERR");
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, flush_lets_finished_work_complete_normally)
{
	struct vt_rig rig;
	struct hw_cqe cqe[3];

	vt_rig_up(&rig, 4);
	fake_verbs_hold(true);
	vt_post1(&rig, 1, 0, 8);
	vt_post1(&rig, 2, 8, 8);
	hw_qp_doorbell(rig.qp);
	fake_verbs_run(); /* the NIC finished both before the flush */
	vt_post1(&rig, 3, 16, 8);
	hw_qp_doorbell(rig.qp);
	hw_verbs_ops.flush(rig.qp);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 3), 3);
	assert_cqe(&cqe[0], 1, HW_CQE_OK, DOCA_SUCCESS, false);
	assert_cqe(&cqe[1], 2, HW_CQE_OK, DOCA_SUCCESS, false);
	assert_cqe(&cqe[2], 3, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
	cr_assert_arr_eq(rig.dst, rig.src, 16);
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, flush_when_modify_fails_still_flushes_unposted_work)
{
	struct vt_rig rig;
	struct hw_cqe cqe[2];

	vt_rig_up(&rig, 4);
	vt_post1(&rig, 1, 0, 8);
	hw_qp_doorbell(rig.qp);
	vt_post1(&rig, 2, 8, 8);
	fake_verbs_fail(FAKE_MODIFY_QP, 1, EIO);
	hw_verbs_ops.flush(rig.qp);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 2), 2);
	assert_cqe(&cqe[0], 1, HW_CQE_OK, DOCA_SUCCESS, false); /* the QP stayed in RTS */
	assert_cqe(&cqe[1], 2, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
	vt_rig_down(&rig);
}

/* ---- refused posts, lost CQ, over-long descriptors ---- */

/* ibv_post_send refuses the third WR of a chain: the first two run, the
 * refused ones fail fatally; after the engine's flush, later ones flush. */
VT_TEST(verbs_fastpath, refused_post_send_fails_the_rest_fatally)
{
	struct vt_rig rig;
	struct hw_cqe cqe[6];

	vt_rig_up(&rig, 8);
	fake_verbs_fail_post_at_wr(3, ENOMEM);
	for (uint64_t i = 0; i < 5; i++)
		vt_post1(&rig, i, i * 4, 4);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(fake_verbs_calls(FAKE_POST_SEND), 1);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 5), 5);
	assert_cqe(&cqe[0], 0, HW_CQE_OK, DOCA_SUCCESS, false);
	assert_cqe(&cqe[1], 1, HW_CQE_OK, DOCA_SUCCESS, false);
	for (int i = 2; i < 5; i++)
		assert_cqe(&cqe[i], (uint64_t)i, HW_CQE_FAILED, DOCA_ERROR_NO_MEMORY, true);
	hw_verbs_ops.flush(rig.qp);
	vt_post1(&rig, 7, 0, 4);
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 1), 1);
	assert_cqe(&cqe[0], 7, HW_CQE_FLUSHED, DOCA_ERROR_SHUTDOWN, false);
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, refused_whole_chain_fails_every_wr)
{
	struct vt_rig rig;
	struct hw_cqe cqe[2];

	vt_rig_up(&rig, 4);
	fake_verbs_fail(FAKE_POST_SEND, 1, EINVAL);
	vt_post1(&rig, 1, 0, 4);
	vt_post1(&rig, 2, 4, 4);
	hw_qp_doorbell(rig.qp);
	cr_assert(hw_verbs_ops.pending(rig.qp));
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 2), 2);
	assert_cqe(&cqe[0], 1, HW_CQE_FAILED, DOCA_ERROR_DRIVER, true);
	assert_cqe(&cqe[1], 2, HW_CQE_FAILED, DOCA_ERROR_DRIVER, true);
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, failing_poll_cq_fails_what_the_nic_owns)
{
	struct vt_rig rig;
	struct hw_cqe cqe[4];

	vt_rig_up(&rig, 4);
	vt_post1(&rig, 1, 0, 4);
	vt_post1(&rig, 2, 4, 4);
	hw_qp_doorbell(rig.qp);
	vt_post1(&rig, 3, 8, 4); /* staged */
	fake_verbs_fail(FAKE_POLL_CQ, 1, EIO);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 3), 3);
	assert_cqe(&cqe[0], 1, HW_CQE_FAILED, DOCA_ERROR_DRIVER, true);
	assert_cqe(&cqe[1], 2, HW_CQE_FAILED, DOCA_ERROR_DRIVER, true);
	assert_cqe(&cqe[2], 3, HW_CQE_FAILED, DOCA_ERROR_DRIVER, true);
	cr_assert_eq(fake_verbs_calls(FAKE_POLL_CQ), 1, "a lost CQ is not polled again");
	cr_assert_eq(rig.vqp->inflight, 0);
	vt_rig_down(&rig);
}

VT_TEST(verbs_fastpath, descriptor_longer_than_max_msg_fails_alone)
{
	struct fake_dev_config cfg = fake_verbs_default_config();
	struct vt_rig rig;
	struct hw_cqe cqe[3];

	cfg.max_msg_sz = 16;
	rig_up_with(&rig, 8, &cfg);
	vt_post1(&rig, 1, 0, 16);
	vt_post1(&rig, 2, 16, 17);
	vt_post1(&rig, 3, 40, 8);
	cr_assert_not(hw_verbs_ops.pending(rig.qp), "refused only once doorbelled");
	hw_qp_doorbell(rig.qp);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 3), 3);
	assert_cqe(&cqe[0], 1, HW_CQE_OK, DOCA_SUCCESS, false);
	assert_cqe(&cqe[1], 2, HW_CQE_FAILED, DOCA_ERROR_NOT_SUPPORTED, false);
	assert_cqe(&cqe[2], 3, HW_CQE_OK, DOCA_SUCCESS, false);
	cr_assert_arr_eq(rig.dst, rig.src, 16);
	cr_assert_eq(rig.dst[16], 0, "the long one copied nothing");
	cr_assert_arr_eq(rig.dst + 40, rig.src + 40, 8);
	vt_rig_down(&rig);
}

/* Many rounds through the rings: counters wrap over the slots cleanly. */
VT_TEST(verbs_fastpath, rings_wrap_over_many_rounds)
{
	struct fake_dev_config cfg = fake_verbs_default_config();
	struct vt_rig rig;
	uint64_t next = 0;

	cfg.max_qp_wr = 5;
	cfg.max_cqe = 5;
	rig_up_with(&rig, 7, &cfg);
	for (int round = 0; round < 200; round++) {
		struct hw_desc d[7];
		struct hw_cqe cqe[7];
		uint32_t n = (uint32_t)(round % 7) + 1, got;

		for (uint32_t i = 0; i < n; i++)
			d[i] = vt_desc(&rig, next + i, (size_t)((next + i) % 512) * 8, 8);
		cr_assert_eq(hw_qp_post(rig.qp, d, n), n);
		hw_qp_doorbell(rig.qp);
		got = vt_poll_all(rig.qp, cqe, n);
		cr_assert_eq(got, n);
		for (uint32_t i = 0; i < n; i++)
			assert_cqe(&cqe[i], next + i, HW_CQE_OK, DOCA_SUCCESS, false);
		next += n;
	}
	cr_assert_arr_eq(rig.dst, rig.src, sizeof(rig.dst));
	vt_rig_down(&rig);
}

/* After ibv_poll_cq fails, the WRs the NIC owns are reported FAILED
 * ("nothing reliable was copied"), so the QP goes to the error state: the
 * NIC must not write their destinations after the engine handed the
 * buffers back. */
VT_TEST(verbs_fastpath, a_lost_cq_stops_the_nic_before_its_tasks_fail)
{
	struct vt_rig rig;
	struct hw_cqe cqe[2];

	vt_rig_up(&rig, 4);
	fake_verbs_hold(true); /* the NIC has not executed them yet */
	vt_post1(&rig, 1, 0, 64);
	hw_qp_doorbell(rig.qp);
	fake_verbs_fail(FAKE_POLL_CQ, 1, EIO);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 1), 1);
	assert_cqe(&cqe[0], 1, HW_CQE_FAILED, DOCA_ERROR_DRIVER, true);
	cr_assert_eq(rig.vqp->qp->state, IBV_QPS_ERR);
	fake_verbs_run(); /* the NIC goes on: it flushes what it had not started */
	cr_assert_eq(rig.dst[0], 0, "dst written after its descriptor completed FAILED");
	hw_verbs_ops.flush(rig.qp);
	vt_rig_down(&rig);
}

/* Full NIC queues, a full CQ, a stash, then a flush: every descriptor
 * completes once, in order, and nothing overruns. */
VT_TEST(verbs_fastpath, full_queues_a_stash_and_a_flush_complete_everything_in_order)
{
	struct fake_dev_config cfg = fake_verbs_default_config();
	struct vt_rig rig;
	struct hw_cqe cqe[8];

	cfg.max_qp_wr = 3;
	cfg.max_cqe = 3;
	rig_up_with(&rig, 8, &cfg);
	fake_verbs_hold(true);
	for (uint64_t i = 0; i < 8; i++)
		vt_post1(&rig, i, i * 8, 8);
	hw_qp_doorbell(rig.qp);
	fake_verbs_run();
	cr_assert_eq(hw_verbs_ops.notify_arm(rig.qp), DOCA_SUCCESS);
	cr_assert(hw_verbs_ops.pending(rig.qp));
	hw_qp_doorbell(rig.qp);
	hw_verbs_ops.flush(rig.qp);
	fake_verbs_hold(false);
	cr_assert_eq(vt_poll_all(rig.qp, cqe, 8), 8);
	for (uint64_t i = 0; i < 8; i++)
		assert_cqe(&cqe[i], i, i < 3 ? HW_CQE_OK : HW_CQE_FLUSHED,
			   i < 3 ? DOCA_SUCCESS : DOCA_ERROR_SHUTDOWN, false);
	vt_rig_down(&rig);
}
