/*
 * actors/worker.h — a thread that runs one actor, pinned to a CPU.
 *
 * The worker calls ops->turn until it reports no work for `spin` turns in a
 * row, then asks ops->prepare_sleep (which arms the actor's notification fd,
 * or says "work is pending, don't sleep"), sleeps in poll() on that fd and
 * its own stop eventfd, and calls ops->after_wake. Shutdown is a handshake:
 * worker_stop sets STOP and wakes the thread, the thread finishes its turn,
 * sets STOPPED and returns, and worker_stop joins it. Never a cancel.
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

struct worker {
	pthread_t thread;
	_Atomic int state; /* enum worker_state */
	int stop_fd;       /* eventfd that wakes the thread for STOP */
	int wait_fd;       /* the actor's notification fd */
	int cpu;           /* -1: not pinned */
	uint32_t spin;     /* empty turns before sleeping */
	const struct worker_ops *ops;
	void *arg;
};

/* Start the thread. Returns 0 or an errno value (the worker is then IDLE). */
int worker_start(struct worker *w, const struct worker_ops *ops, void *arg, int wait_fd, int cpu,
		 uint32_t spin);

/* STOP → STOPPED handshake, then join. Must not be called by the worker itself. */
void worker_stop(struct worker *w);

/* True when called on the worker's own thread. */
bool worker_is_self(const struct worker *w);

#endif /* DOCA_WORKER_H */
