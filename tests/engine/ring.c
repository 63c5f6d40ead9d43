/*
 * tests/engine/ring.c — the foreign submitter's rings (engine/ring.c,
 * ring21 step 1): the PE's feed on rings written by hand (no threads),
 * then the submit path from a joined thread of a started context.
 *
 * Not here: the MP ring's SKIP (its credit given back by the PE). Step 1
 * pins before the entry, so no entry is ever refused after it is written
 * and SKIP does not exist yet: it comes with step 3's DEAD look.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "actors/thread_slot.h"
#include "engine/engine.h"
#include "engine/ring.h"
#include "engine/task_pool.h"
#include "tests/api/common.h"

#define LEN 64u

/* A run with only what the feed reads: its pool (the slots the feed
 * pops; a context with nothing but its epoch for the slots' making) and
 * its rings. The run the tasks below take their credits from. */
static struct ctx_run *the_run;

static struct ctx_run *fake_run(uint32_t size)
{
	struct ctx_run *run = doca_zalloc(sizeof(*run));

	cr_assert_not_null(run);
	run->ctx = doca_zalloc(sizeof(*run->ctx));
	cr_assert_not_null(run->ctx);
	cr_assert_eq(task_pool_init(&run->pool, run, size), DOCA_SUCCESS);
	the_run = run;
	return run;
}

static void fake_run_free(struct ctx_run *run)
{
	ring_free_all(run);
	task_pool_fini(&run->pool);
	doca_free(run->ctx);
	doca_free(run);
	the_run = NULL;
}

/* Make and publish run's ring @p which (ring_publish's). */
static struct task_ring *fake_ring(struct ctx_run *run, uint32_t which)
{
	struct task_ring *r = ring_alloc(ring_cap(run->pool.size, which < RING_SP));

	cr_assert_not_null(r);
	cr_assert(ring_publish(run, which, r));
	return r;
}

/* Source buffers that only their addresses matter for. */
static _Alignas(64) char bufs_store[2][64];
#define SRC ((struct doca_buf *)bufs_store[0])
#define DST ((struct doca_buf *)bufs_store[1])

/* Write position @p pos of @p r as task @p user_data, with its credit
 * (a producer's: the feed pops its slot). */
static void put_task(struct task_ring *r, uint64_t pos, uint64_t user_data)
{
	uint64_t seen = 0;

	cr_assert_eq(credit_split_take(&the_run->pool, 1, &seen), 1u, "a credit for task %llu",
		     (unsigned long long)user_data);
	ring_put(r, pos, SRC, DST, LEN, false, user_data, false);
}

/* put_task of task @p pos. */
static void put(struct task_ring *r, uint64_t pos)
{
	put_task(r, pos, pos);
}

/* The fed slots out[0 .. n - 1] back to the pool, FREE again, with their
 * credits (as the PE's frees). */
static void give_back(struct doca_event **out, uint32_t n)
{
	struct pool_chain c = { 0 };

	for (uint32_t i = 0; i < n; i++) {
		atomic_store(&out[i]->gs, 0);
		pool_chain_add(&c, out[i]);
	}
	task_pool_put(&the_run->pool, &c);
}

/* Feed run; assert it took exactly the tasks first .. first + n - 1, in
 * that order, and *left as @p left. */
static void feed_expect(struct ctx_run *run, uint64_t first, uint32_t n, bool left)
{
	struct doca_event *out[16];
	bool was_left = !left;
	uint32_t got = ring_feed(run, out, 16, &was_left);

	cr_assert_eq(got, n, "the feed took %u, not %u", got, n);
	cr_assert_eq(was_left, left, "left %d", was_left);
	for (uint32_t i = 0; i < n; i++) {
		cr_assert_eq(out[i]->user_data.u64, first + i, "task %u: %llu", i,
			     (unsigned long long)out[i]->user_data.u64);
		cr_assert_eq(out[i]->src, SRC);
		cr_assert_eq(out[i]->dst, DST);
		cr_assert_eq(out[i]->len, LEN);
		cr_assert_eq(out[i]->error, DOCA_SUCCESS);
		cr_assert_eq(out[i]->pins, EV_PINS_SHARED);
	}
	give_back(out, n);
}

Test(ring, the_lap_bit_tells_a_fresh_entry_from_the_last_laps_over_three_laps)
{
	struct ctx_run *run = fake_run(4);
	struct task_ring *r = fake_ring(run, 0);

	cr_assert_eq(r->mask, 3u, "cap 4 for 4 credits");
	cr_assert_eq(atomic_load(&run->sp_mask), 1u);
	for (uint64_t lap = 0; lap < 3; lap++) {
		/* half a lap: the other half still holds the last lap's heads */
		put(r, lap * 4);
		put(r, lap * 4 + 1);
		feed_expect(run, lap * 4, 2, false);
		cr_assert_eq(atomic_load(&r->cons), lap * 4 + 2);
		put(r, lap * 4 + 2);
		put(r, lap * 4 + 3);
		feed_expect(run, lap * 4 + 2, 2, false);
		cr_assert_eq(atomic_load(&r->cons), lap * 4 + 4);
		for (uint32_t i = 0; i < 4; i++)
			cr_assert_eq(atomic_load(&r->e[i].head) & RING_LAP, lap & 1u, "lap %llu index %u",
				     (unsigned long long)lap, i);
		/* every index READY with this lap's bit: none is the next lap's */
		feed_expect(run, 0, 0, false);
	}
	cr_assert_eq(atomic_load(&r->cons), 12u);
	fake_run_free(run);
}

/* Feeding SP rings starts at a ring one further a call: a ring that
 * fills every batch (here ring 0, written again after every feed, a
 * batch of 1) does not hold another's entry back for more than RING_SP
 * feeds (without the rotation: for ever). */
Test(ring, the_feed_rotates_its_first_sp_ring)
{
	struct ctx_run *run = fake_run(8);
	struct task_ring *a = fake_ring(run, 0), *b = fake_ring(run, 9);
	struct doca_event *out[1];
	bool left = false, seen_b = false;
	uint64_t pa = 0;

	put_task(a, pa++, 0);
	put_task(b, 0, 100);
	for (uint32_t feed = 0; feed < RING_SP && !seen_b; feed++) {
		cr_assert_eq(ring_feed(run, out, 1, &left), 1u);
		cr_assert(left, "an entry left: flags kept");
		seen_b = out[0]->user_data.u64 == 100u;
		give_back(out, 1);
		if (!seen_b) /* ring 0 has its next entry already */
			put_task(a, pa++, 0);
	}
	cr_assert(seen_b, "ring 9's entry waited more than %u feeds behind ring 0's", RING_SP);
	fake_run_free(run);
}

Test(ring, a_gap_stops_the_drain_and_an_mp_gap_keeps_the_flags)
{
	struct ctx_run *run = fake_run(4);
	struct task_ring *sp = fake_ring(run, 3), *mp = fake_ring(run, RING_SP);

	cr_assert_eq(mp->mask, 3u);
	/* SP: positions 0 and 2 written, 1 not (its producer writes in
	 * order, so this is a written entry after a stale one) */
	put(sp, 0);
	put(sp, 2);
	feed_expect(run, 0, 1, false); /* an SP gap needs no flag: its producer announces */
	cr_assert_eq(atomic_load(&sp->cons), 1u);
	put(sp, 1);
	feed_expect(run, 1, 2, false);
	cr_assert_eq(atomic_load(&sp->cons), 3u);

	/* MP: three positions claimed, the middle one not written yet */
	cr_assert_eq(atomic_fetch_add(&mp->prod, 3), 0u);
	put(mp, 0);
	put(mp, 2);
	feed_expect(run, 0, 1, true); /* claimed and not READY: looked at again */
	cr_assert_eq(atomic_load(&mp->cons), 1u);
	cr_assert(ring_any(run));
	put(mp, 1);
	feed_expect(run, 1, 2, false);
	cr_assert_eq(atomic_load(&mp->cons), 3u);
	cr_assert_not(ring_any(run));
	fake_run_free(run);
}

Test(ring, mp_items_wait_for_every_ready_sp_entry_and_a_limit_keeps_the_flags)
{
	struct ctx_run *run = fake_run(8);
	struct task_ring *sp = fake_ring(run, 0), *mp = fake_ring(run, RING_SP);
	struct doca_event *out[16];
	bool left = false;

	put(sp, 0);
	put(sp, 1);
	atomic_store(&mp->prod, 1);
	put(mp, 0);
	/* room for two: both SP entries, and the MP item waits (the look
	 * after its acquire could not finish) */
	cr_assert_eq(ring_feed(run, out, 2, &left), 2u);
	cr_assert(left, "the MP item was left: flags kept");
	cr_assert_eq(out[0]->user_data.u64, 0u);
	cr_assert_eq(out[1]->user_data.u64, 1u);
	cr_assert_eq(atomic_load(&mp->cons), 0u);
	/* room for one, an SP entry written meanwhile: it goes first, the
	 * MP item waits again */
	put(sp, 2);
	cr_assert_eq(ring_feed(run, out, 1, &left), 1u);
	cr_assert(left);
	cr_assert_eq(out[0]->user_data.u64, 2u);
	cr_assert_eq(atomic_load(&mp->cons), 0u);
	/* the SP rings drained: the MP item */
	cr_assert_eq(ring_feed(run, out, 1, &left), 1u);
	cr_assert_not(left);
	cr_assert_eq(out[0]->user_data.u64, 0u);
	cr_assert_eq(atomic_load(&mp->cons), 1u);
	fake_run_free(run);
}

/* ring_feed's probe for the test below: a producer runs between the
 * feed's first look at the SP rings and its look at the MP ring, writing
 * its task 0 into its SP ring, then (its SP ring full, say) its task 1
 * into the MP ring. */
static struct task_ring *probe_sp, *probe_mp;

static void write_sp_then_mp(struct ctx_run *run)
{
	(void)run;
	ring_feed_probe = NULL; /* once */
	atomic_store(&probe_sp->prod, 1);
	put_task(probe_sp, 0, 0);
	atomic_store(&probe_mp->prod, 1);
	put_task(probe_mp, 0, 1);
}

/* Rule 1.6.6's second look: the MP item is taken only after a look at
 * the SP rings made after its acquire, which finds the same thread's
 * earlier SP entry written after the feed's first look (the review of
 * step 1, F3: the test above writes its SP entries before the feed). */
Test(ring, an_sp_entry_written_between_the_feeds_looks_goes_before_the_later_mp_item)
{
	struct ctx_run *run = fake_run(8);
	struct doca_event *out[16];
	bool left = true;

	probe_sp = fake_ring(run, 5);
	probe_mp = fake_ring(run, RING_SP);
	ring_feed_probe = write_sp_then_mp;
	uint32_t n = ring_feed(run, out, 16, &left);

	ring_feed_probe = NULL;
	cr_assert_eq(n, 2u, "the feed took %u", n);
	cr_assert_not(left);
	cr_assert_eq(out[0]->user_data.u64, 0u, "the SP task first");
	cr_assert_eq(out[1]->user_data.u64, 1u);
	cr_assert_eq(atomic_load(&probe_sp->cons), 1u);
	cr_assert_eq(atomic_load(&probe_mp->cons), 1u);
	fake_run_free(run);
}

/* The submit path: a started context on sw0 (inline: only the PE's turns
 * run its tasks), this thread its PE's; tasks from another thread. */
struct foreign {
	struct api_fixture *f;
	pthread_barrier_t *phase; /* NULL: one phase */
	uint64_t first;           /* user data of the first task */
	uint32_t n, burst;        /* single submits, then one burst of `burst` */
	doca_error_t err, burst_err;
	uint32_t accepted;
	int slot;
	bool exclusive;
};

static void foreign_submits(struct foreign *s)
{
	s->err = DOCA_SUCCESS;
	for (uint32_t i = 0; i < s->n && s->err == DOCA_SUCCESS; i++)
		s->err = submit_copy(s->f->ctx, s->f->src, s->f->dst, s->first + i, 0);
	if (s->burst != 0) {
		struct doca_task_desc d[16];

		cr_assert_leq(s->burst, 16u);
		for (uint32_t i = 0; i < s->burst; i++)
			d[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = s->f->src, .dst = s->f->dst,
							.user_data.u64 = s->first + s->n + i };
		s->burst_err = doca_task_submit_batch(s->f->ctx, d, s->burst, &s->accepted);
	}
	s->slot = (int)thread_slot_get();
	s->exclusive = thread_slot_exclusive;
}

static void *foreign_main(void *arg)
{
	struct foreign *s = arg;

	foreign_submits(s);
	if (s->phase != NULL) {
		pthread_barrier_wait(s->phase); /* phase 1 written */
		pthread_barrier_wait(s->phase); /* reaped: phase 2 (first and n set anew) */
		foreign_submits(s);
	}
	return NULL;
}

static void run_foreign(struct foreign *s)
{
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, foreign_main, s), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
}

/* Reap @p n events, asserting user data first .. first + n - 1 in order. */
static void reap_in_order(struct api_fixture *f, uint64_t first, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		expect_success_event(f->pe, first + i, f->len);
}

static struct ctx_run *run_of(struct api_fixture *f)
{
	return handle_deref(f->ctx)->run; /* started on this thread: no race */
}

Test(ring, a_slot_handed_over_to_a_new_thread_passes_its_sp_ring_on)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", LEN, 8);
	(void)doca_pe_progress(f.pe); /* this thread is the PE's */
	struct foreign a = { .f = &f, .first = 0, .n = 2 }, b = { .f = &f, .first = 2, .n = 1 };

	run_foreign(&a);
	cr_assert_eq(a.err, DOCA_SUCCESS);
	cr_assert(a.exclusive, "a thread with a claimed slot holds it exclusively");
	cr_assert_lt(a.slot, (int)RING_SP);
	struct ctx_run *run = run_of(&f);
	struct task_ring *r = atomic_load(&run->sp[a.slot]);

	cr_assert_not_null(r, "the first foreign submit made its SP ring");
	cr_assert_eq(atomic_load(&r->prod), 2u);
	cr_assert_null(atomic_load(&run->mp), "no MP ring was needed");
	/* a's slot was released at its exit (the lowest free one): b gets it */
	run_foreign(&b);
	cr_assert_eq(b.err, DOCA_SUCCESS);
	cr_assert_eq(b.slot, a.slot, "the new thread holds the released slot");
	cr_assert(b.exclusive);
	cr_assert_eq(atomic_load(&run->sp[a.slot]), r, "the same ring");
	cr_assert_eq(atomic_load(&r->prod), 3u, "b went on from a's prod");
	cr_assert_eq(atomic_load(&r->cons), 0u, "nothing taken before the PE's turn");
	reap_in_order(&f, 0, 3);
	cr_assert_eq(atomic_load(&r->cons), 3u);
	fixture_fini(&f);
}

Test(ring, a_full_sp_ring_sends_its_thread_to_mp_until_mp_drained_it_then_back_to_sp)
{
	struct api_fixture f;
	pthread_barrier_t phase;
	uint32_t saved = ring_sp_cap_max;

	ring_sp_cap_max = 2; /* the test hook: SP cap 2 below max_tasks 8 */
	fixture_init_started(&f, "sw0", LEN, 8);
	(void)doca_pe_progress(f.pe);
	cr_assert_eq(pthread_barrier_init(&phase, NULL, 2), 0);
	struct foreign s = { .f = &f, .phase = &phase, .first = 0, .n = 4 };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, foreign_main, &s), 0);
	pthread_barrier_wait(&phase); /* tasks 0-3 written, none taken */
	cr_assert_eq(s.err, DOCA_SUCCESS);
	struct ctx_run *run = run_of(&f);
	struct task_ring *sp = atomic_load(&run->sp[s.slot]), *mp = atomic_load(&run->mp);

	cr_assert_not_null(sp);
	cr_assert_not_null(mp);
	cr_assert_eq(sp->mask, 1u, "SP cap 2");
	cr_assert_eq(mp->mask, 7u, "MP cap 8");
	cr_assert_eq(atomic_load(&sp->prod), 2u, "tasks 0 and 1 in SP");
	cr_assert_eq(atomic_load(&mp->prod), 2u, "task 2 (SP full) and task 3 (sticky) in MP");
	cr_assert(sp->on_mp);
	cr_assert_eq(sp->mp_until, 1u);
	reap_in_order(&f, 0, 4);
	cr_assert_eq(atomic_load(&mp->cons), 2u);
	s.first = 4;
	s.n = 1;
	pthread_barrier_wait(&phase); /* task 4 */
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(s.err, DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&sp->prod), 3u, "MP drained past mp_until: back to SP");
	cr_assert_eq(atomic_load(&mp->prod), 2u);
	cr_assert_not(sp->on_mp);
	reap_in_order(&f, 4, 1);
	pthread_barrier_destroy(&phase);
	fixture_fini(&f);
	ring_sp_cap_max = saved;
}

Test(ring, a_partial_burst_writes_its_accepted_prefix_and_leaves_the_rest_empty)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", LEN, 6); /* SP cap 8 */
	(void)doca_pe_progress(f.pe);
	struct foreign s = { .f = &f, .first = 0, .n = 0, .burst = 8 };

	run_foreign(&s);
	cr_assert_eq(s.burst_err, DOCA_ERROR_AGAIN, "%s", doca_error_get_name(s.burst_err));
	cr_assert_eq(s.accepted, 6u);
	struct task_ring *r = atomic_load(&run_of(&f)->sp[s.slot]);

	cr_assert_eq(r->mask, 7u);
	cr_assert_eq(atomic_load(&r->prod), 6u, "prod covers the accepted prefix only");
	for (uint32_t i = 0; i < 6; i++)
		cr_assert_eq(atomic_load(&r->e[i].head) & (RING_STATE | RING_LAP), RING_READY, "entry %u", i);
	cr_assert_eq(atomic_load(&r->e[6].head), 0u, "a refused task's entry stays EMPTY");
	cr_assert_eq(atomic_load(&r->e[7].head), 0u);
	reap_in_order(&f, 0, 6);
	cr_assert_eq(atomic_load(&r->cons), 6u);
	fixture_fini(&f);
}

/* ring_alloc's probe for the test below: was a read-side section held? */
static atomic_uint allocs_in_a_section, allocs;

static void probe_section(void)
{
	atomic_fetch_add(&allocs, 1);
	if (rcu_read_ongoing())
		atomic_fetch_add(&allocs_in_a_section, 1);
}

struct wait_arg {
	struct api_fixture *f;
	doca_error_t err;
};

static void *wait_main(void *arg)
{
	struct wait_arg *a = arg;
	struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = a->f->src, .dst = a->f->dst, .user_data.u64 = 7 };

	a->err = doca_task_submit_wait(a->f->ctx, &d, 5000);
	return NULL;
}

/* A foreign thread's first submit is doca_task_submit_wait while the PE
 * sleeps armed: its first try goes under the guard (the sleeping PE's
 * direct post: no ring) and finds the pool empty; it retries inside
 * submit_wait's own read-side section once the PE is no longer armed,
 * and its ring must be made then: outside that section (the review of
 * step 1, F1: it was made inside it). */
Test(ring, a_submit_wait_makes_its_ring_outside_every_read_side_section)
{
	struct api_fixture f;
	pthread_t t;

	fixture_init_started(&f, "sw0", LEN, 1);
	cr_assert_eq(submit_copy(f.ctx, f.src, f.dst, 1, 0), DOCA_SUCCESS);
	struct doca_event *held = wait_event(f.pe); /* the one credit, held by the application */

	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	ring_alloc_probe = probe_section;
	struct wait_arg a = { &f, DOCA_ERROR_UNKNOWN };

	cr_assert_eq(pthread_create(&t, NULL, wait_main, &a), 0);
	usleep(200000); /* it tried under the guard (armed PE), got AGAIN, sleeps */
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_SUCCESS);
	(void)doca_pe_progress(f.pe);
	doca_event_free(held); /* its credit back: it retries, the PE not armed */
	cr_assert_eq(pthread_join(t, NULL), 0);
	ring_alloc_probe = NULL;
	cr_assert_eq(a.err, DOCA_SUCCESS, "%s", doca_error_get_name(a.err));
	expect_success_event(f.pe, 7, f.len);
	cr_assert_eq(atomic_load(&allocs), 1u, "the waiter made its ring");
	cr_assert_eq(atomic_load(&allocs_in_a_section), 0u, "the ring was allocated inside a read-side section");
	fixture_fini(&f);
}

/* ring_alloc's probe for the test below: the context stopped and
 * destroyed (with its buffers, memories and device) while the foreign
 * submit makes its ring, outside its section. */
static struct api_fixture *doomed;

static void probe_destroy(void)
{
	struct api_fixture *f = doomed;

	stop_and_drain(f->ctx, f->pe);
	cr_assert_eq(doca_buf_destroy(f->src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(f->dst), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_destroy(f->src_mem), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_destroy(f->dst_mem), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(f->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(f->ctx), DOCA_SUCCESS);
}

static void *submit_main(void *arg)
{
	struct wait_arg *a = arg;

	a->err = submit_copy(a->f->ctx, a->f->src, a->f->dst, 1, 0);
	return NULL;
}

/* A submit whose context handle was current when the call began gets
 * BAD_STATE, not a stale handle's refusal, when the context is stopped
 * and destroyed while it makes its ring outside its section (the one
 * section it had before step 1 made this BAD_STATE; submit_wait answers
 * the same). */
Test(ring, a_context_destroyed_while_the_submit_makes_its_ring_is_bad_state_not_a_stale_handle)
{
	struct api_fixture f;
	pthread_t t;

	fixture_init_started(&f, "sw0", LEN, 4);
	(void)doca_pe_progress(f.pe); /* this thread is the PE's: the submitter is foreign */
	doomed = &f;
	ring_alloc_probe = probe_destroy;
	uint64_t stale = doca_stale_handle_count();
	struct wait_arg a = { &f, DOCA_ERROR_UNKNOWN };

	cr_assert_eq(pthread_create(&t, NULL, submit_main, &a), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	ring_alloc_probe = NULL;
	cr_assert_eq(a.err, DOCA_ERROR_BAD_STATE, "%s", doca_error_get_name(a.err));
	cr_assert_eq(doca_stale_handle_count(), stale, "counted as a stale handle");
	cr_assert_eq(doca_pe_destroy(f.pe), DOCA_SUCCESS);
}

/* A burst longer than its thread's SP ring stays on SP when the ring is
 * roomy (cap >= max_tasks: credits alone keep it from filling): max_tasks
 * 6, SP cap 8, a burst of 9 (the review of step 1, F5: it went to MP,
 * sticky, because the room was checked for the whole chunk). */
Test(ring, a_burst_longer_than_a_roomy_sp_ring_stays_on_sp)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", LEN, 6); /* SP cap 8 */
	(void)doca_pe_progress(f.pe);
	struct foreign s = { .f = &f, .first = 0, .n = 0, .burst = 9 };

	run_foreign(&s);
	cr_assert_eq(s.burst_err, DOCA_ERROR_AGAIN, "%s", doca_error_get_name(s.burst_err));
	cr_assert_eq(s.accepted, 6u);
	struct ctx_run *run = run_of(&f);
	struct task_ring *sp = atomic_load(&run->sp[s.slot]);

	cr_assert_not_null(sp);
	cr_assert(sp->roomy);
	cr_assert_eq(atomic_load(&sp->prod), 6u, "the six with a credit in SP");
	cr_assert_null(atomic_load(&run->mp), "no MP ring needed");
	cr_assert_not(sp->on_mp);
	reap_in_order(&f, 0, 6);
	fixture_fini(&f);
}

struct burst_arg {
	struct api_fixture *f;
	const struct doca_task_desc *d;
	uint32_t n, accepted;
	doca_error_t err;
};

static void *burst_main(void *arg)
{
	struct burst_arg *b = arg;

	b->err = doca_task_submit_batch(b->f->ctx, b->d, b->n, &b->accepted);
	return NULL;
}

/* One foreign burst of 100 into its SP ring (cap 128): the PE's feed
 * takes a batch (64) a call, so the entries left after the first wait
 * for the flags it kept (ring_take_sp's *more; the review of step 1,
 * F2: nothing tested it). */
Test(ring, a_burst_beyond_one_feed_batch_is_all_taken)
{
	struct api_fixture f;
	struct doca_task_desc d[100];
	pthread_t t;

	fixture_init_started(&f, "sw0", LEN, 128);
	(void)doca_pe_progress(f.pe);
	for (uint32_t i = 0; i < 100; i++)
		d[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = f.src, .dst = f.dst, .user_data.u64 = i };
	struct burst_arg b = { &f, d, 100, 0, DOCA_ERROR_UNKNOWN };

	cr_assert_eq(pthread_create(&t, NULL, burst_main, &b), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(b.err, DOCA_SUCCESS, "%s", doca_error_get_name(b.err));
	cr_assert_eq(b.accepted, 100u);
	reap_in_order(&f, 0, 100);
	fixture_fini(&f);
}

/* The watch's rules (ring21 step 4, engine/ring.c I6) on a fake run: a
 * visit's feed that took from a ring sets its bit unless the PE is
 * armed; feeds outside a visit count for nothing; a turn's look reports
 * the watched rings with a READY head and clears a bit after WATCH_IDLE
 * empty looks, naming it for the relook, which reports it (its shard
 * flagged) only if its head at cons is READY; arming's clear names every
 * bit for the relook; a stopping visit's clear names none. */
Test(ring, a_visit_watches_what_it_took_unless_armed_and_a_look_unwatches_after_watch_idle_empty_ones)
{
	struct ctx_run *run = fake_run(8);
	struct task_ring *a = fake_ring(run, 0), *b = fake_ring(run, 5);

	put(a, 0);
	run->watch_took = 0;
	feed_expect(run, 0, 1, false);
	cr_assert_eq(run->watch_took, 1u, "the feed's ring not recorded");
	cr_assert_eq(ring_watch_visit(run, true), 0u);
	cr_assert_eq(atomic_load(&run->ring_watch), 0u, "a bit set while armed");
	cr_assert_eq(run->watch_took, 0u, "the visit's record not reset");
	put(a, 1);
	feed_expect(run, 1, 1, false);
	cr_assert_eq(ring_watch_visit(run, false), 1u);
	cr_assert_eq(atomic_load(&run->ring_watch), 1u, "the ring the visit took from not watched");
	/* ring 5 gives an entry too: both watched; then empty looks */
	put_task(b, 0, 7);
	feed_expect(run, 7, 1, false);
	cr_assert_eq(ring_watch_visit(run, false), 1u | 1u << 5);
	cr_assert_eq(ring_watch_visit(run, false), 1u | 1u << 5, "a visit that took nothing changed the watch");
	/* a READY head is reported and restarts its ring's count */
	put(a, 2);
	cr_assert_eq(ring_watch_look(run), 1u, "the look missed a READY head");
	feed_expect(run, 2, 1, false);
	cr_assert_eq(ring_watch_visit(run, false), 1u | 1u << 5);
	for (uint32_t i = 2; i < WATCH_IDLE; i++) {
		cr_assert_eq(ring_watch_look(run), 0u);
		cr_assert_eq(atomic_load(&run->ring_watch), 1u | 1u << 5, "empty look %u unwatched", i);
	}
	cr_assert_eq(run->watch_gone, 0u);
	/* ring 5's count began a look before ring 0's restarted: it goes
	 * first, ring 0 a look later */
	cr_assert_eq(ring_watch_look(run), 0u);
	cr_assert_eq(run->watch_gone, 1u << 5, "ring 5 not unwatched after %u empty looks", WATCH_IDLE);
	cr_assert_eq(atomic_load(&run->ring_watch), 1u, "ring 0 unwatched a look early");
	/* the relook: ring 5 empty, nothing reported, no flag */
	(void)mailbox_take_flags(&run->mbox);
	cr_assert_eq(ring_watch_relook(run), 0u);
	cr_assert_eq(run->watch_gone, 0u, "the relook left its rings named");
	cr_assert(mailbox_idle(&run->mbox), "an empty relook flagged a shard");
	cr_assert_eq(ring_watch_look(run), 0u);
	cr_assert_eq(atomic_load(&run->ring_watch), 0u);
	/* ring 0's producer saw its bit still set and wrote: the relook
	 * reports it and flags its shard, as its announce would have */
	put(a, 3);
	cr_assert_eq(ring_watch_relook(run), 1u, "the relook missed a READY entry");
	cr_assert_eq(atomic_load(&run->ring_watch), 0u, "the relook watched again");
	cr_assert_eq(mailbox_take_flags(&run->mbox), 1u, "the READY ring's shard not flagged");
	feed_expect(run, 3, 1, false);
	cr_assert_eq(ring_watch_visit(run, false), 1u, "the signalled visit's feed did not watch the ring");
	/* arming: every bit cleared and named for the relook */
	put(a, 4);
	cr_assert_eq(ring_watch_clear(run, true), 1u);
	cr_assert_eq(atomic_load(&run->ring_watch), 0u);
	cr_assert_eq(ring_watch_clear(run, true), 0u);
	cr_assert_eq(ring_watch_relook(run), 1u, "the arming's relook missed a READY entry");
	cr_assert_eq(mailbox_take_flags(&run->mbox), 1u);
	feed_expect(run, 4, 1, false);
	/* a stopping visit's clear names nothing */
	put(a, 5);
	feed_expect(run, 5, 1, false);
	cr_assert_eq(ring_watch_visit(run, false), 1u);
	cr_assert_eq(ring_watch_clear(run, false), 1u);
	cr_assert_eq(run->watch_gone, 0u);
	fake_run_free(run);
}

/* The feed indexes a ring with cmask, the copy on its consumer line
 * (prof58: off the producer's line, which every submit writes): made
 * equal to mask by ring_alloc for every capacity (the lap test above
 * feeds across the wrap with it). */
Test(ring, the_consumers_mask_copy_is_the_rings_mask_at_every_capacity)
{
	for (uint32_t cap = 1; cap <= RING_SP_CAP_MAX; cap <<= 1) {
		struct task_ring *r = ring_alloc(cap);

		cr_assert_not_null(r);
		cr_assert_eq(r->cmask, cap - 1u, "cap %u", cap);
		cr_assert_eq(r->mask, cap - 1u, "cap %u", cap);
		doca_free(r);
	}
}
