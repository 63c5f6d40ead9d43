/*
 * actors/mailbox.c — sharded MPSC mailbox of intrusive lists.
 *
 * Each shard is a singly linked list of the items' own nodes, pushed at the
 * tail by any thread and taken at the head by the one consumer (D. Vyukov's
 * intrusive MPSC queue, the shape of Pony's messageq). A stub node that
 * belongs to the shard stands in the list whenever it would otherwise be
 * empty, so producers never see NULL and never touch the consumer's head.
 * Memory is the struct and nothing else: an item carries its own link, so
 * the number of queued items (bounded by the owner's credits) costs nothing
 * here, and a push can neither allocate nor fail.
 *
 * Why it is correct:
 *
 * - Push: the producer clears its node's next, exchanges the shard's tail
 *   with the node (getting prev), then stores prev->next = node. Exchanges
 *   are totally ordered on the tail, so every node has exactly one
 *   predecessor and one producer ever links to it; linking after the
 *   exchange cannot lose a node. The exchange is acq_rel: its acquire orders
 *   our link store after prev's own "next = NULL" (which its producer
 *   released with its exchange), so that NULL can never overwrite our link.
 *   The link store is a release and the consumer loads links with acquire,
 *   so a consumer that reaches a node sees the item as its producer wrote
 *   it.
 * - Take: the consumer's head is the oldest node not yet taken (or the
 *   stub). It returns head only when head->next is set: then a later node
 *   was exchanged after head, so no producer will write head->next again,
 *   the tail no longer names head, and the owner may reuse the node at once.
 *   When head is the last linked node and the tail names it, the consumer
 *   pushes the stub behind it (as a producer would) and returns head once
 *   that link is in place. Reaching head through acquire loads makes the
 *   head's own exchange happen before our tail load, so a relaxed tail load
 *   never returns a node older than head.
 * - The gap: between a producer's exchange and its link, its node and every
 *   node exchanged after it are unreachable from the head. Take then
 *   returns NULL; the shard is not empty (head or tail is not the stub), so
 *   the drain marks it leftover and every later drain looks again until it
 *   is seen empty. Nothing is lost and nobody spins: the producer finishes
 *   its two steps when it runs again.
 * - Order: one thread pushes into one shard (its slot does not change while
 *   it lives), its exchanges are in program order, and the list is FIFO.
 *
 * The summary word never hides an announced item. An announcer publishes
 * its pushes (the link stores), runs a full fence, then loads the summary
 * and sets its bit if it is clear. A drain clears the word with an exchange,
 * runs a full fence, then reads the flagged lists. If the announcer saw its
 * bit clear, it sets it and a later drain visits the shard. If it saw the
 * bit still set, that drain's exchange comes after its load, and the two
 * fences (store → fence → load on both sides) mean the drain's loads see the
 * pushes. A drain that sees a shard's pushes either takes them or, stopped
 * by a limit or a gap, leaves the shard leftover, so it is visited without
 * a new announce until it is seen empty; a shard is seen empty only once
 * every node exchanged before that look was taken. A bit that is set for an
 * empty shard costs one empty look.
 *
 * Everything is C11 atomics, which ThreadSanitizer sees: no annotation.
 */
#include "mailbox.h"

#include "explore.h"
#include "thread_slot.h"

_Static_assert(sizeof(struct mailbox) == MAILBOX_BYTES, "MAILBOX_BYTES is the whole mailbox");

void mailbox_init(struct mailbox *mb)
{
	for (uint32_t i = 0; i < MAILBOX_SHARDS; i++) {
		struct mailbox_shard *s = &mb->shards[i];

		atomic_init(&s->stub.next, NULL);
		atomic_init(&s->tail, &s->stub);
		mb->head[i] = &s->stub;
	}
	atomic_init(&mb->summary, 0);
	mb->cursor = 0;
	mb->leftover = 0;
}

static uint32_t caller_shard(void)
{
	return thread_slot_get() % MAILBOX_SHARDS;
}

static void shard_push(struct mailbox_shard *s, struct mailbox_node *node)
{
	atomic_store_explicit(&node->next, NULL, memory_order_relaxed);
	EXPLORE_POINT(QUEUE);
	/* acq_rel: release publishes the node (and its NULL next) to the next
	 * producer; acquire orders our link after prev's own NULL store. */
	struct mailbox_node *prev = atomic_exchange_explicit(&s->tail, node, memory_order_acq_rel);

	EXPLORE_POINT(QUEUE); /* the window where a preempted producer holds up its shard */
	/* release: a consumer that loads this link sees the item. */
	atomic_store_explicit(&prev->next, node, memory_order_release);
}

void mailbox_push_mpsc(struct mailbox *mb, struct mailbox_node *item)
{
	shard_push(&mb->shards[caller_shard()], item);
}

/* mailbox_announce for the caller's shard, @p shard. */
static void shard_announce(struct mailbox *mb, uint32_t shard)
{
	uint32_t bit = 1u << shard;

	/* seq_cst fence: the pushes are visible before we load the summary (see top). */
	EXPLORE_POINT(ATOMIC);
	atomic_thread_fence(memory_order_seq_cst);
	if ((atomic_load_explicit(&mb->summary, memory_order_relaxed) & bit) == 0) {
		/* release: a drain that acquires the bit sees the pushes. */
		atomic_fetch_or_explicit(&mb->summary, bit, memory_order_release);
		/* seq_cst fence: the bit is visible before the caller's next load
		 * (a consumer that lets go and looks again reads only the bit) */
		atomic_thread_fence(memory_order_seq_cst);
	}
}

void mailbox_announce(struct mailbox *mb)
{
	shard_announce(mb, caller_shard());
}

void mailbox_push_announce_mpsc(struct mailbox *mb, struct mailbox_node *item)
{
	uint32_t shard = caller_shard();

	shard_push(&mb->shards[shard], item);
	shard_announce(mb, shard);
}

/* Take shard i's oldest node, or NULL if it is empty or its next node is
 * not linked yet (a producer between its exchange and its link). */
static struct mailbox_node *shard_take(struct mailbox *mb, uint32_t i)
{
	struct mailbox_shard *s = &mb->shards[i];
	struct mailbox_node *head = mb->head[i];
	/* acquire: pairs with the link's release; the node behind is complete. */
	EXPLORE_POINT(QUEUE);
	struct mailbox_node *next = atomic_load_explicit(&head->next, memory_order_acquire);

	if (head == &s->stub) {
		if (next == NULL)
			return NULL;
		mb->head[i] = head = next; /* step over the stub */
		next = atomic_load_explicit(&head->next, memory_order_acquire);
	}
	if (next == NULL) {
		/* head is the last linked node: it leaves only with a successor
		 * in place, so that no producer can still link to it. */
		if (atomic_load_explicit(&s->tail, memory_order_relaxed) != head)
			return NULL; /* a push behind head is not linked yet */
		shard_push(s, &s->stub);
		next = atomic_load_explicit(&head->next, memory_order_acquire);
		if (next == NULL)
			return NULL; /* a producer exchanged just before the stub */
	}
	mb->head[i] = next;
	return head;
}

/* True if every node pushed into shard i before this look was taken. */
static bool shard_empty(const struct mailbox *mb, uint32_t i)
{
	const struct mailbox_shard *s = &mb->shards[i];

	return mb->head[i] == &s->stub &&
	       atomic_load_explicit(&s->tail, memory_order_relaxed) == &s->stub;
}

uint32_t mailbox_take_flags(struct mailbox *mb)
{
	uint32_t pending = mb->leftover;

	mb->leftover = 0;
	EXPLORE_POINT(ATOMIC);
	if (atomic_load_explicit(&mb->summary, memory_order_relaxed) != 0) {
		/* acquire: pairs with the announcers' release of their bits. */
		pending |= atomic_exchange_explicit(&mb->summary, 0, memory_order_acquire);
		/* seq_cst fence: the cleared word is visible before we read the lists (see top). */
		atomic_thread_fence(memory_order_seq_cst);
	}
	return pending;
}

uint32_t mailbox_drain_flagged_sc(struct mailbox *mb, uint32_t flags, struct mailbox_node **items, uint32_t max,
				  uint32_t per_shard)
{
	uint32_t first = mb->cursor;
	/* the flagged shards, rotated so that bit 0 is shard `first` */
	uint32_t todo = (flags >> first | flags << ((MAILBOX_SHARDS - first) % MAILBOX_SHARDS)) &
			((1u << MAILBOX_SHARDS) - 1u);
	uint32_t n = 0;

	mb->cursor = (first + 1u) % MAILBOX_SHARDS;
	for (; todo != 0 && n < max; todo &= todo - 1u) {
		uint32_t i = (first + (uint32_t)__builtin_ctz(todo)) % MAILBOX_SHARDS;
		uint32_t taken = 0;
		struct mailbox_node *item;

		while (taken < per_shard && n < max && (item = shard_take(mb, i)) != NULL) {
			items[n++] = item;
			taken++;
		}
		if (!shard_empty(mb, i))
			mb->leftover |= 1u << i; /* stopped by a limit or a gap: look again */
	}
	/* shards not visited because max was reached first */
	for (; todo != 0; todo &= todo - 1u)
		mb->leftover |= 1u << ((first + (uint32_t)__builtin_ctz(todo)) % MAILBOX_SHARDS);
	return n;
}

uint32_t mailbox_drain_sc(struct mailbox *mb, struct mailbox_node **items, uint32_t max, uint32_t per_shard)
{
	return mailbox_drain_flagged_sc(mb, mailbox_take_flags(mb), items, max, per_shard);
}

void mailbox_keep_flags(struct mailbox *mb, uint32_t flags)
{
	mb->leftover |= flags;
}

bool mailbox_nonempty(const struct mailbox *mb)
{
	for (uint32_t i = 0; i < MAILBOX_SHARDS; i++)
		if (!shard_empty(mb, i))
			return true;
	return false;
}
