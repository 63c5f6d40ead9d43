/* tests/engine/runner_token.c — review12's reproduction: runner_parked_by
 * (actors/runner.h) must not take a marked parked word of a record for a
 * parked word of a thread without a record (its token).
 *
 * runner_parked_by(cur, me) compares the low 32 bits of cur with those of
 * me + PARKED. A token at 4 of its block (runner_self_tokens + 4, as
 * runner_self made it before review12's fix; RUNNER_TOKEN_AT since) has
 * bit 2 set, so token + PARKED has the low three bits 110 of a parked word that
 * a revoker marked (R | PARKED | REVOKING): the compare holds whenever the
 * record R has the low 32 bits of the token's 64-aligned block. R is in
 * the library's bss and the token in the thread's TLS (in its stack's
 * mapping, the threads' stacks spread over GiBs once thousands of threads
 * run, the case where a thread has no record), so nothing keeps their low
 * 32 bits apart. runner_enter_from then takes the token for a record:
 * runner_in_parked and runner_unpark read and write "its" list and depth
 * inside the TLS block, runner_depth_set stores the token's "twin" (a
 * wild address) in runner_me_owner_way, and the compare with the marked
 * word succeeds: ENTERED while R's thread is inside the guard (two
 * holders), where a revoker must find R inside and answer BUSY.
 *
 * The steps: every record is taken by a live thread (RUNNER_RECORDS_MAX),
 * so the next thread runs as its token; a record R' with the low 32 bits
 * of that token's block is mapped in another 4 GiB window, inside a parked
 * section of a guard r (its list names r); r's owner word is R''s parked
 * word, marked (a revoker came and found R' inside). The token thread's
 * runner_enter(&r) must answer BUSY and change nothing of its own. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "actors/runner.h"

struct holders {
	pthread_mutex_t lock;
	pthread_cond_t reported_cv; /* a holder reported (the test waits) */
	pthread_cond_t release_cv;  /* release set (the holders wait) */
	unsigned reported;   /* holders that made their identity */
	bool last_no_record; /* the last one to report found no record left */
	bool release;
};

/* Takes a record (runner_self) and keeps it until released. */
static void *holder_run(void *arg)
{
	struct holders *h = arg;

	(void)runner_self();
	pthread_mutex_lock(&h->lock);
	h->reported++;
	h->last_no_record = runner_me == NULL;
	pthread_cond_signal(&h->reported_cv);
	while (!h->release)
		pthread_cond_wait(&h->release_cv, &h->lock);
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

struct token_case {
	bool no_record;       /* the thread ran as its token */
	bool mapped;          /* R' was mapped */
	enum runner_entry e;  /* runner_enter(&r) */
	const void *owner;    /* r's owner word after it */
	const void *marked;   /* the word before it */
	bool way_unchanged;   /* runner_me_owner_way as before the call */
	bool block_unchanged; /* the token's 64-byte block as before */
};

static struct runner guard __attribute__((aligned(64)));

/* The record R' with the low 32 bits of @p block, in a 4 GiB window of its
 * own below 2^48 (a parked word's room); NULL if none could be mapped.
 * Every window is tried: under ASan the first 16 TiB are its shadow. */
static struct runner_thread *record_alike(uintptr_t block)
{
	for (uintptr_t hi = 1; hi < (uintptr_t)1 << (RUNNER_GEN_SHIFT - 32); hi++) {
		uintptr_t addr = hi << 32 | (uint32_t)block;
		uintptr_t page = addr & ~(uintptr_t)4095u;
		void *p = mmap((void *)page, 4096u, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			       -1, 0);

		if (p == MAP_FAILED)
			continue;
		if ((uintptr_t)p == page)
			return (struct runner_thread *)addr;
		munmap(p, 4096u); /* an old kernel took the address as a hint */
	}
	return NULL;
}

static void *token_run(void *arg)
{
	struct token_case *c = arg;
	uintptr_t block = (uintptr_t)runner_self_tokens;
	unsigned char before[64];

	(void)runner_self();
	c->no_record = runner_me == NULL;
	struct runner_thread *alike = record_alike(block);

	c->mapped = alike != NULL;
	if (!c->no_record || alike == NULL)
		return NULL;
	/* R' inside a parked section of the guard, as its owner thread is
	 * while it runs the PE; a revoker found it there and left the mark */
	atomic_store(&alike->in[0], &guard);
	alike->depth = 1;
	c->marked = (const void *)((uintptr_t)7u << RUNNER_GEN_SHIFT |
				   (uintptr_t)runner_tagged(alike, RUNNER_PARKED_TAG | RUNNER_REVOKING_TAG));
	atomic_store(&guard.owner, c->marked);
	memcpy(before, runner_self_tokens, sizeof(before));
	struct runner_thread *way = runner_me_owner_way;

	c->e = runner_enter(&guard);
	c->owner = atomic_load(&guard.owner);
	c->way_unchanged = runner_me_owner_way == way;
	c->block_unchanged = memcmp(before, runner_self_tokens, sizeof(before)) == 0;
	/* (no further call: with the defect runner_me_owner_way is wild) */
	return NULL;
}

Test(runner_token, a_tokens_entry_refuses_a_marked_word_of_a_record_with_its_low_32_bits)
{
	static struct holders h = { .lock = PTHREAD_MUTEX_INITIALIZER,
					  .reported_cv = PTHREAD_COND_INITIALIZER,
					  .release_cv = PTHREAD_COND_INITIALIZER };
	static pthread_t th[RUNNER_RECORDS_MAX + 2];
	unsigned made = 0;
	pthread_attr_t attr;

	cr_assert_eq(pthread_attr_init(&attr), 0);
	cr_assert_eq(pthread_attr_setstacksize(&attr, 256u * 1024u), 0);
	(void)runner_self(); /* this thread's record first */
	/* every record taken: the last holder found none left */
	for (bool exhausted = false; !exhausted && made < RUNNER_RECORDS_MAX + 2;) {
		cr_assert_eq(pthread_create(&th[made], &attr, holder_run, &h), 0, "holder %u", made);
		made++;
		pthread_mutex_lock(&h.lock);
		while (h.reported != made)
			pthread_cond_wait(&h.reported_cv, &h.lock);
		exhausted = h.last_no_record;
		pthread_mutex_unlock(&h.lock);
	}
	struct token_case c = { .e = (enum runner_entry)-1 };
	pthread_t tt;

	cr_assert_eq(pthread_create(&tt, &attr, token_run, &c), 0);
	cr_assert_eq(pthread_join(tt, NULL), 0);
	pthread_mutex_lock(&h.lock);
	h.release = true;
	pthread_cond_broadcast(&h.release_cv);
	pthread_mutex_unlock(&h.lock);
	for (unsigned i = 0; i < made; i++)
		cr_assert_eq(pthread_join(th[i], NULL), 0);
	pthread_attr_destroy(&attr);

	cr_assert(c.no_record, "every record taken (%u holders): the thread runs as its token", made);
	cr_assert(c.mapped, "a record with the token block's low 32 bits was mapped");
	cr_assert_eq(c.e, RUNNER_BUSY, "R' is inside the guard: BUSY, not %d (ENTERED is 0: two holders)", (int)c.e);
	cr_assert_eq(c.owner, c.marked, "the owner word stays R''s marked word");
	cr_assert(c.way_unchanged, "runner_me_owner_way untouched (not the token's \"twin\")");
	cr_assert(c.block_unchanged, "the token's TLS block untouched (no list or depth written there)");
}
