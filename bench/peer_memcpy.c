/*
 * peer_memcpy.c — raw single-thread memcpy over the same slots a doca case
 * uses (same sizes, same footprint): the ceiling of a software copy engine.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

struct peer_memcpy {
	uint8_t *src, *dst;
	size_t slots, size;
};

static const char *memcpy_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct peer_memcpy *p = c->priv;

	p->slots = bench_slots(bc->size, bc->depth);
	p->size = bc->size;
	p->src = bench_alloc_aligned(p->slots * bc->size);
	p->dst = bench_alloc_aligned(p->slots * bc->size);
	bench_fill(p->src, p->slots * bc->size, bc->seed);
	return NULL;
}

static void memcpy_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		       struct bench_measure *m)
{
	struct peer_memcpy *p = c->priv;
	uint64_t t0 = bench_now_ns(), deadline = t0 + (uint64_t)(seconds * 1e9), n = 0;
	unsigned turn = 0, every = bench_clock_every(bc);
	size_t slot = 0;

	do {
		for (unsigned b = 0; b < bc->batch; b++) {
			memcpy(p->dst + slot * bc->size, p->src + slot * bc->size, bc->size);
			/* the copy is an observable side effect: never elided */
			__asm__ volatile("" : : "r"(p->dst) : "memory");
			slot = slot + 1 == p->slots ? 0 : slot + 1;
		}
		n += bc->batch;
	} while (++turn % every || bench_now_ns() < deadline);
	m->ns = bench_now_ns() - t0;
	m->tasks = n;
	m->bytes = n * bc->size;
}

static void memcpy_teardown(struct bench_contender *c)
{
	struct peer_memcpy *p = c->priv;

	if (memcmp(p->src, p->dst, p->slots * p->size))
		bench_fail("memcpy: a destination differs from its source");
	free(p->src);
	free(p->dst);
}

static const struct bench_contender_ops memcpy_ops = { memcpy_setup, memcpy_run, memcpy_teardown };

void peer_memcpy_contender(struct bench_contender *c)
{
	struct peer_memcpy *p = calloc(1, sizeof(*p));

	if (!p)
		bench_fail("out of memory");
	*c = (struct bench_contender){ .name = "memcpy", .ops = &memcpy_ops, .priv = p };
}
