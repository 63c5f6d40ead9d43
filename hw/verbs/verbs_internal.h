/*
 * hw/verbs/verbs_internal.h — private to the rdma-core (libibverbs) backend
 * and its unit tests: the device, memory-registration and queue-pair
 * objects, the table of slow-path verbs calls that tests replace, and the
 * status / access / errno mappings.
 *
 * Shape of the backend (README "verbs backend"):
 * - a device is an ibv_context plus one protection domain;
 * - a memory is one ibv_mr whose access flags are the least the copy needs;
 * - a queue pair is a CQ with a completion channel and an RC QP connected to
 *   itself (loopback), so a COPY is an RDMA WRITE from the source MR (lkey)
 *   into the destination MR (rkey);
 * - the fast path uses the real inline ibv_post_send / ibv_poll_cq /
 *   ibv_req_notify_cq, which dispatch through ibv_context.ops (a fake device
 *   provides its own ops); every other verbs call goes through verbs_calls.
 */
#ifndef DOCA_HW_VERBS_INTERNAL_H
#define DOCA_HW_VERBS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "hw/hw.h"

/** The one port the loopback queue pair uses. */
#define VERBS_PORT 1
/** GID index used on RoCE ports (the link-local GID, always present). */
#define VERBS_GID_INDEX 0
/** Capabilities reported by probe for every verbs device. */
#define VERBS_CAPS "copy,rdma_write,event"

/**
 * Every slow-path libibverbs call the backend makes. verbs_calls points at
 * verbs_calls_real (the library) unless a test installs a fake; the fast
 * path (ibv_post_send, ibv_poll_cq, ibv_req_notify_cq) is not here: it goes
 * through the context's ops, which a fake device fills in.
 * Each member has the signature and error convention of the verbs call it
 * names (NULL + errno, or an errno value / -1 + errno for int results).
 */
struct verbs_calls {
	struct ibv_device **(*get_device_list)(int *num_devices);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *device);
	struct ibv_context *(*open_device)(struct ibv_device *device);
	int (*close_device)(struct ibv_context *context);
	int (*query_device)(struct ibv_context *context, struct ibv_device_attr *attr);
	int (*query_port)(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr);
	int (*query_gid)(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *context);
	int (*destroy_comp_channel)(struct ibv_comp_channel *channel);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	int (*get_cq_event)(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context);
	void (*ack_cq_events)(struct ibv_cq *cq, unsigned int nevents);
};

/** The calls of the real libibverbs (hw/verbs/verbs_calls.c). */
extern const struct verbs_calls verbs_calls_real;
/** The calls in use; tests point it at a fake table, then back. */
extern const struct verbs_calls *verbs_calls;

/** An opened verbs device: one context, one protection domain. */
struct verbs_dev {
	struct hw_dev hw;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint32_t max_qp_wr; /* device limits, from ibv_query_device */
	uint32_t max_cqe;
	char name[64];
};

/** One ibv_mr behind a hw_mr. */
struct verbs_mr {
	struct hw_mr hw;
	struct ibv_mr *mr;
};

/**
 * One staged descriptor: a ready-made RDMA WRITE work request. Slots are
 * linked into a chain only when handed to the device, so a batch of posts is
 * one ibv_post_send.
 */
struct verbs_slot {
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint64_t len; /* the descriptor's length (sge.length is 32 bits) */
};

/** What a descriptor completed without the device (flushed, refused) reports. */
struct verbs_local_status {
	uint32_t status;    /* enum hw_cqe_status */
	doca_error_t error;
	bool fatal;
};

/**
 * A loopback queue pair. Descriptors move through two FIFOs:
 *
 *   post ──▶ stage ring [stage_head, stage_tail) ──(doorbell: stage_rung)──▶
 *            ibv_post_send ──▶ hw FIFO [hw_head, hw_tail) ──▶ CQE ──▶ poll
 *
 * The stage ring holds descriptors not yet given to the NIC (up to depth);
 * the hw FIFO remembers, in posting order, the cookie and length of each WR
 * the NIC owns (up to hw_cap = min(depth, device limits)), because an RC send
 * queue completes in posting order and a send completion carries no length.
 * Counters are free-running; slots are indexed with the masks.
 * Once the queue pair is broken (flushed, an error completion, a refused
 * post) nothing more reaches the NIC: staged and later descriptors complete
 * inside poll with `local`.
 */
struct verbs_qp {
	struct hw_qp hw;
	struct verbs_dev *dev;
	struct ibv_comp_channel *channel;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	uint32_t depth;    /* descriptors accepted and not yet polled, at most */
	uint32_t inflight; /* descriptors accepted and not yet polled */
	uint32_t hw_cap;   /* WRs the NIC may own at once (SQ and CQ size) */
	uint64_t max_len;  /* longest single WRITE: port max_msg_sz */

	struct verbs_slot *stage; /* stage_mask + 1 slots */
	uint32_t stage_mask;
	uint32_t stage_head; /* oldest descriptor not handed to the NIC */
	uint32_t stage_rung; /* end of the doorbelled descriptors */
	uint32_t stage_tail; /* next free slot */

	uint64_t *hw_cookie; /* hw_mask + 1 entries each */
	uint64_t *hw_len;
	uint32_t hw_mask;
	uint32_t hw_head; /* oldest WR the NIC owns */
	uint32_t hw_tail;

	bool broken;   /* nothing more is posted to the NIC */
	bool flushed;  /* flush was called */
	bool cq_lost;  /* ibv_poll_cq failed: the hw FIFO completes locally */
	struct verbs_local_status local;

	bool stash_valid; /* a completion peeked by notify_arm, not yet returned */
	struct ibv_wc stash;
	/* armed by notify_arm, and its event not read since */
	bool event_owed;
	/* a completion was polled while event_owed: the event it raised may
	 * sit unread in the channel (notify_arm drains it first) */
	bool event_maybe;
};

static inline struct verbs_dev *verbs_dev_of(struct hw_dev *hw)
{
	return (struct verbs_dev *)((char *)hw - offsetof(struct verbs_dev, hw));
}

static inline struct verbs_mr *verbs_mr_of(const struct hw_mr *hw)
{
	return (struct verbs_mr *)((const char *)hw - offsetof(struct verbs_mr, hw));
}

static inline struct verbs_qp *verbs_qp_of(struct hw_qp *hw)
{
	return (struct verbs_qp *)((char *)hw - offsetof(struct verbs_qp, hw));
}

extern const struct hw_ops hw_verbs_ops;

/* ---- mappings (verbs_map.c) ---- */

/** errno of a failed verbs call → doca_error_t (table in verbs_map.c). */
doca_error_t verbs_errno_to_doca(int err);
/** The errno of a failed int-returning verbs call: rc itself if positive, else errno. */
int verbs_rc_errno(int rc);
/** HW_ACCESS_* → least-privilege IBV_ACCESS_* (table in verbs_map.c). */
int verbs_access_flags(uint32_t hw_access);
/** A work completion's status → cqe status, error and fatal (table in verbs_map.c). */
void verbs_wc_status_to_cqe(enum ibv_wc_status status, struct hw_cqe *cqe);
/** Report a failure that cannot be returned (teardown paths). */
void verbs_warn(const char *what, int err);

/* ---- slow path (verbs_dev.c, verbs_mr.c, verbs_qp.c) ---- */

doca_error_t verbs_probe(struct hw_dev_desc *descs, size_t cap, size_t *count);
doca_error_t verbs_open(const char *name, const char *params, struct hw_dev **dev);
void verbs_close(struct hw_dev *dev);
doca_error_t verbs_mem_register(struct hw_dev *dev, void *addr, size_t len, uint32_t access,
				struct hw_mr **mr);
void verbs_mem_deregister(struct hw_mr *mr);
doca_error_t verbs_qp_create(struct hw_dev *dev, const struct hw_qp_attr *attr, struct hw_qp **qp);
void verbs_qp_destroy(struct hw_qp *qp);
int verbs_notify_fd(struct hw_qp *qp);
doca_error_t verbs_notify_arm(struct hw_qp *qp);
void verbs_notify_ack(struct hw_qp *qp);

/* ---- fast path (verbs_fastpath.c) ---- */

uint32_t verbs_post(struct hw_qp *qp, const struct hw_desc *descs, uint32_t n);
void verbs_doorbell(struct hw_qp *qp);
uint32_t verbs_poll(struct hw_qp *qp, struct hw_cqe *cqes, uint32_t max);
bool verbs_pending(struct hw_qp *qp);
void verbs_flush(struct hw_qp *qp);
/** If the NIC owns WRs and nothing is stashed, take one completion into the stash. */
void verbs_qp_peek(struct verbs_qp *qp);

#endif /* DOCA_HW_VERBS_INTERNAL_H */
