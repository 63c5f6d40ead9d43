/*
 * actors/mailbox.c — sharded MPSC mailbox on Concurrency Kit rings.
 *
 * Why it is correct: every shard is a ck_ring used in its MPSC mode
 * (ck_ring_enqueue_mpsc_size by any producer, ck_ring_dequeue_mpsc by the
 * single consumer); ck publishes a slot only after the item is stored
 * (store fence before the p_tail update) and the consumer reads the slot
 * only after loading p_tail (load fence), so an item is never seen half
 * written. The "single consumer" rule is the actor's: only the thread that
 * holds the actor's runner guard drains. Two producer threads that share a
 * slot (slot overflow) are still safe because the enqueue is multi-producer.
 *
 * The summary word never hides an announced item. An announcer publishes
 * its pushes (ring stores), runs a full fence, then loads the summary and
 * sets its bit if it is clear. A drain clears the word with an exchange,
 * runs a full fence, then reads the flagged rings. If the announcer saw its
 * bit clear, it sets it and a later drain visits the shard. If it saw the
 * bit still set, that drain's exchange comes after its load, and the two
 * fences (store → fence → load on both sides) mean the drain's ring loads
 * see the pushes. A bit that is set for an empty shard costs one empty look.
 *
 * TSan cannot see ck's asm fences: producers release on the item before the
 * push and the consumer acquires on it after the pop; the slot array is
 * marked as a benign race once.
 */
#include "mailbox.h"

#include "explore.h"
#include "thread_slot.h"
#include "tsan_annotate.h"

static uint32_t ring_size_for(uint32_t capacity)
{
	uint32_t size = 2;

	/* a ck ring of size 2^k holds 2^k - 1 items */
	while (size - 1u < capacity)
		size <<= 1;
	return size;
}

bool mailbox_init(struct mailbox *mb, uint32_t capacity, const struct mailbox_allocator *alloc)
{
	uint32_t size = ring_size_for(capacity);

	mb->alloc = alloc;
	mb->cursor = 0;
	mb->leftover = 0;
	mb->capacity = size - 1u;
	mb->summary = alloc->zalloc(64); /* a line of its own: every producer writes it */
	if (mb->summary == NULL)
		return false;
	mb->shards = alloc->zalloc(sizeof(*mb->shards) * MAILBOX_SHARDS);
	if (mb->shards == NULL) {
		alloc->free(mb->summary);
		mb->summary = NULL;
		return false;
	}
	for (uint32_t i = 0; i < MAILBOX_SHARDS; i++) {
		struct mailbox_shard *s = &mb->shards[i];

		s->slots = alloc->zalloc(sizeof(*s->slots) * size);
		if (s->slots == NULL) {
			while (i-- > 0)
				alloc->free(mb->shards[i].slots);
			alloc->free(mb->shards);
			alloc->free(mb->summary);
			mb->shards = NULL;
			mb->summary = NULL;
			return false;
		}
		ck_ring_init(&s->ring, size);
		TSAN_BENIGN_RACE(s->slots, sizeof(*s->slots) * size, "ck_ring slots: ordered by ck fences");
	}
	return true;
}

void mailbox_fini(struct mailbox *mb)
{
	if (mb->shards == NULL)
		return;
	for (uint32_t i = 0; i < MAILBOX_SHARDS; i++)
		mb->alloc->free(mb->shards[i].slots);
	mb->alloc->free(mb->shards);
	mb->alloc->free(mb->summary);
	mb->shards = NULL;
	mb->summary = NULL;
}

static uint32_t caller_shard(void)
{
	return thread_slot_get() % MAILBOX_SHARDS;
}

bool mailbox_push_mpsc(struct mailbox *mb, void *item)
{
	struct mailbox_shard *s = &mb->shards[caller_shard()];

	TSAN_RELEASE(item);
	EXPLORE_POINT(QUEUE);
	return ck_ring_enqueue_mpsc(&s->ring, s->slots, item);
}

void mailbox_announce(struct mailbox *mb)
{
	uint32_t bit = 1u << caller_shard();

	EXPLORE_POINT(ATOMIC);
	/* seq_cst fence: the pushes are visible before we load the summary (see top). */
	atomic_thread_fence(memory_order_seq_cst);
	if ((atomic_load_explicit(mb->summary, memory_order_relaxed) & bit) == 0)
		/* release: a drain that acquires the bit sees the pushes. */
		atomic_fetch_or_explicit(mb->summary, bit, memory_order_release);
}

/* The shards to visit: those a drain left non-empty plus the flagged ones. */
static uint32_t take_flagged(struct mailbox *mb)
{
	uint32_t pending = mb->leftover;

	mb->leftover = 0;
	EXPLORE_POINT(ATOMIC);
	if (atomic_load_explicit(mb->summary, memory_order_relaxed) != 0) {
		/* acquire: pairs with the announcers' release of their bits. */
		pending |= atomic_exchange_explicit(mb->summary, 0, memory_order_acquire);
		/* seq_cst fence: the cleared word is visible before we read the rings (see top). */
		atomic_thread_fence(memory_order_seq_cst);
	}
	return pending;
}

uint32_t mailbox_drain_sc(struct mailbox *mb, void **items, uint32_t max, uint32_t per_shard)
{
	uint32_t first = mb->cursor;
	/* the flagged shards, rotated so that bit 0 is shard `first` */
	uint32_t todo = take_flagged(mb);
	uint32_t n = 0;

	todo = (todo >> first | todo << ((MAILBOX_SHARDS - first) % MAILBOX_SHARDS)) &
	       ((1u << MAILBOX_SHARDS) - 1u);
	mb->cursor = (first + 1u) % MAILBOX_SHARDS;
	for (; todo != 0 && n < max; todo &= todo - 1u) {
		uint32_t i = (first + (uint32_t)__builtin_ctz(todo)) % MAILBOX_SHARDS;
		struct mailbox_shard *s = &mb->shards[i];
		uint32_t taken = 0;
		void *item;

		EXPLORE_POINT(QUEUE);
		while (taken < per_shard && n < max && ck_ring_dequeue_mpsc(&s->ring, s->slots, &item)) {
			TSAN_ACQUIRE(item);
			items[n++] = item;
			taken++;
		}
		if (taken == per_shard || n == max)
			mb->leftover |= 1u << i; /* stopped by a limit: may hold more */
	}
	/* shards not visited because max was reached first */
	for (; todo != 0; todo &= todo - 1u)
		mb->leftover |= 1u << ((first + (uint32_t)__builtin_ctz(todo)) % MAILBOX_SHARDS);
	return n;
}

bool mailbox_nonempty(const struct mailbox *mb)
{
	EXPLORE_POINT(ATOMIC);
	for (uint32_t i = 0; i < MAILBOX_SHARDS; i++)
		if (ck_ring_size(&mb->shards[i].ring) != 0)
			return true;
	return false;
}
