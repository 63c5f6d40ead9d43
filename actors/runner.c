/* actors/runner.c — the per-thread identities used by the runner guard
 * (records for threads that may park, recycled when their thread exits),
 * and the TSan token that stands for RCU grace periods (tsan_annotate.h).
 *
 * A record is never freed: a revoker may read the list of a record whose
 * thread has just exited (it finds it empty and revokes). Records
 * of exited threads go on a free list for the next new thread. They all
 * come from one static array (records), so the low 32 bits of a record's
 * address name it among records (runner_parked_by compares only those);
 * a thread that finds the array used up runs as its token and never
 * parks, as a thread whose record could not be made did.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "hb_annotate.h"
#include "runner.h"
#include "tsan_annotate.h"

/* every record ever made, records[0 .. records_made) (under records_lock),
 * then each one's twin (runner_twin), then the twin of the threads without
 * a record (records_twin_shared): one array, so two records differ in
 * their address's low 32 bits, and none whose low 32 bits are 0 is handed
 * out (NULL's, a record-less caller of runner_parked_by). A twin is never
 * a thread's identity, so no owner word is a parked word of it. */
static struct runner_thread records[2 * RUNNER_RECORDS_MAX + 1];
_Static_assert(sizeof(records) <= (1ull << 32), "records differ in their low 32 bits");
#define records_twin_shared (&records[2 * RUNNER_RECORDS_MAX])

DOCA_TLS struct runner_thread *runner_me;
/* (never NULL: runner_owner_enter pushes on its list first) */
DOCA_TLS struct runner_thread *runner_me_owner_way = records_twin_shared;
bool runner_owner_way;

/* Priority 102: after asym_fence_choose and hb_detect (101), and before
 * every constructor of default priority, an application's too: linked
 * statically, the program's own come first in link order, and one that
 * calls the library would find the flag still false (the slow ways) and
 * see it change under its threads. */
__attribute__((constructor(102))) static void runner_owner_way_choose(void)
{
	runner_owner_way = asym_fence_kernel && !hb_watching();
	/* the library's own memory, ordered by its atomics: a quiesce or a
	 * revoker reads another thread's list, and threads without a record
	 * all push on the shared twin's */
	hb_private(records, sizeof(records));
	/* a record made by an earlier constructor on this thread (another
	 * thread's made before it keeps its twin: its slow ways, still exact;
	 * a constructor returns at depth 0) */
	if (runner_me != NULL)
		runner_me->way = runner_owner_way ? runner_me : runner_twin(runner_me);
	runner_me_owner_way = runner_me != NULL ? runner_me->way : records_twin_shared;
}
/* the token at RUNNER_TOKEN_AT of a 64-aligned block: its low six bits
 * are never a record's, nor with PARKED a marked word's (runner_parked_by) */
DOCA_TLS _Alignas(64) char runner_self_tokens[64];
char tsan_rcu_token;

static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
static struct runner_thread *records_free;
static uint32_t records_made;
static pthread_key_t records_key;
static pthread_once_t records_once = PTHREAD_ONCE_INIT;

/* The thread exits: its record serves the next new thread. Its sections
 * are over (no doca call spans a thread's exit), so its list is empty. */
static void record_release(void *value)
{
	struct runner_thread *t = value;

	runner_me = NULL; /* a later call in another destructor gets a new one */
	runner_me_owner_way = records_twin_shared;
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
		while (t == NULL && records_made < RUNNER_RECORDS_MAX) {
			t = &records[records_made++];
			/* skipped: a record whose low 32 bits are 0 (see
			 * records), or one above 2^48 (no room for a parking
			 * generation) */
			if ((uint32_t)(uintptr_t)t == 0 || ((uintptr_t)t & ~RUNNER_ID_MASK) != 0)
				t = NULL;
		}
		if (t != NULL) {
			for (uint32_t i = 0; i < RUNNER_NEST_MAX; i++)
				atomic_init(&t->in[i], NULL);
			t->depth = 0;
		}
	}
	pthread_mutex_unlock(&records_lock);
	if (t == NULL || pthread_setspecific(records_key, t) != 0) {
		if (t != NULL)
			record_release(t);
		return NULL; /* this call runs as the thread's token, and never parks */
	}
	t->next_free = NULL;
	t->way = runner_owner_way ? t : runner_twin(t); /* (a record of an exited thread: set again) */
	runner_me = t;
	runner_me_owner_way = t->way; /* at depth 0 */
	return t;
}

/*
 * The revoking mark (actors/runner.h, "Parking"): why a revoker's CAS
 * that takes a parked guard never makes a second holder, with the owner's
 * entry comparing one word and its exit none.
 *
 * The words. The owner word of r is written only by: a take (a CAS to a
 * thread's identity, acquire: runner_enter_from, runner_enter_brief_from,
 * runner_enter_parked_cas, a revoker's last CAS), a mark (a revoker's CAS
 * of a parked word W to W | REVOKING, or of W | REVOKING to itself,
 * release: runner_revoke_mark; a quiescer's, runner_revoke_announce, also
 * CASes a word that is not parked to itself), a parking (an exchange of
 * the holder's identity for W, acq_rel, and a give-up CAS of W to NULL
 * when the revoke count is not 0: runner_exit_park), a give-up
 * (runner_unpark_for_others' CAS to NULL, release), a holder's exit (a
 * release store of NULL) and runner_reset (nobody holds r and no revoker
 * is in flight). An unmarked parked word is written only by a parking, by
 * the thread whose record it names. The owner's fast entry (E: push r on
 * its list, light half, load the owner word, compare with its W) succeeds
 * only on the unmarked W; its exit is the pop (release).
 *
 * The claim. A revoker R counts itself in revoke, marks the word with a
 * CAS K (which reads W or W | REVOKING and writes W | REVOKING), runs the
 * heavy half, reads t's list (acquire), and CASes C from W | REVOKING to
 * itself. If C succeeds, every fast entry E of t that loaded W either
 * ended before R's hold (its pop happens before C) or begins after R's
 * exit. Take the store U that E's load read (an unmarked W of t's):
 *  - U before K in the word's modification order: E's load is coherence-
 *    ordered before K, so E's light half precedes R's heavy half (the two
 *    act as sequentially consistent fences), and R's read of t's list
 *    after its heavy half sees E's push or a later value: the push gives
 *    BUSY (no C); the pop, or a later push (release stores, which R
 *    acquires), makes E's section happen before C.
 *  - U after K and before C: U is a parking P's exchange. Every write to
 *    the word after K happens after K: RMWs after K continue K's release
 *    sequence or read a release store, and a plain store is made by a
 *    holder, whose take came after K. So R's count (before K) happens
 *    before P's load of revoke, which reads R's count or a later value. A
 *    value after R's withdrawal (release, after C; P's load acquires)
 *    would put C before P, and P's exchange after C's write: not before
 *    it. So P reads a count that is not 0 and gives the guard up, a CAS
 *    of U to NULL; if that fails, another revoker marked U first. Either
 *    way the value after U is not U, and E (t's, after P on t's thread)
 *    loads that value or a later one: it never reads U, a contradiction.
 *  - U after C: C happens before U's parking (R's exit releases, every
 *    later take acquires), and E follows it on t's thread: E is after
 *    R's hold.
 * So the 16-bit generation may wrap while a revoker is paused: a parking
 * in its window gives the guard up, and the word it read comes round only
 * through parkings, never with an owner inside that it did not see.
 *
 * The rest. A revoker that finds t inside leaves the mark: t's next entry
 * loads W | REVOKING and takes the slow way, a CAS from it (here, below),
 * racing at most a revoker's C: exactly one wins, and a take gives the
 * winner the previous holder's writes (acquire; the owner's own entry
 * sees its own). Nested entries of t (a callback) find their own marked
 * word by runner_unmarked and are NESTED, as before the mark. Refused
 * calls change nothing but the mark, which only sends the owner's next
 * entry the slow way. A quiescer (runner_quiesce_fenced) and the counted
 * first version (runner_quiesce_begin) read t's list after the heavy half
 * the same way: while t is inside, the word is W or W | REVOKING.
 *
 * One look after the push (runner_owner_enter, the owner ways). The
 * entries above look at the owner word before they push (runner_parked_by
 * on a first load), then compare it with that W after the light half.
 * The owner ways push first (on t's list, or on a twin's when the caller
 * may not take them: a record no thread runs as, whose list nobody
 * reads), run the light half, and load the word once: they enter if it
 * is an unmarked parked word of t's, any generation, with no look before
 * the push. Why no look is needed: the claim above never uses the first
 * look. It takes the store U that E's load after the light half read,
 * an unmarked parked word of t's, and each case uses only that U was
 * written by a parking of t's (the only writer of such a word), that E's
 * push and light half precede its load, and that E follows on t's thread
 * every parking of t's (E runs no parking). So E's entry is exact for any
 * such U, and that U is W, t's last parking's word: that parking happens
 * before E's load (on t's thread, or on the thread that had the record
 * before, through the records' lock), so the load reads no earlier store
 * (coherence), and a later store that is an unmarked word of t's would be
 * a later parking, which t does not run during E. The first look's other use, a stale
 * entry (W gone between the look and the push) writing only t's own list,
 * holds for a push with no look: a push on t's list is t's alone, a
 * failed entry pops it before it takes the slow way, and a revoker or a
 * quiescer that found it meanwhile saw t inside a section of r for a
 * bounded moment, as it may for an entry whose compare fails. The
 * getter's argument (engine/pe.c, pe_get's steps 1-4) holds with its two
 * loads t2 and t3 as one: a destroy that held the guard since t1 replaced
 * every parked word of t's, which only t's next parking writes again.
 * Proof of the order: DOCA_EXPLORE_REVERT=owner_way_looks_before_push
 * (the look before the push and none after) lets a revoker that marks the
 * word, finds t's list empty and takes the guard in between make a
 * second holder (stress/explore/scenario_guard11.c).
 */
enum runner_entry runner_enter_parked_cas(struct runner *r, const void *cur, const void *as)
{
	EXPLORE_POINT(GUARD);
	const void *seen = cur;
	/* acquire: see a revoker's writes, if one held it in between. */
	bool won = atomic_compare_exchange_strong_explicit(&r->owner, &seen, as, memory_order_acquire,
							   memory_order_relaxed);

	if (!won && seen == runner_tagged(cur, RUNNER_REVOKING_TAG)) {
		cur = seen;
		EXPLORE_POINT(GUARD);
		/* our word, marked since we read it: acquire, as above */
		won = atomic_compare_exchange_strong_explicit(&r->owner, &cur, as, memory_order_acquire,
							      memory_order_relaxed);
	}
	return won && runner_in(r) ? RUNNER_ENTERED : RUNNER_BUSY;
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

