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
#include <stddef.h>
#include <stdint.h>

#include <urcu/list.h>

#include "doca_core.h"
#include "actors/explore.h"
#include "actors/explore_revert.h"
#include "actors/hb_annotate.h"
#include "actors/mailbox.h"
#include "actors/ready_set.h"
#include "actors/runner.h"
#include "actors/worker.h"
#include "engine/handle.h"
#include "engine/live.h"
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
	_Atomic uint32_t retiring; /* runs retired whose queue pair waits for a grace period */
	char key[256];         /* the full open string */
};

struct doca_dev {
	uint32_t magic;
	uint32_t epoch;          /* g_fork_epoch at creation (engine/fork.c) */
	_Atomic uintptr_t handle; /* the current handle: address | tag (engine/handle.h) */
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
	_Atomic uintptr_t handle; /* the current handle: address | tag (engine/handle.h) */
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	void *addr;
	size_t len;
	uint32_t access;
	bool owned;             /* allocated by doca_mem_create */
	bool remote;            /* imported (doca_mem_import): addr is NULL, buffers hold offsets */
	struct hw_mr *mr;
	_Atomic uint32_t bufs;  /* live buffers | REF_DEAD */
	struct rcu_head rcu;
};

/* OWNED_RMW_ASM: a relaxed load and a relaxed store of an atomic word
 * that no other thread writes meanwhile (the load, a change, the store:
 * a read-modify-write only its writer makes, which others may read) are
 * made as one unlocked x86-64 instruction on memory (add, or): its load
 * and its store are each a single-copy atomic access of the aligned
 * word, as the relaxed ones are, and the instruction is no atomic
 * read-modify-write as others see it, nor need it be. One instruction,
 * not three (gcc keeps atomic accesses apart). Not in the TSan and
 * explorer builds, which keep the C11 atomics their tools watch (and the
 * explorer its points and checks), nor on other targets. A volatile asm
 * with a memory operand stays ordered with the fences around it (a
 * compiler barrier orders it as it does the plain accesses). */
#ifdef WORD_ASM /* (actors/word_asm.h, through actors/runner.h) */
#define OWNED_RMW_ASM 1
#endif

/* ATOMIC_IS_ZERO(p, mo): atomic_load_explicit(p, mo) == 0 for an atomic
 * byte or 32-bit word @p p, relaxed or acquire (a constant); under
 * OWNED_RMW_ASM one cmp with the word in memory (gcc keeps an atomic load
 * apart from its test): the same single-copy atomic load. A volatile asm
 * stays in order with the other volatile accesses, as a relaxed load
 * does; an acquire's adds a memory clobber, the compiler's order, all an
 * acquire needs on x86-64. */
#ifdef OWNED_RMW_ASM
#define ATOMIC_IS_ZERO_ASM(op, p, mo)                                                              \
	__extension__({                                                                            \
		bool zero_;                                                                        \
		if ((mo) == memory_order_relaxed)                                                  \
			__asm__ volatile(op " $0, %1" : "=@ccz"(zero_) : "m"(*(p)));               \
		else                                                                               \
			__asm__ volatile(op " $0, %1" : "=@ccz"(zero_) : "m"(*(p)) : "memory");    \
		zero_;                                                                             \
	})
#define ATOMIC_IS_ZERO(p, mo)                                                                       \
	__extension__({                                                                             \
		_Static_assert(sizeof(*(p)) == 1 || sizeof(*(p)) == 4, "a byte or a 32-bit word");  \
		sizeof(*(p)) == 1 ? ATOMIC_IS_ZERO_ASM("cmpb", p, mo) : ATOMIC_IS_ZERO_ASM("cmpl", p, mo); \
	})
#else
#define ATOMIC_IS_ZERO(p, mo) (atomic_load_explicit((p), (mo)) == 0)
#endif

/* LOOP_TWO_A_ROUND, before a hot loop: two iterations a round, where gcc
 * then rotates its registers instead of copying them (issue 12's burst
 * loops). gcc only: clang reports a request it cannot honour as an error
 * under -Werror (-Wpass-failed), and unrolls as it sees fit. */
#ifdef __clang__
#define LOOP_TWO_A_ROUND
#else
#define LOOP_TWO_A_ROUND _Pragma("GCC unroll 2")
#endif

struct doca_buf {
	uint32_t magic;
	uint32_t epoch;          /* g_fork_epoch at creation (engine/fork.c) */
	_Atomic uintptr_t handle; /* the current handle: address | tag (engine/handle.h) */
	/* Its memory's fields that a task naming it reads, copied at create
	 * (a memory's are fixed from its create on): on this line, so
	 * task_check_fast reads no second object. The context first, then
	 * the context as a source (a destination) that passes every check of
	 * task_check_full naming one buffer (not empty, readable / writable,
	 * not remote), else NULL: all three stored atomically and kept out of
	 * the cell's zeroing (BUF_CELL_KEEP), since the owner's submit loads
	 * its role's word before it checks the handle (engine/task.c,
	 * task_buf_owned: the role's word is the context there, one compare
	 * for the buffer's context and its checks). Fixed at create:
	 * task_check_fast makes the buffer's checks and its context compare
	 * one compare. */
	_Atomic(const struct doca_ctx *) ctx; /* mem->ctx */
	_Atomic(const struct doca_ctx *) src_ctx, dst_ctx;
	struct doca_mem *mem;
	uint8_t *data;
	size_t len;
	/* Off the read-only line above, the counts on two lines by who writes
	 * them, so a task submitted on one CPU and freed on another moves no
	 * count line between them (engine/buf.c). Written by submitters
	 * without the guard, and by a destroy: pins of tasks naming it ever
	 * taken by such submitters | BUF_DEAD. */
	_Alignas(64) _Atomic uint64_t users;
	/* guarded pins dropped by freers without the guard (engine/buf.c) */
	_Atomic uint32_t foreign_unpins;
	/* Written by the PE's thread (mostly): the users pins dropped (by any
	 * freer), so users - users_left are those still held. */
	_Alignas(64) _Atomic uint64_t users_left;
	/* unfreed events of tasks submitted under its PE's runner guard (the
	 * guard holder's own count: engine/buf.c), less foreign_unpins */
	_Atomic uint32_t guarded_pins;
	struct rcu_head rcu; /* its destroy's only */
	/* read only by task_check_full (src_ctx and dst_ctx tell
	 * task_check_fast when it needs them not) */
	uint32_t access; /* mem->access */
	bool remote;     /* mem->remote */
};
_Static_assert(offsetof(struct doca_buf, len) + sizeof(size_t) <= 64,
	       "what task_check_fast reads is on a buffer's first line");
/* The words of a buffer's cell never zeroed: its handle head, its context
 * and its roles' contexts. */
#define BUF_CELL_KEEP (offsetof(struct doca_buf, dst_ctx) + sizeof(void *))
_Static_assert(BUF_CELL_KEEP == 40, "a buffer's contexts follow its handle head");

/* The context of a buffer's memory (never changes while the buffer lives). */
static inline const struct doca_ctx *buf_ctx(const struct doca_buf *buf)
{
	return atomic_load_explicit(&buf->ctx, memory_order_relaxed);
}
/* A buffer's users closed by a destroy (the count's top bit: 2^63 pins
 * are never taken). */
#define BUF_DEAD (UINT64_C(1) << 63)

/* What doca_mem_import hands the device instead of a region. */
struct mem_import {
	const void *desc;
	size_t len;
};
/* Make a memory of ctx h: register [addr, addr + len) with `access`, or,
 * when import is not NULL, import the remote memory it describes (addr,
 * len and access then come from the device). */
doca_error_t mem_register(const struct doca_ctx *h, void *addr, size_t len, uint32_t access,
			  bool owned, const struct mem_import *import, struct doca_mem **out);

/* The end of a destroy made inside the callback of an event naming the
 * buffer, once that event is released (PE thread). */
void buf_destroy_finish(struct doca_buf *buf);

/* ---- events (one per task slot) ---- */

/* A slot's life: FREE → QUEUED (a submitter took the credit; so it stays
 * on the PE's ready list too: no reader tells the two apart, and the
 * handout rewrites the state) → HELD (handed out by doca_pe_get_event(s))
 * → FREE with the next generation (claimed by a free, which returns it:
 * engine/event.c event_claim), by way of RETURNING (a free in its run's
 * mailbox, on its way back through the PE's turn) when another thread
 * runs the PE; or QUEUED → CALLBACK (inside the event callback) → FREE. */
enum event_state {
	EV_FREE = 0,
	EV_QUEUED,
	EV_HELD,
	EV_CALLBACK,
	EV_RETURNING,
};

/* How a task's buffers are pinned (engine/buf_pin.h). */
enum event_pins {
	EV_PINS_SHARED = 0, /* in the buffers' users counts */
	EV_PINS_GUARDED,    /* in their guarded_pins, under the PE's guard */
	EV_PINS_DROPPED,    /* dropped already, by a freer on another thread (engine/event.c) */
};

struct doca_event {
	uint32_t magic;         /* MAGIC_EVENT for the slot's whole life */
	uint32_t epoch;         /* g_fork_epoch of its pool */
	uint32_t spare;         /* free: gs moved to the second line */
	uint8_t pins;           /* enum event_pins */
	uint16_t type;          /* enum doca_task_type */
	/* with error, one aligned word: a completion stores both with one
	 * store (engine/pe_progress.c) */
	doca_error_t error;
	uint32_t status;        /* enum doca_event_status */
	/* one word: the bytes to copy until the completion, the bytes copied
	 * after it. Every completion writes bytes after its last read of len
	 * (engine/pe_progress.c), and a whole copy's bytes are its len, so
	 * the turn's execute writes nothing there. */
	union {
		uint64_t len;
		uint64_t bytes;
	};
	struct doca_ctx *ctx;
	struct doca_buf *src;
	struct doca_buf *dst;
	union doca_data user_data;
	struct ctx_run *run;     /* the run whose pool holds this slot */
	/* one word, two names: next, the link of the PE's ready list, of
	 * its run's backlog and of a submit's chunk (its slots in the order
	 * they go to the device), while the slot is taken; pool_next_ev, the
	 * free stack's link (the slot under this one) and a returned chain's
	 * link, while it is free. So the slots a burst pops off the stack
	 * come linked in their
	 * pop order, the chunk's order (engine/task_pool.c, "The link
	 * word") */
	union {
		struct doca_event *next;
		_Atomic(struct doca_event *) pool_next_ev;
	};
	struct mailbox_node mbox_node; /* its link while in the run's mailbox */
	/* ev_claim_bias of the slot's address, stored by every chunk_make
	 * (engine/task_pool.c; the same value each life of the cell): a free
	 * makes its handle's HELD gs from it (engine/event.c) */
	_Atomic uint64_t claim_bias;
	/* generation and enum event_state (ev_gs: the handle's tag with the
	 * state in the address's bits): the one word a free on another
	 * thread races on (engine/event.c). On the line of the free's and
	 * the get's other fields (run, links, bias) */
	_Atomic uint64_t gs;
	/* the PE of the slot's run, stored by every chunk_make and left by
	 * the scrub (task_pool_fini): type-stable, as the cell is. A free
	 * reads it before its claim, to enter the PE's guard first
	 * (engine/event.c, "The owner's plain claim"); exact whenever that
	 * claim then wins. Atomic: a stale free may read it while a
	 * chunk_make of the cell's next life stores it. */
	_Atomic(struct doca_pe *) pe;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct doca_event) == 128, "an event is two cache lines");

/* ---- contexts ---- */

/* Task pool: the context's credits and their event slots, in chunks made
 * as the credits are first used (engine/task_pool.c). Slots are taken by
 * submitters (multi-consumer) and returned only by the PE's thread (single
 * producer). */
#define POOL_CHUNK 32u /* events per chunk: 4 KiB */

struct task_pool {
	struct ctx_run *run;
	uint32_t size;           /* credits: the context's max_tasks */
	uint32_t nchunks;
	_Atomic(struct doca_event *) *chunks; /* nchunks, NULL until first needed */
	/* the slots (engine/task_pool.c, "Slots: the guard holder's"): read
	 * and written by the runner guard's holder alone. top_ev: the
	 * returned stack's top slot (NULL: empty), linked through
	 * pool_next_ev; stacked: its depth; fresh_from: the first slot index
	 * no take has reached yet (fresh slots are taken in index order,
	 * only with the stack empty) */
	_Alignas(64) _Atomic(struct doca_event *) top_ev;
	uint32_t stacked;
	uint32_t fresh_from;
	/* ring21 step 2 (engine/task_pool.h "The split credits"): the
	 * credits as two counters that only grow, free = size - (taken -
	 * returned). The takers' line: taken, every taker's (a CAS, acq_rel,
	 * once shared; a guard holder's plain store while the pool is the
	 * owner's); mode, POOL_OWNER until a taker without the guard
	 * appears; busy, a guard holder is in a plain take (engine/task_pool.c);
	 * chunks_made: the chunks 0 .. chunks_made - 1 exist (a CAS after the
	 * chunk's publish), read-mostly. returned: the guard holder's alone (a
	 * release store), on a line of its own. */
	_Alignas(64) _Atomic uint64_t taken;
	_Atomic uint32_t mode;
	_Atomic uint32_t busy;
	_Atomic uint32_t chunks_made;
	_Alignas(64) _Atomic uint64_t returned;
};

/* The pool of a new run, with its first chunk. DOCA_ERROR_NO_MEMORY. */
doca_error_t task_pool_init(struct task_pool *p, struct ctx_run *run, uint32_t size);
/* Give the chunks back (no thread can reach the run any more). */
void task_pool_fini(struct task_pool *p);
/* Taking and returning credits: task_pool_take and task_pool_put, inline
 * in engine/task_pool.h. */
/* Returned slots of one run, linked through pool_next_ev, put back at
 * once. */
struct pool_chain {
	struct doca_event *first; /* the chain's top (NULL: empty) */
	struct doca_event *last;
	uint32_t n;
};
/* Link a slot in front of a chain that holds one already (its owner
 * only), n not counted: the caller adds its slots to n itself (a burst,
 * once at its end: engine/event.c). */
static inline void pool_chain_link_more(struct pool_chain *c, struct doca_event *ev)
{
	/* relaxed: the chain reaches task_pool_put through the guard or the mailbox, which publish it */
	atomic_store_explicit(&ev->pool_next_ev, c->first, memory_order_relaxed);
	c->first = ev;
}
/* Add a slot to a chain that holds one already (its owner only): linked
 * in front. */
static inline void pool_chain_add_more(struct pool_chain *c, struct doca_event *ev)
{
	pool_chain_link_more(c, ev);
	c->n++;
}
/* Add a slot to a chain (its owner only): linked in front. */
static inline void pool_chain_add(struct pool_chain *c, struct doca_event *ev)
{
	if (c->n == 0)
		c->last = ev;
	pool_chain_add_more(c, ev);
}
/* Free credits now (exact when no submitter races). Any thread. */
uint32_t task_pool_free(const struct task_pool *p);

/* Who waits for a context's credits (engine/ctx_credits.c): submitters
 * blocked in doca_task_submit_wait and the armed credit notification fd.
 * Lives in the context (the fd outlives every run); its own cache line,
 * read by the PE's thread on every release and written only by waiters. */
enum credit_fd_state { CREDIT_FD_DISARMED = 0, CREDIT_FD_ARMED, CREDIT_FD_FIRED };

struct ctx_credits {
	_Atomic uint32_t waiters; /* blocked submitters, + 1 while the fd is ARMED */
	_Atomic uint32_t seq;     /* futex word: bumped by every wake */
	_Atomic int fd_state;     /* enum credit_fd_state */
	_Atomic int fd;           /* eventfd, -1 until first asked for */
	_Atomic bool used;        /* a waiter ever registered (ctx_credits_first_use) */
	_Atomic bool settled;     /* used, and a grace period has passed since */
};

/* One run of a context, from doca_ctx_start to IDLE: its task pool,
 * mailbox and queue pair, and the flags the PE keeps about it. Made by
 * start, published with RCU, retired at IDLE and freed after a grace period,
 * so a submitter or a PE turn that began in an earlier run only ever sees
 * that run's object, never one being rebuilt. */
#define RING_SP 16u /* SP rings per run: thread slots 0-15 (engine/ring.h) */
struct task_ring;

struct ctx_run {
	struct rcu_head rcu;
	uint64_t start;          /* which start of its context made it (ctx->starts) */
	struct doca_ctx *ctx;    /* its context, and that context's PE: fixed */
	struct doca_pe *pe;      /* for the run's life (signals, engine/pe_ready.c) */
	struct task_pool pool;
	struct mailbox mbox;
	struct hw_qp *qp;
	struct dev_entry *entry; /* the device the qp belongs to (a reference) */
	struct ctx_credits *credits; /* its context's waiters */
	/* RUN_WATCH_*: a credit returned to this run takes the fenced way
	 * (run_credits_returned); one byte, so the check is one load of a
	 * line the return has at hand (engine/ctx_credits.c says why the
	 * bits are set in time) */
	_Atomic uint8_t credit_watch;
	bool flush_sent;         /* PE thread: hw flush issued for this run's stop */
	bool fatal;              /* PE thread: the qp reported a fatal completion */
	/* !qp->runs_in_poll, stored by run_create before the run is published
	 * and never changed: next to flush_sent and fatal, so the owner's
	 * single submit tests the three bytes with one instruction
	 * (engine/task.c, task_one_owner) */
	bool posts_outside_poll;
	_Atomic bool stop_saw_events; /* the PE took events of the STOPPING ctx (ctx_run.c) */
	/* This run's stop has begun (set with STOPPING, never cleared). A turn
	 * flushes a run on this, not on the context's state: between its
	 * state load and its run load a stop, an IDLE and a new start could
	 * pass, and the old STOPPING then flushed the new run (a review). */
	_Atomic bool stopping;
	/* Descriptors posted and not yet polled back: written by the runner
	 * only (run_post, run_poll), loaded by submitters deciding whether a
	 * completion will wake the PE anyway (pe_wake_after_push). */
	_Atomic uint32_t on_device;
	/* Accepted tasks not on the device yet, in submission order, linked
	 * through their events' next: the ones the device did not take (its
	 * ring could not grow) and the ones a submit left for the next turn
	 * (run_defer). Posted before anything newer (run_post_backlog).
	 * Runner's. */
	struct doca_event *backlog_head, *backlog_tail;
	/* the SP ring the feed looks at first (ring.c), < RING_SP; guard
	 * holders'. Not beside sp[] and mp: stored by every feed, it took
	 * their line from the producers, whose submits load mp (prof58) */
	uint32_t sp_first;
	/* The watch's private side (engine/ring.c, ring_watch_visit), guard
	 * holders' only: the SP rings that gave entries to this visit's feed,
	 * the rings whose watch ended and that a look after the heavy fence
	 * has still to see (ring_watch_relook), and each watched ring's empty
	 * looks in a row. Off ring_watch's line: the PE writes these on every
	 * visit. */
	uint32_t watch_took;
	uint32_t watch_gone;
	uint16_t watch_idle[RING_SP];
	/* The watch (engine/ring.c, I6): bit i set, the PE's turns look at SP
	 * ring i (its context is on the PE's watch list, looked at within
	 * ceil(listed / TURN_CTXS) turns), so its
	 * producer neither announces nor runs the wake check. Stored only by a
	 * guard holder: set by a turn's visit while the PE is DISARMED,
	 * cleared by a turn's look after WATCH_IDLE empty ones, by arming and
	 * by a stopping visit. Loaded by every SP producer after every submit:
	 * a line of its own, written only when the watch changes. */
	_Alignas(64) _Atomic uint32_t ring_watch;
	/* The foreign submitters' rings (engine/ring.c): sp[i] written only by
	 * the exclusive holder of thread slot i, mp by every other foreign
	 * submitter; each made by its first producer outside any read-side
	 * section, published once (release CAS from NULL) and freed by
	 * run_free. sp_mask: bit i once sp[i] is published. A read-mostly
	 * line of its own (the PE's feed loads it, producers load their
	 * ring's pointer). */
	_Alignas(64) _Atomic(struct task_ring *) sp[RING_SP];
	_Atomic(struct task_ring *) mp;
	_Atomic uint32_t sp_mask;
};

/* Append ev to a singly linked event list (through ev->next). */
static inline void event_list_append(struct doca_event **head, struct doca_event **tail,
				     struct doca_event *ev)
{
	ev->next = NULL;
	if (*tail != NULL)
		(*tail)->next = ev;
	else
		*head = ev;
	*tail = ev;
}

#define RUN_WATCH_USED 1u /* its context's credits.used was seen set (engine/ctx_credits.c) */
#define RUN_WATCH_STOP 2u /* its stop began (set with run->stopping) */

/* Tasks in flight plus events not yet freed. Exact when no submitter races. */
uint32_t run_outstanding(const struct ctx_run *run);
/* Post n descriptors to the run's queue pair (runner guard held). Credits
 * bound what is outstanding, so the device refuses only when its ring
 * cannot grow (out of memory, or sw0's ring_max): the rest wait in the
 * run's backlog, in order, for the next post (run_post_backlog), and the
 * context stays in the ready set. */
void run_post(struct ctx_run *run, const struct hw_desc *descs, uint32_t n);
/* run_post of n events linked in order from first (their next), with
 * hw_ops.post_chain (the qp's posts_chain): no descriptor built. */
void run_post_chain(struct ctx_run *run, struct doca_event *first, uint32_t n);
/* Leave n (>= 1) filled events in the run's backlog, after what waits
 * there, for its PE's next visit to post (runner guard held; the caller
 * queues the visit): already linked in order by the caller (each
 * evs[i]->next is evs[i + 1], the last one's anything: the submit's fill
 * loop links them as it writes them), spliced on with one tail update
 * (inline: a submit of one task pays no call for it). */
static inline void run_defer(struct ctx_run *run, struct doca_event *const *evs, uint32_t n)
{
	evs[n - 1u]->next = NULL;
	if (run->backlog_tail != NULL)
		run->backlog_tail->next = evs[0];
	else
		run->backlog_head = evs[0];
	run->backlog_tail = evs[n - 1u];
}
/* Post the backlog (runner guard held) while *posted is below max, adding
 * what the device took to *posted; true when none is left (then newer
 * tasks may be posted). */
bool run_post_backlog(struct ctx_run *run, uint32_t *posted, uint32_t max);
/* Take the oldest backlog task's event, or NULL (runner guard held). */
struct doca_event *run_backlog_pop(struct ctx_run *run);
/* Poll up to max completions of the run's queue pair (runner guard held). */
uint32_t run_poll(struct ctx_run *run, struct hw_cqe *cqes, uint32_t max);
/* run_poll by hw_ops.reap (hw_qp.reaps_whole): the completed events
 * linked in order by their next behind the link word *at (*at then the
 * last one's next, left unwritten) and in evs[], in order, and the
 * completions that are not whole copies in odd[] (*nodd of them). */
uint32_t run_reap(struct ctx_run *run, struct doca_event ***at, uint32_t max, struct doca_event **evs,
		  struct hw_cqe *odd, uint32_t *nodd);

struct doca_ctx {
	uint32_t magic;
	uint32_t epoch;          /* g_fork_epoch at creation (engine/fork.c) */
	_Atomic uintptr_t handle; /* the current handle: address | tag (engine/handle.h) */
	_Atomic int state;            /* enum doca_ctx_state */
	/* written under g_config_lock (connect, destroy), fixed while not
	 * IDLE; read with ctx_pe. Kept out of the cell's zeroing with the
	 * state (CTX_CELL_KEEP): the owner's submit loads both before it
	 * holds anything (engine/task.c) */
	_Atomic(struct doca_pe *) pe;
	struct doca_dev *dev;         /* g_config_lock */
	struct cds_list_head dev_link; /* in dev->ctxs, g_config_lock */
	uint64_t starts;              /* g_config_lock: runs made so far */
	uint32_t nr_mems;             /* g_config_lock */
	uint32_t max_tasks;
	union doca_data user_data;
	doca_event_cb_t event_cb;
	doca_ctx_state_cb_t state_cb;

	struct ctx_run *run;          /* RCU-published; NULL when IDLE */
	_Atomic bool may_finalize;    /* set by stop: the PE may finish STOPPING → IDLE */
	/* set by a stop put off (engine/ctx_run.c): the PE reports RUNNING →
	 * STOPPING, then may finish the stop */
	_Atomic bool stop_report_owed;
	/* Held (recursively) from a state change to the end of its report, so
	 * reports reach the state callback in the order the changes happened. */
	pthread_mutex_t report_lock;

	_Alignas(64) struct ctx_credits credits;
	/* its node in its PE's ready set (engine/pe_ready.c): written by
	 * whoever gives it work, on a line of its own */
	_Alignas(64) struct ready_node ready;
	/* written by the PE every turn: kept off the lines submitters read */
	_Alignas(64) _Atomic uint32_t refs; /* the handle + PE turns holding it */
	/* on its PE's watch list (engine/pe_ready.c, pe_watch_link): its
	 * link, and whether it is on it (holding a reference then). The
	 * guard holder's of its PE. */
	bool watch_listed;
	struct doca_ctx *watch_next;
	struct rcu_head rcu;
};
/* The words of a context's cell never zeroed (engine/ctx.c, ctx_cell_put):
 * its handle head, state and PE. */
#define CTX_CELL_KEEP (offsetof(struct doca_ctx, pe) + sizeof(void *))
_Static_assert(CTX_CELL_KEEP == 32, "a context's state and PE follow its handle head");

/* The context's PE (NULL: not connected). */
static inline struct doca_pe *ctx_pe(const struct doca_ctx *ctx)
{
	return atomic_load_explicit(&ctx->pe, memory_order_relaxed);
}

/* Report a transition to the state callback (never under g_config_lock;
 * under the ctx's report_lock). */
void ctx_report(struct doca_ctx *ctx, enum doca_ctx_state prev, enum doca_ctx_state next);
/* State callbacks the calling thread is inside (engine/ctx.c: they nest,
 * a callback may start or stop another context). */
extern DOCA_TLS uint32_t ctx_state_cb_depth;

/* Is the calling thread inside a state callback (of any context)? Inline:
 * every progress call asks (engine/pe_progress.c). */
static inline bool ctx_in_state_callback(void)
{
	return ctx_state_cb_depth != 0;
}
/* STOPPING → IDLE on the PE thread when every event is freed, after a put-off
 * stop's RUNNING → STOPPING report; returns true if IDLE now. */
bool ctx_try_finalize(struct doca_ctx *ctx);
/* Is the calling thread inside a PE turn (delivering its events)? */
bool pe_in_turn(void);
/* Stop requested by the engine itself (fatal device error) for run @p
 * start, if the report lock is free (else a later turn asks again);
 * @p first: the failure was just seen (logged). */
void ctx_stop_on_fatal(struct doca_ctx *ctx, uint64_t start, bool first);
bool ctx_ref_get(struct doca_ctx *ctx);
/* The context a handle names, held (ctx_ref_put it), or NULL: a stale
 * handle, or one being destroyed. Checked and held inside one read-side
 * section, so the cell cannot be freed and given to a new context in
 * between (then its lock would be another context's, or destroyed). */
struct doca_ctx *ctx_hold(const struct doca_ctx *h);
void ctx_ref_put(struct doca_ctx *ctx);
/* The refusal of h, held by the caller, found destroyed under the config
 * lock after ctx_hold: used after its destroy, so logged and counted as
 * any stale handle (call it with the locks let go). */
doca_error_t ctx_gone_refusal(const struct doca_ctx *h);
/* Give a flushed or completed slot back: runner guard held, inside a
 * read-side section; run_credits_returned(run) once after the burst. */
void event_release(struct doca_event *ev);
/* The same, into a chain of its run's slots, which the caller puts back
 * (task_pool_put) before run_credits_returned. */
void event_release_to(struct doca_event *ev, struct pool_chain *c);
/* An event's gs word, 64 bits: its generation as a handle's tag carries
 * it (handle_tag: bits 0-5 and 48-63) and its state in the address's bits
 * 6 to 47 (EV_STATE_BITS, HANDLE_ADDR_MASK's), as ev_state_bits lays it
 * out: FREE 0, QUEUED and CALLBACK their number << 6, HELD every state
 * bit 1, RETURNING HELD's less 64. So the hot transitions need no
 * unpacking:
 *  - a handle is its slot plus its gs less the state's bits (the slot's
 *    bits are address bits, the tag's are not, so the add is the or):
 *    the handout's is one lea, slot + gs - QUEUED's bits (engine/pe.c);
 *  - a handle h's HELD gs is h plus its slot's claim bias, HELD's bits
 *    less the slot's address (h less its slot is its tag): one add
 *    (event_claim, ev_claim_bias);
 *  - the next generation's FREE gs from a HELD one is (gs + 1) with the
 *    state's bits cleared (ev_held_next_free): with every state bit 1 the
 *    increment carries from bit 5 across them into bit 48 exactly when
 *    the low 6 bits were all 1, as the tag's generation + 1 wants, and
 *    the and leaves the state FREE; from any other state the state's
 *    bits are made 1 first (ev_gs_next_free);
 *  - FREE -> QUEUED is an or of QUEUED's bits (the fill), QUEUED -> HELD
 *    an or of all of them (the handout), HELD -> RETURNING a subtract.
 * Generation 2^22 - 1 goes round to 0 (the carry out of bit 63 is
 * dropped), as the generation's mask makes it. Every gs stored is made by
 * these helpers, so its state's bits are one of the five states' (no
 * other value is ever read). */
#define EV_STATE_SHIFT HANDLE_LOW_BITS
#define EV_STATE_BITS ((uint64_t)HANDLE_ADDR_MASK) /* bits 6..47 */
#define EV_STATE_HELD EV_STATE_BITS
#define EV_STATE_RETURNING (EV_STATE_BITS - (UINT64_C(1) << EV_STATE_SHIFT))

_Static_assert(HANDLE_GEN_BITS - HANDLE_LOW_BITS == 64u - HANDLE_ADDR_BITS,
	       "a tag's top bits end at bit 63: its carry out is the generation's wrap");

/* The state's bits of state s in a gs. */
static inline uint64_t ev_state_bits(enum event_state s)
{
	if (s == EV_HELD)
		return EV_STATE_HELD;
	if (s == EV_RETURNING)
		return EV_STATE_RETURNING;
	return (uint64_t)s << EV_STATE_SHIFT;
}
static inline enum event_state ev_state(uint64_t gs)
{
	uint64_t b = gs & EV_STATE_BITS;

	if (b == EV_STATE_HELD)
		return EV_HELD;
	if (b == EV_STATE_RETURNING)
		return EV_RETURNING;
	return (enum event_state)(b >> EV_STATE_SHIFT); /* FREE, QUEUED or CALLBACK */
}
/* The slot at @p a's claim bias: for a handle h = a | tag, h + the bias
 * is tag | HELD's bits, ev_gs(h's generation, EV_HELD) (a's bits are the
 * state's, the tag's are not, so h - a is the tag and HELD's bits add to
 * it as an or). */
static inline uint64_t ev_claim_bias(uintptr_t a)
{
	return EV_STATE_HELD - (uint64_t)a;
}
/* The handle tag of a gs's generation. */
static inline uintptr_t ev_gs_tag(uint64_t gs)
{
	return (uintptr_t)(gs & ~EV_STATE_BITS);
}
static inline uint64_t ev_gs(uint32_t gen, enum event_state s)
{
	return handle_tag(gen) | ev_state_bits(s);
}
static inline uint32_t ev_gen(uint64_t gs)
{
	return handle_tag_gen(ev_gs_tag(gs));
}
/* gs with its state replaced by s, the generation kept. */
static inline uint64_t ev_gs_with(uint64_t gs, enum event_state s)
{
	return ev_gs_tag(gs) | ev_state_bits(s);
}
/* ev_gs(ev_gen(gs) + 1, EV_FREE): with the state's bits all 1 the
 * increment carries from bit 5 to bit 48; 2^22 - 1 goes round to 0, as
 * the generation's mask makes it. */
static inline uint64_t ev_gs_next_free(uint64_t gs)
{
	return ((gs | EV_STATE_BITS) + 1u) & ~EV_STATE_BITS;
}
/* A state change by the slot's owner of the moment (the submitter that took
 * it, or the PE's runner); nobody else writes gs then, a free's CAS fails. */
static inline __attribute__((always_inline)) void ev_set_state(struct doca_event *ev, enum event_state s)
{
	uint64_t gs = atomic_load_explicit(&ev->gs, memory_order_relaxed);

	atomic_store_explicit(&ev->gs, ev_gs_with(gs, s), memory_order_relaxed);
}
/* The fill's state change (engine/task.c task_fill): a slot taken from
 * its pool is always FREE, its state's bits 0 (chunk_make makes it so,
 * and every return stores a next FREE gs first: event_release_slot,
 * event_claim), so QUEUED is one or, not a mask and an or (ev_set_state's).
 * The explorer build aborts if a taken slot is ever in another state. */
_Static_assert(EV_FREE == 0, "a FREE gs has its state's bits 0");
static inline __attribute__((always_inline)) void ev_set_queued_from_free(struct doca_event *ev)
{
#ifdef OWNED_RMW_ASM
	/* the same load and store, as one unlocked or (OWNED_RMW_ASM) */
	__asm__ volatile("orq %1, %0" : "+m"(ev->gs) : "i"((uint32_t)EV_QUEUED << EV_STATE_SHIFT) : "cc");
#else
	uint64_t gs = atomic_load_explicit(&ev->gs, memory_order_relaxed);

#ifdef DOCA_EXPLORE
	if (ev_state(gs) != EV_FREE)
		abort(); /* the explorer's check of the above (verdict "abort") */
#endif
	atomic_store_explicit(&ev->gs, gs | ev_state_bits(EV_QUEUED), memory_order_relaxed);
#endif
}
/* The application's handle for a slot's current generation. */
static inline struct doca_event *event_handle(const struct doca_event *ev)
{
	return (struct doca_event *)((uintptr_t)ev |
				     ev_gs_tag(atomic_load_explicit(&ev->gs, memory_order_relaxed)));
}
/* The ready list's end (engine/pe.c): the link of its last event, and
 * its head when it is empty (a PE's ready_head); no slot, never handed
 * out, never written. Its status is not SUCCESS, so the take of
 * doca_pe_get_events_ok stops at it as at a failed event and tests no
 * link for the end (engine/pe.c pe_take_ready_watched). */
extern struct doca_event pe_ready_end;
/* pe_ready_end's user data and bytes: what no refused handle reads. */
#define PE_READY_END_MARK UINT64_C(0x5ead0e4d5ead0e4d)
/* A slot in a run's mailbox that a free on another thread sent back
 * (engine/event.c), not a task: the runner returns its credit. */
static inline bool event_returning(struct doca_event *ev)
{
	return ev_state(atomic_load_explicit(&ev->gs, memory_order_relaxed)) == EV_RETURNING;
}

/* run_credits_returned past its check (engine/ctx_credits.c). */
void run_credits_returned_slow(struct ctx_run *run, uint32_t n, bool waited);
/* Call after the context left RUNNING: wakes every waiter (any thread). */
void ctx_credits_left_running(struct ctx_credits *c);
void ctx_credits_init(struct ctx_credits *c);
/* Close the fd (the context's memory goes with it, after a grace period). */
void ctx_credits_fini(struct ctx_credits *c);

/* ---- progress engines ---- */

/* The contexts a PE serves (a turn visits only those of its ready set,
 * engine/pe_ready.c; this array is for what must see them all: arming
 * completion channels, the worker and destroy checks). Readers (inside an
 * RCU read-side section) load the array, then count, then entries. Writers hold
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

/* Entries of a PE's ready index (struct doca_pe): a turn's completions
 * (TURN_EVENTS, engine/pe_progress.c). Its 2 KiB make struct doca_pe
 * 3712 bytes (about 1660 without), so a PE takes a 4 KiB cell
 * (engine/cells.c), not a 2 KiB one. */
#define PE_READY_INDEX 256u

enum pe_armed { PE_DISARMED = 0, PE_ARMED, PE_FIRED };

struct doca_pe {
	uint32_t magic;
	uint32_t epoch;          /* g_fork_epoch at creation (engine/fork.c) */
	_Atomic uintptr_t handle; /* the current handle: address | tag (engine/handle.h) */
	struct runner runner;
	struct pe_members *members;   /* RCU-published; g_config_lock for writers */
	struct ready_set ready;        /* the contexts with work (engine/pe_ready.c) */
	struct doca_event *ready_head; /* runner; &pe_ready_end when empty */
	struct doca_event *ready_tail; /* runner; stale while empty (pe_splice_ready) */
	/* runner: the ready index, ready_index[index_at..index_end): the
	 * addresses of the ready list's first events, in its order (empty
	 * when index_at == index_end). The list stays whole and linked; the
	 * index only lets a get find the next event without loading the
	 * last one's link (a chain of dependent loads, bench/README.md
	 * "### off59"). Kept exact: a poll's events are copied in when the
	 * list was empty or the index reached its tail (pe_index_ready), an
	 * append to an empty list empties it (pe_splice_ready), and every
	 * get moves index_at past what it takes or empties it. */
	uint32_t index_at, index_end;
	struct doca_event *cb_event;   /* runner: the event inside its callback */
	struct doca_buf *cb_doomed[2]; /* runner: its buffers destroyed by the callback */
	uint32_t cb_ndoomed;
	/* runner: the contexts whose runs watch a ring (engine/pe_ready.c,
	 * pe_watch_turn), each holding a reference; FIFO, linked at the tail,
	 * and the head is the turns' round-robin cursor */
	struct doca_ctx *watch_head, *watch_tail;
	/* own cache line: wakers on other CPUs load these after every burst,
	 * and the fields above are written by the runner on every turn */
	_Alignas(64) _Atomic int armed; /* enum pe_armed */
	_Atomic bool notify_used;       /* ever armed: pe_wake may be due (pe_notify.c) */
	_Atomic bool notify_settled;    /* notify_used, and a grace period has passed since */
	_Atomic(const void *) home;     /* runner_self() of the thread that ran the last turn */
	int epfd;                     /* the notification handle */
	_Atomic uint32_t channels;    /* queue pairs in epfd (completion channels); g_config_lock for writers */
	int evfd;                     /* eventfd inside epfd: software wakes */
	struct worker worker;
	_Atomic bool has_worker;      /* a worker runs it or is being stopped; worker_lock for writers */
	bool worker_stopping;         /* a doca_pe_stop_run is joining it; worker_lock */
	struct rcu_head rcu;
	struct doca_event *ready_index[PE_READY_INDEX]; /* runner: see index_at */
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

/* ---- the ready set: contexts with work (engine/pe_ready.c) ---- */

/* After publishing work for ctx (a push into its mailbox, a post its PE
 * must run, a completion on its queue pair, a stop to finish, a credit back
 * on a stopping ctx) and a full fence: its PE visits it after this. True if
 * this call put ctx in the ready set: a load that must see the set
 * afterwards (the armed flag's, pe_wake) needs a full fence first. The
 * caller keeps pe and ctx alive (a read-side section or a reference). Any
 * thread. */
bool pe_ready_signal_fenced(struct doca_pe *pe, struct doca_ctx *ctx);
/* The same with the fence. */
bool pe_ready_signal(struct doca_pe *pe, struct doca_ctx *ctx);
/* pe_ready_signal_fenced, then wake the PE if it is armed (the fence
 * between is run when the signal pushed). */
void pe_ready_signal_wake_fenced(struct doca_pe *pe, struct doca_ctx *ctx);
/* The same, firing only if needed(what) still holds once the PE is seen
 * armed (pe_wake_fenced_if). */
void pe_ready_signal_wake_fenced_if(struct doca_pe *pe, struct doca_ctx *ctx,
				    bool (*needed)(const void *), const void *what);
/* pe_ready_signal_wake_fenced with the fence before. */
void pe_ready_signal_wake(struct doca_pe *pe, struct doca_ctx *ctx);
/* Credits came back to run's pool and a full fence ran (run_credits_returned,
 * under the PE's runner guard): a STOPPING context's PE must visit it to
 * finish the stop, and wake for it if the return was made by a thread
 * other than the one that runs the PE. */
void pe_ready_credits_returned(struct ctx_run *run);
/* True if a turn has something to do for ctx's run (runner guard held,
 * inside a read-side section). */
bool run_needs_visit(struct doca_ctx *ctx, struct ctx_run *run);
/* The run failed (its qp's fatal completion) and is not stopping yet: the
 * stop for it was put off (ctx_stop_on_fatal), a turn must ask again
 * (runner guard held). */
static inline bool run_fatal_stop_due(const struct ctx_run *run)
{
	return run->fatal && !atomic_load_explicit(&run->stopping, memory_order_relaxed);
}
/* ctx is being destroyed (g_config_lock held): false if its PE's ready set
 * holds it, which then keeps the handle's reference and drops it. */
bool ctx_ready_detach(struct doca_ctx *ctx);
/* The PE's memory goes: drop the references its ready set and its watch
 * list still hold (every context is destroyed; no signaller is left). */
void pe_ready_fini(struct doca_pe *pe);
/* ctx's run watches a ring (ring_watch_visit returned bits): put ctx on
 * its PE's watch list, with a reference, if it is not there (runner guard
 * held, inside a running visit, in the turn's read-side section). */
void pe_watch_link(struct doca_pe *pe, struct doca_ctx *ctx);
/* A turn's start, before it collects the ready set (runner guard held,
 * inside the turn's read-side section): look at the watched rings of at
 * most @p max_looks listed contexts, round robin from the list's head
 * (each looked one goes to the tail), signal those with a READY entry,
 * end the watch of the idle rings (the watch pair), drop from the list
 * the contexts whose runs watch nothing. A listed context is looked at
 * within ceil(listed / max_looks) turns. */
void pe_watch_turn(struct doca_pe *pe, uint32_t max_looks);
/* Arming, before ARMED (runner guard held): end every watch of the list;
 * true if any bit was set (pe_arm_check's fence is then the heavy one). */
bool pe_watch_arm_clear(struct doca_pe *pe);
/* Arming, after pe_arm_check's fence (runner guard held): look at the rings
 * pe_watch_arm_clear unwatched, flag and signal the contexts with a READY
 * entry (WALK_ARM then feeds them and decides whether the arming fires),
 * and empty the list. */
void pe_watch_arm_look(struct doca_pe *pe);

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
 * the work the PE should see, inside a read-side section (or as the
 * armer). Any thread. */
void pe_wake(struct doca_pe *pe);
/* pe_wake for a caller that already ran a full fence after publishing. */
void pe_wake_fenced(struct doca_pe *pe);
/* pe_wake / pe_wake_fenced that, once they see the PE armed, fire only if
 * needed(what) (when not NULL) still holds: the caller's reason to wake
 * may have gone (the PE took the completions) before the PE armed. */
void pe_wake_if(struct doca_pe *pe, bool (*needed)(const void *), const void *what);
void pe_wake_fenced_if(struct doca_pe *pe, bool (*needed)(const void *), const void *what);
/* pe_wake_after_push once it found the PE armed (@p pushed: its signal
 * queued ctx); engine/pe_notify.c. */
void pe_wake_after_push_armed(struct doca_ctx *ctx, struct ctx_run *run, bool pushed);
/* After pushing into run's mailbox and announcing (the last push's
 * mailbox_announce or mailbox_push_announce_mpsc, and no store since that
 * the checks below must follow): if the PE is armed, move the mailbox to
 * the device ourselves under the brief runner guard (the completion will
 * wake the PE), else wake it. Any thread, inside a read-side section.
 * Inline up to the armed look (a foreign submit pays no call while the PE
 * is not armed); the argument is engine/pe_notify.c's. */
static inline __attribute__((always_inline)) void pe_wake_after_push(struct doca_ctx *ctx, struct ctx_run *run)
{
	struct doca_pe *pe = ctx_pe(ctx);

	/* No fence here: the announce's last full fence (actors/mailbox.h)
	 * comes after the pushes and its flag, so they are visible before the
	 * ready flag's and the armed flag's loads. pushed: our signal queued
	 * ctx. Until that push was visible, another thread's signal (an
	 * engine thread's completions) found ctx QUEUED and woke the PE for a
	 * visit the PE could not make yet: that wake-up may be spent, and the
	 * next one is ours to give (pe_notify.c). */
	bool pushed = ready_signal_fenced(&pe->ready, &ctx->ready) && !DOCA_REVERTED("push_wake_own_queue");

	/* pushed: no fence either, the signal's own announce ended with one
	 * after our push into the ready set (ready_set.h), which is so visible
	 * before the armed load (engine/pe_ready.c) */
	if (DOCA_REVERTED("push_wake_skipped"))
		return;
	EXPLORE_POINT(WAKE);
	if (atomic_load_explicit(&pe->armed, memory_order_relaxed) == PE_ARMED)
		pe_wake_after_push_armed(ctx, run, pushed);
}
/* A foreign submitter's ring that must be made before its task can go:
 * which (ring_publish's: an SP ring's index, or RING_SP for the MP ring;
 * TASK_MAKE_NONE for none) and its capacity (engine/ring.h). */
#define TASK_MAKE_NONE UINT32_MAX
struct task_ring_need {
	uint32_t which, cap;
};

/* doca_task_submit (desc not NULL) accepted only into the run that start
 * number @p start of the context made (its ctx_run.start), BAD_STATE in
 * any other: a doca_task_submit_wait sleeper never lands in a run started
 * after the one it waited in (engine/task.c). Called inside the caller's
 * read-side section, so it never allocates: AGAIN with need->which set
 * when the caller's ring must be made first (task_ring_make_held, after
 * the caller left its section), need->which TASK_MAKE_NONE otherwise. */
doca_error_t task_submit_in_run(struct doca_ctx *ctx, const struct doca_task_desc *desc, uint64_t start,
				struct task_ring_need *need);
/* Make the ring @p need names and publish it into @p ctx's run, if that
 * is still the run of start @p start (BAD_STATE otherwise; NO_MEMORY).
 * Outside any read-side section (it allocates), @p ctx held (ctx_ref_get). */
doca_error_t task_ring_make_held(struct doca_ctx *ctx, uint64_t start, const struct task_ring_need *need);
/* The start number of the context's current run, 0 if it has none
 * (inside a read-side section). */
static inline uint64_t ctx_run_start(const struct doca_ctx *ctx)
{
	const struct ctx_run *run = rcu_dereference(ctx->run);

	return run != NULL ? run->start : 0;
}
/* End of a turn: a PE still armed (its application progresses between
 * arming and sleeping) is armed anew, so the turn's polls cannot make a
 * submitter skip a wake-up it needs (pe_wake_after_push). Runner guard held. */
void pe_turn_rearm(struct doca_pe *pe);
/* hw_qp_attr.wake trampoline, arg a struct ctx_run: signals its context
 * and wakes its PE (the backend has fenced: pe_wake_fenced_if). */
void pe_wake_cb(void *run, hw_unread_fn unread, const void *cq);
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
/* After a call of the device for @p call (a public call's name) that
 * returned @p err: take the device's reason (hw_diag) and, on a failure
 * that gave one, log "CALL: REASON (ERROR)", a warning for AGAIN ("not
 * now"), an error otherwise; true if it logged. Every public call that
 * calls a device clears the reason first ((void)hw_diag_take(): one left by
 * an earlier failure is not its own) and takes it with this after, so none
 * is left for a later call to show. One rate-limit site serves them all. */
bool log_device_reason(const char *call, doca_error_t err);
/* fork(): the log's lock is held across the copy, made anew in the child. */
void log_fork_prepare(void);
void log_fork_parent(void);
void log_fork_child(void);

/* ---- fork (engine/fork.c) ---- */

/* Bumped in a fork() child; a handle made in another epoch is inherited
 * from a parent and refused. Written only by the child's single thread in
 * its atfork handler, before any other thread of the child exists. */
extern uint32_t g_fork_epoch;
/* g_fork_epoch << 32, kept beside it (head_key: one or, no shift).
 * Hidden, as asym_fence_kernel: read without the GOT's address load. */
extern __attribute__((visibility("hidden"))) uint64_t g_fork_epoch_key;
/* head_key(MAGIC_EVENT), head_key(MAGIC_PE) and head_key(MAGIC_CTX),
 * kept beside it for the hot calls' handle checks (one load, no copy and
 * or; head_key picks them), and buf_fold_made(g_fork_epoch), the fold of
 * this epoch's buffers' handle words (buf_of_folded); set with it. */
extern __attribute__((visibility("hidden"))) uint64_t g_event_key;
extern __attribute__((visibility("hidden"))) uint64_t g_pe_key;
extern __attribute__((visibility("hidden"))) uint64_t g_ctx_key;
extern __attribute__((visibility("hidden"))) uint64_t g_buf_fold;

/* What every handle's object starts with (each struct lists these fields
 * first, in this order). */
struct handle_head {
	uint32_t magic;
	uint32_t epoch;
	_Atomic uintptr_t handle;
};
#define HEAD_FIRST(type)                                                                     \
	_Static_assert(offsetof(struct type, magic) == offsetof(struct handle_head, magic) &&  \
			       offsetof(struct type, epoch) == offsetof(struct handle_head, epoch) && \
			       offsetof(struct type, handle) == offsetof(struct handle_head, handle), \
		       #type " starts with a handle_head")
HEAD_FIRST(doca_dev);
HEAD_FIRST(doca_mem);
HEAD_FIRST(doca_buf);
HEAD_FIRST(doca_ctx);
HEAD_FIRST(doca_pe);
#undef HEAD_FIRST

/* An object's magic and epoch are read by any thread holding a handle,
 * also while the object's destroy or its cell's next create writes them (a
 * stale handle, refused): relaxed atomic accesses, as the generation's. */
static inline uint32_t head_load(const uint32_t *word)
{
	return __atomic_load_n(word, __ATOMIC_RELAXED);
}
static inline void head_store(uint32_t *word, uint32_t value)
{
	__atomic_store_n(word, value, __ATOMIC_RELAXED);
}

/* The magic and the epoch of an object, as one relaxed load of both
 * words (the head is at the start of a 64-byte aligned object; the magic
 * is the low half on our little-endian targets), to be compared with
 * head_key: one load and one compare instead of two of each. Each word is
 * still written with its own head_store: the pair read at one instant is
 * what the two loads could have read, one right after the other. */
typedef uint64_t __attribute__((may_alias, aligned(8))) head_pair_t;
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&
		       offsetof(struct handle_head, epoch) == offsetof(struct handle_head, magic) + 4u,
	       "a head's magic and epoch read as one little-endian word");
static inline uint64_t head_pair_load(const void *o)
{
	return __atomic_load_n((const head_pair_t *)o, __ATOMIC_RELAXED);
}
/* head_pair_load(o) == key, the load and the compare as one cmp with the
 * word in memory under OWNED_RMW_ASM (the same single-copy atomic load of
 * the aligned word; gcc keeps an atomic load apart from its compare). */
static inline __attribute__((always_inline)) bool head_pair_is(const void *o, uint64_t key)
{
#ifdef OWNED_RMW_ASM
	bool same;

	__asm__ volatile("cmpq %[key], %[head]" : "=@ccz"(same) : [head] "m"(*(const head_pair_t *)o), [key] "r"(key));
	return same;
#else
	return head_pair_load(o) == key;
#endif
}
/* What head_pair_load reads from a live object of this process with @p
 * magic, made from the epoch (engine/fork.c sets the kept keys so). */
static inline uint64_t head_key_made(uint32_t magic)
{
	return g_fork_epoch_key | magic;
}
/* ... the kept key for a constant magic that has one. */
static inline uint64_t head_key(uint32_t magic)
{
	if (__builtin_constant_p(magic)) {
		if (magic == MAGIC_CTX)
			return g_ctx_key;
		if (magic == MAGIC_PE)
			return g_pe_key;
		if (magic == MAGIC_EVENT)
			return g_event_key;
	}
	return head_key_made(magic);
}

/* Is the generation of @p o (handle_addr(h)) still h's? The head keeps
 * the whole current handle (o | its tag: engine/handle.h), so this is h
 * compared with that word, one relaxed load as the tag's was; under
 * OWNED_RMW_ASM the load and the compare are one cmp with the word in
 * memory (the same single-copy atomic load, as head_pair_is; the clobber
 * keeps the accesses after the check after it, where the atomic load
 * was: engine/pe.c's owner ways load the guard after it). */
static inline __attribute__((always_inline)) bool handle_tag_current(const void *h, const struct handle_head *o)
{
#ifdef OWNED_RMW_ASM
	bool same;

	__asm__ volatile("cmpq %[h], %[word]" : "=@ccz"(same) : [word] "m"(o->handle), [h] "r"(h) : "memory");
	return same;
#else
	return atomic_load_explicit(&o->handle, memory_order_relaxed) == (uintptr_t)h;
#endif
}

/* The object behind a handle if it is a live one of this process (not
 * destroyed, not inherited across fork) of the handle's generation; @p
 * key: head_key of its magic, which a loop over many handles computes
 * once (the epoch changes only in a fork child's atfork handler, which
 * no call of the child's one thread is inside). */
static inline void *handle_obj_keyed(const void *h, uint64_t key)
{
	const struct handle_head *o = handle_addr(h);

	if (o == NULL || !head_pair_is(o, key) || !handle_tag_current(h, o))
		return NULL;
	return (void *)o;
}

static inline void *handle_obj(const void *h, uint32_t magic)
{
	return handle_obj_keyed(h, head_key(magic));
}

/* Contexts, memories, buffers, devices and PEs live in cells
 * (engine/cells.c) and carry generations. */
static inline struct doca_ctx *ctx_of(const struct doca_ctx *h)
{
	return handle_obj(h, MAGIC_CTX);
}
static inline struct doca_mem *mem_of(const struct doca_mem *h)
{
	return handle_obj(h, MAGIC_MEM);
}
/* A buffer's handle word is folded (engine/handle.h, "A buffer's word"):
 * it holds its handle ^ buf_fold_made(its epoch), bits in the address's
 * bits only, never 0 there; a buffer's check is then one compare, the
 * handle ^ this epoch's fold with the word, and the magic and the epoch
 * are not loaded. */
static inline uint64_t buf_fold_made(uint32_t epoch)
{
	return (uint64_t)epoch << (HANDLE_LOW_BITS + 1u) | (uint64_t)1 << HANDLE_LOW_BITS;
}
_Static_assert(((((uint64_t)UINT32_MAX << (HANDLE_LOW_BITS + 1u)) | 64u) & ~(uint64_t)HANDLE_ADDR_MASK) == 0,
	       "a buffer's fold lies in the address's bits");
/* A buffer's handle word for its handle @p h (its address, its tag) made
 * in the epoch whose fold is @p fold. */
static inline uintptr_t buf_word_made(const void *h, uint64_t fold)
{
	return (uintptr_t)h ^ fold;
}
/* buf_of with @p fold (g_buf_fold) loaded by the caller, once for many
 * handles (the epoch changes only in a fork child's atfork handler, which
 * no call of the child's one thread is inside). */
static inline struct doca_buf *buf_of_folded(const struct doca_buf *h, uint64_t fold)
{
	struct doca_buf *o = handle_addr(h);

	if (o == NULL || !handle_tag_current((const void *)buf_word_made(h, fold), (const struct handle_head *)o))
		return NULL;
	return o;
}
static inline struct doca_buf *buf_of(const struct doca_buf *h)
{
	return buf_of_folded(h, g_buf_fold);
}
static inline struct doca_dev *dev_of(const struct doca_dev *h)
{
	return handle_obj(h, MAGIC_DEV);
}
static inline struct doca_pe *pe_of(const struct doca_pe *h)
{
	return handle_obj_keyed(h, g_pe_key);
}

/* A getter's body, for any object behind a handle (of: ctx_of, mem_of,
 * ...; MAGIC its magic): the handle checked, then @p check (an error code,
 * DOCA_SUCCESS to go on), then *out written from @p value, all inside one
 * read-side section, so the cell holds this object until the read is done:
 * a destroy hands it on only after a grace period, and a handle checked
 * outside a section could read (or return) the cell's next object. Both
 * expressions name the object `obj`. */
#define HANDLE_READ(of, MAGIC, h, out, check, value)                        \
	do {                                                                \
		doca_error_t get_err_ = DOCA_SUCCESS;                       \
		doca_rcu_read_lock();                                       \
		const __typeof__(*of(h)) *obj = of(h);                      \
		if (obj == NULL)                                            \
			get_err_ = HANDLE_REFUSAL(h, MAGIC);                \
		else if ((out) == NULL)                                     \
			get_err_ = DOCA_ERROR_INVALID_VALUE;                \
		else if ((get_err_ = (check)) == DOCA_SUCCESS)              \
			*(out) = (value);                                   \
		doca_rcu_read_unlock();                                     \
		return get_err_;                                            \
	} while (0)

/* The application's handle for an object's current generation (not a
 * live buffer's: its word is folded, buf_of_folded). */
static inline void *handle_of(const void *obj)
{
	return (void *)atomic_load_explicit(&((const struct handle_head *)obj)->handle, memory_order_relaxed);
}

/* A destroy's last word on a handle: every handle of it is stale now. */
static inline void handle_kill(void *obj)
{
	struct handle_head *o = obj;

	head_store(&o->magic, MAGIC_DEAD);
	/* the generation stays within the handle's bits (handle_obj compares
	 * the whole word); at 0 again an object's cell is retired
	 * (engine/cells.c), an event slot's reused; only the destroy that won
	 * writes it */
	atomic_store_explicit(&o->handle,
			      (uintptr_t)handle_pack(o, handle_gen((const void *)atomic_load_explicit(
								&o->handle, memory_order_relaxed)) + 1u),
			      memory_order_relaxed);
}

/* The refusal of a handle that is not valid: BAD_STATE for a live object
 * inherited from the parent across fork(), INVALID_VALUE otherwise; a
 * destroyed or outdated one is counted (doca_stale_handle_count). */
doca_error_t handle_refusal(const void *h, uint32_t magic);
#define HANDLE_REFUSAL(h, MAGIC) handle_refusal((h), (MAGIC))
/* The refusal of a handle whose object a destroy has already claimed
 * (closed to new users) but may not have killed yet: stale all the same,
 * so INVALID_VALUE, logged and counted. */
doca_error_t stale_refusal(void);

/* A worker thread runs the PE and the caller is not it: the calls that
 * would run the PE themselves refuse (the worker's callbacks may). */
static inline bool pe_worker_elsewhere(const struct doca_pe *pe)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with the claim's release (doca_pe_run_on_cpu), so
	 * the worker is started before we act on the claim. worker_is_self
	 * compares no thread id written by another thread (it reads the
	 * caller's own thread-local, actors/worker.c), so a joined worker's id,
	 * which glibc may have given this very thread since, is never seen. */
	return atomic_load_explicit(&pe->has_worker, memory_order_acquire) && !worker_is_self(&pe->worker);
}

/* The read-side section a PE call holds from its handle's check to
 * pe_entered_current (or the refusal that ends it): a call on a stale
 * handle takes the guard in the cell, and gives it up, only while the cell
 * cannot be zeroed and handed to a new PE (a destroy hands it on after a
 * grace period). Without it, a call preempted after its check took the new
 * PE's guard, and the new PE's own calls were refused IN_USE until it let
 * go; or it took the guard in the dead cell, the cell was zeroed and
 * reused, and its exit cleared the guard of the new PE's runner (a
 * review). Never held across a turn: its callbacks may wait for grace
 * periods. A getter that enters its own parked guard without a
 * read-modify-write needs none (engine/pe.c, pe_get, says why); every
 * other entry does. */
static inline void pe_lookup_lock(void)
{
	if (!DOCA_REVERTED("pe_enter_outside_section"))
		doca_rcu_read_lock();
}
static inline void pe_lookup_unlock(void)
{
	if (!DOCA_REVERTED("pe_enter_outside_section"))
		doca_rcu_read_unlock();
}

/* After runner_enter on pe, looked up from h, returned ENTERED or NESTED:
 * is h still its handle? A destroy kills the handle while it holds the
 * guard, so one still current now stays so until we leave; one killed
 * before we entered must not touch the cell (never freed, but maybe
 * zeroed or holding a newer PE). False: the guard is left (if we entered
 * it) and the caller refuses the stale handle. */
static inline bool pe_entered_current(const struct doca_pe *h, struct doca_pe *pe, enum runner_entry e)
{
	if (pe_of(h) == pe)
		return true;
	if (e == RUNNER_ENTERED) {
		EXPLORE_POINT(GUARD); /* holding the guard of a cell h no longer names */
		runner_exit(&pe->runner);
	}
	return false;
}

/* A refusal @p err of a call on pe, looked up from h, for a reason read
 * from pe's cell without holding it (a worker runs it, another thread has
 * its guard): by then the cell may hold a newer PE (h destroyed, the cell
 * reused), so the reason is h's only if h is still current (then it was
 * throughout: generations only grow); else h is refused as stale. */
static inline doca_error_t pe_refusal(const struct doca_pe *h, const struct doca_pe *pe, doca_error_t err)
{
	if (DOCA_REVERTED("pe_refusal_unchecked"))
		return err;
	return pe_of(h) == pe ? err : HANDLE_REFUSAL(h, MAGIC_PE);
}

static inline enum doca_ctx_state ctx_state(const struct doca_ctx *ctx)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with the release store of each transition. */
	return (enum doca_ctx_state)atomic_load_explicit(&ctx->state, memory_order_acquire);
}

/* run_credits_returned's check: true if it must call
 * run_credits_returned_slow(run, n, *waited). _byte: past its explorer
 * point (doca_event_free's owner way makes the point and tests the byte
 * itself, then reads it again in its slow part: engine/event.c). */
static inline bool run_credits_waiting_byte(struct ctx_run *run, bool *waited)
{
	/* one byte for the context's `used` and its STOPPING: set in time
	 * for every return that must see them (engine/ctx_credits.c) */
	uint32_t w = atomic_load_explicit(&run->credit_watch, memory_order_relaxed);

	*waited = (w & RUN_WATCH_USED) != 0;
	return w != 0;
}
static inline bool run_credits_waiting(struct ctx_run *run, bool *waited)
{
	EXPLORE_POINT(WAKE);
	return run_credits_waiting_byte(run, waited);
}

/* Call after returning @p n credits to run's pool, inside the read-side
 * section the return ran in, or, for the PE's parked owner's free, inside
 * the brief guard it entered by runner_unpark after asym_fence_light
 * (engine/event.c, doca_event_free). Once per burst is enough: it covers
 * every credit returned before it. Wakes up to n blocked submitters. Inline:
 * when nobody ever waited and no stop is under way it is one load, the
 * run's credit_watch (engine/ctx_credits.c says why that is enough). */
static inline void run_credits_returned(struct ctx_run *run, uint32_t n)
{
	bool waited;

	if (run_credits_waiting(run, &waited))
		run_credits_returned_slow(run, n, waited);
}

static inline void ctx_set_state(struct doca_ctx *ctx, enum doca_ctx_state s)
{
	EXPLORE_POINT(ATOMIC);
	/* release: what the transition set up is visible to whoever sees the state. */
	atomic_store_explicit(&ctx->state, (int)s, memory_order_release);
}

#endif /* DOCA_ENGINE_H */
