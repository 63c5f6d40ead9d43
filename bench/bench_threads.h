/*
 * bench_threads.h — a crew of pinned helper threads started for one
 * measurement: they all wait at a start line, run, and are joined after.
 */
#ifndef BENCH_THREADS_H
#define BENCH_THREADS_H

#include "bench.h"

#include <pthread.h>
#include <stdatomic.h>

#define BENCH_MAX_THREADS 64

struct bench_crew {
	pthread_t tid[BENCH_MAX_THREADS];
	unsigned n;
	atomic_uint ready;   /* threads at the start line */
	atomic_bool go;      /* main: start now */
	atomic_bool stop;    /* main: finish now */
	void (*body)(struct bench_crew *crew, unsigned id);
	void *arg;
};

/** Start @p n threads (thread i pinned to CPU @p cpu_of(i)) and wait until all are ready. */
void bench_crew_start(struct bench_crew *crew, unsigned n, int (*cpu_of)(unsigned id),
		      void (*body)(struct bench_crew *crew, unsigned id), void *arg);
/** Release the start line. */
void bench_crew_go(struct bench_crew *crew);
/** Ask the threads to finish, then join them. */
void bench_crew_stop(struct bench_crew *crew);

/** CPU of helper @p id: the CPUs other than the application's, round robin. */
int bench_other_cpu(unsigned id);

static inline bool bench_crew_stopping(struct bench_crew *crew)
{
	return atomic_load_explicit(&crew->stop, memory_order_relaxed);
}

#endif /* BENCH_THREADS_H */
