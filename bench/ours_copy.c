/*
 * ours_copy.c — doca copy contenders: throughput (inline and offload
 * scenarios) and one-at-a-time latency, both polling the PE from the
 * application thread through the shared loops of bench_pump.c.
 *
 * Throughput (`doca`) reaps with the burst calls, doca_pe_get_events_ok
 * and doca_event_free_bulk (ours_progress_and_reap_bulk), as the DPDK
 * skeleton reaps with rte_dma_completed: one call returns the events that
 * succeeded and one error flag, no status read per event;
 * `doca-per-event` is the same loop reaping one event at a time
 * (doca_pe_get_event, a status read, doca_event_free), and so is the
 * latency loop, which has one event to reap.
 */
#include "ours_rig.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COPY_BURST_MAX 64u

struct ours_copy {
	struct ours_rig rig;
	const char *dev_open;
	size_t slot;   /* next slot to submit */
	uint64_t tag;  /* next task's user data */
	double *lat;
	bool per_event; /* reap one event at a time (get_event, free) */
	bool yield_empty; /* ours_pump_loop on an engine: yield after a reap that found nothing */
	uint64_t empty;   /* reaps that found nothing (counted with yield_empty) */
};

/* A burst goes in with one doca_task_submit_batch call, as io_uring's
 * batch goes in with one io_uring_submit. */
static void copy_submit_burst(void *q, unsigned n)
{
	struct ours_copy *o = q;
	struct doca_task_desc descs[COPY_BURST_MAX];
	uint32_t accepted;

	while (n > 0) {
		unsigned k = n < COPY_BURST_MAX ? n : COPY_BURST_MAX;

		ours_rig_descs(&o->rig, descs, k, &o->slot, &o->tag);
		ours_check(doca_task_submit_batch(o->rig.ctx, descs, k, &accepted),
			   "doca_task_submit_batch");
		n -= k;
	}
}

static uint64_t copy_reap(void *q, unsigned max)
{
	struct ours_copy *o = q;
	uint64_t n = o->per_event ? ours_progress_and_reap(o->rig.pe) : ours_progress_and_reap_bulk(o->rig.pe);

	if (n == 0 && o->yield_empty) {
		o->empty++;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	return n;
}

static const char *copy_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct ours_copy *o = c->priv;
	struct ours_rig_conf conf = {
		.dev_open = o->dev_open,
		.slots = bench_slots(bc->size, bc->depth),
		.max_tasks = bc->depth > DOCA_CTX_DEFAULT_MAX_TASKS ? bc->depth : 0,
	};

	o->slot = 0;
	return ours_rig_open(&o->rig, bc->size, &conf);
}

static void copy_teardown(struct bench_contender *c)
{
	struct ours_copy *o = c->priv;

	ours_rig_close(&o->rig);
	free(o->lat);
	o->lat = NULL;
}

static void copy_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		     struct bench_measure *m)
{
	struct ours_copy *o = c->priv;
	const struct bench_queue q = { copy_submit_burst, copy_reap, o };
	double a0 = bench_thread_allocated();
	uint64_t t0 = bench_now_ns();

	m->tasks = bench_pump(&q, bc->batch, bc->depth, UINT64_MAX, t0 + (uint64_t)(seconds * 1e9),
			      bench_clock_every(bc));
	m->ns = bench_now_ns() - t0;
	m->bytes = m->tasks * bc->size;
	if (a0 >= 0)
		m->alloc_bytes = bench_thread_allocated() - a0;
}

static void latency_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
			struct bench_measure *m)
{
	struct ours_copy *o = c->priv;
	const struct bench_queue q = { copy_submit_burst, copy_reap, o };

	if (!o->lat && !(o->lat = malloc(BENCH_LAT_CAP * sizeof(*o->lat))))
		bench_fail("out of memory");
	m->n_lat = bench_latency_loop(&q, o->lat, BENCH_LAT_CAP,
				      bench_now_ns() + (uint64_t)(seconds * 1e9), &m->ns);
	m->lat_ns = o->lat;
	m->tasks = m->n_lat;
	m->bytes = m->n_lat * bc->size;
}

static const struct bench_contender_ops copy_ops = { copy_setup, copy_run, copy_teardown };
static const struct bench_contender_ops latency_ops = { copy_setup, latency_run, copy_teardown };

static void init(struct bench_contender *c, const char *name, const char *dev_open,
		 const struct bench_contender_ops *ops, bool per_event)
{
	struct ours_copy *o = calloc(1, sizeof(*o));

	if (!o)
		bench_fail("out of memory");
	o->dev_open = dev_open;
	o->per_event = per_event;
	*c = (struct bench_contender){ .name = name, .ops = ops, .priv = o };
}

void ours_copy_contender(struct bench_contender *c, const char *dev_open)
{
	init(c, "doca", dev_open, &copy_ops, false);
}

void ours_copy_per_event_contender(struct bench_contender *c, const char *dev_open)
{
	init(c, "doca-per-event", dev_open, &copy_ops, true);
}

void ours_latency_contender(struct bench_contender *c)
{
	init(c, "doca", BENCH_OFFLOAD_DEV, &latency_ops, true);
}

/*
 * The pump loop alone, for strace (syscalls per task) and callgrind
 * (instructions per task): @p tasks copies of @p size bytes in bursts of
 * @p batch on @p dev_open, @p depth in flight (the inline scenario's loop
 * on "sw0" with depth = batch, the offload scenario's on
 * BENCH_OFFLOAD_DEV with its depth). @return the copies completed.
 *
 * On a device with engine threads a reap that finds nothing yields the
 * CPU (and is counted in *empty): under valgrind, which runs one thread
 * at a time, the PE would otherwise poll through its whole time slice
 * while the engine thread waits for it (a million instructions a task).
 * So the PE thread's count is its path per task plus *empty empty reaps,
 * a number that depends on the scheduling.
 */
uint64_t ours_pump_loop(const char *dev_open, size_t size, unsigned batch, unsigned depth, uint64_t tasks,
			uint64_t *empty)
{
	struct ours_copy o = { .dev_open = dev_open, .yield_empty = strcmp(dev_open, BENCH_INLINE_DEV) != 0 };
	struct ours_rig_conf conf = {
		.dev_open = dev_open,
		.slots = bench_slots(size, depth),
		.max_tasks = depth > DOCA_CTX_DEFAULT_MAX_TASKS ? depth : 0,
	};
	const struct bench_queue q = { copy_submit_burst, copy_reap, &o };
	uint64_t done;

	if (ours_rig_open(&o.rig, size, &conf))
		bench_fail("cannot open %s", dev_open);
	bench_syscall_marker(BENCH_LOOP_BEGIN);
	done = tasks ? bench_pump(&q, batch, depth, tasks, 0, 1) : 0;
	bench_syscall_marker(BENCH_LOOP_END);
	ours_rig_close(&o.rig);
	*empty = o.empty;
	return done;
}
