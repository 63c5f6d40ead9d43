/*
 * engine/task_pool.h — taking and returning credits, inline on the submit
 * and free paths. Why it is correct: engine/task_pool.c.
 */
#ifndef DOCA_ENGINE_TASK_POOL_H
#define DOCA_ENGINE_TASK_POOL_H

#include <stdlib.h>

#include "engine/engine.h"

#define POOL_TOP_BITS 21u  /* slot index + 1, up to DOCA_CTX_MAX_TASKS_LIMIT */
#define POOL_FREE_BITS 21u /* free credits, up to DOCA_CTX_MAX_TASKS_LIMIT */
#define POOL_TAG_SHIFT (POOL_TOP_BITS + POOL_FREE_BITS)
#define POOL_FIELD_MASK ((1u << POOL_TOP_BITS) - 1u)

_Static_assert(DOCA_CTX_MAX_TASKS_LIMIT <= POOL_FIELD_MASK, "a slot index + 1 and a count fit 21 bits");

static inline uint32_t head_top(uint64_t h)
{
	return (uint32_t)h & POOL_FIELD_MASK;
}
static inline uint32_t head_free(uint64_t h)
{
	return (uint32_t)(h >> POOL_TOP_BITS) & POOL_FIELD_MASK;
}
static inline uint64_t head_next(uint64_t h, uint32_t free, uint32_t top)
{
	return ((h >> POOL_TAG_SHIFT) + 1u) << POOL_TAG_SHIFT | (uint64_t)free << POOL_TOP_BITS | top;
}

/* Make chunk c unless another taker did; false when out of memory. */
bool task_pool_publish_chunk(struct task_pool *p, uint32_t c);

static inline struct doca_event *pool_chunk_of(const struct task_pool *p, uint32_t c)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with task_pool_publish_chunk's release. */
	struct doca_event *evs = atomic_load_explicit(&p->chunks[c], memory_order_acquire);

	TSAN_ACQUIRE(evs);
	return evs;
}

static inline struct doca_event *pool_slot_of(const struct task_pool *p, uint32_t index)
{
	return &pool_chunk_of(p, index / POOL_CHUNK)[index % POOL_CHUNK];
}

/* Take between 1 and @p want credits and their slots (into evs) in one
 * atomic step; 0 with *why: DOCA_ERROR_AGAIN (every credit is out) or
 * DOCA_ERROR_NO_MEMORY (a chunk could not be made). Fewer than asked when
 * fewer are free, or at the end of the returned stack or of a chunk: the
 * caller asks again. Any thread; lock-free but for a chunk's first use
 * (engine/task_pool.c). */
static inline uint32_t task_pool_take(struct task_pool *p, struct doca_event **evs, uint32_t want,
				      doca_error_t *why)
{
	EXPLORE_POINT(QUEUE);
	/* acquire: pairs with task_pool_put's release (the slots as the PE left them). */
	uint64_t h = atomic_load_explicit(&p->head, memory_order_acquire);

	for (;;) {
		uint32_t top = head_top(h), free = head_free(h), fresh = p->size - free, next = top, n = 0;
		uint32_t most = want < free ? want : free;

		if (free == 0) {
			*why = DOCA_ERROR_AGAIN;
			return 0;
		}
		if (top != 0) {
			/* pop from the stack; relaxed: a stale link fails the CAS
			 * below (the tag moved) */
			while (n < most && next != 0) {
				evs[n] = pool_slot_of(p, next - 1u);
				next = atomic_load_explicit(&evs[n++]->pool_next, memory_order_relaxed);
			}
		} else if (pool_chunk_of(p, fresh / POOL_CHUNK) == NULL) {
			if (!task_pool_publish_chunk(p, fresh / POOL_CHUNK)) {
				*why = DOCA_ERROR_NO_MEMORY;
				return 0;
			}
			continue; /* the same word: the chunk is there now */
		} else {
			/* fresh slots, in order, up to the end of their chunk */
			uint32_t room = POOL_CHUNK - fresh % POOL_CHUNK;

			n = most < room ? most : room;
		}
		EXPLORE_POINT(QUEUE);
		/* acquire on success: as the load above, for the slots we take. */
		if (atomic_compare_exchange_weak_explicit(&p->head, &h, head_next(h, free - n, next),
							  memory_order_acquire, memory_order_acquire)) {
			for (uint32_t i = 0; top == 0 && i < n; i++)
				evs[i] = pool_slot_of(p, fresh + i);
			return n;
		}
	}
}

/* Return a chain's credits in one atomic step, emptying it (the holder of
 * the PE's runner guard only). */
static inline void task_pool_put(struct task_pool *p, struct pool_chain *c)
{
	if (c->n == 0)
		return;
	EXPLORE_POINT(QUEUE);
	uint64_t h = atomic_load_explicit(&p->head, memory_order_relaxed);

	do {
		if (head_free(h) + c->n > p->size) {
			doca_log(DOCA_LOG_ERROR, "task pool full on a release: a slot was returned twice");
			abort();
		}
		atomic_store_explicit(&c->last->pool_next, head_top(h), memory_order_relaxed);
		EXPLORE_POINT(QUEUE);
		/* release: our last touch of the slots happens before their next takers'. */
	} while (!atomic_compare_exchange_weak_explicit(&p->head, &h,
							head_next(h, head_free(h) + c->n,
								  c->first->pool_index + 1u),
							memory_order_release, memory_order_relaxed));
	*c = (struct pool_chain){ 0 };
}

#endif /* DOCA_ENGINE_TASK_POOL_H */
