/*
 * engine/pe_worker.c — per-core progress-engine actors: a PE handed to a
 * worker thread (actors/worker.c) pinned to one CPU.
 */
#include <sched.h>
#include <unistd.h>

#include "engine/engine.h"

/* Empty turns before the worker sleeps on the notification fd. */
#define WORKER_SPIN_TURNS EXPLORE_SPINS(2000u)

static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t worker_turn(void *arg)
{
	struct doca_pe *pe = arg;

	if (runner_enter(&pe->runner) != RUNNER_ENTERED)
		return 0;
	uint32_t n = pe_turn(pe);

	runner_exit(&pe->runner);
	return n;
}

static bool worker_prepare_sleep(void *arg)
{
	struct doca_pe *pe = arg;

	if (runner_enter(&pe->runner) != RUNNER_ENTERED)
		return false;
	(void)doca_pe_request_notification(pe);
	runner_exit(&pe->runner);
	return true;
}

static void worker_after_wake(void *arg)
{
	struct doca_pe *pe = arg;

	if (runner_enter(&pe->runner) != RUNNER_ENTERED)
		return;
	(void)doca_pe_clear_notification(pe);
	runner_exit(&pe->runner);
}

static const struct worker_ops pe_worker_ops = {
	.turn = worker_turn,
	.prepare_sleep = worker_prepare_sleep,
	.after_wake = worker_after_wake,
};

static bool cpu_exists(int cpu)
{
	cpu_set_t set;

	if (cpu == -1)
		return true;
	if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(set), &set) != 0)
		return false;
	return cpu < sysconf(_SC_NPROCESSORS_ONLN);
}

doca_error_t doca_pe_run_on_cpu(struct doca_pe *pe, int cpu)
{
	doca_error_t err = DOCA_SUCCESS;

	if (!pe_valid(pe) || !cpu_exists(cpu))
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&worker_lock);
	EXPLORE_POINT(ATOMIC);
	if (atomic_load_explicit(&pe->has_worker, memory_order_relaxed)) {
		err = DOCA_ERROR_BAD_STATE;
	} else {
		EXPLORE_POINT(ATOMIC);
		atomic_store_explicit(&pe->has_worker, true, memory_order_relaxed);
		if (worker_start(&pe->worker, &pe_worker_ops, pe, pe->epfd, cpu, WORKER_SPIN_TURNS) != 0) {
			atomic_store_explicit(&pe->has_worker, false, memory_order_relaxed);
			err = DOCA_ERROR_OPERATING_SYSTEM;
		}
	}
	pthread_mutex_unlock(&worker_lock);
	return err;
}

doca_error_t doca_pe_stop_run(struct doca_pe *pe)
{
	doca_error_t err = DOCA_SUCCESS;

	if (!pe_valid(pe))
		return DOCA_ERROR_INVALID_VALUE;
	if (worker_is_self(&pe->worker))
		return DOCA_ERROR_NOT_PERMITTED;
	pthread_mutex_lock(&worker_lock);
	EXPLORE_POINT(ATOMIC);
	if (!atomic_load_explicit(&pe->has_worker, memory_order_relaxed)) {
		err = DOCA_ERROR_BAD_STATE;
	} else {
		worker_stop(&pe->worker);
		EXPLORE_POINT(ATOMIC);
		atomic_store_explicit(&pe->has_worker, false, memory_order_relaxed);
	}
	pthread_mutex_unlock(&worker_lock);
	return err;
}
