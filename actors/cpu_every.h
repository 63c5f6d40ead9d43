/*
 * actors/cpu_every.h — the affinity of a thread that is not pinned: every
 * CPU the machine has configured.
 *
 * A new thread inherits the affinity of the thread that creates it. The
 * library's own threads (the workers of doca_pe_run_on_cpu with no CPU,
 * sw0's engine threads without `cpus`, the deferred-free thread of
 * engine/rcu.c) are created by whatever application
 * thread made the call, often one pinned to its own CPU; inheriting that
 * pinning would put them on the caller's CPU, competing with it. So they
 * are created with this set instead. The kernel intersects it with the
 * process's cpuset, so it never names a CPU the process may not use.
 *
 * Thread safety: any thread (it fills the caller's set).
 */
#ifndef DOCA_CPU_EVERY_H
#define DOCA_CPU_EVERY_H

#include <sched.h>
#include <unistd.h>

static inline void cpu_set_every(cpu_set_t *set)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	CPU_ZERO(set);
	for (long c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, set);
}

#endif /* DOCA_CPU_EVERY_H */
