/*
 * tests/verbs/fake_verbs.h — an in-memory fake of an rdma-core device with
 * an RC loopback port, for the verbs backend's unit tests.
 *
 * It implements the backend's table of slow-path calls (struct verbs_calls)
 * and the context ops the inline fast path dispatches through (post_send,
 * poll_cq, req_notify_cq). Like a NIC it:
 * - executes RDMA WRITE as a memory copy, checking lkey / rkey / bounds /
 *   access against its MRs and the loopback connection (own QPN, LID or GID,
 *   PSNs), and completes each WR in posting order;
 * - honours QP states (posting before RTS is refused; a WR failing moves the
 *   QP to ERR; modify to ERR flushes every outstanding WR as
 *   IBV_WC_WR_FLUSH_ERR);
 * - keeps an SQ slot until its completion is polled and a CQ of the size
 *   asked, and reports an overrun as a violation;
 * - raises an event on the completion channel (a pipe) for the first
 *   completion after req_notify_cq, and only then;
 * - enforces the verbs destroy rules (EBUSY while dependants exist) and
 *   counts every live object, so a test can assert none leaked.
 * Everything a rule forbids is recorded as a violation (fake_verbs_violations).
 *
 * By default a WR executes when its CQ is polled (the NIC finished it
 * meanwhile); fake_verbs_hold(true) stalls the NIC until fake_verbs_run();
 * fake_verbs_nic_thread(true) makes a background thread the NIC.
 * One fake per process (Criterion runs each test in its own process).
 */
#ifndef DOCA_TESTS_FAKE_VERBS_H
#define DOCA_TESTS_FAKE_VERBS_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/** Calls whose failure can be injected and whose uses are counted. */
enum fake_call {
	FAKE_GET_DEVICE_LIST,
	FAKE_FREE_DEVICE_LIST,
	FAKE_GET_DEVICE_NAME,
	FAKE_OPEN_DEVICE,
	FAKE_CLOSE_DEVICE,
	FAKE_QUERY_DEVICE,
	FAKE_QUERY_PORT,
	FAKE_QUERY_GID,
	FAKE_ALLOC_PD,
	FAKE_DEALLOC_PD,
	FAKE_REG_MR,
	FAKE_DEREG_MR,
	FAKE_CREATE_COMP_CHANNEL,
	FAKE_DESTROY_COMP_CHANNEL,
	FAKE_CREATE_CQ,
	FAKE_DESTROY_CQ,
	FAKE_CREATE_QP,
	FAKE_DESTROY_QP,
	FAKE_MODIFY_QP,
	FAKE_GET_CQ_EVENT,
	FAKE_ACK_CQ_EVENTS,
	/* context ops (the fast path) */
	FAKE_POST_SEND,
	FAKE_POLL_CQ,
	FAKE_REQ_NOTIFY_CQ,
	FAKE_CALL_COUNT
};

/** One fake device and its port 1. */
struct fake_dev_config {
	uint8_t link_layer;         /* IBV_LINK_LAYER_INFINIBAND or _ETHERNET (RoCE) */
	enum ibv_port_state state;  /* IBV_PORT_ACTIVE unless testing a down link */
	uint16_t lid;
	union ibv_gid gid;          /* GID index 0 */
	enum ibv_mtu active_mtu;
	uint32_t max_msg_sz;
	int max_qp_wr;
	int max_cqe;
};

/** A WR the fake NIC holds (copied from the ibv_send_wr at post time). */
struct fake_wr {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	unsigned int send_flags;
	uint64_t laddr;
	uint32_t length;
	uint32_t lkey;
	uint64_t raddr;
	uint32_t rkey;
};

/** A fake QP, as tests inspect it (fake_qp_of). */
struct fake_qp {
	struct ibv_qp qp;
	struct ibv_qp_init_attr init;
	unsigned int n_modify;               /* successful modify_qp calls */
	struct ibv_qp_attr modify[8];        /* their attributes, in order */
	int modify_mask[8];
	int access;                          /* qp_access_flags (INIT) */
	struct ibv_ah_attr ah;               /* from RTR */
	uint32_t dest_qp_num, rq_psn, sq_psn;
	struct fake_wr *sq;                  /* posted WRs the NIC has not executed */
	unsigned int sq_head, sq_count;
	unsigned int sq_owned;               /* posted, signalled, completion not polled */
	struct fake_qp *next;
};

/** Reset the fake (no devices, no failures) and install it as verbs_calls. */
void fake_verbs_install(void);
/** Put the real libibverbs back and free whatever the fake still holds. */
void fake_verbs_uninstall(void);

/** Defaults: InfiniBand, ACTIVE, LID 0x11, MTU 1024, 2 GiB messages, 16K WRs/CQEs. */
struct fake_dev_config fake_verbs_default_config(void);
/** Add a device; cfg NULL takes the defaults. */
void fake_verbs_add_device(const char *name, const struct fake_dev_config *cfg);

/** The nth call of @p call from now (1 = the next) fails with errno @p err. */
void fake_verbs_fail(enum fake_call call, unsigned int nth, int err);
/** The nth WR handed to post_send from now is refused with @p err (bad_wr = it). */
void fake_verbs_fail_post_at_wr(unsigned int nth, int err);
/** The nth WR executed from now completes with @p status (then the QP is in ERR). */
void fake_verbs_inject_wc(unsigned int nth, enum ibv_wc_status status);
/** Stall (true) or let the NIC execute WRs when their CQ is polled (false, default). */
void fake_verbs_hold(bool hold);
/** The NIC executes every posted WR now (raising channel events); returns how many. */
unsigned int fake_verbs_run(void);
/** On: a background thread is the NIC (one WR per QP every ~20 µs, while a
 *  context is open) and polling no longer executes WRs. For tests that run
 *  the engine on the fake; every entry point of the fake is serialized. */
void fake_verbs_nic_thread(bool on);
/** Move a QP to ERR as an asynchronous error would (its WRs are flushed). */
void fake_verbs_kill_qp(struct ibv_qp *qp);

/** How many times @p call was made since install. */
unsigned int fake_verbs_calls(enum fake_call call);
/** Live fake objects: device lists, contexts, PDs, MRs, channels, CQs, QPs. */
unsigned int fake_verbs_live(void);
/** Number of rule violations seen, and the text of the first ones. */
unsigned int fake_verbs_violations(void);
const char *fake_verbs_violation_text(void);
/** Space-separated names of the slow-path calls made ("!" marks a failed one;
 *  modify_qp shows the target state, e.g. "modify_qp:RTR"). */
const char *fake_verbs_trace(void);
void fake_verbs_trace_clear(void);

/** The fake behind a QP / MR / CQ made by the fake. */
struct fake_qp *fake_qp_of(struct ibv_qp *qp);
/** The access flags an MR was registered with. */
int fake_verbs_mr_access(const struct ibv_mr *mr);
/** Events read with get_cq_event and not yet acked, on a CQ. */
int fake_verbs_cq_unacked(const struct ibv_cq *cq);
/** Completions waiting in a CQ. */
unsigned int fake_verbs_cq_depth(const struct ibv_cq *cq);

#endif /* DOCA_TESTS_FAKE_VERBS_H */
