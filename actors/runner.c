/* actors/runner.c — the per-thread identities used by the runner guard
 * (records for threads that may park, recycled when their thread exits),
 * and the TSan token that stands for RCU grace periods (tsan_annotate.h).
 *
 * A record is never freed: a revoker may read the list of a record whose
 * thread has just exited (it finds it empty and revokes). Records
 * of exited threads go on a free list for the next new thread; every
 * record stays on the all-list, so leak checkers see it reachable.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "hb_annotate.h"
#include "runner.h"
#include "tsan_annotate.h"

DOCA_TLS struct runner_thread *runner_me;
DOCA_TLS struct runner_thread *runner_me_owner_way;
bool runner_owner_way;

/* Priority 102: after asym_fence_choose and hb_detect (101), and before
 * every constructor of default priority, an application's too: linked
 * statically, the program's own come first in link order, and one that
 * calls the library would find the flag still false (the slow ways) and
 * see it change under its threads. */
__attribute__((constructor(102))) static void runner_owner_way_choose(void)
{
	runner_owner_way = asym_fence_kernel && !hb_watching();
	/* a record made by an earlier constructor on this thread (another
	 * thread made before it keeps NULL: its slow ways, still exact; a
	 * constructor returns at depth 0) */
	if (runner_me != NULL)
		runner_me->way = runner_owner_way ? runner_me : NULL;
	runner_me_owner_way = runner_me != NULL ? runner_me->way : NULL;
}
DOCA_TLS _Alignas(4) char runner_self_token;
char tsan_rcu_token;

static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
static struct runner_thread *records_free;
static struct runner_thread *records_all;
static pthread_key_t records_key;
static pthread_once_t records_once = PTHREAD_ONCE_INIT;

/* The thread exits: its record serves the next new thread. Its sections
 * are over (no doca call spans a thread's exit), so its list is empty. */
static void record_release(void *value)
{
	struct runner_thread *t = value;

	runner_me = NULL; /* a later call in another destructor gets a new one */
	runner_me_owner_way = NULL;
	pthread_mutex_lock(&records_lock);
	t->next_free = records_free;
	records_free = t;
	pthread_mutex_unlock(&records_lock);
}

static void records_key_create(void)
{
	(void)pthread_key_create(&records_key, record_release);
	hb_release(&records_once); /* Helgrind does not see pthread_once's own ordering */
}

struct runner_thread *runner_thread_first(void)
{
	struct runner_thread *t;

	(void)pthread_once(&records_once, records_key_create);
	hb_acquire(&records_once);
	pthread_mutex_lock(&records_lock);
	t = records_free;
	if (t != NULL) {
		records_free = t->next_free;
	} else {
		t = aligned_alloc(_Alignof(struct runner_thread), sizeof(*t));
		if (t != NULL && ((uintptr_t)t & ~RUNNER_ID_MASK) != 0) {
			free(t); /* above 2^48: no room for a parking generation */
			t = NULL;
		}
		if (t != NULL) {
			/* the library's own memory, ordered by its atomics: a
			 * quiesce or a revoker reads another thread's list */
			hb_private(t, sizeof(*t));
			for (uint32_t i = 0; i < RUNNER_NEST_MAX; i++)
				atomic_init(&t->in[i], NULL);
			t->depth = 0;
			t->next_all = records_all;
			records_all = t;
		}
	}
	pthread_mutex_unlock(&records_lock);
	if (t == NULL || pthread_setspecific(records_key, t) != 0) {
		if (t != NULL)
			record_release(t);
		return NULL; /* this call runs as the thread's token, and never parks */
	}
	t->next_free = NULL;
	t->way = runner_owner_way ? t : NULL; /* (a record of an exited thread: set again) */
	runner_me = t;
	runner_me_owner_way = t->way; /* at depth 0 */
	return t;
}

enum runner_entry runner_enter_parked_cas(struct runner *r, const void *cur, const void *as)
{
	EXPLORE_POINT(GUARD);
	/* acquire: see a revoker's writes, if one held it in between. */
	return atomic_compare_exchange_strong_explicit(&r->owner, &cur, as, memory_order_acquire,
						       memory_order_relaxed) &&
		       runner_in(r)
		       ? RUNNER_ENTERED
		       : RUNNER_BUSY;
}

#ifdef DOCA_EXPLORE
void runner_explore_two_holders(void)
{
	fprintf(stderr, "runner: two threads hold one guard\n");
	abort();
}

void runner_explore_held_when_freed(void)
{
	fprintf(stderr, "runner: a guard is held while its memory is handed on\n");
	abort();
}
#endif

void runner_fork_prepare(void)
{
	pthread_mutex_lock(&records_lock);
}

void runner_fork_parent(void)
{
	pthread_mutex_unlock(&records_lock);
}

/* The child's other threads are gone; their records stay theirs (the
 * child refuses every object it inherited, so no guard of theirs is used). */
void runner_fork_child(void)
{
	pthread_mutex_unlock(&records_lock); /* prepare's, on this thread (actors/rcu_reader.c) */
}

