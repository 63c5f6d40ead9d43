/*
 * actors/rcu_reader.c — RCU reader registration tracked for fork().
 *
 * liburcu's registry lists the reader state of every registered thread,
 * and a grace period waits for each one that is inside a read-side section.
 * A fork child has only the forking thread, so the others must leave the
 * registry there, or the child's first grace period may wait forever (and a
 * new thread given an absent thread's old stack would find its reader
 * state still linked). Each thread registered here is also on `readers`,
 * and every call into liburcu's grace-period and registration code is
 * counted in `gp_users` (under `gp_fork_lock`) while it runs; fork's
 * prepare takes the lock once no such call runs and holds it across the
 * fork, so the registry is at rest when the child unlinks the absent
 * threads' readers.
 *
 * Why a lock and a count, not a pthread rwlock held for writing: the child
 * must release what prepare took, and glibc's pthread_rwlock_unlock in a
 * child takes the write lock for a read lock (its owner is the parent's
 * thread id), while resetting it by assignment leaves it held in the eyes
 * of an application's ThreadSanitizer ("read lock of a write locked
 * mutex" at the child's first registration). A mutex the child unlocks is
 * right for both.
 */
#define _LGPL_SOURCE 1 /* the reader state's layout (urcu/static), not its inline fast path */
#include "actors/rcu_reader.h"

#include <pthread.h>
#include <sched.h>

#include <urcu.h>
#include <urcu/list.h>
#include <urcu/static/urcu-memb.h>

#include "actors/hb_annotate.h"
#include "actors/tsan_annotate.h"

/* gp_users: the calls into liburcu's grace-period and registration code
 * running now; fork's prepare holds gp_fork_lock from when it finds none
 * until the fork is done. */
static pthread_mutex_t gp_fork_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned gp_users;

static void gp_enter(void)
{
	pthread_mutex_lock(&gp_fork_lock);
	gp_users++;
	pthread_mutex_unlock(&gp_fork_lock);
}

static void gp_leave(void)
{
	pthread_mutex_lock(&gp_fork_lock);
	gp_users--;
	pthread_mutex_unlock(&gp_fork_lock);
}

/* Every registered thread's reader state (readers_lock, inside gp_enter). */
struct reader_rec {
	struct cds_list_head link;
	struct urcu_reader *reader;
};
static CDS_LIST_HEAD(readers);
static pthread_mutex_t readers_lock = PTHREAD_MUTEX_INITIALIZER;
static DOCA_TLS struct reader_rec my_reader;

void reader_register(void)
{
	gp_enter();
	rcu_register_thread();
	my_reader.reader = &URCU_TLS(urcu_memb_reader);
	/* liburcu's reader state and grace-period word: ordered by its asm */
	hb_private(my_reader.reader, sizeof(*my_reader.reader));
	hb_private(&urcu_memb_gp, sizeof(urcu_memb_gp));
	pthread_mutex_lock(&readers_lock);
	cds_list_add(&my_reader.link, &readers);
	pthread_mutex_unlock(&readers_lock);
	gp_leave();
}

bool reader_membarrier(void)
{
	/* (this file sees liburcu's variable: it does not include engine/rcu.h) */
	return urcu_memb_has_sys_membarrier != 0;
}

void reader_read_lock(void)
{
	rcu_read_lock();
}

void reader_read_unlock(void)
{
	rcu_read_unlock();
}

void reader_unregister(void)
{
	gp_enter();
	pthread_mutex_lock(&readers_lock);
	cds_list_del(&my_reader.link);
	pthread_mutex_unlock(&readers_lock);
	rcu_unregister_thread();
	hb_app_memory(my_reader.reader, sizeof(*my_reader.reader)); /* thread-local storage again */
	gp_leave();
}

void reader_synchronize(void)
{
	gp_enter();
	synchronize_rcu();
	gp_leave();
}

/* Wait (yielding: a grace period takes milliseconds) until no call runs,
 * and keep the lock: none starts until the fork is done. */
void reader_fork_prepare(void)
{
	pthread_mutex_lock(&gp_fork_lock);
	while (gp_users != 0) {
		pthread_mutex_unlock(&gp_fork_lock);
		sched_yield();
		pthread_mutex_lock(&gp_fork_lock);
	}
}

void reader_fork_parent(void)
{
	pthread_mutex_unlock(&gp_fork_lock);
}

void reader_fork_child(void)
{
	struct reader_rec *rec, *tmp;

	cds_list_for_each_entry_safe(rec, tmp, &readers, link) {
		if (rec == &my_reader)
			continue;
		/* Not a thread of the child: out of liburcu's registry, which
		 * is at rest (the parent's prepare held gp_fork_lock). */
		cds_list_del(&rec->reader->node);
		rec->reader->ctr = 0;
		cds_list_del(&rec->link);
	}
	readers_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER; /* not held by prepare */
	/* prepare's, taken on this very thread: released, not reset (see top) */
	pthread_mutex_unlock(&gp_fork_lock);
}
