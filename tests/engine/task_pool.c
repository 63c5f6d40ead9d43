/* tests/engine/task_pool.c — credits and event slots grow in chunks as the
 * credits are first used, with the exact AGAIN at max_tasks
 * (engine/task_pool.c). */
#include "../api/common.h"

#include "actors/runner.h"
#include "actors/thread_slot.h"
#include "engine/engine.h"
#include "engine/task_pool.h"

#include <pthread.h>

static uint32_t chunks_made(const struct task_pool *p)
{
	uint32_t n = 0;

	for (uint32_t c = 0; c < p->nchunks; c++)
		n += atomic_load(&p->chunks[c]) != NULL;
	return n;
}

static void reap(struct doca_pe *pe, uint32_t n)
{
	for (uint32_t done = 0; done < n;) {
		struct doca_event *ev = wait_event(pe);

		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
		doca_event_free(ev);
		done++;
	}
}

Test(task_pool, a_started_context_holds_one_chunk_until_its_credits_need_more)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, 0);
	struct task_pool *p = &handle_deref(f.ctx)->run->pool;

	cr_assert_eq(p->size, DOCA_CTX_DEFAULT_MAX_TASKS);
	cr_assert_eq(p->nchunks, DOCA_CTX_DEFAULT_MAX_TASKS / POOL_CHUNK);
	cr_assert_eq(chunks_made(p), 1, "one chunk at start");
	for (uint32_t i = 0; i < POOL_CHUNK; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	cr_assert_eq(chunks_made(p), 1, "%u credits fit the first chunk", POOL_CHUNK);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, POOL_CHUNK, 0));
	cr_assert_eq(chunks_made(p), 2, "the next credit made the second");
	reap(f.pe, POOL_CHUNK + 1u);
	cr_assert_eq(task_pool_free(p), p->size, "every credit back");
	for (uint32_t i = 0; i < POOL_CHUNK + 1u; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	cr_assert_eq(chunks_made(p), 2, "returned slots are reused before new ones are made");
	reap(f.pe, POOL_CHUNK + 1u);
	fixture_fini(&f);
}

Test(task_pool, again_exactly_at_max_tasks_with_every_chunk_made_on_the_way)
{
	enum { MAX = 3 * POOL_CHUNK + 5 };
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, MAX);
	struct task_pool *p = &handle_deref(f.ctx)->run->pool;

	for (uint32_t i = 0; i < MAX; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	cr_assert_eq(chunks_made(p), 4);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, MAX, 0), DOCA_ERROR_AGAIN);
	cr_assert_eq(task_pool_free(p), 0, "the refusal took nothing");
	cr_assert_eq(doca_pe_progress(f.pe), MAX);
	struct doca_event *ev = doca_pe_get_event(f.pe);

	cr_assert_not_null(ev);
	doca_event_free(ev);
	cr_assert_eq(task_pool_free(p), 1);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, MAX, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, MAX + 1, 0), DOCA_ERROR_AGAIN);
	reap(f.pe, MAX);
	fixture_fini(&f);
}

Test(task_pool, a_handle_of_a_slot_from_an_earlier_run_is_stale_after_its_chunk_is_reused)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, 4);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	struct doca_event *old = wait_event(f.pe);

	doca_event_free(old);
	assert_ok(doca_ctx_stop(f.ctx));
	assert_ok(doca_ctx_start(f.ctx)); /* a new run: its chunk may be the same cell */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 2, 0));
	struct doca_event *ev = wait_event(f.pe);
	uint64_t stale = doca_stale_handle_count();

	cr_assert_eq(doca_event_get_user_data(old).u64, 0, "the old handle reads nothing");
	doca_event_free(old);
	cr_assert_eq(doca_stale_handle_count(), stale + 1, "a free of it is refused and counted");
	cr_assert_eq(doca_event_get_user_data(ev).u64, 2, "the live event is untouched");
	doca_event_free(ev);
	fixture_fini(&f);
}

/* A model of the returned stack: the slot indexes, top last. */
struct stack_model {
	uint32_t idx[4 * POOL_CHUNK];
	uint32_t n;
};

/* The slot index of @p ev in @p p (its chunk and place in it). */
static uint32_t slot_index(const struct task_pool *p, const struct doca_event *ev)
{
	for (uint32_t c = 0; c < p->nchunks; c++) {
		const struct doca_event *evs = atomic_load(&p->chunks[c]);

		if (evs != NULL && ev >= evs && ev < evs + POOL_CHUNK)
			return c * POOL_CHUNK + (uint32_t)(ev - evs);
	}
	cr_assert_fail("a slot of no chunk of the pool");
	return 0;
}

/* Take until want are taken (or AGAIN), checking that every popped slot is
 * the one the model's top names, in a chunk of the pool. */
static uint32_t take_checked(struct task_pool *p, struct stack_model *m, struct doca_event **out, uint32_t want)
{
	uint32_t got = 0;

	while (got < want) {
		doca_error_t why = DOCA_SUCCESS;
		/* nobody runs the PE: the guard for the take (a taker of
		 * slots holds it), as a submit before the first turn takes it */
		struct runner *guard = &p->run->pe->runner;
		enum runner_entry e = runner_enter_brief(guard);

		cr_assert_neq(e, RUNNER_BUSY);
		uint32_t n = task_pool_take(p, &out[got], want - got, &why);

		if (e == RUNNER_ENTERED)
			runner_exit(guard);

		if (n == 0) {
			cr_assert_eq(why, DOCA_ERROR_AGAIN);
			break;
		}
		for (uint32_t i = 0; i < n; i++) {
			struct doca_event *ev = out[got + i];

			uint32_t idx = slot_index(p, ev);

			cr_assert_eq(ev, pool_slot_of(p, idx), "slot %u at its own address", idx);
			if (m->n > 0)
				cr_assert_eq(idx, m->idx[--m->n], "the stack's top, in order");
		}
		got += n;
	}
	return got;
}

/* Return out[from, to) as chains of the given sizes, recording them in the model. */
static void put_chains(struct task_pool *p, struct stack_model *m, struct doca_event **out, uint32_t from, uint32_t to,
		       uint32_t size)
{
	while (from < to) {
		struct pool_chain c = { 0 };
		uint32_t end = to - from < size ? to : from + size;
		uint32_t base = m->n;

		for (uint32_t i = from; i < end; i++)
			pool_chain_add(&c, out[i]);
		/* the chain's first (its top) is the last added */
		for (uint32_t i = from; i < end; i++)
			m->idx[base + (i - from)] = slot_index(p, out[i]);
		m->n += end - from;
		task_pool_put(p, &c);
		from = end;
	}
}

static void take_and_return_all(struct task_pool *p, struct stack_model *m, uint32_t max)
{
	struct doca_event *out[4 * POOL_CHUNK];
	uint32_t sizes[] = { 1, 5, 13, 32 };

	for (uint32_t round = 0; round < 4; round++) {
		uint32_t half = max / 2;

		cr_assert_eq(take_checked(p, m, out, max + 1), max, "every credit, then AGAIN");
		cr_assert_eq(task_pool_free(p), 0);
		put_chains(p, m, out, 0, half, sizes[round]);
		cr_assert_eq(take_checked(p, m, out, 7), 7, "the last chain's slots first");
		put_chains(p, m, out, 0, 7, sizes[3 - round]);
		put_chains(p, m, out, half, max, sizes[3 - round]);
		cr_assert_eq(task_pool_free(p), max);
	}
}

Test(task_pool, popped_slots_are_the_ones_their_links_name_before_and_after_the_pool_turns_shared)
{
	enum { MAX = 3 * POOL_CHUNK + 5 };
	struct api_fixture f;
	struct stack_model m = { .n = 0 };

	fixture_init_started(&f, "sw0", 64, MAX);
	struct task_pool *p = &handle_deref(f.ctx)->run->pool;

	/* nobody runs the PE: each take enters its guard briefly, a plain update */
	take_and_return_all(p, &m, MAX);
	cr_assert_eq(atomic_load(&p->mode), POOL_OWNER);
	/* shared from here, as task_pool_share leaves it once no plain take
	 * is under way, with the slots the owner returned still on the
	 * stack: the credits are CASed, the slots popped as before (the
	 * guard holder's in every mode) */
	atomic_store(&p->mode, POOL_SWITCHING);
	pool_settle(p);
	cr_assert_eq(atomic_load(&p->mode), POOL_SHARED);
	take_and_return_all(p, &m, MAX);
	fixture_fini(&f);
}

/* The owner's single submit takes from the stack's top (task_pool.h
 * pool_pop_one): each take from a stack of returned slots must leave the
 * depth exactly one less and top_ev on the slot under the one taken,
 * down to the empty stack; then the fresh way. */
Test(task_pool, the_owners_single_takes_from_the_stack_store_exactly_one_count_less)
{
	enum { N = 8 };
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, 0);
	struct task_pool *p = &handle_deref(f.ctx)->run->pool;

	for (uint32_t i = 0; i < N; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	reap(f.pe, N); /* the N slots back on the stack, and this thread the PE's parked owner */
	for (uint32_t i = 0; i < N; i++) {
		uint32_t depth = p->stacked;
		struct doca_event *top = atomic_load(&p->top_ev);

		cr_assert_not_null(top, "take %u: %u slots left on the stack", i, N - i);
		struct doca_event *under = atomic_load(&top->pool_next_ev);

		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
		cr_assert_eq(p->stacked, depth - 1u, "take %u", i);
		cr_assert_eq(atomic_load(&p->top_ev), under, "take %u", i);
	}
	cr_assert_null(atomic_load(&p->top_ev), "the stack is empty");
	uint32_t free = task_pool_free(p);

	assert_ok(submit_copy(f.ctx, f.src, f.dst, N, 0)); /* a fresh slot */
	cr_assert_eq(task_pool_free(p), free - 1u);
	reap(f.pe, N + 1u);
	cr_assert_eq(task_pool_free(p), p->size, "every credit back");
	fixture_fini(&f);
}

/* Reap n events, each SUCCESS, and mark their user data (below n) seen:
 * each exactly once. */
static void reap_each_once(struct doca_pe *pe, uint32_t n)
{
	bool seen[2 * POOL_CHUNK] = { false };

	cr_assert_leq(n, 2 * POOL_CHUNK);
	for (uint32_t done = 0; done < n; done++) {
		struct doca_event *ev = wait_event(pe);
		uint64_t user = doca_event_get_user_data(ev).u64;

		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
		cr_assert_lt(user, n);
		cr_assert_not(seen[user], "task %llu completed twice", (unsigned long long)user);
		seen[user] = true;
		doca_event_free(ev);
	}
}

/* A burst from the PE's thread pops the owner's stack counting its slots
 * by the stack's depth, stacked, with no test for its
 * bottom (engine/task_pool.c, "The stack's depth"): a burst longer than
 * the stack takes exactly the stack, then fresh slots, and fresh_from
 * follows the fresh takes only. */
Test(task_pool, a_burst_longer_than_the_owners_stack_takes_the_stack_then_fresh_slots)
{
	enum { FIRST = 3, SECOND = 20, THIRD = 2 * POOL_CHUNK };
	struct api_fixture f;
	struct doca_task_desc descs[THIRD];
	uint32_t accepted = 0;

	fixture_init_started(&f, "sw0", 64, 0);
	struct task_pool *p = &handle_deref(f.ctx)->run->pool;

	cr_assert_eq(p->fresh_from, 0);
	for (uint32_t i = 0; i < FIRST; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	/* no turn yet: ring tasks, each holding its credit and no slot (the
	 * PE's feed pops them, ring21 step 2) */
	cr_assert_eq(p->fresh_from, 0);
	cr_assert_eq(task_pool_free(p), p->size - FIRST);
	reap_each_once(f.pe, FIRST); /* FIRST slots on the stack, this thread the PE's */
	cr_assert_eq(p->fresh_from, FIRST);
	const uint32_t rounds[] = { SECOND, THIRD };

	for (uint32_t r = 0; r < 2; r++) {
		const uint32_t n = rounds[r], stacked = r == 0 ? FIRST : SECOND;

		cr_assert_eq(p->stacked, stacked, "round %u", r);
		for (uint32_t i = 0; i < n; i++)
			descs[i] = (struct doca_task_desc){
				.type = DOCA_TASK_COPY, .src = f.src, .dst = f.dst, .user_data = { .u64 = i }
			};
		assert_ok(doca_task_submit_batch(f.ctx, descs, n, &accepted));
		cr_assert_eq(accepted, n, "round %u", r);
		cr_assert_null(atomic_load(&p->top_ev), "round %u: the whole stack taken", r);
		cr_assert_eq(p->fresh_from, n, "round %u: %u fresh slots after the stack's %u", r, n - stacked,
			     stacked);
		cr_assert_eq(task_pool_free(p), p->size - n, "round %u", r);
		reap_each_once(f.pe, n);
		cr_assert_eq(task_pool_free(p), p->size, "round %u: every credit back", r);
	}
	cr_assert_eq(atomic_load(&p->mode), POOL_OWNER, "the owner's plain way all along");
	fixture_fini(&f);
}

/* ring21 step 2: the split credits (engine/task_pool.h), on the pool of
 * a started context nothing submits to; the credits these calls take are
 * the pool's (taken and returned are its credits), so split_fini gives
 * back what they left out before the stop, which waits for every credit
 * (this thread, the only one using the pool, in the guard holder's role
 * of returned's writer). */
static struct task_pool *split_pool(struct api_fixture *f, uint32_t max_tasks)
{
	fixture_init_started(f, "sw0", 64, max_tasks);
	return &handle_deref(f->ctx)->run->pool;
}

static void split_fini(struct api_fixture *f, struct task_pool *p)
{
	credit_split_return(p, task_pool_out(p));
	cr_assert_eq(task_pool_free(p), p->size);
	fixture_fini(f);
}

Test(task_pool, split_credits_answer_again_exactly_at_max_tasks_and_after_one_return)
{
	struct api_fixture f;
	struct task_pool *p = split_pool(&f, 100);
	uint64_t seen = 0;

	cr_assert_eq(credit_split_take(p, 60, &seen), 60u);
	cr_assert_eq(credit_split_take(p, 60, &seen), 40u, "the free ones of a burst");
	cr_assert_eq(credit_split_take(p, 1, &seen), 0u, "AGAIN with 100 of 100 out");
	credit_split_return(p, 1);
	cr_assert_eq(seen, 0u, "the cached view is stale");
	cr_assert_eq(credit_split_take(p, 1, &seen), 1u, "one back: the look reloads returned");
	cr_assert_eq(seen, 1u);
	cr_assert_eq(credit_split_take(p, 1, &seen), 0u);
	split_fini(&f, p);
}

/* D4: every chunk below the take's bound exists before its credits are
 * taken (31, 32, 33 credits out; then a jump over two chunks). */
Test(task_pool, split_credits_make_every_chunk_below_the_takes_bound_first)
{
	struct api_fixture f;
	struct task_pool *p = split_pool(&f, 100);
	uint64_t seen = 0;

	cr_assert_eq(atomic_load(&p->chunks_made), 1u);
	cr_assert_eq(credit_split_take(p, 31, &seen), 31u);
	cr_assert_eq(atomic_load(&p->chunks_made), 1u, "31 out: chunk 0");
	cr_assert_eq(credit_split_take(p, 1, &seen), 1u);
	cr_assert_eq(atomic_load(&p->chunks_made), 1u, "32 out: chunk 0");
	cr_assert_eq(credit_split_take(p, 1, &seen), 1u);
	cr_assert_eq(atomic_load(&p->chunks_made), 2u, "33 out: chunk 1");
	cr_assert_not_null(atomic_load(&p->chunks[1]));
	cr_assert_eq(credit_split_take(p, 64, &seen), 64u, "97 out");
	cr_assert_eq(atomic_load(&p->chunks_made), 4u, "chunks 2 and 3, not only the last");
	for (uint32_t c = 0; c < 4; c++)
		cr_assert_not_null(atomic_load(&p->chunks[c]), "chunk %u", c);
	split_fini(&f, p);
}

/* D4's two takers: one with a stale view of returned gets its credits
 * by that view, but reloads returned before it makes a chunk by it
 * (the review of step 2, F1: its bound would count every credit taken
 * since, not those out), and still gets every free credit. */
Test(task_pool, split_credits_a_stale_view_of_returned_reloads_it_before_making_a_chunk)
{
	struct api_fixture f;
	struct task_pool *p = split_pool(&f, 40);
	uint64_t a = 0, b = 0;

	cr_assert_eq(credit_split_take(p, 30, &a), 30u);
	credit_split_return(p, 30); /* b never saw these */
	cr_assert_eq(credit_split_take(p, 2, &b), 2u, "b: 32 taken, 30 back as far as it knows 0");
	cr_assert_eq(b, 0u, "enough free in b's view, and chunk 0 covers its bound: returned not reloaded");
	cr_assert_eq(credit_split_take(p, 8, &b), 8u, "b: 40 taken, 30 back");
	cr_assert_eq(b, 30u, "its bound by its view (40) needed chunk 1: returned reloaded");
	cr_assert_eq(atomic_load(&p->chunks_made), 1u, "10 out: chunk 0 alone");
	cr_assert_eq(credit_split_take(p, 40, &b), 30u, "the 30 back");
	cr_assert_eq(atomic_load(&p->chunks_made), 2u, "40 out: chunk 1");
	split_fini(&f, p);
}

/* ring21 step 2's exact AGAIN across both paths, checked before the split
 * makes them two ways to the credits: k tasks from the PE's thread (the
 * owner's way) and max - k from another thread (a ring's), for every k;
 * then the next submit on either path is AGAIN, and after one free on the
 * PE's thread another thread's submit gets its credit before any turn. */
struct foreign_fill {
	struct api_fixture *f;
	uint64_t first;
	uint32_t n;           /* submits that must succeed */
	doca_error_t err;     /* the first of them that did not */
	doca_error_t next;    /* the submit after them */
};

static void *foreign_fill_main(void *arg)
{
	struct foreign_fill *s = arg;

	s->err = DOCA_SUCCESS;
	for (uint32_t i = 0; i < s->n && s->err == DOCA_SUCCESS; i++)
		s->err = submit_copy(s->f->ctx, s->f->src, s->f->dst, s->first + i, 0);
	s->next = submit_copy(s->f->ctx, s->f->src, s->f->dst, s->first + s->n, 0);
	return NULL;
}

static void foreign_fill(struct foreign_fill *s)
{
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, foreign_fill_main, s), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	assert_ok(s->err);
}

Test(task_pool, again_is_exact_with_k_owner_and_max_minus_k_foreign_tasks_for_every_k)
{
	enum { MAX = POOL_CHUNK + 3 }; /* over a chunk's end */
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, MAX);
	struct task_pool *p = &handle_deref(f.ctx)->run->pool;

	(void)doca_pe_progress(f.pe); /* this thread is the PE's */
	for (uint32_t k = 0; k <= MAX; k++) {
		struct foreign_fill a = { .f = &f, .first = 1000, .n = MAX - k };

		for (uint32_t i = 0; i < k; i++)
			assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
		foreign_fill(&a);
		cr_assert_eq(a.next, DOCA_ERROR_AGAIN, "k %u: the foreign submit after max_tasks: %s", k,
			     doca_error_get_name(a.next));
		cr_assert_eq(submit_copy(f.ctx, f.src, f.dst, k, 0), DOCA_ERROR_AGAIN,
			     "k %u: the owner's submit after max_tasks", k);
		cr_assert_eq(task_pool_free(p), 0, "k %u: the refusals took nothing", k);
		doca_event_free(wait_event(f.pe)); /* one credit back, on the PE's thread */
		struct foreign_fill b = { .f = &f, .first = 2000, .n = 1 };

		foreign_fill(&b); /* no turn since the free */
		cr_assert_eq(b.next, DOCA_ERROR_AGAIN, "k %u: the foreign submit after the one freed: %s", k,
			     doca_error_get_name(b.next));
		cr_assert_eq(submit_copy(f.ctx, f.src, f.dst, k, 0), DOCA_ERROR_AGAIN,
			     "k %u: the owner's submit after the one freed", k);
		reap(f.pe, MAX);
		cr_assert_eq(task_pool_free(p), MAX, "k %u: every credit back", k);
	}
	fixture_fini(&f);
}

/* The review of step 2, F1: a foreign submitter keeping one task out at
 * a time, 2 * max_tasks submits in all, leaves one chunk made (an idle
 * context costs one chunk, n outstanding about n slots): its take's
 * bound counts the credits out, not every credit taken since its view of
 * returned was loaded. On its thread's SP ring (its cached view, passed
 * on from thread to thread with the slot) and on the MP ring (a thread
 * with no SP ring: a view of nothing returned each submit). */
struct foreign_one {
	struct api_fixture *f;
	uint64_t tag;
	bool mp;          /* give up the slot's exclusivity first: the MP ring */
	doca_error_t err;
};

static void *foreign_one_main(void *arg)
{
	struct foreign_one *s = arg;

	if (s->mp) {
		(void)thread_slot_get();
		thread_slot_exclusive = false; /* the test hook: no SP ring for this thread */
	}
	s->err = submit_copy(s->f->ctx, s->f->src, s->f->dst, s->tag, 0);
	return NULL;
}

static void foreign_one_at_a_time(bool mp)
{
	enum { MAX = 1024 };
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, MAX);
	struct task_pool *p = &handle_deref(f.ctx)->run->pool;

	(void)doca_pe_progress(f.pe); /* this thread is the PE's: the submits are foreign */
	for (uint32_t i = 0; i < 2 * MAX; i++) {
		struct foreign_one a = { .f = &f, .tag = i, .mp = mp };
		pthread_t t;

		cr_assert_eq(pthread_create(&t, NULL, foreign_one_main, &a), 0);
		cr_assert_eq(pthread_join(t, NULL), 0);
		assert_ok(a.err);
		reap(f.pe, 1);
		cr_assert_eq(chunks_made(p), 1, "submit %u, one task out at a time: %u of %u chunks made", i,
			     chunks_made(p), p->nchunks);
	}
	cr_assert_eq(atomic_load(&p->mode), POOL_SHARED, "the submits took credits without the guard");
	bool mp_made = atomic_load(&handle_deref(f.ctx)->run->mp) != NULL;

	cr_assert_eq(mp_made, mp, "the way the test chose: %s", mp ? "the MP ring" : "the SP ring alone");
	fixture_fini(&f);
}

Test(task_pool, a_foreign_submitter_with_one_task_out_at_a_time_on_its_sp_ring_makes_one_chunk)
{
	foreign_one_at_a_time(false);
}

Test(task_pool, a_foreign_submitter_with_one_task_out_at_a_time_on_the_mp_ring_makes_one_chunk)
{
	foreign_one_at_a_time(true);
}

/* The second review of step 2, A: a foreign batch's partial take whose
 * look found 1 of 2 free, a return landing between that look and its
 * CAS (the probe): it asks again for the rest, and gets it, as 0 of 2
 * were out after the CAS; AGAIN only from a look that found none free. */
static void return_one_once(struct task_pool *p)
{
	credit_partial_probe = NULL; /* once */
	credit_split_return(p, 1);
}

Test(task_pool, a_foreign_partial_take_asks_again_for_the_rest_after_a_return_before_its_cas)
{
	struct api_fixture f;
	struct task_pool *p = split_pool(&f, 2);
	uint64_t seen = 0;
	doca_error_t why = DOCA_SUCCESS;

	atomic_store(&p->mode, POOL_SHARED); /* the CAS way, as a foreign submit's switch leaves it */
	cr_assert_eq(credit_split_take(p, 1, &seen), 1u, "1 of 2 out");
	credit_partial_probe = return_one_once;
	cr_assert_eq(task_pool_take_credits(p, 2, &seen, &why), 2u,
		     "both: the return before the partial take's CAS left one more free (%s)", doca_error_get_name(why));
	cr_assert_null(credit_partial_probe, "the probe ran: the first take was partial");
	cr_assert_eq(why, DOCA_SUCCESS);
	why = DOCA_SUCCESS;
	cr_assert_eq(task_pool_take_credits(p, 1, &seen, &why), 0u);
	cr_assert_eq(why, DOCA_ERROR_AGAIN, "2 of 2 out: AGAIN, exact");
	split_fini(&f, p);
}

/* The second review of step 2, E: a look whose cached view said short
 * reloads returned (its probe: another taker takes one and returns it,
 * so the r it loads is ahead of its t), then reloads taken (its probe:
 * the other takes two and returns one, so 1 of 2 is out). Its r was
 * read before that t, and t - r counts the one returned since: it must
 * load returned again, find one free and take it, not answer AGAIN. */
static uint64_t other_seen;

static void other_takes_one_and_returns_it(struct task_pool *p)
{
	credit_look_returned_probe = NULL; /* once */
	cr_assert_eq(credit_split_take(p, 1, &other_seen), 1u);
	credit_split_return(p, 1);
}

static void other_takes_two_and_returns_one(struct task_pool *p)
{
	credit_look_taken_probe = NULL; /* once */
	cr_assert_eq(credit_split_take(p, 2, &other_seen), 2u);
	credit_split_return(p, 1);
}

Test(task_pool, a_look_that_reloads_taken_after_returned_loads_returned_again_before_it_answers_again)
{
	struct api_fixture f;
	struct task_pool *p = split_pool(&f, 2);
	uint64_t seen = 0; /* stale: 2 back since */
	doca_error_t why = DOCA_SUCCESS;

	atomic_store(&p->mode, POOL_SHARED); /* the CAS way, as a foreign submit's switch leaves it */
	other_seen = 0;
	cr_assert_eq(credit_split_take(p, 2, &other_seen), 2u);
	credit_split_return(p, 2);
	credit_look_returned_probe = other_takes_one_and_returns_it;
	credit_look_taken_probe = other_takes_two_and_returns_one;
	cr_assert_eq(task_pool_take_credits(p, 1, &seen, &why), 1u,
		     "1 of 2 out at the look's last load of taken (%s)", doca_error_get_name(why));
	cr_assert_null(credit_look_returned_probe, "the probe ran: the view said short");
	cr_assert_null(credit_look_taken_probe, "the probe ran: returned was ahead of the first t");
	cr_assert_eq(why, DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&p->taken), 6u, "2 + 1 + 2 by the other, 1 by the look");
	cr_assert_eq(task_pool_out(p), 2u, "the other's one and the look's");
	why = DOCA_SUCCESS;
	cr_assert_eq(task_pool_take_credits(p, 1, &seen, &why), 0u);
	cr_assert_eq(why, DOCA_ERROR_AGAIN, "2 of 2 out: AGAIN, exact");
	split_fini(&f, p);
}
