/* tests/engine/mailbox.c — the sharded mailbox and thread slots. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "actors/mailbox.h"
#include "actors/thread_slot.h"

static struct mailbox mb;

/* A test item: a value and the node the mailbox links. */
struct item {
	int value;
	struct mailbox_node node;
};

static void setup(void)
{
	mailbox_init(&mb);
}

TestSuite(mailbox, .init = setup);

static int value_of(struct mailbox_node *n)
{
	return ((struct item *)((char *)n - offsetof(struct item, node)))->value;
}

static struct mailbox_shard *my_shard(void)
{
	return &mb.shards[thread_slot_get() % MAILBOX_SHARDS];
}

Test(mailbox, a_drain_takes_only_announced_shards)
{
	struct item items[3] = { { .value = 0 }, { .value = 1 }, { .value = 2 } };
	struct mailbox_node *out[4];

	mailbox_push_mpsc(&mb, &items[0].node);
	mailbox_push_mpsc(&mb, &items[1].node);
	cr_assert(mailbox_nonempty(&mb), "pushed items are in the shard");
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 0, "not announced yet: not visited");
	mailbox_announce(&mb);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 2);
	cr_assert_eq(out[0], &items[0].node);
	cr_assert_eq(out[1], &items[1].node);
	cr_assert_eq(mb.summary, 0, "the drain cleared the flag");
	mailbox_push_mpsc(&mb, &items[2].node);
	mailbox_announce(&mb);
	cr_assert_eq(mb.summary, 1u << (thread_slot_get() % MAILBOX_SHARDS));
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 1);
	cr_assert_eq(out[0], &items[2].node);
	cr_assert(mailbox_idle(&mb));
	cr_assert_not(mailbox_nonempty(&mb));
}

Test(mailbox, push_announce_flags_the_callers_shard_behind_earlier_pushes)
{
	struct item items[3] = { { .value = 0 }, { .value = 1 }, { .value = 2 } };
	struct mailbox_node *out[4];

	mailbox_push_mpsc(&mb, &items[0].node);
	mailbox_push_mpsc(&mb, &items[1].node);
	cr_assert_eq(mb.summary, 0, "plain pushes flag nothing");
	mailbox_push_announce_mpsc(&mb, &items[2].node);
	cr_assert_eq(mb.summary, 1u << (thread_slot_get() % MAILBOX_SHARDS), "the caller's shard, flagged");
	cr_assert_eq(atomic_load(&my_shard()->tail), &items[2].node, "pushed into the caller's shard");
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 3);
	cr_assert_eq(out[0], &items[0].node);
	cr_assert_eq(out[1], &items[1].node);
	cr_assert_eq(out[2], &items[2].node);
	cr_assert_eq(mb.summary, 0, "the drain cleared the flag");
	cr_assert(mailbox_idle(&mb));
	cr_assert_not(mailbox_nonempty(&mb));
}

Test(mailbox, a_shard_left_non_empty_by_a_limit_is_visited_again_without_an_announce)
{
	struct item items[5];
	struct mailbox_node *out[8];

	for (int i = 0; i < 5; i++) {
		items[i].value = i;
		mailbox_push_mpsc(&mb, &items[i].node);
	}
	mailbox_announce(&mb);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 2), 2, "per-shard limit");
	cr_assert_not(mailbox_idle(&mb), "left over");
	cr_assert_eq(mailbox_drain_sc(&mb, out, 1, 8), 1, "overall limit");
	cr_assert_eq(value_of(out[0]), 2);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 2);
	cr_assert_eq(value_of(out[0]), 3);
	cr_assert_eq(value_of(out[1]), 4);
	cr_assert_eq(mb.leftover, 0, "the shard was seen empty");
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 0);
}

Test(mailbox, drains_in_fifo_order_and_empties)
{
	struct item items[5];
	struct mailbox_node *out[8];

	for (int i = 0; i < 5; i++) {
		items[i].value = i;
		mailbox_push_mpsc(&mb, &items[i].node);
	}
	mailbox_announce(&mb);
	cr_assert(mailbox_nonempty(&mb));
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 5);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(out[i], &items[i].node);
	cr_assert_not(mailbox_nonempty(&mb));
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 0);
}

/* Far more items than any shard of the old ring design held, in a mailbox
 * that stays MAILBOX_BYTES; a drained node can be pushed again at once. */
Test(mailbox, one_shard_takes_any_number_of_items_in_fixed_memory)
{
	enum { N = 100000 };
	struct item *items = calloc(N, sizeof(*items));
	struct mailbox_node *out[64];
	int next = 0;

	cr_assert_not_null(items);
	cr_log_info("mailbox: %zu bytes (MAILBOX_BYTES %zu), %d items queued in one shard",
		    sizeof(mb), (size_t)MAILBOX_BYTES, N);
	cr_assert_eq(sizeof(mb), 1280, "16 producer lines, the summary line, 3 consumer lines");
	for (int i = 0; i < N; i++) {
		items[i].value = i;
		mailbox_push_mpsc(&mb, &items[i].node);
	}
	mailbox_announce(&mb);
	for (uint32_t n; (n = mailbox_drain_sc(&mb, out, 64, 64)) != 0;)
		for (uint32_t k = 0; k < n; k++)
			cr_assert_eq(value_of(out[k]), next++, "FIFO");
	cr_assert_eq(next, N);
	cr_assert(mailbox_idle(&mb));
	/* reuse: the same node again, right after it was drained */
	mailbox_push_mpsc(&mb, &items[0].node);
	mailbox_announce(&mb);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 64, 64), 1);
	cr_assert_eq(out[0], &items[0].node);
	free(items);
}

/*
 * A producer stopped between the exchange and the link of its push (here
 * done by hand, as a preempted thread would leave it): the item before it
 * and every item after it in the shard wait, announced or not, without an
 * error and without anybody waiting; the mailbox is neither idle nor empty
 * meanwhile, and once the link is stored one drain takes everything in
 * order.
 */
Test(mailbox, a_push_stopped_before_its_link_delays_its_neighbours_and_loses_nothing)
{
	struct item before = { .value = 1 }, stopped = { .value = 2 }, after = { .value = 3 };
	struct mailbox_node *out[4];
	struct mailbox_shard *s = my_shard();

	mailbox_push_mpsc(&mb, &before.node);
	/* the first step of a push: exchange the tail, not yet linked */
	atomic_store(&stopped.node.next, NULL);
	struct mailbox_node *prev = atomic_exchange(&s->tail, &stopped.node);

	cr_assert_eq(prev, &before.node);
	mailbox_push_mpsc(&mb, &after.node);
	mailbox_announce(&mb);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 0, "nothing is reachable past the gap");
	cr_assert_not(mailbox_idle(&mb), "the shard is left over, not forgotten");
	cr_assert(mailbox_nonempty(&mb));
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 0, "looked at again without an announce");
	/* the stopped producer resumes: the second step */
	atomic_store(&prev->next, &stopped.node);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 3);
	cr_assert_eq(value_of(out[0]), 1);
	cr_assert_eq(value_of(out[1]), 2);
	cr_assert_eq(value_of(out[2]), 3);
	cr_assert(mailbox_idle(&mb));
	cr_assert_not(mailbox_nonempty(&mb));
}

struct pusher {
	int base;
	struct item items[4];
	unsigned slot;
	pthread_barrier_t *pushed; /* main, A and B: both pushed, both alive */
	pthread_barrier_t *drained;
};

static void *push_four(void *arg)
{
	struct pusher *p = arg;

	p->slot = thread_slot_get();
	for (int i = 0; i < 4; i++) {
		p->items[i].value = p->base + i;
		mailbox_push_mpsc(&mb, &p->items[i].node);
	}
	mailbox_announce(&mb);
	pthread_barrier_wait(p->pushed);
	pthread_barrier_wait(p->drained); /* keep the slot until main has looked */
	return NULL;
}

Test(mailbox, a_bounded_batch_per_shard_interleaves_producers)
{
	pthread_barrier_t pushed, drained;
	struct pusher a = { .base = 100, .pushed = &pushed, .drained = &drained };
	struct pusher b = { .base = 200, .pushed = &pushed, .drained = &drained };
	pthread_t ta, tb;
	struct mailbox_node *out[8];

	pthread_barrier_init(&pushed, NULL, 3);
	pthread_barrier_init(&drained, NULL, 3);
	pthread_create(&ta, NULL, push_four, &a);
	pthread_create(&tb, NULL, push_four, &b);
	pthread_barrier_wait(&pushed);
	/* two live threads hold distinct slots, and this process has fewer
	 * than MAILBOX_SHARDS, so they are on two shards */
	cr_assert_neq(a.slot % MAILBOX_SHARDS, b.slot % MAILBOX_SHARDS, "slots %u and %u", a.slot, b.slot);
	uint32_t n = mailbox_drain_sc(&mb, out, 8, 2);

	cr_assert_eq(n, 4, "two from each of the two shards");
	int from_a = 0, from_b = 0;

	for (uint32_t i = 0; i < n; i++) {
		int v = value_of(out[i]);

		from_a += v >= 100 && v < 200;
		from_b += v >= 200;
	}
	cr_assert_eq(from_a, 2);
	cr_assert_eq(from_b, 2);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 4);
	pthread_barrier_wait(&drained);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_barrier_destroy(&pushed);
	pthread_barrier_destroy(&drained);
}

/* ---- more live producers than shards ---- */

enum { PRODUCERS = 40, PER_PRODUCER = 2000 };

struct sharer {
	pthread_barrier_t *all_alive;
	int id;
	unsigned slot;
	struct item items[PER_PRODUCER];
};

static void *push_many(void *arg)
{
	struct sharer *p = arg;

	p->slot = thread_slot_get();
	pthread_barrier_wait(p->all_alive); /* every producer holds its slot */
	for (int i = 0; i < PER_PRODUCER; i++) {
		p->items[i].value = p->id * PER_PRODUCER + i;
		mailbox_push_mpsc(&mb, &p->items[i].node);
		if (i % 16 == 15 || i == PER_PRODUCER - 1)
			mailbox_announce(&mb);
	}
	return NULL;
}

/* 40 threads alive at once share the 16 shards; the consumer drains while
 * they push: every item exactly once, each producer's in its order. */
Test(mailbox, producers_sharing_shards_lose_nothing_and_keep_their_order)
{
	struct sharer *p = calloc(PRODUCERS, sizeof(*p));
	pthread_t th[PRODUCERS];
	pthread_barrier_t all_alive;
	int next[PRODUCERS] = { 0 };
	unsigned per_shard[MAILBOX_SHARDS] = { 0 };
	struct mailbox_node *out[64];
	int got = 0;

	cr_assert_not_null(p);
	pthread_barrier_init(&all_alive, NULL, PRODUCERS);
	for (int t = 0; t < PRODUCERS; t++) {
		p[t].all_alive = &all_alive;
		p[t].id = t;
		cr_assert_eq(pthread_create(&th[t], NULL, push_many, &p[t]), 0);
	}
	time_t deadline = time(NULL) + 30; /* a lost item must fail the test, not hang it */

	while (got < PRODUCERS * PER_PRODUCER) {
		uint32_t n = mailbox_drain_sc(&mb, out, 64, 8);

		if (n == 0) {
			cr_assert_lt(time(NULL), deadline, "only %d of %d items arrived", got,
				     PRODUCERS * PER_PRODUCER);
			sched_yield();
		}
		for (uint32_t k = 0; k < n; k++) {
			int v = value_of(out[k]), t = v / PER_PRODUCER;

			cr_assert_eq(v % PER_PRODUCER, next[t], "producer %d: item %d after %d", t,
				     v % PER_PRODUCER, next[t] - 1);
			next[t]++;
			got++;
		}
	}
	for (int t = 0; t < PRODUCERS; t++) {
		pthread_join(th[t], NULL);
		per_shard[p[t].slot % MAILBOX_SHARDS]++;
	}
	unsigned most = 0;

	for (int t = 0; t < PRODUCERS; t++)
		for (int u = t + 1; u < PRODUCERS; u++)
			cr_assert_neq(p[t].slot, p[u].slot, "producers %d and %d were alive at once", t, u);
	for (unsigned i = 0; i < MAILBOX_SHARDS; i++)
		most = per_shard[i] > most ? per_shard[i] : most;
	/* 40 distinct slots on 16 shards: some shard had at least 3 */
	cr_assert_geq(most, (PRODUCERS + MAILBOX_SHARDS - 1) / MAILBOX_SHARDS);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 64, 64), 0);
	cr_assert_not(mailbox_nonempty(&mb));
	pthread_barrier_destroy(&all_alive);
	free(p);
}

static void *report_slot(void *arg)
{
	*(unsigned *)arg = thread_slot_get();
	return NULL;
}

Test(thread_slot, a_slot_is_released_when_its_thread_exits)
{
	unsigned mine = thread_slot_get(), first, second;
	pthread_t t;

	cr_assert_eq(thread_slot_get(), mine, "stable for the thread");
	pthread_create(&t, NULL, report_slot, &first);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, report_slot, &second);
	pthread_join(t, NULL);
	cr_assert_neq(first, mine);
	cr_assert_eq(second, first, "the exited thread's slot is reused");
}
