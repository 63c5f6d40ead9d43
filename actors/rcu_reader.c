/*
 * actors/rcu_reader.c — RCU reader registration tracked for fork().
 *
 * liburcu's registry lists the reader state of every registered thread,
 * and a grace period waits for each one that is inside a read-side section.
 * A fork child has only the forking thread, so the others must leave the
 * registry there, or the child's first grace period may wait forever (and a
 * new thread given an absent thread's old stack would find its reader
 * state still linked). Each thread registered here is also on `readers`,
 * and every call into liburcu's grace-period and registration code holds
 * `gp_fork_lock` for reading; fork's prepare takes it for writing, so the
 * registry is at rest when the child unlinks the absent threads' readers.
 */
#define _LGPL_SOURCE 1 /* the reader state's layout (urcu/static), not its inline fast path */
#include "actors/rcu_reader.h"

#include <pthread.h>

#include <urcu.h>
#include <urcu/list.h>
#include <urcu/static/urcu-memb.h>

#include "actors/hb_annotate.h"
#include "actors/tsan_annotate.h"

/* Held for reading around liburcu's grace-period and registration calls,
 * for writing by fork's prepare. */
static pthread_rwlock_t gp_fork_lock = PTHREAD_RWLOCK_INITIALIZER;

/* Every registered thread's reader state (readers_lock, under gp_fork_lock). */
struct reader_rec {
	struct cds_list_head link;
	struct urcu_reader *reader;
};
static CDS_LIST_HEAD(readers);
static pthread_mutex_t readers_lock = PTHREAD_MUTEX_INITIALIZER;
static DOCA_TLS struct reader_rec my_reader;

void reader_register(void)
{
	pthread_rwlock_rdlock(&gp_fork_lock);
	rcu_register_thread();
	my_reader.reader = &URCU_TLS(urcu_memb_reader);
	/* liburcu's reader state and grace-period word: ordered by its asm */
	hb_private(my_reader.reader, sizeof(*my_reader.reader));
	hb_private(&urcu_memb_gp, sizeof(urcu_memb_gp));
	pthread_mutex_lock(&readers_lock);
	cds_list_add(&my_reader.link, &readers);
	pthread_mutex_unlock(&readers_lock);
	pthread_rwlock_unlock(&gp_fork_lock);
}

void reader_unregister(void)
{
	pthread_rwlock_rdlock(&gp_fork_lock);
	pthread_mutex_lock(&readers_lock);
	cds_list_del(&my_reader.link);
	pthread_mutex_unlock(&readers_lock);
	rcu_unregister_thread();
	hb_app_memory(my_reader.reader, sizeof(*my_reader.reader)); /* thread-local storage again */
	pthread_rwlock_unlock(&gp_fork_lock);
}

void reader_synchronize(void)
{
	pthread_rwlock_rdlock(&gp_fork_lock);
	synchronize_rcu();
	pthread_rwlock_unlock(&gp_fork_lock);
}

void reader_fork_prepare(void)
{
	pthread_rwlock_wrlock(&gp_fork_lock);
}

void reader_fork_parent(void)
{
	pthread_rwlock_unlock(&gp_fork_lock);
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
	readers_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	gp_fork_lock = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
}
