/*
 * engine/engine.h — the object model's private structures and the rules
 * that tie them together. No backend knowledge: devices are reached through
 * hw/hw.h only.
 *
 * Who may touch what:
 * - g_config_lock (a mutex) orders every slow-path structural change:
 *   binding, connecting, creating and destroying memories, ctx state
 *   transitions. It is never held while a user callback runs or inside an
 *   RCU read-side section.
 * - ctx->state is read lock-free by submitters inside an RCU read-side
 *   section; doca_ctx_stop waits a grace period after leaving RUNNING, so
 *   once it returns no submitter that saw RUNNING is still pushing.
 * - A PE's ready list, its contexts' queue pairs and the drained side of
 *   their mailboxes belong to the thread holding the PE's runner guard.
 * - Object memory is freed after an RCU grace period (doca_call_rcu), so a racing
 *   reader never touches freed memory.
 */
#ifndef DOCA_ENGINE_H
#define DOCA_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <ck_ring.h>
#include <urcu/list.h>

#include "doca_core.h"
#include "actors/explore.h"
#include "actors/hb_annotate.h"
#include "actors/mailbox.h"
#include "actors/runner.h"
#include "actors/worker.h"
#include "engine/rcu.h"
#include "hw/hw.h"

/* Magic numbers: a handle's first word says what it is. Cleared on destroy. */
#define MAGIC_DEV 0x44455631u   /* "DEV1" */
#define MAGIC_CTX 0x43545831u   /* "CTX1" */
#define MAGIC_MEM 0x4d454d31u   /* "MEM1" */
#define MAGIC_BUF 0x42554631u   /* "BUF1" */
#define MAGIC_PE 0x50453031u    /* "PE01" */
#define MAGIC_EVENT 0x45565431u /* "EVT1" */
#define MAGIC_DEAD 0xdeadbeefu

/* Refcounts that can be closed: the DEAD bit set by a destroy that saw zero
 * users; a user that finds DEAD after its increment backs off. */
#define REF_DEAD (1u << 31)

extern pthread_mutex_t g_config_lock;

/* ---- devices ---- */

/* One opened backend device, shared by every handle opened with the same
 * string; lives in the RCU hash table of engine/dev.c. */
struct dev_entry {
	struct cds_lfht_node node;
	struct rcu_head rcu;
	const struct hw_ops *ops;
	struct hw_dev *hw;
	_Atomic uint32_t refs; /* handles + queue pairs + memory registrations */
	char key[256];         /* the full open string */
};

struct doca_dev {
	uint32_t magic;
	uint32_t epoch;          /* g_fork_epoch at creation (engine/fork.c) */
	struct dev_entry *entry;
	char name[64];          /* the part before ':' */
	uint32_t nr_mems;       /* g_config_lock */
	struct cds_list_head ctxs; /* bound contexts, g_config_lock */
	struct rcu_head rcu;
};

void dev_entry_get(struct dev_entry *e);
void dev_entry_put(struct dev_entry *e);
/* fork() child: a fresh registry (the inherited one is kept, unused) and
 * fresh global locks. */
void dev_after_fork_child(void);

/* ---- memories and buffers ---- */

struct doca_mem {
	uint32_t magic;
	uint32_t epoch;          /* g_fork_epoch at creation (engine/fork.c) */
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	void *addr;
	size_t len;
	uint32_t access;
	bool owned;             /* allocated by doca_mem_create */
	struct hw_mr *mr;
	_Atomic uint32_t bufs;  /* live buffers | REF_DEAD */
	struct rcu_head rcu;
};

struct doca_buf {
	uint32_t magic;
	uint32_t epoch;          /* g_fork_epoch at creation (engine/fork.c) */
	struct doca_mem *mem;
	uint8_t *data;
	size_t len;
	struct rcu_head rcu;
	/* written by submitters and the PE: off the read-only line above */
	_Alignas(64) _Atomic uint32_t users; /* unfreed events of tasks naming it | REF_DEAD */
};

/* Pin a buffer for a task; false if it is being destroyed. */
bool buf_pin(struct doca_buf *buf);
void buf_unpin(struct doca_buf *buf);

/* ---- events (one per task slot) ---- */

enum event_state {
	EV_FREE = 0,    /* in the pool */
	EV_QUEUED,      /* submitted: in a mailbox, an SQ or the device */
	EV_READY,       /* on the PE's ready list or handed to the application */
	EV_CALLBACK,    /* being delivered to an event callback */
};

struct doca_event {
	uint32_t magic;
	uint8_t state;          /* enum event_state; PE thread (and submitter before push) */
	uint8_t status;         /* enum doca_event_status */
	uint16_t type;          /* enum doca_task_type */
	uint32_t flags;
	doca_error_t error;
	uint64_t len;           /* bytes to copy */
	uint64_t bytes;         /* bytes copied */
	struct doca_ctx *ctx;
	struct doca_buf *src;
	struct doca_buf *dst;
	union doca_data user_data;
	struct ctx_run *run;     /* the run whose pool holds this slot */
	struct doca_event *next; /* PE ready list */
	struct mailbox_node mbox_node; /* its link while in the run's mailbox */
} __attribute__((aligned(64)));

/* ---- contexts ---- */

/* Task pool: the context's credits. Slots are taken by submitters
 * (multi-consumer) and returned only by the PE's thread (single producer). */
struct task_pool {
	struct doca_event *events;
	uint32_t size;
	/* own cache lines (ck pads c_head from p_tail): submitters take from
	 * it, the PE's thread returns to it */
	_Alignas(64) struct ck_ring free_ring;
	struct ck_ring_buffer *free_slots;
};

/* One run of a context, from doca_ctx_start to IDLE: its task pool,
 * mailbox and queue pair, and the flags the PE keeps about it. Made by
 * start, published with RCU, retired at IDLE and freed after a grace period,
 * so a submitter or a PE turn that began in an earlier run only ever sees
 * that run's object, never one being rebuilt. */
struct ctx_run {
	struct rcu_head rcu;
	struct task_pool pool;
	struct mailbox mbox;
	struct hw_qp *qp;
	struct dev_entry *entry; /* the device the qp belongs to (a reference) */
	bool flush_sent;         /* PE thread: hw flush issued for this run's stop */
	bool fatal;              /* PE thread: the qp reported a fatal completion */
	/* Descriptors posted and not yet polled back: written by the runner
	 * only (run_post, run_poll), loaded by submitters deciding whether a
	 * completion will wake the PE anyway (pe_wake_after_push). */
	_Atomic uint32_t on_device;
};

/* Tasks in flight plus events not yet freed. Exact when no submitter races. */
uint32_t run_outstanding(const struct ctx_run *run);
/* Post n descriptors to the run's queue pair (runner guard held). Credits
 * bound what is outstanding, so a full SQ is a broken invariant: abort. */
void run_post(struct ctx_run *run, const struct hw_desc *descs, uint32_t n);
/* Poll up to max completions of the run's queue pair (runner guard held). */
uint32_t run_poll(struct ctx_run *run, struct hw_cqe *cqes, uint32_t max);

struct doca_ctx {
	uint32_t magic;
	uint32_t epoch;          /* g_fork_epoch at creation (engine/fork.c) */
	_Atomic int state;            /* enum doca_ctx_state */
	struct doca_dev *dev;         /* g_config_lock */
	struct cds_list_head dev_link; /* in dev->ctxs, g_config_lock */
	struct doca_pe *pe;           /* g_config_lock; fixed while not IDLE */
	uint32_t nr_mems;             /* g_config_lock */
	uint32_t max_tasks;
	union doca_data user_data;
	doca_event_cb_t event_cb;
	doca_ctx_state_cb_t state_cb;

	struct ctx_run *run;          /* RCU-published; NULL when IDLE */
	_Atomic bool may_finalize;    /* set by stop: the PE may finish STOPPING → IDLE */
	/* Held (recursively) from a state change to the end of its report, so
	 * reports reach the state callback in the order the changes happened. */
	pthread_mutex_t report_lock;

	/* written by the PE every turn: kept off the lines submitters read */
	_Alignas(64) _Atomic uint32_t refs; /* the handle + PE turns holding it */
	struct rcu_head rcu;
};

/* Report a transition to the state callback (never under g_config_lock). */
void ctx_report(struct doca_ctx *ctx, enum doca_ctx_state prev, enum doca_ctx_state next);
/* STOPPING → IDLE on the PE thread when every event is freed; returns true if done. */
bool ctx_try_finalize(struct doca_ctx *ctx);
/* Stop requested by the engine itself (fatal device error). */
void ctx_stop_on_fatal(struct doca_ctx *ctx);
bool ctx_ref_get(struct doca_ctx *ctx);
void ctx_ref_put(struct doca_ctx *ctx);
/* Give a flushed or completed slot back (PE thread). */
void event_release(struct doca_event *ev);

/* ---- progress engines ---- */

/* The contexts a PE serves. Readers (the PE's turn, inside an RCU read-side
 * section) load the array, then count, then entries. Writers hold
 * g_config_lock: append in place while there is room, else publish a bigger
 * copy and free the old one after a grace period; remove by moving the last
 * entry into the hole and then shrinking count. A reader racing a removal
 * may miss one context for one turn or meet the removed one, whose refcount
 * or state makes it skip it. */
struct pe_members {
	_Atomic uint32_t count;
	uint32_t capacity;
	struct rcu_head rcu;
	_Atomic(struct doca_ctx *) ctx[];
};

enum pe_armed { PE_DISARMED = 0, PE_ARMED, PE_FIRED };

struct doca_pe {
	uint32_t magic;
	uint32_t epoch;          /* g_fork_epoch at creation (engine/fork.c) */
	struct runner runner;
	struct pe_members *members;   /* RCU-published; g_config_lock for writers */
	uint32_t cursor;              /* runner: first member scanned next turn */
	struct doca_event *ready_head; /* runner */
	struct doca_event *ready_tail;
	/* own cache line: wakers on other CPUs load these after every burst,
	 * and the fields above are written by the runner on every turn */
	_Alignas(64) _Atomic int armed; /* enum pe_armed */
	_Atomic(const void *) home;     /* runner_self() of the thread that ran the last turn */
	int epfd;                     /* the notification handle */
	int evfd;                     /* eventfd inside epfd: software wakes */
	struct worker worker;
	_Atomic bool has_worker;      /* a worker runs it or is being stopped; worker_lock for writers */
	bool worker_stopping;         /* a doca_pe_stop_run is joining it; worker_lock */
	struct rcu_head rcu;
};

/* One turn of the actor (caller holds the runner guard). */
uint32_t pe_turn(struct doca_pe *pe);
/* Move a running context's mailbox to its device, up to max items, and
 * ring the doorbell if any moved (runner guard held, inside a read-side
 * section); returns how many. The caller kicks the device (hw_qp_kick)
 * when that is not 0, after letting go of a guard held briefly. */
uint32_t run_feed(struct ctx_run *run, uint32_t max);
/* fork() child: the worker lock anew (its holder may not exist there). */
void pe_worker_after_fork_child(void);

/* The device descriptor of a queued copy task. */
static inline struct hw_desc event_desc(const struct doca_event *ev)
{
	return (struct hw_desc){
		.cookie = (uint64_t)(uintptr_t)ev,
		.src = ev->src->data,
		.dst = ev->dst->data,
		.len = ev->len,
		.src_mr = ev->src->mem->mr,
		.dst_mr = ev->dst->mem->mr,
	};
}
/* Mark the PE dead unless a worker runs it (or is being stopped); false,
 * nothing changed, if one does. Exclusive with doca_pe_run_on_cpu. */
bool pe_retire_unless_worker(struct doca_pe *pe);
/* Make the notification fd readable if it is armed. Call after publishing
 * the work the PE should see. Any thread. */
void pe_wake(struct doca_pe *pe);
/* pe_wake for a caller that already ran a full fence after publishing. */
void pe_wake_fenced(struct doca_pe *pe);
/* After pushing into run's mailbox (and announcing): if the PE is armed,
 * move the mailbox to the device ourselves under the brief runner guard
 * (the completion will wake the PE), else wake it. Any thread. */
void pe_wake_after_push(struct doca_ctx *ctx, struct ctx_run *run);
/* End of a turn: a PE still armed (its application progresses between
 * arming and sleeping) is armed anew, so the turn's polls cannot make a
 * submitter skip a wake-up it needs (pe_wake_after_push). Runner guard held. */
void pe_turn_rearm(struct doca_pe *pe);
/* hw_qp_attr.wake trampoline (the backend has fenced: pe_wake_fenced). */
void pe_wake_cb(void *pe);
/* Add/remove a qp's completion channel fd to/from the PE's epoll set. */
doca_error_t pe_watch_qp(struct doca_pe *pe, struct hw_qp *qp);
void pe_unwatch_qp(struct doca_pe *pe, struct hw_qp *qp);
/* Remove ctx from pe's member array (g_config_lock held). Cannot fail. */
void pe_remove_member_locked(struct doca_pe *pe, struct doca_ctx *ctx);
/* Unbind every ctx bound to dev, all of which must be IDLE (g_config_lock held). */
doca_error_t ctx_unbind_all_locked(struct doca_dev *dev);

/* ---- utilities ---- */

void *doca_zalloc(size_t size);              /* zeroed, 64-byte aligned */
void *doca_alloc_aligned(size_t align, size_t size); /* not zeroed */
void doca_free(void *p);

/* One message through the library's log (engine/log.c, include/doca_log.h). */
void doca_log(enum doca_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- fork (engine/fork.c) ---- */

/* Bumped in a fork() child; a handle made in another epoch is inherited
 * from a parent and refused. Written only by the child's single thread in
 * its atfork handler, before any other thread of the child exists. */
extern uint32_t g_fork_epoch;

/* A live handle of this process (not destroyed, not inherited across fork). */
static inline bool ctx_valid(const struct doca_ctx *c)
{
	return c != NULL && c->magic == MAGIC_CTX && c->epoch == g_fork_epoch;
}
static inline bool dev_valid(const struct doca_dev *d)
{
	return d != NULL && d->magic == MAGIC_DEV && d->epoch == g_fork_epoch;
}
static inline bool mem_valid(const struct doca_mem *m)
{
	return m != NULL && m->magic == MAGIC_MEM && m->epoch == g_fork_epoch;
}
static inline bool buf_valid(const struct doca_buf *b)
{
	return b != NULL && b->magic == MAGIC_BUF && b->epoch == g_fork_epoch;
}
static inline bool pe_valid(const struct doca_pe *p)
{
	return p != NULL && p->magic == MAGIC_PE && p->epoch == g_fork_epoch;
}

/* The refusal of a handle that is not valid: BAD_STATE for a live object
 * inherited from the parent across fork(), INVALID_VALUE otherwise. */
#define HANDLE_REFUSAL(h, MAGIC) \
	((h) != NULL && (h)->magic == (MAGIC) ? DOCA_ERROR_BAD_STATE : DOCA_ERROR_INVALID_VALUE)

static inline enum doca_ctx_state ctx_state(const struct doca_ctx *ctx)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with the release store of each transition. */
	return (enum doca_ctx_state)atomic_load_explicit(&ctx->state, memory_order_acquire);
}

static inline void ctx_set_state(struct doca_ctx *ctx, enum doca_ctx_state s)
{
	EXPLORE_POINT(ATOMIC);
	/* release: what the transition set up is visible to whoever sees the state. */
	atomic_store_explicit(&ctx->state, (int)s, memory_order_release);
}

#endif /* DOCA_ENGINE_H */
