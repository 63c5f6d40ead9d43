/* tests/engine/mailbox.c — the sharded mailbox and thread slots. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>

#include "actors/mailbox.h"
#include "actors/thread_slot.h"
#include "engine/engine.h"

static struct mailbox mb;

static void setup(void)
{
	cr_assert(mailbox_init(&mb, 8, &doca_mailbox_allocator));
}

static void teardown(void)
{
	mailbox_fini(&mb);
}

TestSuite(mailbox, .init = setup, .fini = teardown);

Test(mailbox, a_drain_takes_only_announced_shards)
{
	int items[3];
	void *out[4];

	cr_assert(mailbox_push_mpsc(&mb, &items[0]));
	cr_assert(mailbox_push_mpsc(&mb, &items[1]));
	cr_assert(mailbox_nonempty(&mb), "pushed items are in the ring");
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 0, "not announced yet: not visited");
	mailbox_announce(&mb);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 2);
	cr_assert_eq(out[0], &items[0]);
	cr_assert_eq(out[1], &items[1]);
	cr_assert_eq(*mb.summary, 0, "the drain cleared the flag");
	cr_assert(mailbox_push_mpsc(&mb, &items[2]));
	mailbox_announce(&mb);
	cr_assert_eq(*mb.summary, 1u << (thread_slot_get() % MAILBOX_SHARDS));
	cr_assert_eq(mailbox_drain_sc(&mb, out, 4, 4), 1);
	cr_assert_eq(out[0], &items[2]);
}

Test(mailbox, a_shard_left_non_empty_by_a_limit_is_visited_again_without_an_announce)
{
	int items[5];
	void *out[8];

	for (int i = 0; i < 5; i++)
		cr_assert(mailbox_push_mpsc(&mb, &items[i]));
	mailbox_announce(&mb);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 2), 2, "per-shard limit");
	cr_assert_eq(mailbox_drain_sc(&mb, out, 1, 8), 1, "overall limit");
	cr_assert_eq(out[0], &items[2]);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 2);
	cr_assert_eq(out[0], &items[3]);
	cr_assert_eq(out[1], &items[4]);
	cr_assert_eq(mb.leftover, 0, "the shard was seen empty");
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 0);
}

Test(mailbox, drains_in_fifo_order_and_empties)
{
	int items[5];
	void *out[8];

	for (int i = 0; i < 5; i++)
		cr_assert(mailbox_push_mpsc(&mb, &items[i]));
	mailbox_announce(&mb);
	cr_assert(mailbox_nonempty(&mb));
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 5);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(out[i], &items[i]);
	cr_assert_not(mailbox_nonempty(&mb));
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 0);
}

Test(mailbox, a_full_shard_refuses_and_keeps_its_items)
{
	int items[16];
	void *out[16];
	uint32_t accepted = 0;

	for (int i = 0; i < 16; i++)
		accepted += mailbox_push_mpsc(&mb, &items[i]);
	cr_assert_eq(accepted, mb.capacity);
	mailbox_announce(&mb);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 16, 16), mb.capacity);
	for (uint32_t i = 0; i < mb.capacity; i++)
		cr_assert_eq(out[i], &items[i]);
}

struct pusher {
	int base;
	int items[4];
	unsigned slot;
};

static void *push_four(void *arg)
{
	struct pusher *p = arg;

	p->slot = thread_slot_get();
	for (int i = 0; i < 4; i++) {
		p->items[i] = p->base + i;
		cr_assert(mailbox_push_mpsc(&mb, &p->items[i]));
	}
	mailbox_announce(&mb);
	return NULL;
}

Test(mailbox, a_bounded_batch_per_shard_interleaves_producers)
{
	struct pusher a = { .base = 100 }, b = { .base = 200 };
	pthread_t ta, tb;
	void *out[8];

	/* both threads stay alive until joined, so they hold distinct slots */
	pthread_create(&ta, NULL, push_four, &a);
	pthread_join(ta, NULL);
	pthread_create(&tb, NULL, push_four, &b);
	pthread_join(tb, NULL);
	if (a.slot % MAILBOX_SHARDS == b.slot % MAILBOX_SHARDS) {
		/* slot reuse after A exited: same shard, plain FIFO */
		cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 8);
		return;
	}
	uint32_t n = mailbox_drain_sc(&mb, out, 8, 2);

	cr_assert_eq(n, 4, "two from each of the two shards");
	int from_a = 0, from_b = 0;

	for (uint32_t i = 0; i < n; i++) {
		int v = *(int *)out[i];

		from_a += v >= 100 && v < 200;
		from_b += v >= 200;
	}
	cr_assert_eq(from_a, 2);
	cr_assert_eq(from_b, 2);
	cr_assert_eq(mailbox_drain_sc(&mb, out, 8, 8), 4);
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
