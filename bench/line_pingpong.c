/*
 * line_pingpong.c — what one cache line crossing between two CPUs costs on
 * this host, the unit of the foreign submitter's account (bench/README.md,
 * "### mailbox11"). Two threads, pinned to CPU 0 and CPU 1:
 *
 * - `rtt`: one 8-byte word on its own line; each thread waits until the
 *   word holds its turn's value and stores the next (a plain store): one
 *   round trip = the line going over and coming back, in series.
 * - `cas-rtt`: the same with a compare-and-swap for the store (a
 *   read-modify-write of a line the other CPU wrote last, as the pool's
 *   take and return are).
 *
 * Prints ns per round trip (median, min and max of --reps runs of
 * --rounds round trips each). Not part of doca_bench: no library call.
 *
 * Usage: line_pingpong [ROUNDS [REPS]]  (defaults 200000 and 9)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) _Atomic uint64_t word;
static uint64_t rounds;
static int use_cas;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
		fprintf(stderr, "cannot pin to CPU %d\n", cpu);
		exit(1);
	}
}

/* Thread `side` (0 or 1) moves the word from 2k + side to 2k + side + 1. */
static void play(unsigned side)
{
	for (uint64_t v = side; v < 2 * rounds; v += 2) {
		uint64_t cur;

		while ((cur = atomic_load_explicit(&word, memory_order_acquire)) != v)
			;
		if (use_cas)
			(void)atomic_compare_exchange_strong_explicit(&word, &cur, v + 1, memory_order_acq_rel,
								      memory_order_relaxed);
		else
			atomic_store_explicit(&word, v + 1, memory_order_release);
	}
}

static void *other(void *arg)
{
	(void)arg;
	pin(1);
	play(1);
	return NULL;
}

static double once(void)
{
	pthread_t t;
	struct timespec a, b;

	atomic_store(&word, UINT64_MAX); /* the other side waits for 1: nobody moves yet */
	if (pthread_create(&t, NULL, other, NULL) != 0)
		exit(1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	atomic_store(&word, 0);
	play(0);
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)rounds;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
	int reps = argc > 2 ? atoi(argv[2]) : 9;
	double ns[64];

	rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
	if (reps < 1 || reps > 64 || rounds == 0) {
		fprintf(stderr, "usage: line_pingpong [ROUNDS [REPS<=64]]\n");
		return 2;
	}
	pin(0);
	for (use_cas = 0; use_cas < 2; use_cas++) {
		for (int i = 0; i < reps; i++)
			ns[i] = once();
		qsort(ns, (size_t)reps, sizeof(ns[0]), cmp);
		printf("%-8s %7.1f ns per round trip (median of %d x %llu; min %.1f, max %.1f)\n",
		       use_cas ? "cas-rtt" : "rtt", ns[reps / 2], reps, (unsigned long long)rounds, ns[0],
		       ns[reps - 1]);
	}
	return 0;
}
