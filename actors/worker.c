/*
 * actors/worker.c — the pinned worker thread and its stop handshake.
 *
 * Why abandoning a thread that has not run is safe (worker.h): the start
 * word is the only memory such a thread touches, and it stays allocated
 * until the thread is joined. Its one CAS PENDING → STARTED races the
 * stopper's PENDING → ABANDONED; whichever comes second fails. If the
 * thread wins, it owns the worker as before and worker_stop joins it. If
 * the stopper wins, the thread has not used the worker, the actor or the
 * stop fd, and never will (it returns right after its failed CAS), so the
 * stopper closes the fd, marks the worker IDLE and may start a new thread
 * on it at once; the old one is joined once it has returned.
 *
 * Why worker_is_self reads no other thread's write: the thread stores
 * which worker it runs in a thread-local (my_worker) once its claim won,
 * before it runs anything of the actor, and clears it before STOPPED. So
 * my_worker == w holds on w's running thread only, and is read only there.
 * w->thread belongs to the starter (pthread_create stores it, at a moment
 * POSIX leaves open) and the stopper (which joins it); comparing it with
 * pthread_self() on any other thread raced that store: a thread that had
 * been given a joined worker's id read that id back while a new worker was
 * being started and took itself for the worker (explorer scenario
 * stop_run_recycled_id).
 */
#include "worker.h"
#include "cpu_every.h"
#include "explore.h"
#include "explore_revert.h"
#include "lib_thread.h"
#include "tsan_annotate.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

enum { START_PENDING, START_STARTED, START_ABANDONED };

/* The worker this thread runs, NULL on every other thread (see the top). */
static DOCA_TLS const struct worker *my_worker;

struct worker_start {
	_Atomic int state; /* START_*: claimed once by the thread or its stopper */
	pthread_t thread;
	struct worker *w;
	struct worker_start *next; /* in w->abandoned */
};

static bool worker_should_run(struct worker *w)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with worker_stop's release of STOP. */
	return atomic_load_explicit(&w->state, memory_order_acquire) == WORKER_RUNNING;
}

static void worker_sleep(struct worker *w)
{
	struct pollfd fds[2] = {
		{ .fd = w->wait_fd, .events = POLLIN },
		{ .fd = w->stop_fd, .events = POLLIN },
	};

	if (!w->ops->prepare_sleep(w->arg))
		return;
	if (worker_should_run(w))
		(void)poll(fds, 2, -1);
	w->ops->after_wake(w->arg);
}

static void *worker_main(void *arg)
{
	struct worker_start *start = arg;
	struct worker *w = start->w; /* read first: once we claim it, the stopper may free it */
	int pending = START_PENDING;
	uint32_t idle = 0;

	EXPLORE_POINT(ATOMIC);
	/* acq_rel, against the stopper's claim: one of the two wins. */
	if (!atomic_compare_exchange_strong_explicit(&start->state, &pending, START_STARTED,
						     memory_order_acq_rel, memory_order_acquire))
		return NULL; /* abandoned before we ran: touch nothing more */

	lib_thread_name_self("doca-worker");
	my_worker = w;
	while (worker_should_run(w)) {
		if (w->ops->turn(w->arg) != 0) {
			idle = 0;
			continue;
		}
		if (++idle < w->spin) {
			sched_yield();
			continue;
		}
		idle = 0;
		worker_sleep(w);
	}
	my_worker = NULL;
	EXPLORE_POINT(ATOMIC);
	/* release: everything the worker did happens before worker_stop returns. */
	atomic_store_explicit(&w->state, WORKER_STOPPED, memory_order_release);
	return NULL;
}

/* Join the abandoned threads that have returned; with @p wait, all of them. */
static void worker_reap(struct worker *w, bool wait)
{
	struct worker_start **link = &w->abandoned;

	while (*link != NULL) {
		struct worker_start *start = *link;

		if ((wait ? pthread_join(start->thread, NULL) : pthread_tryjoin_np(start->thread, NULL)) != 0) {
			link = &start->next;
			continue;
		}
		*link = start->next;
		free(start);
	}
}

void worker_fini(struct worker *w)
{
	worker_reap(w, true);
}

int worker_start(struct worker *w, const struct worker_ops *ops, void *arg, int wait_fd, int cpu,
		 uint32_t spin)
{
	cpu_set_t set;
	int err;

	worker_reap(w, false);
	w->start = calloc(1, sizeof(*w->start));
	if (w->start == NULL)
		return ENOMEM;
	atomic_init(&w->start->state, START_PENDING);
	w->start->w = w;
	w->ops = ops;
	w->arg = arg;
	w->wait_fd = wait_fd;
	w->cpu = cpu;
	w->spin = spin;
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->stop_fd < 0) {
		err = errno;
		free(w->start);
		w->start = NULL;
		return err;
	}
	/* no CPU: every one, not the starter's pinning (cpu_every.h) */
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
	} else {
		cpu_set_every(&set);
	}
	atomic_store_explicit(&w->state, WORKER_RUNNING, memory_order_relaxed);
	err = lib_thread_start(&w->thread, &set, worker_main, w->start);
	if (err != 0) {
		atomic_store_explicit(&w->state, WORKER_IDLE, memory_order_relaxed);
		close(w->stop_fd);
		w->stop_fd = -1;
		free(w->start);
		w->start = NULL;
	}
	return err;
}

void worker_stop(struct worker *w)
{
	struct worker_start *start = w->start;
	int pending = START_PENDING;
	uint64_t one = 1;

	worker_reap(w, false);
	w->start = NULL;
	EXPLORE_POINT(ATOMIC);
	/* acq_rel, against the thread's claim (see the top). */
	if (atomic_compare_exchange_strong_explicit(&start->state, &pending, START_ABANDONED,
						    memory_order_acq_rel, memory_order_acquire)) {
		start->thread = w->thread;
		start->next = w->abandoned;
		w->abandoned = start;
		close(w->stop_fd);
		w->stop_fd = -1;
		atomic_store_explicit(&w->state, WORKER_IDLE, memory_order_relaxed);
		return;
	}
	free(start); /* the thread claimed it and never reads it again */
	EXPLORE_POINT(ATOMIC);
	/* release: the worker's acquire load sees STOP and what preceded it. */
	atomic_store_explicit(&w->state, WORKER_STOP, memory_order_release);
	while (write(w->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(w->thread, NULL);
	close(w->stop_fd);
	w->stop_fd = -1;
	EXPLORE_POINT(ATOMIC);
	atomic_store_explicit(&w->state, WORKER_IDLE, memory_order_relaxed);
}

bool worker_is_self(const struct worker *w)
{
	EXPLORE_POINT(ATOMIC);
	if (DOCA_REVERTED("worker_self_by_id")) {
		int state = atomic_load_explicit(&w->state, memory_order_relaxed);

		return state != WORKER_IDLE && pthread_equal(w->thread, pthread_self());
	}
	return my_worker == w;
}
