/*
 * hw/sw/sw_engine.c — engine threads of the software device: true offload.
 *
 * Each engine thread owns a private list of queue pairs. Attach and detach
 * go through two lists under the engine's mutex plus a `changed` flag the
 * thread checks each pass, so the hot loop takes no lock; a detached qp is
 * freed by the engine thread itself, after its last use.
 *
 * Sleep/wake without a lost wake-up (a Dekker pair on a futex word): the
 * engine stores sleeping=1, full fence, re-checks every SQ and the flags,
 * and only then futex-waits on sleeping==1; a kicker publishes its work
 * (ring store), full fence, and wakes the futex if sleeping is 1.
 *
 * Waking the PE (hw_qp_attr.wake) after a batch of completions: put the
 * entries, full fence, then wake only if the CQ still holds one the PE has
 * not taken. The PE arms (armed store, full fence) and then looks at the
 * CQ: either it sees our entries, or we see ARMED. If we see the CQ
 * drained, the PE took every entry, so nothing is left to wake it for: the
 * check only drops wake-ups that would find no event.
 *
 * The engine is an RCU reader during each pass (never while asleep): the
 * wake callback it calls after publishing completions targets an
 * object the engine frees with call_rcu, which a pass keeps alive.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <urcu.h>

#include "actors/explore.h"
#include "actors/hb_annotate.h"
#include "actors/rcu_reader.h"
#include "actors/tsan_annotate.h"
#include "hw/sw/sw.h"

#define ENGINE_BATCH 32u      /* descriptors per qp per pass */
#define ENGINE_SPIN EXPLORE_SPINS(4000u) /* empty passes before sleeping */

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
	struct cds_list_head qps;    /* engine thread only */
} __attribute__((aligned(64)));

static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void sw_engine_kick(struct sw_engine *e)
{
	EXPLORE_POINT(WAKE);
	/* seq_cst fence: our ring store is visible before we read sleeping. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&e->sleeping, memory_order_relaxed) != 0) {
		atomic_store_explicit(&e->sleeping, 0, memory_order_relaxed);
		futex_wake(&e->sleeping);
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

void sw_engine_detach(struct sw_engine *e, struct sw_qp *qp)
{
	bool never_attached;

	pthread_mutex_lock(&e->lock);
	never_attached = !qp->attached;
	if (never_attached) {
		cds_list_del(&qp->change_link); /* still waiting in to_add */
	} else {
		cds_list_add_tail(&qp->change_link, &e->to_del);
		EXPLORE_POINT(ATOMIC);
		atomic_store_explicit(&e->changed, true, memory_order_release);
	}
	pthread_mutex_unlock(&e->lock);
	if (never_attached)
		sw_qp_free(qp);
	else
		sw_engine_kick(e);
}

/* Engine thread: apply attaches and detaches (a qp detached before it was
 * attached never reaches to_del: detach frees it from to_add directly). */
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
		cds_list_add_tail(&qp->engine_link, &e->qps);
		qp->attached = true;
	}
	cds_list_for_each_safe(pos, next, &e->to_del) {
		struct sw_qp *qp = QP_OF(pos, change_link);

		cds_list_del(&qp->change_link);
		cds_list_del(&qp->engine_link);
		sw_qp_free(qp);
	}
	pthread_mutex_unlock(&e->lock);
}

/* Execute up to ENGINE_BATCH due descriptors of one qp. */
static uint32_t engine_serve_qp(struct sw_engine *e, struct sw_qp *qp, uint64_t *now, bool *waiting)
{
	struct sw_desc d;
	struct hw_cqe c;
	bool flushed;
	uint32_t n = 0;

	while (n < ENGINE_BATCH && sw_qp_take_due(qp, &d, &flushed, now)) {
		sw_execute(e->dev, &d, flushed, &c);
		/* the CQ holds depth entries and credits bound what is outstanding */
		while (!sw_ring_put(&qp->cq, &c, sizeof(c)))
			sched_yield();
		n++;
	}
	*waiting = *waiting || qp->has_held;
	if (n == 0)
		return 0;
	/* After every batch, not only one that found the CQ empty: the PE may
	 * have emptied it and armed before our entries became visible. But
	 * only while an entry is still unread: a PE that already took them
	 * all has them, and waking it again would find nothing.
	 * seq_cst fence: our CQ entries are visible before we look at the
	 * CQ's consumer index and the PE's armed flag (the waker's half of
	 * the Dekker pair with doca_pe_request_notification). */
	EXPLORE_POINT(WAKE);
	atomic_thread_fence(memory_order_seq_cst);
	if (sw_ring_unread(&qp->cq))
		qp->wake(qp->wake_arg);
	return n;
}

static bool engine_has_work(struct sw_engine *e)
{
	struct cds_list_head *pos;

	EXPLORE_POINT(ATOMIC);
	if (atomic_load_explicit(&e->changed, memory_order_acquire) ||
	    atomic_load_explicit(&e->run, memory_order_acquire) != ENGINE_RUN)
		return true;
	cds_list_for_each(pos, &e->qps) {
		struct sw_qp *qp = QP_OF(pos, engine_link);

		if (qp->has_held || sw_ring_ready(&qp->sq))
			return true;
	}
	return false;
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

	reader_register();
	while (atomic_load_explicit(&e->run, memory_order_acquire) == ENGINE_RUN) {
		struct cds_list_head *pos;
		uint64_t now = 0;
		uint32_t done = 0;
		bool waiting = false;

		EXPLORE_POINT(ATOMIC);
		if (atomic_load_explicit(&e->changed, memory_order_acquire))
			engine_apply_changes(e);
		EXPLORE_POINT(RCU_LOCK);
		rcu_read_lock();
		cds_list_for_each(pos, &e->qps)
			done += engine_serve_qp(e, QP_OF(pos, engine_link), &now, &waiting);
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
	reader_unregister();
	return NULL;
}

static void engine_cpu_set(const struct sw_params *p, uint32_t index, cpu_set_t *set)
{
	CPU_ZERO(set);
	if (p->ncpus != 0) {
		CPU_SET(p->cpus[index % p->ncpus], set);
		return;
	}
	/* every CPU: never inherit the pinning of the thread that opened us */
	long n = sysconf(_SC_NPROCESSORS_CONF);

	for (long c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, set);
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
		pthread_attr_t attr;
		cpu_set_t set;
		int err;

		*e = (struct sw_engine){ .dev = dev };
		pthread_mutex_init(&e->lock, NULL);
		CDS_INIT_LIST_HEAD(&e->to_add);
		CDS_INIT_LIST_HEAD(&e->to_del);
		CDS_INIT_LIST_HEAD(&e->qps);
		engine_cpu_set(&dev->params, i, &set);
		pthread_attr_init(&attr);
		err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		if (err == 0)
			err = pthread_create(&e->thread, &attr, engine_main, e);
		pthread_attr_destroy(&attr);
		if (err != 0) {
			pthread_mutex_destroy(&e->lock);
			dev->nengines = i;
			sw_engines_stop(dev);
			return DOCA_ERROR_OPERATING_SYSTEM;
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
