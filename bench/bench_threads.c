/*
 * bench_threads.c — pinned helper threads with a start line (see bench_threads.h).
 */
#include "bench_threads.h"

#include <sched.h>

struct crew_arg {
	struct bench_crew *crew;
	unsigned id;
	int cpu;
};

static struct crew_arg args[BENCH_MAX_THREADS];

static void *crew_main(void *p)
{
	struct crew_arg *a = p;
	struct bench_crew *crew = a->crew;

	if (a->cpu >= 0)
		bench_pin_self(a->cpu);
	atomic_fetch_add(&crew->ready, 1);
	while (!atomic_load_explicit(&crew->go, memory_order_acquire))
		sched_yield();
	crew->body(crew, a->id);
	return NULL;
}

int bench_other_cpu(unsigned id)
{
	int n = bench_cpu_count();

	if (n < 2)
		return -1;
	return (int)(BENCH_OTHER_CPU + id % (unsigned)(n - 1));
}

void bench_crew_start(struct bench_crew *crew, unsigned n, int (*cpu_of)(unsigned id),
		      void (*body)(struct bench_crew *crew, unsigned id), void *arg)
{
	if (n > BENCH_MAX_THREADS)
		bench_fail("at most %d helper threads", BENCH_MAX_THREADS);
	crew->n = n;
	crew->body = body;
	crew->arg = arg;
	atomic_init(&crew->ready, 0);
	atomic_init(&crew->go, false);
	atomic_init(&crew->stop, false);
	for (unsigned i = 0; i < n; i++) {
		args[i] = (struct crew_arg){ .crew = crew, .id = i, .cpu = cpu_of(i) };
		if (pthread_create(&crew->tid[i], NULL, crew_main, &args[i]))
			bench_fail("pthread_create failed");
	}
	while (atomic_load(&crew->ready) < n)
		sched_yield();
}

void bench_crew_go(struct bench_crew *crew)
{
	atomic_store_explicit(&crew->go, true, memory_order_release);
}

void bench_crew_stop(struct bench_crew *crew)
{
	atomic_store_explicit(&crew->stop, true, memory_order_relaxed);
	bench_crew_go(crew);
	for (unsigned i = 0; i < crew->n; i++)
		pthread_join(crew->tid[i], NULL);
}
