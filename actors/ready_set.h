/*
 * actors/ready_set.h — the actors that have work, for the one thread that
 * runs them (a progress engine's contexts, an engine thread's queue pairs).
 *
 * An actor embeds a struct ready_node. Whoever gives it work (any thread)
 * publishes the work, runs a full fence and signals the node; the consumer
 * visits only signalled nodes, so an idle actor costs nothing per visit.
 * A node is in the set at most once: a flag word says so, and only the
 * signal that turns it from clear to QUEUED pushes the node (into a
 * sharded MPSC mailbox, actors/mailbox.h, so signallers on different
 * threads never share a line but the node's). The consumer keeps the nodes
 * it took in a private FIFO: a node that still has work after its visit
 * goes back to its tail without any atomic operation, and at most `max`
 * newly signalled nodes join the tail per collect, so every node in the set
 * is visited within (nodes in the set / visits per round) rounds: busy
 * actors share the consumer fairly and a new one cannot be starved.
 *
 * Why no signal is lost (a Dekker pair on the flag): a signaller stores
 * its work, runs a full fence, then loads the flag; if it is set it does
 * nothing. The consumer, to let a node leave, clears the flag, runs a full
 * fence, then looks at the actor's work once more and signals it itself if
 * there is any. By the fences' total order either the consumer's look sees
 * the signaller's work, or the signaller's load sees the clear flag (and
 * queues the node). A node that comes through the mailbox carries its
 * signaller's writes with it (the mailbox's release/acquire links).
 *
 * What a preempted signaller holds up: between its CAS and its push the
 * node is QUEUED but not yet in the mailbox, so the consumer cannot visit
 * it, and a signaller that finds the flag set meanwhile returns at once,
 * its work waiting for the same visit. Delayed until the preempted thread
 * runs again (as a mailbox push's two steps delay its shard), never lost.
 *
 * Detaching: an owner that goes away (the actor is destroyed) sets DETACHED
 * with one read-modify-write. If the node was not QUEUED it is out of the
 * set for good (no signal queues a flagged node) and the owner frees it, after a
 * grace period of whatever protects the signallers' access; if it was, the
 * consumer meets it later (ready_release_sc says so) and frees it then.
 * Signallers must therefore hold something that keeps the node's memory
 * (an RCU read-side section or a reference) across the signal.
 */
#ifndef DOCA_READY_SET_H
#define DOCA_READY_SET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mailbox.h"

#define READY_QUEUED 1u   /* in the mailbox, or in the consumer's FIFO, or being visited */
#define READY_DETACHED 2u /* its owner is gone: never queued again */

struct ready_node {
	struct mailbox_node link;       /* while in the mailbox */
	_Atomic uint32_t flags;         /* READY_* */
	struct ready_node *next;        /* consumer's: its FIFO */
};

struct ready_set {
	struct mailbox signalled;       /* pushed by signallers, any thread */
	/* consumer-private */
	struct ready_node *head, *tail; /* the FIFO of nodes to visit */
	uint32_t count;                 /* nodes in the FIFO */
};

/* Empty set. Cannot fail. Thread safety: before any signal. */
void ready_set_init(struct ready_set *s);

/* A node not in any set. Thread safety: before any signal of it. */
static inline void ready_node_init(struct ready_node *n)
{
	atomic_store_explicit(&n->link.next, NULL, memory_order_relaxed);
	atomic_store_explicit(&n->flags, 0, memory_order_relaxed);
	n->next = NULL;
}

/* ready_signal_fenced's claim and push, for a node its look found neither
 * queued nor detached (out of line: a signal mostly finds n queued, and
 * then pays no call). */
bool ready_signal_claim(struct ready_set *s, struct ready_node *n);

/* After publishing work for n's actor and running a full fence: make sure
 * the consumer visits n after this call. True if this call queued n: the
 * caller must then wake a sleeping consumer if n's actor has work, even
 * work another thread gave it — that thread's signal found n QUEUED while
 * our push was not yet visible, and the wake-up it gave may be spent; the
 * call then ends with its push's announce, a full fence after the push
 * (actors/mailbox.h), so the caller's loads after it follow the push. Thread safety: any thread,
 * wait-free (one load, at most one CAS and one mailbox push + announce). */
static inline bool ready_signal_fenced(struct ready_set *s, struct ready_node *n)
{
	EXPLORE_POINT(ATOMIC);
	/* relaxed: ordered after the caller's work by the caller's fence (top). */
	if (atomic_load_explicit(&n->flags, memory_order_relaxed) != 0)
		return false; /* queued (its visit is still to come) or detached */
	return ready_signal_claim(s, n);
}

/* ready_collect_sc's drain, for a mailbox its look found not idle. */
uint32_t ready_collect_more_sc(struct ready_set *s, uint32_t max);

/* Consumer: move up to max (>= 1) newly signalled nodes to the FIFO's
 * tail, and return how many nodes the FIFO holds now (visit at most that
 * many this round, so a node kept for its next visit is not visited
 * twice). Inline: a turn whose nodes were all kept or appended by the
 * consumer itself pays one look at the mailbox and no call. Thread
 * safety: the one consumer only. */
static inline uint32_t ready_collect_sc(struct ready_set *s, uint32_t max)
{
	if (mailbox_idle(&s->signalled))
		return s->count;
	return ready_collect_more_sc(s, max);
}

/* Consumer: true if no node is in the set (none in the FIFO, none
 * signalled). A signal racing the call may be missed: a consumer about to
 * sleep checks after a full fence (actors/mailbox.h). Thread safety: the
 * one consumer only. */
static inline bool ready_set_idle_sc(const struct ready_set *s)
{
	return s->count == 0 && mailbox_idle(&s->signalled);
}

/* Consumer: the FIFO's nodes in order without taking them: the first
 * (prev NULL), or the one after prev. Thread safety: the one consumer only. */
static inline struct ready_node *ready_iter_sc(const struct ready_set *s, const struct ready_node *prev)
{
	return prev == NULL ? s->head : prev->next;
}

/* Consumer: the node at the FIFO's head, taken out of it (still QUEUED),
 * or NULL. Thread safety: the one consumer only. */
static inline struct ready_node *ready_pop_sc(struct ready_set *s)
{
	struct ready_node *n = s->head;

	if (n == NULL)
		return NULL;
	s->head = n->next;
	if (s->head == NULL)
		s->tail = NULL;
	else
		n->next = NULL; /* only when set: n's line is the signallers' (fifo_append) */
	s->count--;
	return n;
}

/* Consumer: n (popped) still has work: back at the tail, still QUEUED.
 * Thread safety: the one consumer only. */
void ready_keep_sc(struct ready_set *s, struct ready_node *n);

/* Consumer: the node at the FIFO's head, left in it, or NULL; after its
 * visit, ready_rotate_sc keeps it or ready_pop_sc takes it. Thread
 * safety: the one consumer only. */
static inline struct ready_node *ready_peek_sc(const struct ready_set *s)
{
	return s->head;
}

/* Consumer: the FIFO's head still has work: ready_keep_sc's result for
 * it (at the tail, still QUEUED), with nothing moved when it is the only
 * node. Thread safety: the one consumer only. */
static inline void ready_rotate_sc(struct ready_set *s)
{
	struct ready_node *n = s->head;

	if (n == s->tail)
		return;
	s->head = n->next;
	s->tail->next = n;
	n->next = NULL;
	s->tail = n;
}

/* Consumer: n (popped) leaves the set. False if its owner detached it: the
 * consumer then frees it (what the owner's detach left to it). True: the
 * flag is clear and a full fence has run; the caller must now look at n's
 * work once more and, if there is any, ready_requeue_sc it (top of file).
 * Thread safety: the one consumer only. */
bool ready_release_sc(struct ready_node *n);

/* Consumer: n was released and has work after all: put it back (unless a
 * signaller queued it meanwhile or its owner detached it). Thread safety:
 * the one consumer only. */
void ready_requeue_sc(struct ready_set *s, struct ready_node *n);

/* Owner: n's actor is going away. True if n is out of the set for good
 * (the owner frees it, after the signallers' grace period); false if it is
 * queued (the consumer frees it when it meets it). Thread safety: any
 * thread, once per node. */
bool ready_node_detach(struct ready_node *n);

/* True if n's owner detached it: exact on the thread that detached it (or
 * one ordered after it), a hint elsewhere. Thread safety: any thread. */
static inline bool ready_node_detached(const struct ready_node *n)
{
	return (atomic_load_explicit(&n->flags, memory_order_relaxed) & READY_DETACHED) != 0;
}

#endif /* DOCA_READY_SET_H */
