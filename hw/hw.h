/*
 * hw/hw.h — the backend interface. A backend ("sw", "verbs") is one const
 * ops table: a slow path (probe, open, close, register memory, create and
 * destroy queue pairs, notification) and a fast path (post descriptors, ring
 * the doorbell, poll completions, flush). Backends know queues and
 * descriptors, never contexts: they include this header and doca_error.h,
 * nothing of engine/.
 *
 * Ownership: a queue pair (SQ + CQ) is created per started context. Its fast
 * path is called only by the one thread currently running the context's
 * progress engine; hw_qp_destroy is called once nothing calls its fast path
 * any more (after an RCU grace period). A backend device lives until it is
 * closed, which the engine does only once its last queue pair and memory
 * registration are gone.
 *
 * Every op of a registered backend is non-NULL: a backend without a
 * completion channel points the optional notify ops at the hw_notify_*_none
 * no-op ops below, so no caller ever tests for NULL.
 */
#ifndef DOCA_HW_H
#define DOCA_HW_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "doca_error.h"

struct hw_ops;

/** A backend device; backends embed it first and downcast (container_of). */
struct hw_dev {
	const struct hw_ops *ops;
	/* bound to an address another open may want (fab0:port=N): a close
	 * waits for stopped contexts' queue pairs to let go (engine/dev.c) */
	bool holds_address;
};

/** A memory registration; backends embed it first. A remote memory (one
 * another process exported, made by mem_import) has addr NULL: a descriptor
 * naming it carries the offset into the exported region as its address. */
struct hw_mr {
	void *addr;
	size_t len;
	uint32_t access; /* HW_ACCESS_*: for a remote memory, what the exporter granted */
};

/** A queue pair; backends embed it first. */
struct hw_qp {
	const struct hw_ops *ops;
	/* Set at qp_create: posted descriptors run only inside poll (an inline
	 * device), so a post needs a progress call and nothing else wakes the
	 * PE for it. Otherwise an executor or completion channel wakes it. */
	bool runs_in_poll;
	/* Set at qp_create: the backend calls hw_qp_attr.wake after the
	 * completions it produces (an executor thread), so the engine need not
	 * poll a queue pair with descriptors on the device to find them. */
	bool signals_completions;
	/* Set at qp_create: its polls do work that no signal announces (fabric
	 * over a software provider: reading the device's service CQ is what
	 * moves other processes' RMA into its exported memory), so the PE
	 * visits its context every turn while the context runs, work or not. */
	bool always_polled;
	/* Set at qp_create by an inline device whose descriptors run, with
	 * no delay and no ring of limited size, as soon as poll looks at them:
	 * the engine may hand a turn's tasks to hw_ops.execute instead of
	 * posting them and polling their completions. Its poll does nothing
	 * while nothing is posted to it, so the engine then skips the poll
	 * (unless always_polled is set too). */
	bool executes_at_once;
	/* Set at qp_create, only with executes_at_once, by a device with no
	 * fault to inject: until its flush, its execute of each copy is
	 * memmove(dst, src, len) on the caller's thread, completed whole, and
	 * it keeps no count of them. The engine, which executes only before it
	 * flushes, may then make those copies itself, in order, instead of
	 * building them for hw_ops.execute (no array, no call per chunk). */
	bool copies_plain;
	/* Set at qp_create by a device with hw_ops.reap: the engine reaps its
	 * completions with it instead of poll. */
	bool reaps_whole;
	/* Set at qp_create by a device with hw_ops.post_chain: the engine
	 * posts its linked events with it instead of post. */
	bool posts_chain;
};

enum hw_access {
	HW_ACCESS_READ = 1u << 0,  /* same bits as DOCA_ACCESS_FLAG_READ */
	HW_ACCESS_WRITE = 1u << 1, /* same bits as DOCA_ACCESS_FLAG_WRITE */
};

/** One copy for the device. The engine has checked bounds and access. */
struct hw_desc {
	uint64_t cookie; /* returned unchanged in the completion */
	void *src;
	void *dst;
	uint64_t len;
	const struct hw_mr *src_mr;
	const struct hw_mr *dst_mr;
};

/** One copy for hw_ops.execute. A device that executes at once copies
 * with the CPU in this process's address space (both sides local), so it
 * needs no registration: the hw_desc without its two memory registrations,
 * and without a cookie (the caller knows each copy by its index, and makes
 * the race detector's annotations around the call itself). The engine has
 * checked bounds and access. */
struct hw_copy {
	void *src;
	void *dst;
	uint64_t len;
};

/** Where hw_ops.post_chain finds each copy in the caller's records, as
 * byte offsets into them: a record's address is its copy's cookie; at
 * `next` lies the next record's address, at `len` the copy's length (a
 * uint64_t), at `src` (`dst`) the address of an object that holds, at
 * `data`, the copy's source (destination) address. The engine's are its
 * events and their buffers (engine/ctx_run.c). */
struct hw_chain {
	uint32_t next;
	uint32_t len;
	uint32_t src;
	uint32_t dst;
	uint32_t data;
};

/* The word at @p off in record @p rec (memcpy: the record's field has
 * its own type). */
static inline uint64_t hw_chain_word(const void *rec, uint32_t off)
{
	uint64_t w;

	memcpy(&w, (const char *)rec + off, sizeof(w));
	return w;
}

static inline void *hw_chain_ptr(const void *rec, uint32_t off)
{
	void *p;

	memcpy(&p, (const char *)rec + off, sizeof(p));
	return p;
}

/* The record after @p rec in its chain. */
static inline const void *hw_chain_next(const void *rec, const struct hw_chain *c)
{
	return hw_chain_ptr(rec, c->next);
}

/* hw_ops.reap's step for one completion: the address of the record its
 * @p cookie names stored in the link word at @p link and in the word at
 * @p rec_at (memcpy: both words have the caller's type); returns that
 * record's link word, at @p next. */
static inline void *hw_link_record(void *link, uint64_t cookie, uint32_t next, void *rec_at)
{
	void *rec = (void *)(uintptr_t)cookie;

	memcpy(link, &rec, sizeof(rec));
	memcpy(rec_at, &rec, sizeof(rec));
	return (char *)rec + next;
}

/* Record @p rec's copy as a descriptor, without memory registrations. */
static inline struct hw_desc hw_chain_desc(const void *rec, const struct hw_chain *c)
{
	return (struct hw_desc){
		.cookie = (uint64_t)(uintptr_t)rec,
		.src = hw_chain_ptr(hw_chain_ptr(rec, c->src), c->data),
		.dst = hw_chain_ptr(hw_chain_ptr(rec, c->dst), c->data),
		.len = hw_chain_word(rec, c->len),
	};
}

enum hw_cqe_status {
	HW_CQE_OK = 0,      /* every byte copied */
	HW_CQE_FAILED = 1,  /* nothing reliable was copied; error says why */
	HW_CQE_PARTIAL = 2, /* the first `bytes` bytes were copied; error says why */
	HW_CQE_FLUSHED = 3, /* not completed, flushed by hw_ops.flush (sw: never started;
			     * verbs: a WR in flight may have written part of dst) */
};

/** One completion. */
struct hw_cqe {
	uint64_t cookie;
	uint64_t bytes;     /* bytes copied; not read for HW_CQE_OK, whose bytes are
			     * its descriptor's len, which the caller holds (a
			     * backend may report 0: sw's engine mode does, its CQ
			     * carries no len, hw/sw/sw_cq.h), nor for
			     * HW_CQE_FLUSHED (the engine reports 0 for a flushed
			     * task: pe_progress.c event_flush) */
	uint32_t status;    /* enum hw_cqe_status */
	doca_error_t error; /* DOCA_SUCCESS for HW_CQE_OK */
	bool fatal;         /* the queue pair is broken: no later descriptor can succeed */
};

/* A backend's second look at a CQ only its executor fills: true while an
 * entry is left that the PE has not taken. */
typedef bool (*hw_unread_fn)(const void *cq);
/* hw_qp_attr.wake (see there). */
typedef void (*hw_wake_fn)(void *arg, hw_unread_fn unread, const void *cq);

/** What the engine asks of a new queue pair. */
struct hw_qp_attr {
	uint32_t depth; /* most descriptors outstanding at once (SQ + CQ) */
	/* Called by a backend executor thread after it publishes completions
	 * and then runs a full (seq_cst) fence, so a sleeping progress engine
	 * can be woken: after each batch of CQ entries, not only when the CQ
	 * was empty (the PE may have emptied it and armed in between), and
	 * may be skipped when the fence-ordered look shows the PE already
	 * took every entry. unread (may be NULL) repeats that look on cq:
	 * the engine calls it once it sees the PE armed and wakes only if it
	 * returns true, since the PE may have taken the entries between the
	 * backend's look and its arming. May be called from any thread. */
	hw_wake_fn wake;
	void *wake_arg;
};

/** One device a backend can open. */
struct hw_dev_desc {
	char name[64];
	char caps[128];
};

struct hw_ops {
	const char *name; /* "sw", "verbs" */

	/* ---- slow path ---- */
	/* List the devices; fill at most cap entries, set *count to how many exist. */
	doca_error_t (*probe)(struct hw_dev_desc *descs, size_t cap, size_t *count);
	/* Open device `name` with `params` (text after ':' in the open string, or
	 * NULL). DOCA_ERROR_NOT_FOUND if the backend has no such device,
	 * DOCA_ERROR_INVALID_VALUE for bad params. */
	doca_error_t (*open)(const char *name, const char *params, struct hw_dev **dev);
	void (*close)(struct hw_dev *dev);
	doca_error_t (*mem_register)(struct hw_dev *dev, void *addr, size_t len, uint32_t access,
				     struct hw_mr **mr);
	/* Deregister a local or remote memory; for a local one, every export
	 * of it is revoked first. */
	void (*mem_deregister)(struct hw_mr *mr);
	/* Export mr to other processes with `access` (HW_ACCESS_*, a subset of
	 * mr->access, checked by the engine): *desc (owned by mr, valid until
	 * mem_deregister) and *len describe it. The same access exported again
	 * gives the same descriptor. DOCA_ERROR_NOT_SUPPORTED for a backend
	 * without remote memory (hw_mem_export_none). */
	doca_error_t (*mem_export)(struct hw_mr *mr, uint32_t access, const void **desc, size_t *len);
	/* A remote memory from another process's descriptor; DOCA_ERROR_INVALID_VALUE
	 * for a malformed, truncated, wrong-version or wrong-provider one (nothing
	 * made); DOCA_ERROR_NOT_SUPPORTED for a backend without remote memory. */
	doca_error_t (*mem_import)(struct hw_dev *dev, const void *desc, size_t len, struct hw_mr **mr);
	doca_error_t (*qp_create)(struct hw_dev *dev, const struct hw_qp_attr *attr, struct hw_qp **qp);
	void (*qp_destroy)(struct hw_qp *qp);
	/* Optional: an fd that becomes readable when armed and a completion
	 * arrives (verbs completion channel); -1 when the backend wakes through
	 * hw_qp_attr.wake instead. */
	int (*notify_fd)(struct hw_qp *qp);
	/* Optional: arm notify_fd for the next completion. */
	doca_error_t (*notify_arm)(struct hw_qp *qp);
	/* Optional: consume what made notify_fd readable. */
	void (*notify_ack)(struct hw_qp *qp);

	/* ---- fast path: only the thread running the owning PE ---- */
	/* Queue up to n descriptors; returns how many were queued (n unless the
	 * SQ is full, which the engine's credits prevent). The device may start
	 * them at once; doorbell, then kick, make sure it does. */
	uint32_t (*post)(struct hw_qp *qp, const struct hw_desc *descs, uint32_t n);
	/* Optional, only with hw_qp.posts_chain: post's work for n copies
	 * given as a chain of the caller's records (struct hw_chain) from
	 * first on, for a device that reads no memory registration (it copies
	 * with the CPU, both sides local). Queues them exactly as post of
	 * their descriptors would (hw_chain_desc) and returns how many, the
	 * chain's first ones; so the caller builds no descriptor and loads no
	 * registration a copy. */
	uint32_t (*post_chain)(struct hw_qp *qp, const void *first, uint32_t n, const struct hw_chain *shape);
	/* Hand posted descriptors to the device. */
	void (*doorbell)(struct hw_qp *qp);
	/* After a doorbell, from any thread: make sure the device's executor
	 * runs (an engine thread asleep is woken: a system call that may let
	 * the woken thread take this CPU, so the engine calls it after letting
	 * go of the PE it holds briefly). A backend whose doorbell reaches the
	 * device itself gives a no-op. */
	void (*kick)(struct hw_qp *qp);
	/* Reap up to max completions (an inline device executes here). */
	uint32_t (*poll)(struct hw_qp *qp, struct hw_cqe *cqes, uint32_t max);
	/* Optional, only with hw_qp.executes_at_once: run n descriptors now,
	 * in order, exactly as a post, a doorbell and a poll returning their
	 * completions would. Returns k (<= n): copies[0..k) each completed
	 * whole (HW_CQE_OK, bytes == len, error DOCA_SUCCESS, not fatal) and
	 * their cqes are left unwritten (the common case costs no completion
	 * written and read back); cqes[i] is the completion of copies[i] for
	 * k <= i < n (its cookie 0). No race detector annotation: the caller's
	 * (all on its thread). The engine calls it only while none of the
	 * qp's posted descriptors is outstanding, so nothing posted earlier is
	 * overtaken. */
	uint32_t (*execute)(struct hw_qp *qp, const struct hw_copy *copies, uint32_t n, struct hw_cqe *cqes);
	/* Optional, only with hw_qp.reaps_whole: poll's work for a caller
	 * whose cookies are the addresses of its records (as post_chain's
	 * are) and that wants their records linked, and needs only the
	 * cookie of a whole copy's completion (HW_CQE_OK: every byte,
	 * DOCA_SUCCESS, not fatal). Takes up to max completions, in order,
	 * exactly as poll would, and returns how many (n). Each one's record
	 * address is stored in the pointer-sized word at *link, and *link
	 * then moves to that record's word at byte offset `next`:
	 * the records come out linked in completion order behind the word the
	 * caller's *link named, and *link names the last one's `next`, left
	 * unwritten (the caller ends the list). Each completion that is not a
	 * whole copy is also written whole to odd[], in order: *nodd of them
	 * (<= n, set by every call). Each record's address is also stored in
	 * recs[0..n), in order (pointer-sized words of the caller's type):
	 * the caller holds them as an array, not only as a chain to walk. So
	 * the common case writes two words a completion, the link the caller
	 * would write anyway and one in a line it writes in sequence. */
	uint32_t (*reap)(struct hw_qp *qp, void **link, uint32_t next, uint32_t max, void *recs,
			 struct hw_cqe *odd, uint32_t *nodd);
	/* True if poll would return something without a new post or a wake:
	 * work poll itself executes now (inline; one waiting for a delay is
	 * not, and the backend's notify_fd wakes for it), completions already queued, or
	 * one notify_arm took aside because it arrived before the arm. The
	 * engine calls it after notify_arm, so no wake-up is lost. A backend
	 * with a completion channel (verbs) may leave out completions still
	 * in its CQ: notify_arm's look takes one aside, and otherwise the
	 * engine polls a queue pair every turn while descriptors are on it. */
	bool (*pending)(struct hw_qp *qp);
	/* Every descriptor the device has not started completes as
	 * HW_CQE_FLUSHED (through poll); started ones complete normally. Later
	 * posts are flushed too, until the queue pair is destroyed. */
	void (*flush)(struct hw_qp *qp);
};

/* The backends, in lookup order (hw/hw_registry.c): the built-in ones (sw
 * first), then one per loadable module (hw/hw_module.h), each loaded the
 * first time a caller asks for its ops. */
extern const size_t hw_backend_count;
/* Backend i's name ("sw", "verbs"), known without loading it. */
const char *hw_backend_name(size_t i);
/* Backend i's ops, loading its module first if it is not loaded yet. NULL
 * when the module cannot be loaded; *why then says why in one line (it lives
 * as long as the process). A module that failed is not tried again.
 * Thread safety: any thread. */
const struct hw_ops *hw_backend_get(size_t i, const char **why);
/* A fork child: the module loader's lock is made anew (engine/fork.c). */
void hw_modules_after_fork_child(void);

/* The optional notify ops of a backend that wakes through
 * hw_qp_attr.wake, and the doorbell of one whose posts are visible at once
 * (hw/hw_notify_none.c). */
int hw_notify_fd_none(struct hw_qp *qp);
doca_error_t hw_notify_arm_none(struct hw_qp *qp);
void hw_notify_ack_none(struct hw_qp *qp);
void hw_doorbell_none(struct hw_qp *qp);
/* mem_export / mem_import of a backend without remote memory: both
 * DOCA_ERROR_NOT_SUPPORTED (hw/hw_remote_none.c). */
doca_error_t hw_mem_export_none(struct hw_mr *mr, uint32_t access, const void **desc, size_t *len);
doca_error_t hw_mem_import_none(struct hw_dev *dev, const void *desc, size_t len, struct hw_mr **mr);

/* Why an open was refused (DOCA_ERROR_INVALID_VALUE): a backend states it in
 * one line naming the key and what it allows; the engine takes it (and so
 * clears it) and logs it. Thread safety: per thread. */
void hw_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hw_vdiag(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
const char *hw_diag_take(void);

static inline uint32_t hw_qp_post(struct hw_qp *qp, const struct hw_desc *d, uint32_t n)
{
	return qp->ops->post(qp, d, n);
}
static inline uint32_t hw_qp_post_chain(struct hw_qp *qp, const void *first, uint32_t n, const struct hw_chain *shape)
{
	return qp->ops->post_chain(qp, first, n, shape);
}
static inline void hw_qp_doorbell(struct hw_qp *qp)
{
	qp->ops->doorbell(qp);
}
static inline void hw_qp_kick(struct hw_qp *qp)
{
	qp->ops->kick(qp);
}
static inline uint32_t hw_qp_poll(struct hw_qp *qp, struct hw_cqe *c, uint32_t max)
{
	return qp->ops->poll(qp, c, max);
}
static inline uint32_t hw_qp_reap(struct hw_qp *qp, void **link, uint32_t next, uint32_t max, void *recs,
				  struct hw_cqe *odd, uint32_t *nodd)
{
	return qp->ops->reap(qp, link, next, max, recs, odd, nodd);
}
static inline uint32_t hw_qp_execute(struct hw_qp *qp, const struct hw_copy *d, uint32_t n, struct hw_cqe *c)
{
	return qp->ops->execute(qp, d, n, c);
}

#endif /* DOCA_HW_H */
