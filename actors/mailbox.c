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
 * TSan cannot see ck's asm fences: producers release on the item before the
 * push and the consumer acquires on it after the pop; the slot array is
 * marked as a benign race once.
 */
#include "mailbox.h"

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
	mb->capacity = size - 1u;
	mb->shards = alloc->zalloc(sizeof(*mb->shards) * MAILBOX_SHARDS);
	if (mb->shards == NULL)
		return false;
	for (uint32_t i = 0; i < MAILBOX_SHARDS; i++) {
		struct mailbox_shard *s = &mb->shards[i];

		s->slots = alloc->zalloc(sizeof(*s->slots) * size);
		if (s->slots == NULL) {
			while (i-- > 0)
				alloc->free(mb->shards[i].slots);
			alloc->free(mb->shards);
			mb->shards = NULL;
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
	mb->shards = NULL;
}

bool mailbox_push_mpsc(struct mailbox *mb, void *item, bool *was_empty)
{
	struct mailbox_shard *s = &mb->shards[thread_slot_get() % MAILBOX_SHARDS];
	unsigned int before;

	TSAN_RELEASE(item);
	if (!ck_ring_enqueue_mpsc_size(&s->ring, s->slots, item, &before))
		return false;
	*was_empty = before == 0;
	return true;
}

uint32_t mailbox_drain_sc(struct mailbox *mb, void **items, uint32_t max, uint32_t per_shard)
{
	uint32_t n = 0;
	uint32_t first = mb->cursor;

	for (uint32_t k = 0; k < MAILBOX_SHARDS && n < max; k++) {
		struct mailbox_shard *s = &mb->shards[(first + k) % MAILBOX_SHARDS];

		for (uint32_t taken = 0; taken < per_shard && n < max; taken++) {
			void *item;

			if (!ck_ring_dequeue_mpsc(&s->ring, s->slots, &item))
				break;
			TSAN_ACQUIRE(item);
			items[n++] = item;
		}
	}
	mb->cursor = (first + 1u) % MAILBOX_SHARDS;
	return n;
}

bool mailbox_nonempty(const struct mailbox *mb)
{
	for (uint32_t i = 0; i < MAILBOX_SHARDS; i++)
		if (ck_ring_size(&mb->shards[i].ring) != 0)
			return true;
	return false;
}
