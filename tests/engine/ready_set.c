/* tests/engine/ready_set.c — the set of actors with work (actors/ready_set.h). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "actors/ready_set.h"

#define NODES 8

static struct ready_set set;
static struct ready_node nodes[NODES];

static void setup(void)
{
	ready_set_init(&set);
	for (int i = 0; i < NODES; i++)
		ready_node_init(&nodes[i]);
}

TestSuite(ready_set, .init = setup);

static bool signal_node(int i)
{
	atomic_thread_fence(memory_order_seq_cst); /* the caller's "work" is published */
	return ready_signal_fenced(&set, &nodes[i]);
}

Test(ready_set, a_node_is_queued_once_however_often_it_is_signalled)
{
	cr_assert(ready_set_idle_sc(&set));
	cr_assert(signal_node(3), "the first signal queues it");
	cr_assert_not(signal_node(3), "a second one finds it queued");
	cr_assert_not(ready_set_idle_sc(&set));
	cr_assert_eq(ready_collect_sc(&set, 64), 1);
	cr_assert_eq(ready_pop_sc(&set), &nodes[3]);
	cr_assert_null(ready_pop_sc(&set));
	cr_assert_not(signal_node(3), "being visited: still queued");
	cr_assert(ready_release_sc(&nodes[3]));
	cr_assert(ready_set_idle_sc(&set));
	cr_assert(signal_node(3), "released: the next signal queues it again");
	cr_assert_eq(ready_collect_sc(&set, 64), 1);
}

/* Nodes 0..n-1 signalled, then collected: the FIFO's count (n). */
static uint32_t signal_and_collect(uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		cr_assert(signal_node((int)i));
	uint32_t todo = ready_collect_sc(&set, 64);

	cr_assert_eq(todo, n);
	return todo;
}

Test(ready_set, kept_nodes_come_before_newly_signalled_ones_each_once_per_round)
{
	uint32_t todo = signal_and_collect(3);

	for (uint32_t k = 0; k < todo; k++) {
		struct ready_node *n = ready_pop_sc(&set);

		cr_assert_eq(n, &nodes[k], "FIFO: signal order");
		if (k != 1)
			ready_keep_sc(&set, n); /* still busy */
		else
			cr_assert(ready_release_sc(n));
	}
	cr_assert(signal_node(5));
	cr_assert(signal_node(1));
	cr_assert_eq(ready_collect_sc(&set, 64), 4, "two kept, two new");
	int want[] = { 0, 2, 5, 1 };

	for (int k = 0; k < 4; k++)
		cr_assert_eq(ready_pop_sc(&set), &nodes[want[k]], "round position %d", k);
	cr_assert_null(ready_pop_sc(&set));
}

Test(ready_set, a_kept_head_goes_to_the_tail_and_a_lone_one_stays_put)
{
	uint32_t todo = signal_and_collect(3);

	for (uint32_t k = 0; k < todo; k++) {
		cr_assert_eq(ready_peek_sc(&set), &nodes[k], "FIFO: signal order");
		if (k != 1)
			ready_rotate_sc(&set); /* still busy */
		else
			cr_assert(ready_release_sc(ready_pop_sc(&set)));
	}
	cr_assert(signal_node(5));
	cr_assert_eq(ready_collect_sc(&set, 64), 3, "two kept, one new");
	cr_assert_eq(ready_pop_sc(&set), &nodes[0]);
	cr_assert_eq(ready_pop_sc(&set), &nodes[2]);
	cr_assert_eq(ready_peek_sc(&set), &nodes[5]);
	ready_rotate_sc(&set); /* alone: stays */
	cr_assert_eq(ready_peek_sc(&set), &nodes[5]);
	cr_assert(signal_node(6));
	cr_assert_eq(ready_collect_sc(&set, 64), 2, "the lone one kept, one new behind it");
	ready_rotate_sc(&set);
	cr_assert_eq(ready_peek_sc(&set), &nodes[6]);
	ready_rotate_sc(&set);
	cr_assert_eq(ready_pop_sc(&set), &nodes[5]);
	cr_assert_eq(ready_pop_sc(&set), &nodes[6]);
	cr_assert_null(ready_pop_sc(&set));
	cr_assert_null(ready_peek_sc(&set));
}

/* A node out of the FIFO has next NULL, which the consumer's append relies
 * on instead of storing it (the line is the signallers': actors/ready_set.c):
 * popped from the middle, the last, or alone, then kept or released and
 * queued again, the order stays exact and every FIFO ends. */
Test(ready_set, a_popped_node_has_no_next_however_it_left_and_joins_again_in_order)
{
	(void)signal_and_collect(3);
	struct ready_node *a = ready_pop_sc(&set);

	cr_assert_eq(a, &nodes[0]);
	cr_assert_null(a->next, "popped with two behind it");
	ready_keep_sc(&set, a); /* 1, 2, 0 */
	cr_assert_eq(ready_pop_sc(&set), &nodes[1]);
	cr_assert_null(nodes[1].next);
	cr_assert(ready_release_sc(&nodes[1]));
	cr_assert_eq(ready_pop_sc(&set), &nodes[2]);
	cr_assert(ready_release_sc(&nodes[2]));
	struct ready_node *lone = ready_pop_sc(&set);

	cr_assert_eq(lone, &nodes[0]);
	cr_assert_null(lone->next, "popped alone");
	cr_assert_eq(set.count, 0);
	ready_keep_sc(&set, lone); /* 0 */
	cr_assert(signal_node(2));
	cr_assert(signal_node(1));
	cr_assert_eq(ready_collect_sc(&set, 64), 3); /* 0, then 2 and 1 in their signals' order */
	cr_assert_eq(ready_pop_sc(&set), &nodes[0]);
	cr_assert_eq(ready_pop_sc(&set), &nodes[2]);
	cr_assert_null(nodes[2].next);
	cr_assert_eq(ready_pop_sc(&set), &nodes[1]);
	cr_assert_null(nodes[1].next);
	cr_assert_null(ready_pop_sc(&set), "the FIFO ends: no stale link was followed");
	cr_assert_eq(set.count, 0);
}

Test(ready_set, a_collect_takes_at_most_max_new_nodes)
{
	for (int i = 0; i < 5; i++)
		cr_assert(signal_node(i));
	cr_assert_eq(ready_collect_sc(&set, 2), 2);
	cr_assert_eq(ready_collect_sc(&set, 2), 4);
	cr_assert_eq(ready_collect_sc(&set, 2), 5);
	cr_assert_eq(ready_collect_sc(&set, 2), 5, "nothing left to take");
}

Test(ready_set, a_signal_during_the_visit_is_found_by_the_look_after_the_release)
{
	_Atomic int work = 0;

	cr_assert(signal_node(0));
	ready_collect_sc(&set, 64);
	struct ready_node *n = ready_pop_sc(&set);

	atomic_store(&work, 1); /* work arrives while the node is visited */
	cr_assert_not(signal_node(0), "its signaller finds it queued and does nothing");
	cr_assert(ready_release_sc(n));
	if (atomic_load(&work))
		ready_requeue_sc(&set, n); /* what the consumer does after its fence */
	cr_assert_eq(ready_collect_sc(&set, 64), 1, "back in the set");
	cr_assert_eq(ready_pop_sc(&set), &nodes[0]);
}

Test(ready_set, a_detached_node_is_never_queued_again_and_goes_to_whoever_holds_it)
{
	cr_assert(ready_node_detach(&nodes[1]), "not queued: the owner frees it");
	cr_assert(ready_node_detached(&nodes[1]));
	cr_assert_not(signal_node(1));
	cr_assert(ready_set_idle_sc(&set));

	cr_assert(signal_node(2));
	cr_assert_not(ready_node_detach(&nodes[2]), "queued: the consumer frees it");
	cr_assert_eq(ready_collect_sc(&set, 64), 1);
	cr_assert_eq(ready_pop_sc(&set), &nodes[2]);
	cr_assert_not(ready_release_sc(&nodes[2]), "the release says it is the consumer's to free");
	ready_requeue_sc(&set, &nodes[2]);
	cr_assert_eq(ready_collect_sc(&set, 64), 0, "a requeue of a detached node does nothing");
}

/* Producers add work to random nodes and signal; the consumer takes the
 * work of each node it visits, then releases it and looks again. When the
 * producers are done and the set is idle, every unit of work was taken:
 * no signal was lost. */
#define PRODUCERS 4
#define ROUNDS 20000

static _Atomic unsigned long work[NODES];
static _Atomic int finished;

static void *producer(void *arg)
{
	unsigned x = (unsigned)(uintptr_t)arg * 2654435761u + 1u;

	for (int r = 0; r < ROUNDS; r++) {
		x = x * 1103515245u + 12345u;
		int i = (int)((x >> 16) % NODES);

		atomic_fetch_add_explicit(&work[i], 1, memory_order_relaxed);
		signal_node(i);
	}
	atomic_fetch_add(&finished, 1);
	return NULL;
}

Test(ready_set, no_signal_is_lost_between_threads)
{
	pthread_t t[PRODUCERS];
	unsigned long taken = 0;
	bool visiting[NODES] = { false };

	for (uintptr_t i = 0; i < PRODUCERS; i++)
		pthread_create(&t[i], NULL, producer, (void *)i);
	while (atomic_load(&finished) < PRODUCERS) {
		uint32_t todo = ready_collect_sc(&set, 4);

		for (uint32_t k = 0; k < todo; k++) {
			struct ready_node *n = ready_pop_sc(&set);
			int i = (int)(n - nodes);

			cr_assert_not(visiting[i], "node %d handed out twice", i);
			visiting[i] = true;
			taken += atomic_exchange(&work[i], 0);
			sched_yield(); /* widen the window in which producers find it queued */
			visiting[i] = false;
			if (ready_release_sc(n) && atomic_load(&work[i]) != 0)
				ready_requeue_sc(&set, n);
		}
	}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(t[i], NULL);
	/* every producer is done: whatever is still signalled comes out now */
	for (;;) {
		uint32_t todo = ready_collect_sc(&set, 64);

		if (todo == 0 && ready_set_idle_sc(&set))
			break;
		for (uint32_t k = 0; k < todo; k++) {
			struct ready_node *n = ready_pop_sc(&set);

			taken += atomic_exchange(&work[n - nodes], 0);
			if (ready_release_sc(n) && atomic_load(&work[n - nodes]) != 0)
				ready_requeue_sc(&set, n);
		}
	}
	cr_assert_eq(taken, (unsigned long)PRODUCERS * ROUNDS, "work taken %lu of %lu", taken,
		     (unsigned long)PRODUCERS * ROUNDS);
	for (int i = 0; i < NODES; i++)
		cr_assert_eq(atomic_load(&work[i]), 0, "node %d has work left", i);
}
