/*
 * peer_uring.c — io_uring IORING_OP_NOP in bursts of the case's batch: the
 * cost of a kernel asynchronous submit/complete ring with no work in it.
 */
#include "bench.h"

#include <stdlib.h>

#ifdef BENCH_HAVE_URING
#include <liburing.h>
#include <string.h>

struct peer_uring {
	struct io_uring ring;
};

static const char *uring_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct peer_uring *p = c->priv;
	int ret = io_uring_queue_init(bc->batch < 64 ? 64 : bc->batch, &p->ring, 0);

	if (ret < 0) {
		static char why[96];

		snprintf(why, sizeof(why), "io_uring_queue_init: %s", strerror(-ret));
		return why;
	}
	return NULL;
}

static void uring_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		      struct bench_measure *m)
{
	struct peer_uring *p = c->priv;
	uint64_t t0 = bench_now_ns(), deadline = t0 + (uint64_t)(seconds * 1e9), n = 0;
	unsigned turn = 0;

	do {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;

		for (unsigned b = 0; b < bc->batch; b++)
			io_uring_prep_nop(io_uring_get_sqe(&p->ring));
		if (io_uring_submit_and_wait(&p->ring, bc->batch) < 0)
			bench_fail("io_uring_submit_and_wait failed");
		io_uring_for_each_cqe(&p->ring, head, cqe)
			seen++;
		io_uring_cq_advance(&p->ring, seen);
		n += seen;
	} while (++turn % 16 || bench_now_ns() < deadline);
	m->ns = bench_now_ns() - t0;
	m->tasks = n;
}

static void uring_teardown(struct bench_contender *c)
{
	struct peer_uring *p = c->priv;

	io_uring_queue_exit(&p->ring);
}
#else
static const char *uring_setup(struct bench_contender *c, const struct bench_case *bc)
{
	return "liburing-dev was not found at build time";
}

static void uring_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		      struct bench_measure *m)
{
}

static void uring_teardown(struct bench_contender *c)
{
}

struct peer_uring {
	int unused;
};
#endif

static const struct bench_contender_ops uring_ops = { uring_setup, uring_run, uring_teardown };

void peer_uring_contender(struct bench_contender *c)
{
	struct peer_uring *p = calloc(1, sizeof(*p));

	if (!p)
		bench_fail("out of memory");
	*c = (struct bench_contender){ .name = "io_uring-nop", .ops = &uring_ops, .priv = p };
}
