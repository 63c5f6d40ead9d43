/*
 * ours_shapes.c — the inline 64 B loop in the two shapes of issue 12's
 * instruction targets, written as an application would write them, for
 * `doca_bench instr` (callgrind), `doca_bench loop --shape` and the
 * `doca-task` / `doca-burst` rows of the inline scenario (timed contenders):
 *
 *   task:  32 x doca_task_submit, doca_pe_progress,
 *          doca_pe_get_event + doca_event_free until none is ready;
 *   burst: doca_task_submit_batch of 32, doca_pe_progress,
 *          doca_pe_get_events + doca_event_free_bulk.
 *
 * Each round waits (progressing) until its whole burst is back, so at most
 * one burst is in flight; inline, one progress call completes it. Neither
 * shape reads the events (the loop does not; a status read is a
 * library call of its own, ~25 instructions): the count of events is the check.
 */
#include "ours_rig.h"

#include <stdlib.h>

#define SHAPE_BURST_MAX 64u

static uint64_t per_task_rounds(struct ours_rig *r, unsigned batch, uint64_t tasks)
{
	uint64_t done = 0, tag = 0;

	while (done < tasks) {
		uint64_t target = done + batch;
		struct doca_event *ev;

		for (unsigned i = 0; i < batch; i++)
			ours_check(ours_rig_submit(r, i, tag++), "doca_task_submit");
		while (done < target) {
			doca_pe_progress(r->pe);
			while ((ev = doca_pe_get_event(r->pe)) != NULL) {
				doca_event_free(ev);
				done++;
			}
		}
	}
	return done;
}

static uint64_t burst_rounds(struct ours_rig *r, unsigned batch, uint64_t tasks)
{
	struct doca_task_desc descs[SHAPE_BURST_MAX];
	struct doca_event *evs[SHAPE_BURST_MAX];
	uint64_t done = 0, tag = 0;
	uint32_t accepted;

	while (done < tasks) {
		uint64_t target = done + batch;

		for (unsigned i = 0; i < batch; i++)
			descs[i] = (struct doca_task_desc){
				.type = DOCA_TASK_COPY,
				.src = r->src[i],
				.dst = r->dst[i],
				.user_data = { .u64 = tag++ },
			};
		ours_check(doca_task_submit_batch(r->ctx, descs, batch, &accepted), "doca_task_submit_batch");
		while (done < target) {
			uint32_t n;

			doca_pe_progress(r->pe);
			n = doca_pe_get_events(r->pe, evs, batch);
			doca_event_free_bulk(evs, n);
			done += n;
		}
	}
	return done;
}

/*
 * Run @p tasks (rounded up to whole bursts) copies of @p size bytes on the
 * inline device in bursts of @p batch (at most 64), shaped as @p shape
 * ("task" or "burst"). @return the copies completed.
 */
uint64_t ours_shape_loop(const char *shape, size_t size, unsigned batch, uint64_t tasks)
{
	struct ours_rig r;
	struct ours_rig_conf conf = { .dev_open = BENCH_INLINE_DEV, .slots = batch };
	uint64_t done;

	if (batch > SHAPE_BURST_MAX)
		bench_fail("--shape %s takes --batch up to %u", shape, SHAPE_BURST_MAX);
	if (ours_rig_open(&r, size, &conf))
		bench_fail("cannot open %s", BENCH_INLINE_DEV);
	done = shape[0] == 't' ? per_task_rounds(&r, batch, tasks) : burst_rounds(&r, batch, tasks);
	ours_rig_close(&r);
	return done;
}

/* A timed contender running one of the two shapes on the case's size and batch. */
struct ours_shape {
	struct ours_rig rig;
	uint64_t (*rounds)(struct ours_rig *r, unsigned batch, uint64_t tasks);
};

static const char *shape_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct ours_shape *o = c->priv;
	struct ours_rig_conf conf = { .dev_open = BENCH_INLINE_DEV, .slots = bc->batch };

	if (bc->batch > SHAPE_BURST_MAX)
		return "batch above 64";
	return ours_rig_open(&o->rig, bc->size, &conf);
}

static void shape_teardown(struct bench_contender *c)
{
	struct ours_shape *o = c->priv;

	ours_rig_close(&o->rig);
}

/* The shape's own loop, 64 rounds between two clock reads. */
static void shape_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		      struct bench_measure *m)
{
	struct ours_shape *o = c->priv;
	double a0 = bench_thread_allocated();
	uint64_t t0 = bench_now_ns(), deadline = t0 + (uint64_t)(seconds * 1e9);

	m->tasks = 0;
	do
		m->tasks += o->rounds(&o->rig, bc->batch, 64ull * bc->batch);
	while (bench_now_ns() < deadline);
	m->ns = bench_now_ns() - t0;
	m->bytes = m->tasks * bc->size;
	if (a0 >= 0)
		m->alloc_bytes = bench_thread_allocated() - a0;
}

static const struct bench_contender_ops shape_ops = { shape_setup, shape_run, shape_teardown };

/** Fill @p c with the @p shape ("task" or "burst") loop on inline sw0, named doca-<shape>. */
void ours_shape_contender(struct bench_contender *c, const char *shape)
{
	struct ours_shape *o = calloc(1, sizeof(*o));

	if (!o)
		bench_fail("out of memory");
	o->rounds = shape[0] == 't' ? per_task_rounds : burst_rounds;
	*c = (struct bench_contender){ .name = shape[0] == 't' ? "doca-task" : "doca-burst", .ops = &shape_ops,
				       .priv = o };
}
