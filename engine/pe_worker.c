/*
 * engine/pe_worker.c — per-core progress-engine actors: a PE handed to a
 * worker thread (actors/worker.c) pinned to one CPU.
 *
 * worker_lock guards each PE's worker claim (has_worker, worker_stopping)
 * and, in doca_pe_destroy, its death (pe_retire_unless_worker), so a worker
 * is never started on a PE being destroyed. It is held only for moments,
 * never across a call that waits for another thread: a worker's event
 * callback may itself start or stop another PE's worker, which takes the
 * lock. So doca_pe_stop_run claims the stop under
 * the lock (worker_stopping), joins with the lock released, and gives the
 * claim back under the lock; a second stopper meanwhile is refused with
 * DOCA_ERROR_IN_PROGRESS instead of waiting (waiting could close a cycle of
 * callbacks stopping each other's PEs). A worker thread that has not run
 * yet is not joined at all but abandoned (actors/worker.h), and
 * doca_pe_destroy joins such threads.
 */
#include <errno.h>
#include <sched.h>
#include <unistd.h>

#include "actors/explore_revert.h"
#include "engine/engine.h"

/* Empty turns before the worker sleeps on the notification fd. */
#define WORKER_SPIN_TURNS EXPLORE_SPINS(2000u)

static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;

void pe_worker_after_fork_child(void)
{
	worker_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

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
	/* A refused arming leaves the PE unarmed: nothing would wake a
	 * sleep, so keep running turns and try again at the next idle. */
	doca_error_t err = doca_pe_request_notification(handle_of(pe));

	runner_exit(&pe->runner);
	return err == DOCA_SUCCESS;
}

static void worker_after_wake(void *arg)
{
	struct doca_pe *pe = arg;

	if (runner_enter(&pe->runner) != RUNNER_ENTERED)
		return;
	(void)doca_pe_clear_notification(handle_of(pe));
	runner_exit(&pe->runner);
}

static const struct worker_ops pe_worker_ops = {
	.turn = worker_turn,
	.prepare_sleep = worker_prepare_sleep,
	.after_wake = worker_after_wake,
};

/* A CPU number a cpu_set_t can name. Whether the CPU can take a thread
 * (online, inside the cgroup's set: not the caller's own affinity, which
 * may be narrower) only the kernel knows: the worker's creation fails with
 * EINVAL otherwise (doca_pe_run_on_cpu). */
/* The refusal of ph, found destroyed under the locks after the check
 * made before them: used after its destroy, so logged and counted as any
 * stale handle (call it with the locks let go: the log may call the
 * application's handler). */
static doca_error_t pe_gone_refusal(const struct doca_pe *ph)
{
	if (DOCA_REVERTED("worker_refusal_uncounted"))
		return DOCA_ERROR_INVALID_VALUE;
	return HANDLE_REFUSAL(ph, MAGIC_PE);
}

static bool cpu_nameable(int cpu)
{
	return cpu == -1 || (cpu >= 0 && cpu < CPU_SETSIZE);
}

bool pe_retire_unless_worker(struct doca_pe *pe)
{
	bool none;

	pthread_mutex_lock(&worker_lock);
	none = !atomic_load_explicit(&pe->has_worker, memory_order_relaxed);
	if (none)
		handle_kill(pe);
	pthread_mutex_unlock(&worker_lock);
	return none;
}

/* A running member without an event callback: its events would reach no
 * one once a worker runs the PE (g_config_lock held). */
static bool pe_has_callbackless_member(const struct doca_pe *pe)
{
	uint32_t n = atomic_load_explicit(&pe->members->count, memory_order_relaxed);

	for (uint32_t i = 0; i < n; i++) {
		const struct doca_ctx *ctx = atomic_load_explicit(&pe->members->ctx[i], memory_order_relaxed);

		if (ctx->event_cb == NULL && ctx_state(ctx) != DOCA_CTX_STATE_IDLE)
			return true;
	}
	return false;
}

doca_error_t doca_pe_run_on_cpu(struct doca_pe *ph, int cpu)
{
	doca_error_t err = DOCA_SUCCESS;
	struct doca_pe *pe;

	/* The read-side section keeps the PE from the check to the claim
	 * (which a destroy respects) or the recheck's refusal: a destroy that
	 * won hands its cell on only after a grace period. */
	doca_rcu_read_lock();
	pe = pe_of(ph);
	if (pe == NULL || !cpu_nameable(cpu)) {
		doca_rcu_read_unlock();
		return pe == NULL ? HANDLE_REFUSAL(ph, MAGIC_PE) : DOCA_ERROR_INVALID_VALUE;
	}
	if (runner_is_self(&pe->runner)) { /* a callback of our own progress call, or of its worker */
		err = atomic_load_explicit(&pe->has_worker, memory_order_relaxed) ? DOCA_ERROR_BAD_STATE
										  : DOCA_ERROR_NOT_PERMITTED;
		doca_rcu_read_unlock();
		return err;
	}
	/* g_config_lock (before worker_lock, as in doca_pe_destroy) makes the
	 * members check, the start and the claim one step against
	 * doca_ctx_start, which checks the claim under it; worker_lock, against
	 * doca_pe_destroy and other starts and stops. The claim (has_worker)
	 * is made only once the worker exists: a start that fails showed
	 * nothing to other threads (a review saw their progress and starts
	 * refused while a start bound to fail was under way). Holding both
	 * across worker_start waits for nobody: it does not wait for the new
	 * thread, which may take them only later. */
	pthread_mutex_lock(&g_config_lock);
	pthread_mutex_lock(&worker_lock);
	EXPLORE_POINT(ATOMIC);
	/* destroyed since the check above: used after its destroy, refused
	 * (and counted) as a stale handle is, once the locks are let go */
	bool gone = pe_of(ph) != pe;

	if (gone)
		err = DOCA_ERROR_INVALID_VALUE;
	else if (atomic_load_explicit(&pe->has_worker, memory_order_relaxed))
		err = DOCA_ERROR_BAD_STATE;
	else if (pe_has_callbackless_member(pe))
		err = DOCA_ERROR_NOT_PERMITTED;
	doca_rcu_read_unlock();
	EXPLORE_POINT(ATOMIC);
	int started = err == DOCA_SUCCESS
			      ? worker_start(&pe->worker, &pe_worker_ops, pe, pe->epfd, cpu, WORKER_SPIN_TURNS)
			      : 0;

	if (started != 0) /* EINVAL for a pinned thread: no such CPU for this process */
		err = started == EINVAL && cpu >= 0 ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_OPERATING_SYSTEM;
	else if (err == DOCA_SUCCESS)
		/* release: a thread that sees the claim sees the worker started
		 * (pe_worker_elsewhere) */
		atomic_store_explicit(&pe->has_worker, true, memory_order_release);
	pthread_mutex_unlock(&worker_lock);
	pthread_mutex_unlock(&g_config_lock);
	return gone ? pe_gone_refusal(ph) : err;
}

doca_error_t doca_pe_stop_run(struct doca_pe *ph)
{
	bool join_locked = DOCA_REVERTED("worker_lock_join");
	doca_error_t err = DOCA_SUCCESS;
	struct doca_pe *pe;

	/* The read-side section keeps the memory from the check to the claim
	 * (a destroy refuses a PE with a worker) or the recheck's refusal; it
	 * ends before the join, which may wait for a callback that waits for a
	 * grace period. */
	doca_rcu_read_lock();
	pe = pe_of(ph);
	if (pe == NULL) {
		doca_rcu_read_unlock();
		return HANDLE_REFUSAL(ph, MAGIC_PE);
	}
	/* Nor from a state callback: its thread holds the context's report
	 * lock, which a worker's event callback stopping that context waits
	 * for, so the join would wait for ever (a review's deadlock). */
	if (worker_is_self(&pe->worker) || ctx_in_state_callback()) {
		doca_rcu_read_unlock();
		return DOCA_ERROR_NOT_PERMITTED;
	}
	pthread_mutex_lock(&worker_lock);
	EXPLORE_POINT(ATOMIC);
	bool gone = pe_of(ph) != pe; /* destroyed since: refused below, as in doca_pe_run_on_cpu */

	if (gone)
		err = DOCA_ERROR_INVALID_VALUE;
	else if (!atomic_load_explicit(&pe->has_worker, memory_order_relaxed))
		err = DOCA_ERROR_BAD_STATE;
	else if (pe->worker_stopping)
		err = DOCA_ERROR_IN_PROGRESS;
	else
		pe->worker_stopping = true;
	doca_rcu_read_unlock();
	if (err == DOCA_SUCCESS && join_locked)
		worker_stop(&pe->worker);
	pthread_mutex_unlock(&worker_lock);
	if (err != DOCA_SUCCESS)
		return gone ? pe_gone_refusal(ph) : err;
	/* The claim makes the worker ours to join; no lock held while we wait. */
	if (!join_locked)
		worker_stop(&pe->worker);
	pthread_mutex_lock(&worker_lock);
	pe->worker_stopping = false;
	atomic_store_explicit(&pe->has_worker, false, memory_order_relaxed);
	pthread_mutex_unlock(&worker_lock);
	return DOCA_SUCCESS;
}
