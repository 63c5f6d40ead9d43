/*
 * actors/ready_set.c — the set of actors that have work (actors/ready_set.h
 * says why no signal is lost, why a node is in the set at most once and why
 * busy actors share the consumer fairly).
 *
 * Everything shared is a C11 atomic (the flag word) or goes through the
 * mailbox, which ThreadSanitizer sees: no annotation.
 */
#include <stddef.h>

#include "ready_set.h"

#include "explore.h"

#define COLLECT_BATCH 64u  /* nodes taken from the mailbox per drain call */
#define COLLECT_SHARD 16u  /* per shard per drain call: shards share a collect */

void ready_set_init(struct ready_set *s)
{
	mailbox_init(&s->signalled);
	s->head = s->tail = NULL;
	s->count = 0;
}

bool ready_signal_claim(struct ready_set *s, struct ready_node *n)
{
	uint32_t f = 0; /* (ready_signal_fenced's look) */

	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with the consumer's release in ready_release_sc. The
	 * push below writes n->link.next, which the last producer to link
	 * behind n wrote and the consumer read (acquire) before it released
	 * n: without this edge C11 does not order that old link before our
	 * NULL, and the old link could survive our push (the consumer would
	 * then follow it to a node already taken). */
	if (!atomic_compare_exchange_strong_explicit(&n->flags, &f, READY_QUEUED, memory_order_acquire,
						     memory_order_relaxed))
		return false; /* another signaller won, or the owner detached it */
	/* the last step: its announce's full fence ends the call (ready_set.h) */
	mailbox_push_announce_mpsc(&s->signalled, &n->link);
	return true;
}

/* n->next is NULL here (a node out of the FIFO always has it so:
 * ready_node_init, ready_pop_sc), so nothing stores it: a store would take
 * n's line away from the signallers, who load n->flags on it each signal
 * (a busy actor is popped and kept every visit). */
static void fifo_append(struct ready_set *s, struct ready_node *n)
{
	if (s->tail != NULL)
		s->tail->next = n;
	else
		s->head = n;
	s->tail = n;
	s->count++;
}

/* The mailbox's looks in the same order as before the look moved inline
 * (one per round, before its drain): the explorer's schedules unchanged. */
uint32_t ready_collect_more_sc(struct ready_set *s, uint32_t max)
{
	struct mailbox_node *items[COLLECT_BATCH];
	uint32_t taken = 0;

	do {
		uint32_t want = max - taken < COLLECT_BATCH ? max - taken : COLLECT_BATCH;
		uint32_t n = mailbox_drain_sc(&s->signalled, items, want, COLLECT_SHARD);

		if (n == 0)
			break; /* only a producer's unlinked push left: the next collect */
		for (uint32_t i = 0; i < n; i++)
			fifo_append(s, (struct ready_node *)((char *)items[i] -
							     offsetof(struct ready_node, link)));
		taken += n;
	} while (taken < max && !mailbox_idle(&s->signalled));
	return s->count;
}

void ready_keep_sc(struct ready_set *s, struct ready_node *n)
{
	fifo_append(s, n);
}

bool ready_release_sc(struct ready_node *n)
{
	uint32_t f = READY_QUEUED;

	EXPLORE_POINT(ATOMIC);
	/* release: our take of n from the mailbox (the read of its link) happens
	 * before the next signaller's push rewrites that link (its acquire CAS
	 * in ready_signal_fenced); the fence below orders the clear before our
	 * look at the work. */
	if (!atomic_compare_exchange_strong_explicit(&n->flags, &f, 0, memory_order_release,
						     memory_order_relaxed))
		return false; /* QUEUED | DETACHED: ours to free */
	/* seq_cst fence: the clear flag is visible before the caller looks at
	 * the actor's work again (the consumer's half of the pair, top of .h). */
	atomic_thread_fence(memory_order_seq_cst);
	return true;
}

void ready_requeue_sc(struct ready_set *s, struct ready_node *n)
{
	uint32_t f = 0;

	EXPLORE_POINT(ATOMIC);
	/* relaxed: only the consumer reads the FIFO it joins. */
	if (atomic_compare_exchange_strong_explicit(&n->flags, &f, READY_QUEUED, memory_order_relaxed,
						    memory_order_relaxed))
		fifo_append(s, n);
}

bool ready_node_detach(struct ready_node *n)
{
	EXPLORE_POINT(ATOMIC);
	/* relaxed: the flag is the only thing decided here; the node's memory
	 * is kept by the caller's grace period or by the consumer. */
	uint32_t f = atomic_fetch_or_explicit(&n->flags, READY_DETACHED, memory_order_relaxed);

	return (f & READY_QUEUED) == 0;
}
