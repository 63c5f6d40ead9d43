/*
 * engine/pe_notify.c — event mode: the PE's one notification fd.
 *
 * The fd is an epoll set holding an eventfd (software wakes: mailbox pushes,
 * engine-thread completions, stop requests) and each queue pair's completion
 * channel fd when its backend has one.
 *
 * No lost wake-up (a Dekker pair): request_notification stores ARMED, then a
 * full fence, then looks for pending work; a waker publishes its work (ring
 * store), then a full fence, then loads armed. Either the requester sees the
 * work (and fires at once) or the waker sees ARMED (and fires). ARMED → FIRED
 * by CAS makes one write per arming.
 *
 * Arming and clearing belong to the runner, like progress: they read its
 * ready list and reset the eventfd, so each takes the runner guard and a
 * caller on another thread while the PE runs is refused (DOCA_ERROR_IN_USE).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "engine/engine.h"

void pe_wake(struct doca_pe *pe)
{
	/* seq_cst fence: order the caller's work store before the armed load. */
	atomic_thread_fence(memory_order_seq_cst);
	pe_wake_fenced(pe);
}

void pe_wake_fenced(struct doca_pe *pe)
{
	int armed = PE_ARMED;

	EXPLORE_POINT(WAKE);
	if (atomic_load_explicit(&pe->armed, memory_order_relaxed) != PE_ARMED)
		return;
	EXPLORE_POINT(WAKE);
	if (atomic_compare_exchange_strong_explicit(&pe->armed, &armed, PE_FIRED, memory_order_relaxed,
						    memory_order_relaxed)) {
		uint64_t one = 1;

		while (write(pe->evfd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
	}
}

void pe_wake_cb(void *pe)
{
	pe_wake(pe);
}

doca_error_t pe_watch_qp(struct doca_pe *pe, struct hw_qp *qp)
{
	int fd = qp->ops->notify_fd(qp);
	struct epoll_event watch = { .events = EPOLLIN, .data.ptr = qp };

	if (fd < 0)
		return DOCA_SUCCESS;
	return epoll_ctl(pe->epfd, EPOLL_CTL_ADD, fd, &watch) == 0 ? DOCA_SUCCESS
								  : DOCA_ERROR_OPERATING_SYSTEM;
}

void pe_unwatch_qp(struct doca_pe *pe, struct hw_qp *qp)
{
	int fd = qp->ops->notify_fd(qp);

	if (fd >= 0)
		(void)epoll_ctl(pe->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* Work a progress call would do now (runner thread, inside a read section). */
static bool ctx_has_pending(struct doca_ctx *ctx)
{
	enum doca_ctx_state st = ctx_state(ctx);
	struct ctx_run *run = rcu_dereference(ctx->run);

	if ((st != DOCA_CTX_STATE_RUNNING && st != DOCA_CTX_STATE_STOPPING) || run == NULL)
		return false;
	TSAN_ACQUIRE(run);
	if (mailbox_nonempty(&run->mbox) || run->qp->ops->pending(run->qp))
		return true;
	return st == DOCA_CTX_STATE_STOPPING &&
	       atomic_load_explicit(&ctx->may_finalize, memory_order_acquire) && run_outstanding(run) == 0;
}

/* Arm every completion channel; report whether any work is pending. */
static doca_error_t pe_arm_all(struct doca_pe *pe, bool *pending)
{
	doca_error_t err = DOCA_SUCCESS;

	*pending = pe->ready_head != NULL;
	doca_rcu_read_lock();
	EXPLORE_POINT(ATOMIC);
	struct pe_members *m = rcu_dereference(pe->members);
	uint32_t count = atomic_load_explicit(&m->count, memory_order_acquire);

	for (uint32_t i = 0; i < count; i++) {
		struct doca_ctx *ctx = atomic_load_explicit(&m->ctx[i], memory_order_acquire);
		struct ctx_run *run = rcu_dereference(ctx->run);

		TSAN_ACQUIRE(run);
		if (run != NULL && err == DOCA_SUCCESS)
			err = run->qp->ops->notify_arm(run->qp);
		*pending = *pending || ctx_has_pending(ctx);
	}
	doca_rcu_read_unlock();
	return err;
}

doca_error_t doca_pe_request_notification(struct doca_pe *pe)
{
	bool pending;

	if (!pe_valid(pe))
		return HANDLE_REFUSAL(pe, MAGIC_PE);
	/* armed and the pending checks below belong to the runner */
	enum runner_entry entry = runner_enter(&pe->runner);

	if (entry == RUNNER_BUSY)
		return DOCA_ERROR_IN_USE;
	EXPLORE_POINT(WAKE);
	atomic_store_explicit(&pe->armed, PE_ARMED, memory_order_relaxed);
	/* seq_cst fence: ARMED is visible before we look for work (see top). */
	atomic_thread_fence(memory_order_seq_cst);
	doca_error_t err = pe_arm_all(pe, &pending);

	if (pending)
		pe_wake(pe);
	if (entry == RUNNER_ENTERED)
		runner_exit(&pe->runner);
	return err;
}

doca_error_t doca_pe_clear_notification(struct doca_pe *pe)
{
	uint64_t count;

	if (!pe_valid(pe))
		return HANDLE_REFUSAL(pe, MAGIC_PE);
	enum runner_entry entry = runner_enter(&pe->runner);

	if (entry == RUNNER_BUSY)
		return DOCA_ERROR_IN_USE;
	EXPLORE_POINT(WAKE);
	atomic_store_explicit(&pe->armed, PE_DISARMED, memory_order_relaxed);
	while (read(pe->evfd, &count, sizeof(count)) < 0 && errno == EINTR)
		;
	doca_rcu_read_lock();
	EXPLORE_POINT(ATOMIC);
	struct pe_members *m = rcu_dereference(pe->members);
	uint32_t n = atomic_load_explicit(&m->count, memory_order_acquire);

	for (uint32_t i = 0; i < n; i++) {
		struct doca_ctx *ctx = atomic_load_explicit(&m->ctx[i], memory_order_acquire);
		struct ctx_run *run = rcu_dereference(ctx->run);

		TSAN_ACQUIRE(run);
		if (run != NULL)
			run->qp->ops->notify_ack(run->qp);
	}
	doca_rcu_read_unlock();
	if (entry == RUNNER_ENTERED)
		runner_exit(&pe->runner);
	return DOCA_SUCCESS;
}
