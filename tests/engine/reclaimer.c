/* tests/engine/reclaimer.c — the deferred-free thread does not outlive the
 * library's objects: after the last destroy it ends once its queue is
 * empty, and so does a thread that a later deferred free starts (a
 * reference dropped after the last destroy) while nothing is alive. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdatomic.h>
#include <time.h>

#include "engine/engine.h"

static unsigned threads_alive(void)
{
	DIR *d = opendir("/proc/self/task");
	unsigned n = 0;

	cr_assert_not_null(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Wait (10 s at most) until @p n threads are alive; the count then. */
static unsigned wait_for_threads(unsigned n)
{
	unsigned now = threads_alive();

	for (int i = 0; i < 100000 && now != n; i++) {
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
		now = threads_alive();
	}
	return now;
}

static atomic_uint ran;

static void late_free(struct rcu_head *head)
{
	DOCA_RCU_CALLBACK_ENTER(head);
	atomic_fetch_add(&ran, 1);
}

Test(reclaimer, a_deferred_free_after_the_last_destroy_leaves_no_thread)
{
	static struct rcu_head late;
	unsigned base = threads_alive();
	struct doca_pe *pe;

	cr_assert_eq(doca_pe_create(&pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(pe), DOCA_SUCCESS); /* the last object: its free starts the thread */
	cr_assert_eq(wait_for_threads(base), base, "the reclaimer ends after the last destroy's free");
	doca_call_rcu(&late, late_free); /* nothing alive: a late reference's free */
	doca_rcu_barrier();
	cr_assert_eq(atomic_load(&ran), 1u);
	cr_assert_eq(wait_for_threads(base), base, "the thread the late free started ends too");
}

/* A chain of frees, each queueing the next until told to stop: what
 * other threads freeing all along look like to a waiter. */
static struct rcu_head chain;
static atomic_bool chain_stop;
static atomic_uint chain_links;

static void chain_link(struct rcu_head *head)
{
	DOCA_RCU_CALLBACK_ENTER(head);
	atomic_fetch_add(&chain_links, 1);
	if (!atomic_load(&chain_stop))
		doca_call_rcu(head, chain_link);
}

static atomic_uint before_ran;

static void before_free(struct rcu_head *head)
{
	DOCA_RCU_CALLBACK_ENTER(head);
	atomic_fetch_add(&before_ran, 1);
}

/* doca_rcu_wait_queued (a fab0:port=N close's wait) waits for what was
 * queued before it, not for frees that keep coming: doca_rcu_barrier
 * would wait for the chain for ever. */
Test(reclaimer, wait_queued_runs_what_came_before_and_no_more, .timeout = 30)
{
	static struct rcu_head before;
	struct doca_pe *pe;

	cr_assert_eq(doca_pe_create(&pe), DOCA_SUCCESS); /* alive: the reclaimer keeps running */
	doca_call_rcu(&chain, chain_link);
	doca_call_rcu(&before, before_free);
	doca_rcu_wait_queued();
	cr_assert_eq(atomic_load(&before_ran), 1u, "the free queued before the wait has run");
	cr_assert_geq(atomic_load(&chain_links), 1u, "so has the chain's first link, queued before it");
	atomic_store(&chain_stop, true);
	doca_rcu_barrier(); /* the chain's last link has run: nothing of it is queued */
	unsigned links = atomic_load(&chain_links);

	doca_rcu_barrier();
	cr_assert_eq(atomic_load(&chain_links), links, "the chain stopped");
	cr_assert_eq(doca_pe_destroy(pe), DOCA_SUCCESS);
}
