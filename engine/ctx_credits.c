/*
 * engine/ctx_credits.c — sleeping until a context has credits again: the
 * credit notification fd (arm / clear, like the PE's) and the bounded
 * blocking submit, doca_task_submit_wait.
 *
 * Why no wake is lost (a Dekker pair, as in pe_notify.c). A waiter
 * registers (waiters + 1, for the fd together with DISARMED → ARMED), runs
 * a full fence, then looks for a credit and for the context having left
 * RUNNING. A returner puts its credits back in the pool's ring (a stop
 * stores the new state), runs a full fence, then loads waiters. Both fences
 * are seq_cst, so one of the two sees the other's store: the waiter finds
 * the credit (and does not sleep) or the returner finds the waiter (and
 * wakes it).
 *
 * Returners skip even that fence while nobody ever waited on the context
 * (the per-task return of the owner fast path, issue 12). The first waiter
 * stores `used`, then waits for an RCU grace period before it registers.
 * Every returner runs inside a read-side section and loads `used` after
 * its ring stores. A returner whose section began before the grace period
 * is waited for, so the waiter's later check sees its credits; one whose
 * section began after it sees `used` (the grace period's barriers order
 * the store before every later section) and takes the fenced path. So a
 * returner that skips cannot miss a registered waiter. With waiters known,
 * a return costs the fence and a relaxed load of a line only waiters write.
 * One returner runs outside a section: doca_event_free by the PE's parked
 * owner (engine/event.c). It runs the light half of an asymmetric fence
 * (actors/asym_fence.h) between its ring stores and its load of `used`,
 * and the first waiter runs the heavy half between its store of `used`
 * and its grace period: of the two, one sees the other's store, so that
 * returner either takes the fenced path or has its credits seen by the
 * waiter's check, as a returner inside a section does.
 * "The first waiter" is every waiter until one's grace period has passed
 * (`settled`): a waiter that only saw another's store of `used` registers
 * after a grace period of its own too (credits_first_use).
 *
 * Per run: a returner does not load `used` itself but its run's
 * credit_watch (engine/engine.h: one byte of a line the return has at
 * hand, where `used` and the context's state were two pointer chases).
 * RUN_WATCH_STOP is set with run->stopping, before the STOPPING store,
 * so every argument above and in engine/ctx_run.c that has a returner see
 * STOPPING holds for the bit (the stop's grace period and its wait for
 * the owner's brief guard come after both stores). RUN_WATCH_USED is set
 * on every run a returner can return to once `used` is set: the first
 * waiter, after its store of `used` and a full fence, marks the published
 * run (ctx->run, inside its section), before its heavy fence and its
 * grace period, so the bit is seen wherever `used` would have been; and
 * doca_ctx_start, after publishing a new run and a full fence, loads
 * `used` and marks the run itself before RUNNING lets a task into it. Of
 * the two fences one comes first: the waiter sees the new run, or the
 * start sees `used`. A run retired before the waiter's load (IDLE: every
 * credit back) takes no more returns. `waited` (the wake of sleepers) is
 * the bit, not a load of `used`: a returner that missed the bit is one
 * the grace period (or the asymmetric fence) covers, as above.
 * Proof: DOCA_EXPLORE_REVERT=credit_watch_before_publish (the start loads
 * `used` before its publish) fails the explorer scenario
 * credit_watch_start (stress/explore/meson.build).
 *
 * A blocked submitter sleeps on the futex word seq, which every wake bumps
 * (after the returner's fence) before futex_wake. The submitter reads seq
 * before its fence and its credit check: a wake that comes between the
 * check and the sleep has changed seq, so the sleep returns at once; and
 * if its read saw the bump, the fence pair orders the credit before its
 * check. A return wakes as many sleepers as it returned credits (a bulk
 * free of four wakes four; one wake per call left three asleep with three
 * credits free, found by a review); every woken submitter tries to submit before it gives up
 * (AGAIN then means the credit was taken by someone), and one that leaves
 * with any other result passes the wake on. Leaving RUNNING wakes all.
 *
 * The fd: DISARMED → ARMED by a request (counted in waiters first, the
 * count taken back if the fd was armed already), ARMED → FIRED
 * by whoever first sees a credit or the stop (one eventfd write per
 * arming), any → DISARMED by a clear (which then empties the eventfd). The
 * one thread that moves the state out of ARMED drops the count.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "actors/asym_fence.h"
#include "actors/explore_revert.h"
#include "engine/engine.h"

void ctx_credits_init(struct ctx_credits *c)
{
	atomic_store_explicit(&c->waiters, 0, memory_order_relaxed);
	atomic_store_explicit(&c->seq, 0, memory_order_relaxed);
	atomic_store_explicit(&c->fd_state, CREDIT_FD_DISARMED, memory_order_relaxed);
	atomic_store_explicit(&c->fd, -1, memory_order_relaxed);
}

void ctx_credits_fini(struct ctx_credits *c)
{
	int fd = atomic_load_explicit(&c->fd, memory_order_relaxed);

	if (fd >= 0) {
		hb_acquire(&c->fd); /* see credits_fd */
		close(fd);
	}
}

static void futex_wake(_Atomic uint32_t *word, int n)
{
	(void)syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Sleep while *word is val, for at most *limit (NULL: no limit). Returns on
 * a wake, a change, a signal or the limit alike: the caller checks again. */
static void futex_wait(_Atomic uint32_t *word, uint32_t val, const struct timespec *limit)
{
	(void)syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, limit, NULL, 0);
}

/* ARMED → FIRED: the fd becomes readable, once per arming. */
static void credits_fire_fd(struct ctx_credits *c)
{
	int armed = CREDIT_FD_ARMED;
	uint64_t one = 1;

	/* acquire on success: pairs with the arming's release, so the fd the
	 * armer installed (or saw) is the one we load below, never -1 */
	if (atomic_load_explicit(&c->fd_state, memory_order_relaxed) != CREDIT_FD_ARMED ||
	    !atomic_compare_exchange_strong_explicit(&c->fd_state, &armed, CREDIT_FD_FIRED,
						     memory_order_acquire, memory_order_relaxed))
		return;
	atomic_fetch_sub_explicit(&c->waiters, 1, memory_order_relaxed);
	hb_acquire(&c->fd); /* see credits_fd */
	while (write(atomic_load_explicit(&c->fd, memory_order_relaxed), &one, sizeof(one)) < 0 &&
	       errno == EINTR)
		;
}

/* Wake up to @p n blocked submitters, if any is registered. */
static void credits_wake_sleepers(struct ctx_credits *c, int n)
{
	if (atomic_load_explicit(&c->waiters, memory_order_relaxed) == 0)
		return;
	atomic_fetch_add_explicit(&c->seq, 1, memory_order_relaxed);
	futex_wake(&c->seq, n);
}

/* Somebody waits: fire the fd, then wake up to @p sleepers blocked submitters. */
static void credits_wake(struct ctx_credits *c, int sleepers)
{
	credits_fire_fd(c);
	credits_wake_sleepers(c, sleepers); /* skipped if the fd was the only one */
}

/*
 * The whole cost of a return when nobody waits: this fence and one relaxed
 * load. It runs once per call, and one call covers every credit returned
 * before it, so a caller that returns a burst calls it once after the burst.
 */
void run_credits_returned_slow(struct ctx_run *run, uint32_t n, bool waited)
{
	struct ctx_credits *c = run->credits;

	/* run_credits_returned (engine/engine.h) returned at once if the
	 * run's credit_watch was clear (not waited, the ctx not STOPPING): a stop that counts our credits out
	 * after its grace period sees them back, and one whose STOPPING came
	 * before our section is seen there: the grace period orders the two
	 * (engine/ctx_run.c), no fence needed. The parked owner's free has no
	 * section: the stop's wait for its brief guard orders the two instead
	 * (engine/ctx_run.c, "The owner's frees"). Nobody ever waited (see the
	 * top), no stop to finish. */
	/* seq_cst fence: the credits put back are visible before we look for
	 * waiters (pairs with the fence a waiter runs after registering) and
	 * before the ready set's flag is loaded. */
	atomic_thread_fence(memory_order_seq_cst);
	pe_ready_credits_returned(run); /* a stopping ctx's PE must finish it (the fence above serves) */
	EXPLORE_POINT(WAKE);
	if (waited && atomic_load_explicit(&c->waiters, memory_order_relaxed) != 0)
		credits_wake(c, n > INT_MAX ? INT_MAX : (int)n); /* one sleeper per credit back */
}

void ctx_credits_left_running(struct ctx_credits *c)
{
	/* seq_cst fence: the new state is visible before we look for waiters
	 * (pairs with the fence a waiter runs after registering). */
	atomic_thread_fence(memory_order_seq_cst);
	EXPLORE_POINT(WAKE);
	if (atomic_load_explicit(&c->waiters, memory_order_relaxed) != 0)
		credits_wake(c, INT_MAX);
}

/* A wake is due: a free credit, or the context not RUNNING (inside a
 * read-side section). */
static bool credits_due(struct doca_ctx *ctx)
{
	if (ctx_state(ctx) != DOCA_CTX_STATE_RUNNING)
		return true;
	EXPLORE_POINT(ATOMIC);
	/* RUNNING, seen inside the section: the run is published and stays. */
	struct ctx_run *run = rcu_dereference(ctx->run);

	TSAN_ACQUIRE(run);
	return task_pool_free(&run->pool) != 0;
}

/* The context's eventfd, made on first use (inside a read-side section,
 * the handle checked: a racing destroy closes it after a grace period). */
static doca_error_t credits_fd(struct ctx_credits *c, int *out)
{
	int fd = atomic_load_explicit(&c->fd, memory_order_relaxed);

	if (fd < 0) {
		int mine = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

		if (mine < 0)
			return DOCA_ERROR_OPERATING_SYSTEM;
		/* The fd's creation (a call an application's race detector
		 * sees) happens before its use on another thread: a write that
		 * fires it, a read that clears it, its close. */
		hb_release(&c->fd);
		/* the first to install one wins; every caller uses that one */
		if (atomic_compare_exchange_strong_explicit(&c->fd, &fd, mine, memory_order_relaxed,
							    memory_order_relaxed))
			fd = mine;
		else
			close(mine);
	}
	hb_acquire(&c->fd); /* the winner's creation, before the caller uses it */
	*out = fd;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_get_credit_notification_handle(struct doca_ctx *h, int *fd)
{
	doca_error_t err;
	struct doca_ctx *ctx;

	doca_rcu_read_lock();
	ctx = ctx_of(h);
	if (ctx == NULL)
		err = HANDLE_REFUSAL(h, MAGIC_CTX); /* the handle first, as everywhere */
	else
		err = fd != NULL ? credits_fd(&ctx->credits, fd) : DOCA_ERROR_INVALID_VALUE;
	doca_rcu_read_unlock();
	return err;
}

/* Before a context's first waiter registers: make returners look for
 * waiters (see the top). Outside any read-side section.
 *
 * Every waiter registers only after a grace period that began after it saw
 * `used` set, not only the one that set it: a second waiter that found
 * `used` set while the first still waited for its grace period could
 * register and check for credits while a returner that loaded `used`
 * false (its ring store still in its store buffer: no fence on that path)
 * was inside its section, miss the credit and sleep with it free. So
 * `settled` (stored after the grace period, release) is what lets a
 * waiter skip the wait (acquire). */
static void credits_first_use(struct doca_ctx *h)
{
	bool wait = false;

	doca_rcu_read_lock();
	struct doca_ctx *ctx = ctx_of(h);

	EXPLORE_POINT(WAKE);
	if (ctx != NULL && !atomic_load_explicit(&ctx->credits.settled, memory_order_acquire)) {
		atomic_store_explicit(&ctx->credits.used, true, memory_order_relaxed);
		/* seq_cst fence: `used` is visible before we load ctx->run (pairs
		 * with doca_ctx_start's fence between its publish and its load
		 * of `used`: one of the two marks a run being started) */
		atomic_thread_fence(memory_order_seq_cst);
		EXPLORE_POINT(WAKE);
		struct ctx_run *run = rcu_dereference(ctx->run); /* kept by our section */

		TSAN_ACQUIRE(run);
		if (run != NULL)
			atomic_fetch_or_explicit(&run->credit_watch, RUN_WATCH_USED, memory_order_relaxed);
		wait = true;
	}
	doca_rcu_read_unlock();
	if (!wait)
		return;
	/* the heavy half for the returner outside a section (top) */
	asym_fence_heavy();
	doca_synchronize_rcu(); /* every returner that missed `used` has returned */
	doca_rcu_read_lock();
	ctx = ctx_of(h); /* still this context (a destroy frees after a grace period) */
	if (ctx != NULL)
		atomic_store_explicit(&ctx->credits.settled, true, memory_order_release);
	doca_rcu_read_unlock();
}

doca_error_t doca_ctx_request_credit_notification(struct doca_ctx *h)
{
	int fd, disarmed = CREDIT_FD_DISARMED;
	doca_error_t err;
	struct doca_ctx *ctx;

	credits_first_use(h);
	doca_rcu_read_lock();
	ctx = ctx_of(h);
	err = ctx != NULL ? credits_fd(&ctx->credits, &fd) : HANDLE_REFUSAL(h, MAGIC_CTX);
	if (err == DOCA_SUCCESS) {
		struct ctx_credits *c = &ctx->credits;
		/* Counted before ARMED can be seen: the fire that takes the fd out
		 * of ARMED drops one count, and before the count it would drop a
		 * blocked submitter's, whose wake then looks at waiters == 0. */
		bool counted_first = !DOCA_REVERTED("credit_arm_before_count");

		if (counted_first)
			atomic_fetch_add_explicit(&c->waiters, 1, memory_order_relaxed);
		EXPLORE_POINT(WAKE);
		/* release: the fd (made or seen above) and our count in waiters
		 * before ARMED, for the firer on another thread (credits_fire_fd)
		 * and a clear: relaxed, a weakly ordered CPU let the firer's
		 * decrement come before our increment, so a blocked submitter's
		 * count was taken (the credit_arm_before_count defect again) */
		if (atomic_compare_exchange_strong_explicit(&c->fd_state, &disarmed, CREDIT_FD_ARMED,
							    memory_order_release, memory_order_relaxed)) {
			if (!counted_first) {
				EXPLORE_POINT(WAKE);
				atomic_fetch_add_explicit(&c->waiters, 1, memory_order_relaxed);
			}
			/* seq_cst fence: we are counted in waiters before we look
			 * for a credit (pairs with run_credits_returned's fence). */
			atomic_thread_fence(memory_order_seq_cst);
			if (credits_due(ctx))
				credits_fire_fd(c);
		} else if (counted_first) {
			atomic_fetch_sub_explicit(&c->waiters, 1, memory_order_relaxed); /* armed already */
		}
	}
	doca_rcu_read_unlock();
	return err;
}

doca_error_t doca_ctx_clear_credit_notification(struct doca_ctx *h)
{
	uint64_t count;
	int fd;
	doca_error_t err = DOCA_SUCCESS;
	struct doca_ctx *ctx;

	doca_rcu_read_lock();
	ctx = ctx_of(h);
	if (ctx == NULL) {
		err = HANDLE_REFUSAL(h, MAGIC_CTX);
	} else {
		struct ctx_credits *c = &ctx->credits;

		/* acquire: an ARMED or FIRED seen carries the arming's fd */
		if (atomic_exchange_explicit(&c->fd_state, CREDIT_FD_DISARMED, memory_order_acquire) ==
		    CREDIT_FD_ARMED)
			atomic_fetch_sub_explicit(&c->waiters, 1, memory_order_relaxed);
		fd = atomic_load_explicit(&c->fd, memory_order_relaxed);
		hb_acquire(&c->fd); /* see credits_fd */
		while (fd >= 0 && read(fd, &count, sizeof(count)) < 0 && errno == EINTR)
			;
	}
	doca_rcu_read_unlock();
	return err;
}

/* The caller runs the context's PE (a callback, or inside a turn): no
 * credit could come back while it slept. *start: the run current when the
 * call began (0: none), the only one the call may wait in — a stop and a
 * new start while the call looks or waits for its grace period end it. */
static bool caller_runs_pe(const struct doca_ctx *h, uint64_t *start)
{
	bool runs = false;

	*start = 0;
	doca_rcu_read_lock();
	const struct doca_ctx *ctx = ctx_of(h);

	/* RUNNING seen inside the section: a stop waits for us, so ctx->pe stays. */
	if (ctx != NULL && ctx_state(ctx) == DOCA_CTX_STATE_RUNNING) {
		runs = runner_is_self(&ctx_pe(ctx)->runner);
		*start = ctx_run_start(ctx);
	}
	doca_rcu_read_unlock();
	return runs;
}

/* The time left until @p deadline (CLOCK_MONOTONIC) in *left; false if none. */
static bool time_left(const struct timespec *deadline, struct timespec *left)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ns = (int64_t)(deadline->tv_sec - now.tv_sec) * 1000000000 +
		     (deadline->tv_nsec - now.tv_nsec);

	if (ns <= 0)
		return false;
	left->tv_sec = (time_t)(ns / 1000000000);
	left->tv_nsec = (long)(ns % 1000000000);
	return true;
}

/* *t = now + ms on CLOCK_MONOTONIC. */
static void deadline_in(struct timespec *t, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/* Submit into the run @p start of the context @p ctx we hold, or
 * DOCA_ERROR_BAD_STATE once that run has ended: one stopped while we slept,
 * even if a new one started since, ends the wait. The run is checked on the
 * held context, inside a read-side section, before the handle is looked up
 * again: RUNNING seen there holds up the stop's grace period, and with it
 * IDLE and any destroy, until the submit has looked. So a context stopped
 * and destroyed while we slept is one that left RUNNING (BAD_STATE, as
 * include/doca_task.h says), never a stale handle of the caller's (it was
 * current when the call began). */
static doca_error_t submit_in_held_run(struct doca_ctx *h, struct doca_ctx *ctx,
				       const struct doca_task_desc *desc, uint64_t start,
				       struct task_ring_need *need)
{
	doca_error_t err;

	need->which = TASK_MAKE_NONE;
	doca_rcu_read_lock();
	if (!DOCA_REVERTED("wait_destroyed_stale") &&
	    (ctx_state(ctx) != DOCA_CTX_STATE_RUNNING || ctx_run_start(ctx) != start))
		err = DOCA_ERROR_BAD_STATE;
	else
		err = task_submit_in_run(h, desc, start, need);
	doca_rcu_read_unlock();
	return err;
}

/* The pool was empty: register, then submit or sleep until it is not. */
static doca_error_t submit_wait_registered(struct doca_ctx *h, struct doca_ctx *ctx,
					   const struct doca_task_desc *desc, uint64_t start,
					   int timeout_ms)
{
	struct ctx_credits *c = &ctx->credits;
	struct timespec deadline, left;
	doca_error_t err;

	if (timeout_ms >= 0)
		deadline_in(&deadline, timeout_ms);
	atomic_fetch_add_explicit(&c->waiters, 1, memory_order_relaxed);
	for (;;) {
		uint32_t seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
		struct task_ring_need need;

		/* seq_cst fence: we are counted in waiters (and read seq) before we
		 * look for a credit (pairs with run_credits_returned's fence). */
		atomic_thread_fence(memory_order_seq_cst);
		err = submit_in_held_run(h, ctx, desc, start, &need);
		/* our ring to make first: out of the section (engine/ring.c
		 * I8), then at once again, no credit taken meanwhile */
		if (err == DOCA_ERROR_AGAIN && need.which != TASK_MAKE_NONE &&
		    (err = task_ring_make_held(ctx, start, &need)) == DOCA_SUCCESS)
			continue;
		if (err != DOCA_ERROR_AGAIN)
			break;
		if (timeout_ms >= 0 && !time_left(&deadline, &left)) {
			err = DOCA_ERROR_TIME_OUT;
			break;
		}
		futex_wait(&c->seq, seq, timeout_ms >= 0 ? &left : NULL);
	}
	atomic_fetch_sub_explicit(&c->waiters, 1, memory_order_relaxed);
	if (err != DOCA_SUCCESS)
		credits_wake_sleepers(c, 1); /* the wake we may have had goes to another */
	return err;
}

doca_error_t doca_task_submit_wait(struct doca_ctx *h, const struct doca_task_desc *desc, int timeout_ms)
{
	doca_error_t err;
	uint64_t start;

	if (desc == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (caller_runs_pe(h, &start))
		return DOCA_ERROR_NOT_PERMITTED;
	err = doca_task_submit(h, desc);
	if (err != DOCA_ERROR_AGAIN)
		return err;
	credits_first_use(h);
	/* Hold the context while asleep, outside any read-side section (a
	 * stop waits for those, and the stop is what wakes us). */
	doca_rcu_read_lock();
	struct doca_ctx *ctx = ctx_of(h);
	bool held = ctx != NULL && ctx_ref_get(ctx);

	/* the run current at the call's start (the one that refused us, or an
	 * earlier one: then it has stopped, BAD_STATE), never a later one */
	if (DOCA_REVERTED("wait_run_after_grace") && held)
		start = ctx_run_start(ctx);
	doca_rcu_read_unlock();
	if (!held) /* destroyed since doca_task_submit looked: stale, as for any call */
		return DOCA_REVERTED("wait_refusal_uncounted") ? DOCA_ERROR_INVALID_VALUE
							       : HANDLE_REFUSAL(h, MAGIC_CTX);
	if (start == 0) {
		ctx_ref_put(ctx);
		return DOCA_ERROR_BAD_STATE; /* stopped meanwhile */
	}
	err = submit_wait_registered(h, ctx, desc, start, timeout_ms);
	ctx_ref_put(ctx);
	return err;
}
