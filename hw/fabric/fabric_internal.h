/*
 * hw/fabric/fabric_internal.h — private to the libfabric backend (device
 * "fab0") and its tests: the device, registration and queue-pair objects,
 * the wire descriptor of an exported memory, and the mappings.
 *
 * Shape of the backend (README "Remote memory"):
 * - a device is one fabric with two domains (FI_THREAD_SAFE), each with its
 *   address vector: the *service* domain holds one FI_EP_RDM endpoint bound
 *   to the address the open string names (never 0.0.0.0), whose address
 *   every export carries and through which peers reach this process's
 *   exported memory, and the export registrations; the other domain holds
 *   the queue pairs' endpoints and the local registrations. (One domain
 *   with both endpoints works, but libfabric 1.17's tcp then makes every
 *   CQ read an epoll_wait system call: ~2 us more per operation.) Its CQ is
 *   drained (which is what progresses incoming RMA: FI_PROGRESS_MANUAL) by
 *   every queue pair's poll, under a try-lock, once anything was exported;
 * - a queue pair is its own FI_EP_RDM endpoint on the same address (an
 *   ephemeral port) with its own CQ: an endpoint binds one transmit CQ, and
 *   a CQ per queue pair keeps the fast path free of locks. Its notification
 *   fd is an epoll set holding both CQs' wait fds (FI_GETWAIT, taken at the
 *   first arm: see fab_cq_make), armed with fi_trywait, so the PE's one fd
 *   covers initiating and serving;
 * - a local memory is one fi_mr with local access only; each export is one
 *   more fi_mr of the same region with exactly the remote access asked for,
 *   its own never-reused key, closed (revoked) when the memory is destroyed;
 * - a remote memory is the peer's address (in the shared AV), its key, base
 *   and length: COPY from it is fi_readmsg, COPY into it is fi_writemsg with
 *   FI_DELIVERY_COMPLETE (the completion means the bytes are in the peer's
 *   memory); a copy between two local memories is a memcpy done at doorbell.
 */
#ifndef DOCA_HW_FABRIC_INTERNAL_H
#define DOCA_HW_FABRIC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>

#include "hw/hw.h"

#define FAB_DEVICE_NAME "fab0"
#define FAB_PROV_DEFAULT "tcp;ofi_rxm"
#define FAB_ADDR_DEFAULT "127.0.0.1"
/* How long a descriptor the provider refuses with -FI_EAGAIN (connecting,
 * or a peer gone) is retried before it fails with CONNECTION_RESET. */
#define FAB_RETRY_MS_DEFAULT 3000u
/* The backoff of an armed PE's retries of a refused descriptor (struct
 * fab_qp's retry_at_ns): from the first step, doubling up to the last. */
#define FAB_RETRY_STEP_MIN_NS 50000ull
#define FAB_RETRY_STEP_MAX_NS 10000000ull
#define FAB_PROV_MAX 32
#define FAB_ADDR_MAX 64
/* Distinct access sets one memory can be exported with: R, W, RW. */
#define FAB_EXPORTS_MAX 3
#define FAB_FI_VERSION FI_VERSION(1, 9)

/** What the open string asks for (fab0:prov=..,addr=..,port=..,retry_ms=..). */
struct fab_params {
	char prov[FAB_PROV_MAX];
	char addr[48];  /* dotted IPv4 */
	uint16_t port;  /* 0: ephemeral */
	uint32_t retry_ms;
};

/**
 * The exported descriptor, as it travels (little-endian, packed). `check`
 * is a hash of every byte before it: a descriptor damaged in transit is
 * refused rather than aimed at the wrong memory.
 */
struct __attribute__((packed)) fab_wire {
	uint32_t magic;   /* FAB_WIRE_MAGIC */
	uint16_t version; /* FAB_WIRE_VERSION */
	uint16_t size;    /* sizeof(struct fab_wire) */
	char prov[FAB_PROV_MAX];     /* NUL-terminated provider name */
	uint32_t addr_len;           /* bytes of addr used (fi_getname) */
	uint8_t addr[FAB_ADDR_MAX];  /* the exporter's service endpoint */
	uint64_t base;               /* remote address of offset 0 (0 without FI_MR_VIRT_ADDR) */
	uint64_t len;                /* exported length */
	uint64_t key;                /* the registration's key */
	uint32_t access;             /* HW_ACCESS_* granted */
	uint32_t reserved;           /* 0 */
	uint64_t generation;         /* the exporter's registration number, never reused */
	uint64_t check;              /* fab_wire_hash of the bytes above */
};

#define FAB_WIRE_MAGIC 0x58464344u /* "DCFX" */
#define FAB_WIRE_VERSION 1u

/**
 * One exporter this device has imported from (by address): one AV entry.
 * Every remote memory of that address points at it and counts in refs; the
 * last one's destroy removes the entry and frees it (fab_peer_put), so the
 * peers are at most the remote memories alive. An exporter whose operations ran out their retry time is held
 * down for as long again: its operations fail at once instead of each
 * waiting out its own retry. Importing a new descriptor of it ends the
 * hold-down (the exporter just handed one out).
 */
struct fab_peer {
	struct fab_peer *next; /* dev->peers, dev->peer_lock */
	uint32_t refs;         /* remote memories naming it (dev->peer_lock) */
	uint8_t addr[FAB_ADDR_MAX];
	size_t addr_len;
	fi_addr_t fa;
	_Atomic uint64_t dead_until_ns; /* held down until then (0: not) */
};

/** An opened fab0. */
struct fab_dev {
	struct hw_dev hw;
	struct fab_params params;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;  /* queue pairs and local registrations */
	struct fid_av *av;          /* the peers, shared by the queue pairs (FI_THREAD_SAFE) */
	struct fid_domain *sdomain; /* the service endpoint and the exports */
	struct fid_av *sav;         /* the service endpoint's (unused: it initiates nothing) */
	struct fid_ep *ep;          /* the service endpoint */
	struct fid_cq *cq;          /* its CQ (NULL after a failed renew) */
	int cq_fd;                  /* its wait fd once taken (fab_dev_watch), or -1 */
	/* the queue pairs whose epoll sets hold cq_fd: a renew puts its new
	 * CQ's fd in them (serve_lock) */
	struct fab_qp *watchers;
	uint64_t renew_after_ns;    /* a failed renew: serve tries again then */
	pthread_mutex_t serve_lock; /* whoever drains, remakes or arms cq or ep, or takes cq_fd */
	pthread_mutex_t peer_lock;  /* peers, and replacing a peer's AV entry */
	struct fab_peer *peers;
	size_t npeers;              /* how many (peer_lock; for tests) */
	uint8_t name[FAB_ADDR_MAX]; /* fi_getname of ep */
	size_t name_len;
	bool virt_addr;  /* FI_MR_VIRT_ADDR: remote addresses are virtual, not offsets */
	bool prov_key;   /* FI_MR_PROV_KEY: the provider picks keys */
	bool mr_local;   /* FI_MR_LOCAL: local buffers need their descriptor */
	uint64_t max_msg;
	uint64_t key_mask; /* the bits of a requested key the domain keeps (mr_key_size) */
	_Atomic uint64_t next_gen; /* registration numbers */
	/* Set by the first export: until then nothing can reach the service
	 * endpoint and polls skip draining its CQ (a provider progress call, a
	 * system call with tcp, on every poll otherwise). Never cleared: a
	 * peer's access to a revoked export must still be served (refused). */
	atomic_bool exported;
};

/** One export of a local memory. */
struct fab_export {
	uint32_t access;
	struct fid_mr *mr;
	struct fab_wire wire;
};

/** A local or remote memory. */
struct fab_mr {
	struct hw_mr hw;
	struct fab_dev *dev;
	bool remote;
	/* local */
	struct fid_mr *mr;
	void *desc; /* fi_mr_desc(mr) */
	struct fab_export exports[FAB_EXPORTS_MAX];
	uint32_t nexports;
	/* remote */
	struct fab_peer *peer;
	uint64_t base;
	uint64_t key;
};

/** One descriptor the provider owns (its context is the fi_context2). */
struct fab_slot {
	struct fi_context2 fctx; /* first: the completion's op_context */
	uint64_t cookie;
	uint64_t len;
	uint64_t deadline_ns;   /* accepted + retry_ms: failed if not complete by then */
	struct fab_peer *peer;
	bool in_flight;         /* the provider holds it */
	/* Its connection was found reset: issued again once on a new
	 * endpoint (fabric_fastpath.c, "A reset connection"). */
	struct hw_desc d;         /* what it carries, for that */
	uint64_t again_by_ns;     /* 0 until the provider refused it again for now */
	bool again;               /* waits to be issued again */
	bool issued_again;        /* its next failure is final */
};

/** A descriptor not yet accepted by the provider. */
struct fab_pending {
	struct hw_desc d;
	uint64_t deadline_ns; /* 0 until the provider first refused it */
};

/**
 * A queue pair. Descriptors go:
 *   post ──▶ pend FIFO [pend_head, pend_tail) ──(doorbell: pend_rung)──▶
 *   issue: fi_writemsg / fi_readmsg (slot owned by the provider) ──▶ CQ ──▶ poll
 *          or memcpy / refusal / flush ──▶ done ring ──▶ poll
 * A descriptor the provider refuses with -FI_EAGAIN stays at the head of
 * the pend FIFO and is retried by poll until its deadline. Counters are
 * free-running; every ring has mask + 1 entries, at least the depth.
 */
struct fab_qp {
	struct hw_qp hw;
	struct fab_dev *dev;
	struct fi_info *info; /* the device's, on an ephemeral port */
	struct fid_ep *ep;
	struct fid_cq *cq;
	int epfd;      /* epoll set: cq's wait fd and the device's, added at the first arm */
	bool watching; /* they are in it */
	struct fab_qp *next_watcher; /* dev->watchers (serve_lock) */
	hw_wake_fn wake;
	void *wake_arg;

	uint32_t mask;
	struct fab_pending *pend;
	uint32_t pend_head, pend_rung, pend_tail;
	struct hw_cqe *done;
	uint32_t done_head, done_tail;
	struct fab_slot *slots;
	struct fab_slot **free_slots; /* a stack */
	uint32_t nfree;
	uint32_t nagain; /* slots waiting to be issued again (neither free nor in flight) */
	/* no slot in flight has an earlier deadline (a bound, not exact);
	 * or, one past it, when the endpoint is next replaced: that failed
	 * (no CQ could be made), tried again after a backoff of
	 * expire_step_ns (as retry_step_ns; 0: no failure) */
	uint64_t next_expiry_ns;
	uint64_t expire_step_ns;
	/* in the epoll set with the CQs: armed for next_expiry_ns while
	 * operations are in flight, so a PE asleep in event mode wakes to
	 * fail a stalled one */
	int timer_fd;
	uint64_t timer_at_ns; /* what it is set to (0: disarmed) */
	/* The provider refused the next descriptor for now (-FI_EAGAIN: a
	 * connection under way, or a peer gone): issue tries it again from
	 * then on (0: none refused), a backoff of retry_step_ns that doubles
	 * up to FAB_RETRY_STEP_MAX_NS, never past the descriptor's deadline.
	 * Until then it is not work for an armed PE (fab_pending) and the
	 * timer wakes it for the retry: retried at every arm, a PE in event
	 * mode spun through a dead peer's whole retry_ms (a review). */
	uint64_t retry_at_ns;
	uint64_t retry_step_ns;

	bool flushed;
	bool must_poll; /* fi_trywait said an event is waiting */
	/* An RMA failed: libfabric 1.17's tcp target closes the connection
	 * after refusing a key, or the peer died, and rxm keeps using the
	 * closed connection; so once nothing is in flight the endpoint is
	 * replaced (its next operations connect anew). */
	bool ep_broken;
};

static inline struct fab_dev *fab_dev_of(struct hw_dev *hw)
{
	return (struct fab_dev *)((char *)hw - offsetof(struct fab_dev, hw));
}

static inline struct fab_mr *fab_mr_of(const struct hw_mr *hw)
{
	return (struct fab_mr *)((const char *)hw - offsetof(struct fab_mr, hw));
}

/* How many of the queue pair's operations the provider holds. */
static inline uint32_t fab_in_flight(const struct fab_qp *qp)
{
	return qp->mask + 1u - qp->nfree - qp->nagain;
}

static inline struct fab_qp *fab_qp_of(struct hw_qp *hw)
{
	return (struct fab_qp *)((char *)hw - offsetof(struct fab_qp, hw));
}

extern const struct hw_ops hw_fabric_ops;

/* ---- mappings and parameters (fabric_map.c) ---- */

/** A libfabric error (positive FI_E* / errno, and the provider's errno of
 * a completion, 0 if none) → doca_error_t. */
doca_error_t fab_errno_to_doca(int err, int prov_errno);
/** A failed registration's error (positive FI_E* / errno, of fi_mr_reg) →
 * doca_error_t: NO_MEMORY, NOT_PERMITTED, NOT_SUPPORTED or DRIVER. */
doca_error_t fab_reg_errno_to_doca(int err);
/** Parse the text after "fab0:" (NULL: defaults): KEY=VALUE items, each key
 * at most once, no empty item; hw_diag says what is wrong. */
doca_error_t fab_params_parse(const char *params, struct fab_params *p);
/** The hints for `p` (fi_freeinfo when done); NULL when out of memory. */
struct fi_info *fab_hints(const struct fab_params *p);
/** FNV-1a of n bytes. */
uint64_t fab_wire_hash(const void *bytes, size_t n);
/** CLOCK_MONOTONIC in ns. */
uint64_t fab_now_ns(void);

/* ---- slow path (fabric_dev.c, fabric_mr.c, fabric_qp.c) ---- */

doca_error_t fab_probe(struct hw_dev_desc *descs, size_t cap, size_t *count);
doca_error_t fab_open(const char *name, const char *params, struct hw_dev **dev);
void fab_close(struct hw_dev *dev);
/** A CQ of depth entries in `domain` with an FI_WAIT_FD wait object; hw_diag
 * says why not. Its fd is asked for (FI_GETWAIT) only when event mode first
 * arms: libfabric 1.17's tcp makes every later CQ read of the process an
 * epoll_wait system call once a wait fd was taken (~2 us per operation),
 * which a polling application should not pay. */
doca_error_t fab_cq_make(struct fab_dev *dev, struct fid_domain *domain, size_t depth,
			 struct fid_cq **cq);
/** Close the service endpoint (its connections, and what they were moving)
 * and its CQ, and make both again on the same address and port; when that
 * fails, none is left (dev->ep and dev->cq NULL, hw_diag says why) and the
 * next export, or a serve after retry_ms, tries again. Caller: serve_lock. */
doca_error_t fab_service_renew(struct fab_dev *dev);
/** Add the service CQ's wait fd (taken the first time) to qp's epoll set
 * and list qp, so that a renew adds its new CQ's there too:
 * DOCA_ERROR_NOT_SUPPORTED when the provider gives no wait fd,
 * DOCA_ERROR_OPERATING_SYSTEM when epoll_ctl fails. Any thread. */
doca_error_t fab_dev_watch(struct fab_dev *dev, struct fab_qp *qp);
/** Unlist qp (before its epoll set is closed). Any thread. */
void fab_dev_unwatch(struct fab_dev *dev, struct fab_qp *qp);
/** fi_trywait on the service CQ, under serve_lock (a renew may replace it):
 * 0, or -FI_EAGAIN when there is something to read now. */
int fab_dev_trywait(struct fab_dev *dev);
/** An enabled endpoint of `domain` on `info`'s address, bound to cq and av;
 * hw_diag says why not: DOCA_ERROR_INVALID_VALUE when the address cannot
 * be bound (EADDRINUSE, EADDRNOTAVAIL, EACCES), else the driver's error
 * as hw_driver_errno_to_doca maps it (NO_MEMORY, NOT_PERMITTED,
 * NOT_SUPPORTED, DRIVER). */
doca_error_t fab_ep_make(struct fab_dev *dev, struct fid_domain *domain, struct fid_av *av,
			 struct fi_info *info, struct fid_cq *cq, struct fid_ep **ep);
/** A new CQ and endpoint for @p qp, the old ones closed with what they
 * held: after a connection error (nothing in flight), so its next
 * operations connect anew, or to drop a stalled operation. ep NULL,
 * ep_broken kept, if no endpoint could be made; false, nothing changed, if
 * the CQ could not be made. */
bool fab_qp_remake(struct fab_qp *qp);
/** Set the queue pair's timer to ring at @p at_ns (fab_now_ns time; 0
 * disarms it). */
void fab_qp_timer_set(struct fab_qp *qp, uint64_t at_ns);
doca_error_t fab_mem_register(struct hw_dev *dev, void *addr, size_t len, uint32_t access,
			      struct hw_mr **mr);
void fab_mem_deregister(struct hw_mr *mr);
doca_error_t fab_mem_export(struct hw_mr *mr, uint32_t access, const void **desc, size_t *len);
doca_error_t fab_mem_import(struct hw_dev *dev, const void *desc, size_t len, struct hw_mr **mr);
doca_error_t fab_qp_create(struct hw_dev *dev, const struct hw_qp_attr *attr, struct hw_qp **qp);
void fab_qp_destroy(struct hw_qp *qp);
int fab_notify_fd(struct hw_qp *qp);
doca_error_t fab_notify_arm(struct hw_qp *qp);
void fab_notify_ack(struct hw_qp *qp);

/** The peer of address addr, counted once more (made, with its AV entry,
 * if new) into *peer: DOCA_ERROR_NO_MEMORY when it cannot be made for
 * lack of memory, DOCA_ERROR_INVALID_VALUE when the AV refuses the address
 * (*peer NULL, nothing changed; hw_diag says why). Slow path. */
doca_error_t fab_peer_get(struct fab_dev *dev, const uint8_t *addr, size_t len,
			  struct fab_peer **peer);
/** Count one user of @p peer less (a remote memory's destroy); the last
 * removes its AV entry and frees it. Slow path. */
void fab_peer_put(struct fab_dev *dev, struct fab_peer *peer);
/** Free every peer (device close). */
void fab_peers_free(struct fab_dev *dev);

/* ---- fast path (fabric_fastpath.c) ---- */

uint32_t fab_post(struct hw_qp *qp, const struct hw_desc *descs, uint32_t n);
void fab_doorbell(struct hw_qp *qp);
void fab_kick(struct hw_qp *qp);
uint32_t fab_poll(struct hw_qp *qp, struct hw_cqe *cqes, uint32_t max);
bool fab_pending(struct hw_qp *qp);
void fab_flush(struct hw_qp *qp);

#endif /* DOCA_HW_FABRIC_INTERNAL_H */
