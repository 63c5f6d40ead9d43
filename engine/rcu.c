/*
 * engine/rcu.c — lazy RCU registration of application threads, the
 * annotated grace-period calls, and the library's own deferred-free thread.
 *
 * THE LIFETIME RULE, for every object of the library: anything reachable
 * from a read-side section — memory, fds, threads, locks, backend devices,
 * registry entries — is released only after a grace period (in its
 * doca_call_rcu callback) or by its last reference, never "the memory later,
 * the rest now". A reader that still holds a pointer may use everything the
 * pointer reaches until it leaves its section.
 *
 * Why not liburcu's call_rcu: its worker thread belongs to liburcu, outlives
 * every object of ours, and is handed work through futexes and asm that
 * ThreadSanitizer cannot see, so the exit-time rcu_barrier() needed a
 * suppression. The reclaimer below is ours: work reaches it under a pthread
 * mutex, it waits for a grace period with synchronize_rcu(), and the process
 * joins it at exit — every hand-off is one TSan, Helgrind and valgrind see.
 *
 * The reclaimer thread starts with the first deferred free, runs batches
 * (take every queued callback, one grace period, run them in queue order),
 * and ends once the queue has drained after a stop was asked:
 *
 * - the destroy of the last live object (engine/live.c) asks, until the
 *   next create takes it back, and does not wait: the thread runs what is queued (one grace period, which a thread
 *   still inside a doca call may hold up) and ends; whoever next needs the
 *   thread (a deferred free, the exit-time destructor) joins it, at once,
 *   since an ended thread takes no lock again. So no library thread
 *   outlives the last object by more than its frees, and the next deferred
 *   free starts a new one;
 * - at exit the drain asks and waits (STOP -> ENDED, then join), twice:
 *   from an atexit handler the first start registers, and from the
 *   library's destructor, so checkers that look after the last destructor
 *   (valgrind) see every object returned. LeakSanitizer looks earlier: its
 *   check is an atexit handler too, registered when the sanitizer starts,
 *   so ours (registered later) runs before it. Without that the check could
 *   meet the reclaimer mid-batch or ending, a thread it may fail to stop
 *   and whose stack it then does not scan (CI saw one such report, on
 *   sw0:engines=1, whose devices and engine threads a deferred free
 *   closes). A reclaimer still starting would likewise hold its start-up
 *   allocations on a stack LSan does not scan yet — hence a start waits
 *   until the thread runs.
 */
#include "engine/rcu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "actors/cpu_every.h"
#include "actors/lib_thread.h"
#include "actors/rcu_reader.h"
#include "engine/live.h"

DOCA_TLS bool doca_rcu_registered;
DOCA_TLS bool doca_rcu_fast;

static pthread_key_t rcu_key;
static pthread_once_t rcu_once = PTHREAD_ONCE_INIT;

static void rcu_thread_exit(void *unused)
{
	(void)unused;
	reader_unregister();
	doca_rcu_registered = false;
	doca_rcu_fast = false;
}

static void rcu_key_create(void)
{
	(void)pthread_key_create(&rcu_key, rcu_thread_exit);
}

void doca_rcu_register_slow(void)
{
	pthread_once(&rcu_once, rcu_key_create);
	reader_register();
	doca_rcu_registered = true;
#ifdef _LGPL_SOURCE
	doca_rcu_fast = reader_membarrier();
#else
	doca_rcu_fast = true; /* rcu_read_lock is liburcu's function */
#endif
	/* any non-NULL value makes the destructor run at thread exit */
	(void)pthread_setspecific(rcu_key, &rcu_key);
}

void doca_rcu_read_lock_slow(void)
{
	doca_rcu_ensure();
	EXPLORE_POINT(RCU_LOCK);
	if (doca_rcu_fast)
		rcu_read_lock();
	else
		reader_read_lock();
}

void doca_synchronize_rcu(void)
{
	doca_rcu_ensure();
	reader_synchronize();
	TSAN_RCU_GRACE_PASSED();
	hb_acquire(&tsan_rcu_token);
}

/*
 * The reclaimer's queue: a FIFO of rcu_heads linked through their own
 * `next` node, guarded by `lock`. `queued` counts callbacks ever queued and
 * `done` those that have run; both only change under `lock`.
 */
static struct reclaimer {
	pthread_mutex_t lock;
	pthread_cond_t work;   /* queue gained work, or stop was asked */
	pthread_cond_t idle;   /* a batch finished, or the thread ended */
	struct rcu_head *first;
	struct rcu_head **tail;
	unsigned long long queued;
	unsigned long long done;
	bool running;          /* a thread was started and not joined yet */
	bool up;               /* the started thread runs reclaimer_main */
	bool stop;             /* end once the queue is empty */
	bool ended;            /* the thread left its loop: join it, it takes no lock again */
	pthread_t thread;
} rc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
	.tail = &rc.first,
};

/* Deferred frees a fork child inherited: they name the parent's threads and
 * fds, so they never run; kept reachable for leak checkers. */
static struct rcu_head *rc_inherited;

static struct rcu_head *head_next(struct rcu_head *head)
{
	return (struct rcu_head *)(void *)head->next.next;
}

static void *reclaimer_main(void *unused)
{
	(void)unused;
	lib_thread_name_self("doca-rcu");
	pthread_mutex_lock(&rc.lock);
	rc.up = true;
	pthread_cond_broadcast(&rc.idle);
	for (;;) {
		while (rc.first == NULL && !rc.stop)
			pthread_cond_wait(&rc.work, &rc.lock);
		if (rc.first == NULL)
			break; /* stop asked and nothing left */
		struct rcu_head *batch = rc.first;
		unsigned long long n = rc.queued - rc.done;

		rc.first = NULL;
		rc.tail = &rc.first;
		pthread_mutex_unlock(&rc.lock);

		doca_synchronize_rcu();
		while (batch != NULL) {
			struct rcu_head *next = head_next(batch);

			batch->func(batch); /* may queue more: it takes rc.lock */
			batch = next;
		}

		pthread_mutex_lock(&rc.lock);
		rc.done += n;
		pthread_cond_broadcast(&rc.idle);
	}
	rc.ended = true;
	pthread_cond_broadcast(&rc.idle);
	pthread_mutex_unlock(&rc.lock);
	return NULL;
}

/* Join a thread that has ended (rc.lock held: it needs the lock no more). */
static void reclaimer_reap_locked(void)
{
	if (!rc.running || !rc.ended)
		return;
	pthread_join(rc.thread, NULL);
	rc.running = false;
	rc.ended = false;
}

/*
 * Start the reclaimer (rc.lock held, not running, the caller's callback
 * already queued) and wait until it runs reclaimer_main. A thread still
 * starting holds memory the C library and the sanitizers allocate for it
 * (pthread_getattr_np's cpuset under ASan) on a stack no leak checker
 * scans yet; the reclaimer starts at a teardown's first deferred free (a
 * context's stop), so without the wait a process that returns from main
 * right after its teardown could be checked for leaks in that window.
 * The wait lets go of rc.lock: a stop asked meanwhile (the last destroy,
 * the exit-time drain) finds the queue non-empty, so the new thread runs
 * our callback before it ends. `up` is reset here, not when the thread is
 * joined, so a drain that joins it while we wait cannot strand us.
 */
static void reclaimer_drain(void);

static void reclaimer_atexit(void)
{
	if (atexit(reclaimer_drain) != 0)
		fprintf(stderr, "doca-core: cannot register the exit-time drain; the destructor still drains\n");
}

static void reclaimer_start_locked(void)
{
	static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;
	cpu_set_t every;

	pthread_once(&atexit_once, reclaimer_atexit);
	rc.up = false;
	/* every CPU, not the pinning of whichever thread made the first
	 * deferred free: one polling there would starve us, and a close or
	 * destroy waiting for our frees would wait with us (cpu_every.h) */
	cpu_set_every(&every);
	if (lib_thread_start(&rc.thread, &every, reclaimer_main, NULL) != 0) {
		fprintf(stderr, "doca-core: cannot start the deferred-free thread\n");
		abort();
	}
	rc.running = true;
	while (!rc.up)
		pthread_cond_wait(&rc.idle, &rc.lock);
}

void doca_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *head))
{
	head->func = fn;
	head->next.next = NULL;
	TSAN_RELEASE(head);
	pthread_mutex_lock(&rc.lock);
	reclaimer_reap_locked();
	*rc.tail = head;
	rc.tail = (struct rcu_head **)(void *)&head->next.next;
	rc.queued++;
	if (!rc.running)
		reclaimer_start_locked();
	pthread_cond_signal(&rc.work);
	pthread_mutex_unlock(&rc.lock);
}

void doca_rcu_barrier(void)
{
	pthread_mutex_lock(&rc.lock);
	while (rc.done != rc.queued)
		pthread_cond_wait(&rc.idle, &rc.lock);
	pthread_mutex_unlock(&rc.lock);
}

void doca_rcu_wait_queued(void)
{
	pthread_mutex_lock(&rc.lock);
	/* batches run in queue order and each adds its count to done when it
	 * has run: done reaching target means every earlier callback ran */
	unsigned long long target = rc.queued;

	while (rc.done < target)
		pthread_cond_wait(&rc.idle, &rc.lock);
	pthread_mutex_unlock(&rc.lock);
}

void doca_rcu_fork_prepare(void)
{
	reader_fork_prepare();
	pthread_mutex_lock(&rc.lock);
}

void doca_rcu_fork_parent(void)
{
	pthread_mutex_unlock(&rc.lock);
	reader_fork_parent();
}

void doca_rcu_fork_child(void)
{
	reader_fork_child();

	if (rc.first != NULL) { /* the parent's pending frees: kept, never run here */
		*rc.tail = rc_inherited;
		rc_inherited = rc.first;
	}
	rc.first = NULL;
	rc.tail = &rc.first;
	rc.queued = rc.done = 0;
	rc.running = false;
	rc.up = false;
	rc.stop = false;
	rc.ended = false;
	/* the parent's threads waited on them: gone in the child */
	rc.work = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	rc.idle = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	pthread_mutex_unlock(&rc.lock); /* prepare's, on this thread (see reader_fork_child) */
}

void doca_rcu_live_changed(void)
{
	pthread_mutex_lock(&rc.lock);
	/* the start does not clear it: a thread started by a deferred free
	 * after the last destroy would otherwise live until the process ends
	 * (found by a review) */
	rc.stop = live_none();
	pthread_cond_signal(&rc.work);
	pthread_mutex_unlock(&rc.lock);
}

/* Pending deferred frees run before the process ends, and the reclaimer
 * thread is joined, so valgrind sees every object returned and no library
 * thread outlives the process's last destructor (objects the application
 * never destroyed are reported by engine/live.c). Runs at exit (before
 * LeakSanitizer's check, see the top) and again as the destructor, for
 * frees queued by atexit handlers registered before ours. */
static void reclaimer_drain(void)
{
	pthread_mutex_lock(&rc.lock);
	while (rc.running) { /* a deferred free may start a new thread meanwhile */
		rc.stop = true;
		pthread_cond_signal(&rc.work);
		if (rc.ended)
			reclaimer_reap_locked();
		else
			pthread_cond_wait(&rc.idle, &rc.lock);
	}
	pthread_mutex_unlock(&rc.lock);
}

__attribute__((destructor)) static void doca_rcu_drain_at_exit(void)
{
	reclaimer_drain();
}
