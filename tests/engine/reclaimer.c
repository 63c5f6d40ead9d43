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
