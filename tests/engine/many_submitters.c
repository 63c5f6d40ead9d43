/*
 * tests/engine/many_submitters.c — 64 threads submit into one context, four
 * per mailbox shard (the threads are alive together, so their slots are
 * distinct and 64 slots share 16 shards).
 *
 * Checks: with the PE held back, the threads get exactly max_tasks
 * acceptances between them and then DOCA_ERROR_AGAIN (the credits are the
 * bound, the mailbox never refuses); with the PE running, every task is
 * accepted or answered AGAIN and retried, gets exactly one event, SUCCESS
 * with its length, and its destination holds its source's bytes; each
 * thread's tasks complete in the order it submitted them; after
 * doca_ctx_start only the task pool's chunks are allocated, as its credits
 * are first used, and nothing once every credit has been (counted in builds
 * with allocation-failure injection); the mailbox is MAILBOX_BYTES, printed, whatever the threads
 * and the pool size.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "actors/mailbox.h"
#include "actors/thread_slot.h"
#include "engine/alloc.h"
#include "engine/engine.h"
#include "engine/ring.h"
#include "tests/api/common.h"

enum { THREADS = 64, PER_THREAD = 32, LEN = 64, MAX_TASKS = 256, TASKS = THREADS * PER_THREAD };

struct storm;

struct submitter {
	struct storm *s;
	pthread_t th;
	uint32_t id;
	unsigned slot;           /* its thread slot, so its mailbox shard */
	uint32_t before_dry;     /* accepted before the first refusal, PE held back */
	doca_error_t dry_rc;     /* that refusal (DOCA_SUCCESS if none came) */
	uint32_t agains;         /* AGAIN answers while the PE ran */
	doca_error_t unexpected; /* an answer other than SUCCESS or AGAIN */
};

struct storm {
	struct api_fixture f;
	struct doca_buf *src[TASKS];
	struct doca_buf *dst[TASKS];
	pthread_barrier_t step; /* the threads and the test thread */
	struct submitter sub[THREADS];
};

static doca_error_t submit_task(struct storm *s, uint32_t task)
{
	return submit_copy(s->f.ctx, s->src[task], s->dst[task], task, 0);
}

static void *submitter_main(void *arg)
{
	struct submitter *t = arg;
	uint32_t i = 0;

	t->slot = thread_slot_get();
	pthread_barrier_wait(&t->s->step); /* all alive: 64 distinct slots */
	/* Round 1, nobody progresses the PE: take credits until they run out. */
	t->dry_rc = DOCA_SUCCESS;
	while (i < PER_THREAD) {
		doca_error_t rc = submit_task(t->s, t->id * PER_THREAD + i);

		if (rc != DOCA_SUCCESS) {
			t->dry_rc = rc;
			break;
		}
		i++;
	}
	t->before_dry = i;
	pthread_barrier_wait(&t->s->step); /* the test thread checks round 1 */
	pthread_barrier_wait(&t->s->step);
	/* Round 2, the PE runs: the rest, retrying on AGAIN. */
	while (i < PER_THREAD && t->unexpected == DOCA_SUCCESS) {
		doca_error_t rc = submit_task(t->s, t->id * PER_THREAD + i);

		if (rc == DOCA_SUCCESS) {
			i++;
		} else if (rc == DOCA_ERROR_AGAIN) {
			t->agains++;
			sched_yield();
		} else {
			t->unexpected = rc;
		}
	}
	return NULL;
}

/* Reap events until every task has had one, checking each. */
static void reap_all(struct storm *s)
{
	uint32_t next[THREADS] = { 0 };
	uint32_t events = 0;
	uint64_t deadline = now_ns() + 20ull * 1000000000ull;

	while (events < TASKS) {
		struct doca_event *ev;

		doca_pe_progress(s->f.pe);
		while ((ev = doca_pe_get_event(s->f.pe)) != NULL) {
			uint64_t task = doca_event_get_user_data(ev).u64;

			cr_assert_lt(task, (uint64_t)TASKS, "user data %llu", (unsigned long long)task);
			uint32_t t = (uint32_t)task / PER_THREAD, i = (uint32_t)task % PER_THREAD;

			cr_assert_eq(i, next[t], "thread %u: task %u completed after task %u "
				     "(a second event, or out of its submission order)", t, i, next[t] - 1);
			next[t]++;
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
			assert_ok(doca_event_get_error(ev));
			cr_assert_eq(doca_event_get_bytes(ev), (size_t)LEN, "bytes");
			cr_assert_eq(memcmp(s->f.dst_bytes + task * LEN, s->f.src_bytes + task * LEN, LEN), 0,
				     "task %llu: destination differs from its source",
				     (unsigned long long)task);
			doca_event_free(ev);
			events++;
		}
		cr_assert_lt(now_ns(), deadline, "%u of %u events", events, TASKS);
	}
}

Test(many_submitters, sixty_four_threads_on_one_ctx_exact_credits_one_event_each_bounded_mailbox)
{
	struct storm *s = calloc(1, sizeof(*s));
	uint32_t before_dry = 0;

	cr_assert_not_null(s);
	fixture_init_started(&s->f, "sw0", (size_t)TASKS * LEN, MAX_TASKS);
	for (uint32_t k = 0; k < TASKS; k++) {
		assert_ok(doca_buf_create(s->f.src_mem, (size_t)k * LEN, LEN, &s->src[k]));
		assert_ok(doca_buf_create(s->f.dst_mem, (size_t)k * LEN, LEN, &s->dst[k]));
	}
	struct ctx_run *run = handle_deref(s->f.ctx)->run; /* started on this thread: no race */

#ifdef DOCA_ALLOC_FAIL_INJECTION
	doca_alloc_fail_at(0); /* count from here, fail nothing */
#endif
	cr_assert_eq(pthread_barrier_init(&s->step, NULL, THREADS + 1), 0);
	for (uint32_t t = 0; t < THREADS; t++) {
		s->sub[t] = (struct submitter){ .s = s, .id = t };
		cr_assert_eq(pthread_create(&s->sub[t].th, NULL, submitter_main, &s->sub[t]), 0);
	}
	pthread_barrier_wait(&s->step);
	pthread_barrier_wait(&s->step); /* round 1 done */
	uint32_t per_shard[MAILBOX_SHARDS] = { 0 };

	for (uint32_t t = 0; t < THREADS; t++) {
		struct submitter *u = &s->sub[t];

		for (uint32_t o = 0; o < t; o++)
			cr_assert_neq(u->slot, s->sub[o].slot, "threads %u and %u alive with one slot", o, t);
		per_shard[u->slot % MAILBOX_SHARDS]++;
		before_dry += u->before_dry;
		cr_assert(u->dry_rc == DOCA_ERROR_AGAIN ||
				  (u->dry_rc == DOCA_SUCCESS && u->before_dry == PER_THREAD),
			  "thread %u stopped with %s after %u tasks", t, doca_error_get_name(u->dry_rc),
			  u->before_dry);
	}
	for (uint32_t i = 0; i < MAILBOX_SHARDS; i++)
		cr_assert_eq(per_shard[i], THREADS / MAILBOX_SHARDS, "submitters on shard %u", i);
	cr_assert_eq(before_dry, MAX_TASKS, "acceptances before the pool ran dry");
	cr_assert_eq(run_outstanding(run), MAX_TASKS);
	/* (ring21 step 1: a foreign task travels in a ring, not the mailbox) */
	cr_assert(ring_any(run) && !mailbox_nonempty(&run->mbox), "the accepted tasks wait in the rings");
	cr_log_info("mailbox of a ctx with max_tasks %u holding %u tasks of %u threads: %zu bytes "
		    "(the ring-per-shard design: %u × 512 slots × 8 B = %u bytes)",
		    MAX_TASKS, MAX_TASKS, THREADS, sizeof(run->mbox), MAILBOX_SHARDS,
		    MAILBOX_SHARDS * 512u * 8u);
	cr_assert_eq(sizeof(run->mbox), 1280, "16 producer lines, the summary line, 3 consumer lines");
	for (uint32_t c = 0; c < run->pool.nchunks; c++)
		cr_assert_not_null(atomic_load(&run->pool.chunks[c]), "every credit was used: chunk %u made", c);
#ifdef DOCA_ALLOC_FAIL_INJECTION
	/* the task pool's chunks, made as its credits were first used (a
	 * chunk two submitters raced for was made twice, one copy kept) */
	uint64_t first_use = doca_alloc_count();

	cr_assert_geq(first_use, 1, "chunks made after start");
#endif
	pthread_barrier_wait(&s->step); /* round 2 */
	reap_all(s);
	uint32_t agains = 0;

	for (uint32_t t = 0; t < THREADS; t++) {
		cr_assert_eq(pthread_join(s->sub[t].th, NULL), 0);
		cr_assert_eq(s->sub[t].unexpected, DOCA_SUCCESS, "thread %u got %s", t,
			     doca_error_get_name(s->sub[t].unexpected));
		agains += s->sub[t].agains;
	}
	cr_log_info("%u tasks from %u threads, %u AGAIN answers while the PE ran", TASKS, THREADS, agains);
	expect_no_event_for(s->f.pe, 20);
	cr_assert_eq(run_outstanding(run), 0);
	cr_assert_not(mailbox_nonempty(&run->mbox));
	cr_assert_eq(memcmp(s->f.dst_bytes, s->f.src_bytes, (size_t)TASKS * LEN), 0, "destination");
#ifdef DOCA_ALLOC_FAIL_INJECTION
	cr_assert_eq(doca_alloc_count(), first_use, "allocations once every credit had been used");
#endif
	pthread_barrier_destroy(&s->step);
	for (uint32_t k = 0; k < TASKS; k++) {
		assert_ok(doca_buf_destroy(s->src[k]));
		assert_ok(doca_buf_destroy(s->dst[k]));
	}
	fixture_fini(&s->f);
	free(s);
}
