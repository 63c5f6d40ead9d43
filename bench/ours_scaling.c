/*
 * ours_scaling.c — one context + PE per CPU, each PE run by a worker pinned
 * to its CPU (doca_pe_run_on_cpu), all on the inline "sw0". Each context's
 * event callback resubmits its copy while the measurement runs; main only
 * reads the completion counters at the start and the end of the window.
 */
#include "ours_rig.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WINDOW 32u /* copies in flight per context */

struct scale_core {
	_Alignas(64) struct ours_rig rig;
	const atomic_bool *running;
	_Atomic uint64_t submitted; /* incremented before the matching completed */
	_Atomic uint64_t completed; /* written by the worker only */
};

struct ours_scaling {
	unsigned cpus;      /* 0: every online CPU */
	unsigned n;
	atomic_bool running;
	struct scale_core core[64];
	char name[32];
};

static void submit_slot(struct scale_core *core, size_t slot)
{
	atomic_fetch_add_explicit(&core->submitted, 1, memory_order_relaxed);
	ours_check(ours_rig_submit(&core->rig, slot, slot), "doca_task_submit");
}

/* On the core's worker: check, count, and resubmit while running. */
static void on_event(struct doca_event *ev, union doca_data ctx_user_data)
{
	struct scale_core *core = ctx_user_data.ptr;

	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS)
		bench_fail("a copy failed: %s", doca_error_get_name(doca_event_get_error(ev)));
	if (atomic_load_explicit(core->running, memory_order_relaxed))
		submit_slot(core, (size_t)doca_event_get_user_data(ev).u64);
	atomic_store_explicit(&core->completed,
			      atomic_load_explicit(&core->completed, memory_order_relaxed) + 1,
			      memory_order_release);
}

static const char *scaling_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct ours_scaling *o = c->priv;

	o->n = o->cpus ? o->cpus : (unsigned)bench_cpu_count();
	if (o->n > 64)
		o->n = 64;
	atomic_init(&o->running, false);
	for (unsigned i = 0; i < o->n; i++) {
		struct scale_core *core = &o->core[i];
		struct ours_rig_conf conf = { .dev_open = "sw0", .slots = WINDOW, .cb = on_event, .cb_data = core };
		const char *why = ours_rig_open(&core->rig, bc->size, &conf);

		if (why)
			return why;
		core->running = &o->running;
		ours_check(doca_pe_run_on_cpu(core->rig.pe, (int)i), "doca_pe_run_on_cpu");
	}
	return NULL;
}

static uint64_t total_completed(const struct ours_scaling *o)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < o->n; i++)
		sum += atomic_load_explicit(&o->core[i].completed, memory_order_acquire);
	return sum;
}

static bool drained(struct ours_scaling *o)
{
	for (unsigned i = 0; i < o->n; i++) {
		uint64_t done = atomic_load_explicit(&o->core[i].completed, memory_order_acquire);

		if (atomic_load_explicit(&o->core[i].submitted, memory_order_relaxed) != done)
			return false;
	}
	return true;
}

static void scaling_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
			struct bench_measure *m)
{
	struct ours_scaling *o = c->priv;
	struct timespec nap = { .tv_sec = (time_t)seconds,
				.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9) };
	const struct timespec tick = { .tv_nsec = 100 * 1000 };
	uint64_t t0, c0;

	atomic_store(&o->running, true);
	for (unsigned i = 0; i < o->n; i++)
		for (size_t slot = 0; slot < WINDOW; slot++)
			submit_slot(&o->core[i], slot);
	t0 = bench_now_ns();
	c0 = total_completed(o);
	nanosleep(&nap, NULL);
	m->tasks = total_completed(o) - c0;
	m->ns = bench_now_ns() - t0;
	m->bytes = m->tasks * bc->size;
	atomic_store(&o->running, false);
	while (!drained(o))
		nanosleep(&tick, NULL);
}

static void scaling_teardown(struct bench_contender *c)
{
	struct ours_scaling *o = c->priv;

	for (unsigned i = 0; i < o->n; i++) {
		ours_check(doca_pe_stop_run(o->core[i].rig.pe), "doca_pe_stop_run");
		ours_rig_close(&o->core[i].rig);
	}
}

static const struct bench_contender_ops scaling_ops = { scaling_setup, scaling_run, scaling_teardown };

/** @p cpus PEs on CPUs 0..cpus-1 (0: every online CPU). */
void ours_scaling_contender(struct bench_contender *c, unsigned cpus)
{
	struct ours_scaling *o = bench_alloc_aligned(sizeof(*o));

	o->cpus = cpus;
	snprintf(o->name, sizeof(o->name), "doca x%u", cpus ? cpus : (unsigned)bench_cpu_count());
	*c = (struct bench_contender){ .name = o->name, .ops = &scaling_ops, .priv = o };
}
