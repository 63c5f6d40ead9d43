/*
 * ours_remote.c — the doca contender of `doca_bench remote`: fab0, a
 * context and PE polled by this thread, a local memory of source slots, the
 * target's exported memory imported as the destination: COPY local →
 * remote is an RDMA WRITE with delivery completion, through the same
 * measuring loops as every other contender (bench_pump.c).
 */
#include "bench.h"
#include "ours_rig.h"
#include "peer_fabric.h"

#include <stdlib.h>

#define REMOTE_BURST_MAX 64u

struct ours_remote {
	const struct remote_target *target;
	struct doca_dev *dev;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	struct doca_mem *local, *remote;
	struct doca_buf **src, **dst;
	size_t slots, next;
	double *lat;
};

static void remote_submit(void *q, unsigned n)
{
	struct ours_remote *o = q;
	struct doca_task_desc descs[REMOTE_BURST_MAX];
	uint32_t accepted;

	while (n > 0) {
		unsigned k = n < REMOTE_BURST_MAX ? n : REMOTE_BURST_MAX;

		for (unsigned i = 0; i < k; i++) {
			size_t s = o->next++ % o->slots;

			descs[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = o->src[s],
							    .dst = o->dst[s] };
		}
		ours_check(doca_task_submit_batch(o->ctx, descs, k, &accepted), "doca_task_submit_batch");
		n -= k;
	}
}

static uint64_t remote_reap(void *q, unsigned max)
{
	struct ours_remote *o = q;

	(void)max;
	return ours_progress_and_reap(o->pe);
}

static void remote_teardown(struct bench_contender *c)
{
	struct ours_remote *o = c->priv;

	if (o->ctx) {
		if (doca_ctx_stop(o->ctx) == DOCA_ERROR_IN_PROGRESS)
			bench_fail("remote: tasks left at teardown");
	}
	for (size_t i = 0; o->src && i < o->slots; i++) {
		doca_buf_destroy(o->src[i]);
		doca_buf_destroy(o->dst[i]);
	}
	free(o->src);
	free(o->dst);
	if (o->remote)
		doca_mem_destroy(o->remote);
	if (o->local)
		doca_mem_destroy(o->local);
	if (o->dev)
		doca_dev_close(o->dev);
	if (o->ctx)
		doca_ctx_destroy(o->ctx);
	if (o->pe)
		doca_pe_destroy(o->pe);
	free(o->lat);
	const struct remote_target *t = o->target;

	*o = (struct ours_remote){ .target = t };
}

static const char *remote_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct ours_remote *o = c->priv;
	const struct bench_queue q = { remote_submit, remote_reap, o };
	void *addr;

	o->slots = bench_slots(bc->size, bc->depth);
	o->next = 0;
	if (doca_dev_open(REMOTE_DEV, &o->dev) != DOCA_SUCCESS)
		return "fab0 cannot be opened";
	ours_check(doca_ctx_create(&o->ctx), "doca_ctx_create");
	ours_check(doca_ctx_set_dev(o->ctx, o->dev), "doca_ctx_set_dev");
	if (bc->depth > DOCA_CTX_DEFAULT_MAX_TASKS)
		ours_check(doca_ctx_set_max_tasks(o->ctx, bc->depth), "doca_ctx_set_max_tasks");
	ours_check(doca_pe_create(&o->pe), "doca_pe_create");
	ours_check(doca_pe_connect_ctx(o->pe, o->ctx), "doca_pe_connect_ctx");
	ours_check(doca_mem_create(o->ctx, o->slots * bc->size, DOCA_ACCESS_FLAG_READ, &o->local),
		   "doca_mem_create");
	ours_check(doca_mem_get_addr(o->local, &addr), "doca_mem_get_addr");
	bench_fill(addr, o->slots * bc->size, bc->seed);
	ours_check(doca_mem_import(o->ctx, o->target->desc, o->target->desc_len, &o->remote),
		   "doca_mem_import");
	o->src = calloc(o->slots, sizeof(*o->src));
	o->dst = calloc(o->slots, sizeof(*o->dst));
	if (!o->src || !o->dst)
		bench_fail("out of memory");
	for (size_t i = 0; i < o->slots; i++) {
		ours_check(doca_buf_create(o->local, i * bc->size, bc->size, &o->src[i]), "doca_buf_create");
		ours_check(doca_buf_create(o->remote, i * bc->size, bc->size, &o->dst[i]), "doca_buf_create");
	}
	ours_check(doca_ctx_start(o->ctx), "doca_ctx_start");
	bench_pump(&q, 1, 1, 1, 0, 1); /* connect, untimed */
	return NULL;
}

static void remote_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		       struct bench_measure *m)
{
	struct ours_remote *o = c->priv;
	const struct bench_queue q = { remote_submit, remote_reap, o };
	uint64_t t0 = bench_now_ns(), deadline = t0 + (uint64_t)(seconds * 1e9);

	if (bc->depth == 1) {
		if (!o->lat && !(o->lat = malloc(BENCH_LAT_CAP * sizeof(*o->lat))))
			bench_fail("out of memory");
		m->n_lat = bench_latency_loop(&q, o->lat, BENCH_LAT_CAP, deadline, &m->ns);
		m->lat_ns = o->lat;
		m->tasks = m->n_lat;
	} else {
		m->tasks = bench_pump(&q, bc->batch, bc->depth, UINT64_MAX, deadline, 1);
		m->ns = bench_now_ns() - t0;
	}
	m->bytes = m->tasks * bc->size;
}

static const struct bench_contender_ops remote_ops = { remote_setup, remote_run, remote_teardown };

void ours_remote_contender(struct bench_contender *c, const struct remote_target *t)
{
	struct ours_remote *o = calloc(1, sizeof(*o));

	if (!o)
		bench_fail("out of memory");
	o->target = t;
	*c = (struct bench_contender){ .name = "doca", .ops = &remote_ops, .priv = o };
}
