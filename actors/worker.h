/*
 * actors/worker.h — a thread that runs one actor, pinned to a CPU.
 *
 * The worker calls ops->turn until it reports no work for `spin` turns in a
 * row, then asks ops->prepare_sleep (which arms the actor's notification fd,
 * or says "work is pending, don't sleep"), sleeps in poll() on that fd and
 * its own stop eventfd, and calls ops->after_wake. Shutdown is a handshake:
 * worker_stop sets STOP and wakes the thread, the thread finishes its turn,
 * sets STOPPED and returns, and worker_stop joins it. Never a cancel.
 *
 * A thread the scheduler has not run yet is not waited for. A new thread
 * pinned to a CPU can wait seconds for its first time slice there (seen on
 * Linux 6.18 with other threads spinning on sched_yield on that CPU), and a stop that
 * joined it would hold up whoever stops the worker to run the actor itself
 * — and if that actor's progress is what the spinners wait for, nothing
 * ever moves. So each thread first claims its start word (PENDING →
 * STARTED), and worker_stop first tries PENDING → ABANDONED: exactly one
 * of the two wins. An abandoned thread returns at once when it finally
 * runs, touching nothing but its start word; worker_stop keeps that word
 * on a list and joins the thread later without waiting (worker_start,
 * worker_stop), or waiting (worker_fini).
 */
#ifndef DOCA_WORKER_H
#define DOCA_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct worker_ops {
	uint32_t (*turn)(void *arg);        /* one turn; returns the work done */
	bool (*prepare_sleep)(void *arg);   /* arm; false if work is already pending */
	void (*after_wake)(void *arg);      /* disarm and reset the fd */
};

enum worker_state { WORKER_IDLE, WORKER_RUNNING, WORKER_STOP, WORKER_STOPPED };

struct worker_start; /* one thread's start word (worker.c) */

struct worker {
	pthread_t thread;  /* the starter's and the stopper's: never read elsewhere */
	_Atomic int state; /* enum worker_state */
	int stop_fd;       /* eventfd that wakes the thread for STOP */
	int wait_fd;       /* the actor's notification fd */
	int cpu;           /* -1: not pinned */
	uint32_t spin;     /* empty turns before sleeping */
	const struct worker_ops *ops;
	void *arg;
	struct worker_start *start;     /* the running thread's, NULL when IDLE */
	struct worker_start *abandoned; /* threads stopped before they ran, not joined yet */
};

/* Start the thread, pinned to @p cpu, or with @p cpu -1 allowed on every
 * CPU (cpu_every.h: never the starter's own pinning). Returns 0 or an
 * errno value (the worker is then IDLE). */
int worker_start(struct worker *w, const struct worker_ops *ops, void *arg, int wait_fd, int cpu,
		 uint32_t spin);

/* STOP → STOPPED handshake, then join; or, if the thread has not run yet,
 * abandon it without waiting (it will never touch the actor). Must not be
 * called by the worker itself. */
void worker_stop(struct worker *w);

/* Join every abandoned thread, waiting for each (the owner is going away;
 * the worker is IDLE). */
void worker_fini(struct worker *w);

/* True when called on the worker's own thread (any thread may ask, at any
 * time: it reads only the caller's own thread-local). */
bool worker_is_self(const struct worker *w);

#endif /* DOCA_WORKER_H */
