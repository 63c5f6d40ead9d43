/*
 * hw/sw/sw_engine.c — engine threads of the software device: true offload.
 *
 * Each engine thread serves the queue pairs that have work: a ready set
 * (actors/ready_set.h) that the PE's thread signals after posting to a
 * qp's SQ or flagging its flush (sw_engine_signal), so a pass costs nothing
 * per idle qp. A pass visits the qps in the set in FIFO order, at most
 * ENGINE_BATCH descriptors each; a qp with descriptors left (or one waiting
 * for its delay) stays in the set, the others leave it, and the look at the
 * SQ after the release's fence catches a post that found the qp still
 * queued (the ready set's Dekker pair).
 *
 * Attach and detach go through two lists under the engine's mutex plus a
 * `changed` flag the thread checks each pass, so the hot loop takes no
 * lock; a detached qp is freed by the engine thread itself, after its last
 * use: at once if it is out of the ready set, else when the pass meets it
 * (no signal comes after a detach: the qp's fast path is over). A qp is
 * detached only once every descriptor completed and was polled, so no
 * completion, and no wake callback, follows a detach.
 *
 * Sleep/wake without a lost wake-up (a Dekker pair on a futex word): the
 * engine stores sleeping=1, full fence, re-checks its ready set and the
 * flags, and only then futex-waits on sleeping==1; a kicker publishes its
 * work (the ready-set signal, or a change), full fence, and wakes the
 * futex if sleeping is 1. A signal that found its qp already queued put
 * nothing in the set and wakes nobody, but then the qp is in the engine's
 * FIFO (not idle), or its signaller of the moment is still to push and
 * kick, or the engine is visiting it right now (awake: the visit ends by
 * keeping the qp, or by releasing it and looking at the SQ again after
 * the release's fence, which finds the post).
 *
 * Waking the PE (hw_qp_attr.wake) after a batch of completions: put the
 * entries, full fence, then call the wake, which looks at the PE's armed
 * flag first and, only if it finds ARMED, at the CQ (our cq_unread) and
 * fires if an entry is still unread (engine/pe_notify.c, "A backend's
 * completions"). The PE arms (armed store, full fence) and then looks at
 * the CQ: either it sees our entries, or we see ARMED. Every entry of the
 * pass is published before the fence (the gathered slot too), so no entry
 * is left for a later pass to publish without a look of its own. If the
 * CQ is drained, the PE took every entry, so nothing is left to wake it
 * for: the check only drops wake-ups that would find no event. A PE not
 * armed is polling, and polls a queue pair with descriptors on it every
 * turn: it needs no wake-up, and the busy pass pays one load of a line the
 * PE seldom writes. Looking at the CQ first, as this file did before, made
 * every busy pass load the CQ's consumer index, a line the PE writes on
 * each slot it takes, just after the PE wrote it (bench/README.md, "The
 * engine's wake look").
 *
 * The engine is an RCU reader during each pass (never while asleep): the
 * wake callback it calls after publishing completions targets an
 * object the engine frees with call_rcu, which a pass keeps alive.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <urcu.h>

#include "actors/cpu_every.h"
#include "actors/explore.h"
#include "actors/explore_revert.h"
#include "actors/hb_annotate.h"
#include "actors/lib_thread.h"
#include "actors/rcu_reader.h"
#include "actors/tsan_annotate.h"
#include "hw/sw/sw.h"
#include "hw/sw/sw_cq.h"

#define ENGINE_BATCH 32u      /* descriptors per qp per pass */
#define ENGINE_COLLECT 256u   /* newly signalled qps joining a pass */
#define ENGINE_SPIN EXPLORE_SPINS(4000u) /* empty passes before sleeping */
#define ENGINE_LINGER EXPLORE_SPINS(1000u) /* empty passes a qp stays in the set (< ENGINE_SPIN) */

enum { ENGINE_RUN, ENGINE_STOP };

struct sw_engine {
	pthread_t thread;
	struct sw_dev *dev;
	_Atomic int run;          /* ENGINE_RUN / ENGINE_STOP */
	_Atomic uint32_t sleeping; /* futex word */
	_Atomic bool changed;
	pthread_mutex_t lock;
	struct cds_list_head to_add; /* engine lock */
	struct cds_list_head to_del; /* engine lock */
	struct ready_set ready;      /* the qps with work; the engine thread consumes */
} __attribute__((aligned(64)));

static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The kicker's look at sleeping, after a full fence that follows its
 * published work. */
static void engine_wake_if_sleeping(struct sw_engine *e)
{
	if (atomic_load_explicit(&e->sleeping, memory_order_relaxed) != 0) {
		atomic_store_explicit(&e->sleeping, 0, memory_order_relaxed);
		futex_wake(&e->sleeping);
	}
}

static void sw_engine_kick(struct sw_engine *e)
{
	EXPLORE_POINT(WAKE);
	/* seq_cst fence: our ring store is visible before we read sleeping. */
	atomic_thread_fence(memory_order_seq_cst);
	engine_wake_if_sleeping(e);
}

/* A signal that found qp queued wakes nobody: qp is in the engine's set,
 * so the engine cannot be asleep (it sleeps only with an empty set, top),
 * or the signaller that queued it is still to push and wake. A signal that
 * queued qp ends with its push's full fence (ready_signal_fenced), so its
 * look at sleeping follows the push with no fence of its own. The busy
 * pump thus pays one fence a burst, not two. */
void sw_engine_signal(struct sw_engine *e, struct sw_qp *qp)
{
	EXPLORE_POINT(WAKE);
	/* seq_cst fence: the SQ stores (or the flush flag) are visible before
	 * the ready flag's load (actors/ready_set.h). */
	atomic_thread_fence(memory_order_seq_cst);
	if (ready_signal_fenced(&e->ready, &qp->engine_ready) && !DOCA_REVERTED("engine_signal_no_wake")) {
		EXPLORE_POINT(WAKE);
		engine_wake_if_sleeping(e);
	}
}

struct sw_engine *sw_engine_pick(struct sw_dev *dev)
{
	EXPLORE_POINT(ATOMIC);
	uint32_t i = atomic_fetch_add_explicit(&dev->next_engine, 1, memory_order_relaxed);

	return &dev->engines[i % dev->nengines];
}

void sw_engine_attach(struct sw_engine *e, struct sw_qp *qp)
{
	pthread_mutex_lock(&e->lock);
	cds_list_add_tail(&qp->change_link, &e->to_add);
	EXPLORE_POINT(ATOMIC);
	atomic_store_explicit(&e->changed, true, memory_order_release);
	pthread_mutex_unlock(&e->lock);
	sw_engine_kick(e);
}

/* The engine thread frees the qp (it may be in the engine's ready set,
 * even before the engine took it off to_add: a post may have signalled it). */
void sw_engine_detach(struct sw_engine *e, struct sw_qp *qp)
{
	pthread_mutex_lock(&e->lock);
	if (!qp->attached)
		cds_list_del(&qp->change_link); /* still waiting in to_add */
	cds_list_add_tail(&qp->change_link, &e->to_del);
	EXPLORE_POINT(ATOMIC);
	atomic_store_explicit(&e->changed, true, memory_order_release);
	pthread_mutex_unlock(&e->lock);
	sw_engine_kick(e);
}

/* Engine thread: apply attaches and detaches. A detached qp still in the
 * ready set is freed when the pass meets it (engine_visit). */
/* The lists are walked with cds_list_for_each, not _for_each_entry: the
 * latter forms a qp pointer from the list head itself, which is misaligned
 * for the 64-byte-aligned struct sw_qp. */
#define QP_OF(pos, member) cds_list_entry(pos, struct sw_qp, member)

static void engine_apply_changes(struct sw_engine *e)
{
	struct cds_list_head *pos, *next;

	pthread_mutex_lock(&e->lock);
	EXPLORE_POINT(ATOMIC);
	atomic_store_explicit(&e->changed, false, memory_order_relaxed);
	cds_list_for_each_safe(pos, next, &e->to_add) {
		struct sw_qp *qp = QP_OF(pos, change_link);

		cds_list_del(&qp->change_link);
		qp->attached = true;
	}
	cds_list_for_each_safe(pos, next, &e->to_del) {
		struct sw_qp *qp = QP_OF(pos, change_link);

		cds_list_del(&qp->change_link);
		if (ready_node_detach(&qp->engine_ready))
			sw_qp_free(qp);
	}
	pthread_mutex_unlock(&e->lock);
}

/* Work an SQ still holds for the engine: descriptors, or one held back. */
static bool qp_has_work(struct sw_qp *qp)
{
	return qp->has_held || sw_ring_ready(&qp->sq);
}

/* hw_qp_attr.wake's look at a CQ this thread produces into, made once
 * the wake sees the PE armed: true while an entry is left unread. */
static bool cq_unread(const void *cq)
{
	return sw_ring_unread(cq);
}

/* With a delay: a descriptor is taken into held before it is due
 * (sw_qp_take_due), each looked at three times (qp_has_work,
 * sw_qp_next_len, the take's copy). Up to ENGINE_BATCH of them executed,
 * their completions gathered in @p g (room asked for @p entries CQ
 * entries each, sw_cq_room); *full when the CQ had no room. */
static uint32_t engine_serve_delayed(struct sw_qp *qp, struct sw_cq_slot *g, uint32_t entries, uint64_t *now,
				     bool *full)
{
	struct sw_desc d;
	struct hw_cqe c;
	bool flushed;
	uint32_t n = 0;

	while (n < ENGINE_BATCH && qp_has_work(qp)) {
		sw_cq_before(&qp->cq, g, sw_qp_next_len(qp));
		if (!sw_cq_room(&qp->cq, g, entries)) {
			*full = true;
			break;
		}
		if (!sw_qp_take_due(qp, &d, &flushed, now))
			break;
		sw_execute(qp->dev, &d.d, flushed, &c);
		sw_cq_add(&qp->cq, g, &c);
		n++;
	}
	return n;
}

/* Without a delay: execute the entry @p x just taken, or flush it, and
 * gather its completion. A whole copy (not flushed, no fault configured:
 * @p faults false) is its memmove and its packed completion written
 * straight (meta 0); the race detector's edges around it only when
 * @p watched (a constant of the caller's: the unwatched loop has no
 * branch for them). The rest, rare, goes through sw_execute and a
 * struct hw_cqe, as before. */
static inline __attribute__((always_inline)) void engine_execute_entry(struct sw_qp *qp, struct sw_cq_slot *g,
								       struct sw_sq_entry x, bool faults,
								       bool watched)
{
	/* acquire: pairs with sw_qp_flush's release. */
	bool flushed = atomic_load_explicit(&qp->flushing, memory_order_acquire);

	if (__builtin_expect(flushed || faults, 0)) {
		struct hw_desc d = { .cookie = x.cookie, .src = x.src, .dst = x.dst, .len = x.len };
		struct hw_cqe c;

		sw_execute(qp->dev, &d, flushed, &c);
		sw_cq_add(&qp->cq, g, &c);
		return;
	}
	if (watched)
		hb_acquire((const void *)(uintptr_t)x.cookie); /* the submitter's writes first */
	memmove(x.dst, x.src, x.len);
	if (watched)
		hb_release((const void *)(uintptr_t)x.cookie); /* then whoever gets the event */
	sw_cq_gather(&qp->cq, g, x.cookie, x.len);
}

/* Without a delay: execute up to ENGINE_BATCH descriptors of the SQ,
 * their completions gathered in @p g; *full when the CQ had no room.
 * @p faults and @p watched are the caller's constants (one instance
 * each): with a fault configured, the CQ's room is asked for two entries
 * a completion (a failed or partial one's bytes, hw/sw/sw_cq.h).
 *
 * One peek a slot, not one a descriptor: the slot's sequence loaded once
 * (acquire), then each of its entries (two of a packed pair, from csub
 * on) read from the slot in place into registers (sw_sq_entry_at), the
 * CQ's room checked, the entry taken (with the slot's last one, the
 * slot's release of tail: the entry is in registers by then), the flush
 * flag looked at (acquire), the copy, the gathering. Why one look per
 * slot is the same as one per entry: the slot is ours from the acquire
 * that finds it published until our release of tail, and the PE reuses
 * it only after it loads a tail past it (sw_ring.h), so a second peek
 * could only see what the first saw. The stores and the other loads keep
 * their order, entry by entry: the CQ's claim (its tail load, a grow),
 * the SQ's tail release (the take, with a slot's last entry), the flush
 * flag's acquire (each entry its own: a flush between the two entries of
 * a pair flushes the second, not the first), the copy, the CQ's publish;
 * a CQ without room leaves the entry in the SQ, untaken (csub at it),
 * for a later pass. The second entry keeps the explorer's point its peek
 * had, so a schedule counts the steps it counted. The peek follows a
 * link slot (sw_ring_follow: the old segment freed, tail past the link)
 * as soon as it is published: the consumer's own step, the producer
 * reading of the old segment, after the link, only tail. */
static inline __attribute__((always_inline)) uint32_t engine_serve_now(struct sw_qp *qp, struct sw_cq_slot *g,
								       bool *full, bool faults, bool watched)
{
	struct sw_ring *sq = &qp->sq;
	const void *item;
	uint16_t tag;
	uint32_t n = 0;

	while (n < ENGINE_BATCH && (item = sw_ring_peek_tag(sq, &tag)) != NULL) {
		uint32_t i = sq->csub, last = sw_sq_entries(tag) - 1u;

		for (;;) {
			struct sw_sq_entry x = sw_sq_entry_at(item, tag, i);

			/* Room for the completion first: see engine_serve_qp.
			 * The completions packed so far go out before a large
			 * copy starts. */
			sw_cq_before(&qp->cq, g, x.len);
			if (!sw_cq_room(&qp->cq, g, faults ? 2u : 1u)) {
				sq->csub = i;
				*full = true;
				return n;
			}
			if (i == last) { /* the take: the slot with its last entry */
				sq->csub = 0;
				sw_ring_release(sq);
			}
			engine_execute_entry(qp, g, x, faults, watched);
			n++;
			if (i++ == last)
				break;
			if (n == ENGINE_BATCH) {
				sq->csub = i;
				return n;
			}
			EXPLORE_POINT(QUEUE); /* the next entry's, where its peek's was */
		}
	}
	return n;
}

/* Execute up to ENGINE_BATCH due descriptors of one qp: without a delay
 * engine_serve_now's way (one peek a slot), with one
 * engine_serve_delayed's. */
static uint32_t engine_serve_qp(struct sw_qp *qp, uint64_t *now, bool *waiting)
{
	const struct sw_params *p = &qp->dev->params;
	struct sw_cq_slot gathered = { .count = 0 };
	bool faults = (p->fail_every | p->partial_every) != 0, full = false;
	uint32_t n;

	/* a completion's CQ entries: a fault's failed or partial copy
	 * carries its bytes (sw_cq.h) */
	if (p->delay_us != 0)
		n = engine_serve_delayed(qp, &gathered, 1u + faults, now, &full);
	else if (faults) /* its own instance: the room for two entries a completion */
		n = engine_serve_now(qp, &gathered, &full, true, hb_watching());
	else if (hb_watching())
		n = engine_serve_now(qp, &gathered, &full, false, true);
	else
		n = engine_serve_now(qp, &gathered, &full, false, false);
	/* Room for each completion was checked before its descriptor was
	 * taken: credits bound what is outstanding, so the CQ is full only
	 * when it cannot grow (out of memory, or ring_max). Then the PE must
	 * drain it: wake it for the entries already in (seq_cst fence: they
	 * are visible before the wake's loads) and come back later, the qp
	 * kept in the set. Never wait here: we are inside a read-side
	 * section, and a grace period on the PE's thread (a stop) would wait
	 * for us. */
	if (full) {
		atomic_thread_fence(memory_order_seq_cst);
		qp->wake(qp->wake_arg, NULL, NULL); /* full: the PE has entries to take */
		*waiting = true;
	}
	/* (Reverted: the wake's look before the pass's last slot is out, as
	 * a slot kept across passes to fill it would have it.) */
	bool late = DOCA_REVERTED("engine_wake_before_publish") && gathered.count != 0;

	if (!late)
		sw_cq_flush(&qp->cq, &gathered); /* the pass's last entries wait for no later one */
	*waiting = *waiting || qp->has_held;
	if (n == 0)
		return 0;
	/* After every batch, not only one that found the CQ empty: the PE may
	 * have emptied it and armed before our entries became visible. The
	 * wake looks at the PE's armed flag, and only when it is ARMED at the
	 * CQ: a PE that already took every entry has them (top).
	 * seq_cst fence: our CQ entries are visible before the wake's load of
	 * the PE's armed flag (the waker's half of the Dekker pair with
	 * doca_pe_request_notification). */
	EXPLORE_POINT(WAKE);
	atomic_thread_fence(memory_order_seq_cst);
	qp->wake(qp->wake_arg, cq_unread, &qp->cq);
	if (late)
		sw_cq_flush(&qp->cq, &gathered);
	return n;
}

/* Serve one qp of the ready set; keep it there while it has work. */
static uint32_t engine_visit(struct sw_engine *e, struct sw_qp *qp, uint64_t *now, bool *waiting)
{
	if (ready_node_detached(&qp->engine_ready)) { /* by this thread: exact */
		(void)ready_release_sc(&qp->engine_ready); /* false: ours to free */
		sw_qp_free(qp);
		return 0;
	}
	uint32_t n = engine_serve_qp(qp, now, waiting);

	if (n != 0 || qp_has_work(qp))
		qp->idle_passes = 0;
	/* A qp that just had work stays a while (ENGINE_LINGER passes): the
	 * next post then finds it queued and the pass finds the descriptor,
	 * with no push into the set and no collect on the way (a one-at-a-time
	 * copy's round trip). Fewer than ENGINE_SPIN, so an idle engine still
	 * empties its set and sleeps. */
	if (qp_has_work(qp) || ++qp->idle_passes < ENGINE_LINGER)
		ready_keep_sc(&e->ready, &qp->engine_ready);
	else if (ready_release_sc(&qp->engine_ready) && qp_has_work(qp)) /* the look after the fence */
		ready_requeue_sc(&e->ready, &qp->engine_ready);
	return n;
}

/* Engine thread, at exit: every qp was detached; free those the set holds. */
static void engine_free_detached(struct sw_engine *e)
{
	struct ready_node *n;

	(void)ready_collect_sc(&e->ready, UINT32_MAX);
	while ((n = ready_pop_sc(&e->ready)) != NULL) {
		(void)ready_release_sc(n);
		sw_qp_free(caa_container_of(n, struct sw_qp, engine_ready));
	}
}

static bool engine_has_work(struct sw_engine *e)
{
	EXPLORE_POINT(ATOMIC);
	return atomic_load_explicit(&e->changed, memory_order_acquire) ||
	       atomic_load_explicit(&e->run, memory_order_acquire) != ENGINE_RUN ||
	       !ready_set_idle_sc(&e->ready);
}

static void engine_sleep(struct sw_engine *e)
{
	EXPLORE_POINT(WAKE);
	atomic_store_explicit(&e->sleeping, 1, memory_order_relaxed);
	/* seq_cst fence: sleeping=1 is visible before we re-check for work. */
	atomic_thread_fence(memory_order_seq_cst);
	if (!engine_has_work(e))
		futex_wait(&e->sleeping, 1);
	EXPLORE_POINT(WAKE);
	atomic_store_explicit(&e->sleeping, 0, memory_order_relaxed);
}

static void *engine_main(void *arg)
{
	struct sw_engine *e = arg;
	uint32_t idle = 0;
	char name[16];

	/* engines were allocated before any of them started; index < 64 */
	snprintf(name, sizeof(name), "doca-sw0-%u", (unsigned)(e - e->dev->engines) % SW_ENGINES_MAX);
	lib_thread_name_self(name);
	reader_register();
	while (atomic_load_explicit(&e->run, memory_order_acquire) == ENGINE_RUN) {
		uint64_t now = 0;
		uint32_t done = 0;
		bool waiting = false;

		EXPLORE_POINT(ATOMIC);
		if (atomic_load_explicit(&e->changed, memory_order_acquire))
			engine_apply_changes(e);
		EXPLORE_POINT(RCU_LOCK);
		rcu_read_lock();
		uint32_t todo = ready_collect_sc(&e->ready, ENGINE_COLLECT);

		for (uint32_t i = 0; i < todo; i++)
			done += engine_visit(e, caa_container_of(ready_pop_sc(&e->ready), struct sw_qp,
								 engine_ready),
					     &now, &waiting);
		TSAN_RCU_READER_EXIT();
		EXPLORE_POINT(RCU_UNLOCK);
		hb_release(&tsan_rcu_token);
		rcu_read_unlock();
		if (done != 0) {
			idle = 0;
		} else if (waiting) {
			/* only delayed descriptors: let time pass without spinning hard */
			struct timespec ts = { .tv_nsec = 20000 };

			nanosleep(&ts, NULL);
		} else if (++idle >= ENGINE_SPIN) {
			idle = 0;
			engine_sleep(e);
		}
	}
	engine_apply_changes(e);
	engine_free_detached(e);
	reader_unregister();
	return NULL;
}

static void engine_cpu_set(const struct sw_params *p, uint32_t index, cpu_set_t *set)
{
	if (p->ncpus != 0) {
		CPU_ZERO(set);
		CPU_SET(p->cpus[index % p->ncpus], set);
		return;
	}
	cpu_set_every(set); /* never inherit the pinning of the thread that opened us */
}

doca_error_t sw_engines_start(struct sw_dev *dev)
{
	uint32_t n = dev->params.engines;

	if (n == 0)
		return DOCA_SUCCESS;
	dev->engines = aligned_alloc(64, sizeof(*dev->engines) * n);
	if (dev->engines == NULL)
		return DOCA_ERROR_NO_MEMORY;
	hb_private(dev->engines, sizeof(*dev->engines) * n);
	for (uint32_t i = 0; i < n; i++) {
		struct sw_engine *e = &dev->engines[i];
		cpu_set_t set;
		int err;

		*e = (struct sw_engine){ .dev = dev };
		pthread_mutex_init(&e->lock, NULL);
		CDS_INIT_LIST_HEAD(&e->to_add);
		CDS_INIT_LIST_HEAD(&e->to_del);
		ready_set_init(&e->ready);
		engine_cpu_set(&dev->params, i, &set);
		err = lib_thread_start(&e->thread, &set, engine_main, e);
		if (err != 0) {
			pthread_mutex_destroy(&e->lock);
			dev->nengines = i;
			sw_engines_stop(dev);
			if (err != EINVAL || dev->params.ncpus == 0)
				return DOCA_ERROR_OPERATING_SYSTEM;
			/* the kernel refused the pin: offline, or outside the
			 * process's cpuset (as doca_pe_run_on_cpu reports it) */
			hw_diag("cpus: engine %u's CPU cannot take a thread of this process (offline, or "
				"outside its cpuset)", i);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	dev->nengines = n;
	return DOCA_SUCCESS;
}

void sw_engines_stop(struct sw_dev *dev)
{
	for (uint32_t i = 0; i < dev->nengines; i++) {
		struct sw_engine *e = &dev->engines[i];

		EXPLORE_POINT(ATOMIC);
		/* release: the engine's acquire load sees STOP. */
		atomic_store_explicit(&e->run, ENGINE_STOP, memory_order_release);
		sw_engine_kick(e);
		pthread_join(e->thread, NULL);
		pthread_mutex_destroy(&e->lock);
	}
	free(dev->engines);
	dev->engines = NULL;
	dev->nengines = 0;
}
