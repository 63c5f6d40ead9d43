/*
 * stress/explore/explore_rcu.c — RCU as the scheduler sees it. liburcu's
 * synchronize_rcu spins and futex-waits on its readers, and its call_rcu
 * thread runs callbacks whenever it likes: neither can run under a
 * scheduler that must know who waits for whom. So the engine's two grace
 * period calls are wrapped (-Wl,--wrap=doca_synchronize_rcu,
 * --wrap=doca_call_rcu) and modelled here:
 *
 * - a reader is a thread between its RCU_LOCK and RCU_UNLOCK hook points
 *   (the scheduler keeps its nesting and counts the sections it has left);
 * - a grace period snapshots which threads are inside a section and blocks
 *   the caller until each of them has left that section (or exited): the
 *   definition of a grace period, no more, no less;
 * - call_rcu queues the callback for a controlled "deferred-free" thread,
 *   which, like liburcu's call_rcu thread, takes what is queued, waits one
 *   grace period, and runs it. In a fork child that thread is lost, as the
 *   library's reclaimer is, until the library's atfork child handler
 *   (doca_rcu_fork_child) starts a new one; that handler also forgets the
 *   readers of the threads the child does not have, so from then on a
 *   lost thread holds up no grace period (before it, one lost inside a
 *   read-side section holds up every one, as in liburcu).
 *
 * The real read-side calls still run (liburcu's data structures rely on
 * them), but nothing ever waits for them: the real synchronize_rcu and
 * call_rcu are not called while a schedule runs.
 */
#include "explore.h"

#include <stdlib.h>

#include "engine/rcu.h"

struct deferred {
	struct rcu_head *head;
	void (*fn)(struct rcu_head *head);
	struct deferred *next;
};

static struct {
	struct deferred *head;
	struct deferred **tail;
	bool busy; /* the deferred-free thread is running a batch */
	bool lost_forgotten; /* a fork child's library forgot the lost threads' readers */
} R = { .tail = &R.head };

void __real_doca_rcu_fork_child(void);
void __wrap_doca_rcu_fork_child(void);
void __real_doca_synchronize_rcu(void);
void __real_doca_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *head));
void __wrap_doca_synchronize_rcu(void);
void __wrap_doca_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *head));

bool explore_grace_over(const struct explore_thread *waiter)
{
	for (unsigned i = 0;; i++) {
		const struct explore_thread *t = explore_thread_at(i);

		if (t == NULL)
			return true;
		if (t->state == THREAD_LOST && R.lost_forgotten)
			continue;
		if (waiter->grace_snap[i] != UINT64_MAX && t->state != THREAD_FINISHED &&
		    t->rcu_sections == waiter->grace_snap[i])
			return false;
	}
}

bool explore_barrier_done(void)
{
	return R.head == NULL && !R.busy;
}

static void grace_period(void)
{
	struct explore_thread *me = explore_self();

	if (me->rcu_nesting != 0)
		explore_end(VERDICT_DEADLOCK, "thread %u waits for a grace period inside a read-side section",
			    me->id);
	for (unsigned i = 0; i < EXPLORE_MAX_THREADS; i++) {
		const struct explore_thread *t = explore_thread_at(i);

		me->grace_snap[i] = t != NULL && t->rcu_nesting != 0 ? t->rcu_sections : UINT64_MAX;
	}
	if (!explore_grace_over(me))
		explore_block(BLOCK_GRACE, NULL, false);
}

void __wrap_doca_synchronize_rcu(void)
{
	if (explore_self() == NULL) {
		__real_doca_synchronize_rcu();
		return;
	}
	explore_libc_point("doca_synchronize_rcu", __builtin_return_address(0), false);
	grace_period();
}

void __wrap_doca_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *head))
{
	if (explore_self() == NULL) {
		__real_doca_call_rcu(head, fn);
		return;
	}
	explore_libc_point("doca_call_rcu", __builtin_return_address(0), false);
	struct deferred *d = malloc(sizeof(*d));

	if (d == NULL)
		explore_end(VERDICT_HARNESS, "out of memory");
	*d = (struct deferred){ .head = head, .fn = fn };
	*R.tail = d;
	R.tail = &d->next;
	explore_wake(BLOCK_CALLBACKS, &R, 1);
}

static void *deferred_main(void *unused)
{
	(void)unused;
	explore_name("deferred-free");
	/* the callbacks take read-side locks of their own: registered as the
	 * library registers its threads */
	doca_rcu_ensure();
	for (;;) {
		while (R.head == NULL) {
			R.busy = false;
			explore_block(BLOCK_CALLBACKS, &R, false);
		}
		R.busy = true;
		struct deferred *batch = R.head;

		R.head = NULL;
		R.tail = &R.head;
		grace_period();
		while (batch != NULL) {
			struct deferred *next = batch->next;

			batch->fn(batch->head);
			free(batch);
			batch = next;
		}
	}
	return NULL;
}

void explore_rcu_start(void)
{
	pthread_t thread;

	R.busy = true; /* until the thread first finds the queue empty */
	if (explore_thread_create(&thread, NULL, deferred_main, NULL, NULL) != 0)
		explore_end(VERDICT_HARNESS, "cannot start the deferred-free thread");
}

/* In a fork child the parent's deferred-free thread is lost with whatever
 * batch it held, and the frees still queued are the parent's: the library
 * never runs them there (engine/rcu.c), so neither does the model. */
void __wrap_doca_rcu_fork_child(void)
{
	__real_doca_rcu_fork_child();
	if (explore_self() == NULL)
		return;
	R.head = NULL;
	R.tail = &R.head;
	R.lost_forgotten = true;
	explore_rcu_start();
}

void explore_rcu_barrier(void)
{
	explore_libc_point("rcu_barrier", __builtin_return_address(0), false);
	while (!explore_barrier_done())
		explore_block(BLOCK_BARRIER, NULL, false);
}
