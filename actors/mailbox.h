/*
 * actors/mailbox.h — an actor's sharded, unbounded, intrusive MPSC mailbox.
 *
 * Many producers (any thread), one consumer (the thread currently running
 * the actor). An item is a struct mailbox_node embedded in the producer's
 * object, so the mailbox holds any number of items in a fixed
 * MAILBOX_BYTES: it allocates nothing, ever, and never refuses a push (the
 * owner bounds what is queued, e.g. with credits). Each producer thread
 * pushes into the shard of its thread slot, so producers on different
 * shards never touch the same cache lines; the consumer drains shards round
 * robin with a bounded batch per shard, so one busy producer cannot starve
 * another. A summary word with one bit per shard tells the consumer which
 * shards to visit, so an idle mailbox costs one load per drain instead of a
 * look at every shard. One thread's items are drained in the order it
 * pushed them.
 *
 * Progress, exactly: a push is one exchange and one store and an announce
 * at most one read-modify-write, whatever the other threads do, so a
 * producer never waits for another thread (wait-free). A drain never waits
 * either, but while a producer is preempted between the exchange and the
 * store of its push, the drain cannot take the item pushed just before
 * that push into the same shard (the store will link to it) nor any item
 * pushed after it there: they stay in the mailbox, delayed, never lost,
 * and come with the first drain after that producer runs again. A
 * thread's shard is its slot modulo MAILBOX_SHARDS, fixed when it first
 * pushes (a slot is the lowest free one, thread_slot.h), so a shard has
 * more than one producer only if some thread first pushed while
 * MAILBOX_SHARDS or more other slot holders were alive, or a thread pushes
 * from one of its exit-time key destructors after its slot was released
 * (it keeps pushing into that shard, which a new thread holding the slot
 * may push into too: safe, a shard takes any number of producers, but then
 * shared). With one producer
 * the items so delayed are the preempted thread's own; on a shared shard
 * another thread's items can be delayed too, though that thread itself is
 * not.
 */
#ifndef DOCA_MAILBOX_H
#define DOCA_MAILBOX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore.h"
#include "word_asm.h"

#define MAILBOX_SHARDS 16u
_Static_assert(MAILBOX_SHARDS < 32, "one bit per shard in a 32-bit summary word");

/* Embedded in each item; owned by the mailbox from push until drained. */
struct mailbox_node {
	_Atomic(struct mailbox_node *) next;
};

/* Written by producers only: the consumer's head lives in struct mailbox. */
struct mailbox_shard {
	_Atomic(struct mailbox_node *) tail; /* the last node pushed (the stub when empty) */
	struct mailbox_node stub;            /* stands in the list while it would be empty */
} __attribute__((aligned(64)));

struct mailbox {
	struct mailbox_shard shards[MAILBOX_SHARDS];
	_Alignas(64) _Atomic uint32_t summary; /* own line; bit i: shard i may hold items */
	/* consumer-private, on lines of their own (producers write the above) */
	_Alignas(64) struct mailbox_node *head[MAILBOX_SHARDS]; /* oldest node not drained, or the stub */
	uint32_t cursor;   /* shard to drain first */
	uint32_t leftover; /* shards a drain left non-empty */
};

/* All the memory a mailbox has, whatever the number of producers or items:
 * one line per shard, the summary's line, and the consumer's heads and two
 * counters rounded up to whole lines (1280 bytes with 16 shards). */
#define MAILBOX_BYTES \
	(64u * (MAILBOX_SHARDS + 1u) + ((sizeof(void *) * MAILBOX_SHARDS + 8u + 63u) & ~(size_t)63))

/* Make an empty mailbox. Cannot fail. Thread safety: before any push. */
void mailbox_init(struct mailbox *mb);

/* Push into the caller's shard; never refuses. A drain may not see the item
 * before the caller's next mailbox_announce. Thread safety: any thread,
 * wait-free. */
void mailbox_push_mpsc(struct mailbox *mb, struct mailbox_node *item);

/* After one or more pushes: flag the caller's shard so the next drain visits
 * it. Begins with a full fence, and ends with one when it set the flag, so a
 * load the caller makes after it (a check whether the consumer sleeps, or
 * has let go of the mailbox's owner and looks only at the flags) is ordered
 * after the pushes and the flag. Thread safety: any thread, wait-free. */
void mailbox_announce(struct mailbox *mb);

/* mailbox_push_mpsc then mailbox_announce, with one look at the caller's
 * shard: the last (or only) push of a burst. Thread safety: any thread,
 * wait-free. */
void mailbox_push_announce_mpsc(struct mailbox *mb, struct mailbox_node *item);

/* Take up to `max` items, at most `per_shard` from each flagged shard,
 * starting at the shard after the one drained first last time. Every item
 * announced before the call is taken by it or by a later drain (one held up
 * by a preempted producer, see the top, at the latest by the first drain
 * after that producer's announce). Thread safety: the one consumer only. */
uint32_t mailbox_drain_sc(struct mailbox *mb, struct mailbox_node **items, uint32_t max,
			  uint32_t per_shard);

/* mailbox_drain_sc's first half: the shards to visit (those a drain left
 * non-empty or marked by mailbox_keep_flags, and those flagged), the
 * summary cleared by an exchange and a full fence, so that anything the
 * caller reads after this call was published before an announce that
 * this call either took or left set for the next one (see mailbox.c's
 * top: the caller's own structures announced through the summary, as
 * engine/ring.c's rings are, are read after it, never before). Thread
 * safety: the one consumer only. */
uint32_t mailbox_take_flags(struct mailbox *mb);

/* mailbox_drain_sc's second half: take from the shards in @p flags (a
 * mailbox_take_flags answer); a shard not visited or left non-empty stays
 * flagged for the next drain. Thread safety: the one consumer only. */
uint32_t mailbox_drain_flagged_sc(struct mailbox *mb, uint32_t flags, struct mailbox_node **items, uint32_t max,
				  uint32_t per_shard);

/* Keep @p flags (non-zero) for the next drain, as a drain that left work
 * behind them does: mailbox_idle is false until a drain takes them. For a
 * consumer whose own structures, announced through the summary, still
 * hold work after mailbox_take_flags took their flags. Thread safety: the
 * one consumer only. */
void mailbox_keep_flags(struct mailbox *mb, uint32_t flags);

/* True if no drain would find anything: no shard is flagged or left
 * non-empty (an item pushed but not yet announced is not counted).
 * Thread safety: the one consumer only. */
static inline bool mailbox_idle(const struct mailbox *mb)
{
	EXPLORE_POINT(ATOMIC);
#ifdef WORD_ASM
	/* each look one cmpl with the word in memory (actors/word_asm.h):
	 * gcc made each a load, a test and a branch. leftover is a plain
	 * field of the consumer's, so its asm is not volatile (gcc may treat
	 * it as the plain load it replaces; volatile, gcc made the mailbox's
	 * address apart with a lea); the summary's cmpl is volatile, a
	 * single-copy atomic load as the relaxed one is */
	bool zero;

	__asm__("cmpl $0, %1" : "=@ccz"(zero) : "m"(mb->leftover));
	if (!zero)
		return false;
	__asm__ volatile("cmpl $0, %1" : "=@ccz"(zero) : "m"(mb->summary));
	return zero;
#else
	return mb->leftover == 0 && atomic_load_explicit(&mb->summary, memory_order_relaxed) == 0;
#endif
}

/* True if some shard holds a pushed item, announced or not (exact when
 * producers are quiet). Thread safety: the one consumer only. */
bool mailbox_nonempty(const struct mailbox *mb);

#endif /* DOCA_MAILBOX_H */
