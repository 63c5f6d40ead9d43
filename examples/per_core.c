/*
 * per_core.c — one progress engine per CPU, each run by a pinned worker.
 *
 *   ./per_core [--dev NAME] [--tasks N] [--window N] [--len N]
 *
 * For every CPU the process may run on: a PE handed to a worker thread
 * pinned to that CPU (doca_pe_run_on_cpu) and one context connected to it,
 * all contexts bound to the same device. main submits a first window of
 * copies per context; from then on each context's event callback, running
 * on its worker, verifies the copy and resubmits the slot until the context
 * has done its share. main only watches the counters, then stops the workers
 * (doca_pe_stop_run) and tears everything down. Prints per-core and total
 * throughput.
 */
#include "example_common.h"

#include <sched.h>
#include <stdatomic.h>

static const char about[] = "one context per worker-driven PE per CPU";

struct core {
	int cpu;
	struct doca_pe *pe;
	struct doca_ctx *ctx;
	struct example_slots slots;
	size_t tasks;              /* copies this context must complete */
	size_t *slot_task;         /* per slot: the copy number in it */
	size_t submitted;          /* worker only, once running */
	atomic_size_t completed;   /* written by the worker, read by main */
	atomic_uint_fast64_t done_ns; /* when the last copy completed */
};

static void submit_slot(struct core *core, size_t slot)
{
	size_t n = core->submitted++;

	example_slots_fill(&core->slots, slot, example_seed((uint64_t)core->cpu, n));
	core->slot_task[slot] = n;
	EXAMPLE_CHECK(example_slots_submit(core->ctx, &core->slots, slot, slot));
}

/* Runs on the core's worker: verify, count, and reuse the slot. */
static void on_event(struct doca_event *ev, union doca_data ctx_user_data)
{
	struct core *core = ctx_user_data.ptr;
	size_t slot = (size_t)doca_event_get_user_data(ev).u64;
	size_t done;

	if (slot >= core->slots.count)
		example_fail("cpu %d: event for unknown slot %zu", core->cpu, slot);
	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS ||
	    doca_event_get_bytes(ev) != core->slots.len)
		example_fail("cpu %d slot %zu: status %s, error %s", core->cpu, slot,
			     example_status_name(doca_event_get_status(ev)),
			     doca_error_get_name(doca_event_get_error(ev)));
	example_slots_verify(&core->slots, slot, example_seed((uint64_t)core->cpu, core->slot_task[slot]));
	if (core->submitted < core->tasks)
		submit_slot(core, slot);
	/* Only this worker writes the counter; main reads it with acquire. */
	done = atomic_load_explicit(&core->completed, memory_order_relaxed) + 1;
	if (done == core->tasks)
		atomic_store_explicit(&core->done_ns, example_now_ns(), memory_order_relaxed);
	atomic_store_explicit(&core->completed, done, memory_order_release);
}

static int allowed_cpus(int *cpus, int cap)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		example_fail("sched_getaffinity failed");
	for (int cpu = 0; cpu < CPU_SETSIZE && n < cap; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

static void setup_core(struct core *core, int cpu, struct doca_dev *dev, size_t tasks, size_t window,
		       size_t len)
{
	core->cpu = cpu;
	core->tasks = tasks;
	atomic_init(&core->completed, 0);
	atomic_init(&core->done_ns, 0);
	EXAMPLE_CHECK(doca_pe_create(&core->pe));
	EXAMPLE_CHECK(doca_ctx_create(&core->ctx));
	EXAMPLE_CHECK(doca_ctx_set_dev(core->ctx, dev));
	EXAMPLE_CHECK(doca_ctx_set_user_data(core->ctx, (union doca_data){ .ptr = core }));
	EXAMPLE_CHECK(doca_ctx_set_event_cb(core->ctx, on_event));
	example_slots_create(core->ctx, window, len, &core->slots);
	core->slot_task = calloc(window, sizeof(*core->slot_task));
	if (!core->slot_task)
		example_fail("out of memory");
	EXAMPLE_CHECK(doca_pe_connect_ctx(core->pe, core->ctx));
	EXAMPLE_CHECK(doca_ctx_start(core->ctx));
}

/* Submit the first window (before the worker runs), then hand the PE over. */
static void launch_core(struct core *core)
{
	for (size_t slot = 0; slot < core->slots.count && core->submitted < core->tasks; slot++)
		submit_slot(core, slot);
	EXAMPLE_CHECK(doca_pe_run_on_cpu(core->pe, core->cpu));
}

static bool all_done(struct core *cores, int n)
{
	for (int i = 0; i < n; i++)
		if (atomic_load_explicit(&cores[i].completed, memory_order_acquire) < cores[i].tasks)
			return false;
	return true;
}

static void wait_all_done(struct core *cores, int n, uint64_t start)
{
	const struct timespec tick = { .tv_nsec = 1000 * 1000 };

	while (!all_done(cores, n)) {
		nanosleep(&tick, NULL);
		example_check_deadline(start, "every core's copies");
	}
}

/* Take the PE back from its worker, then stop and destroy in reverse order. */
static void teardown_core(struct core *core)
{
	EXAMPLE_CHECK(doca_pe_stop_run(core->pe));
	if (atomic_load(&core->completed) != core->tasks)
		example_fail("cpu %d: %zu completions for %zu copies", core->cpu,
			     (size_t)atomic_load(&core->completed), core->tasks);
	EXAMPLE_CHECK(doca_ctx_stop(core->ctx));
	example_slots_destroy(&core->slots);
	free(core->slot_task);
}

static void report(const struct core *cores, int n, size_t len, uint64_t start, uint64_t end)
{
	double seconds = (double)(end - start) / 1e9;
	size_t total = 0;

	for (int i = 0; i < n; i++) {
		double s = (double)(atomic_load(&cores[i].done_ns) - start) / 1e9;

		total += cores[i].tasks;
		printf("  cpu %-3d %zu copies verified in %.3f s: %.0f copies/s\n", cores[i].cpu,
		       cores[i].tasks, s, (double)cores[i].tasks / s);
	}
	printf("  total   %zu copies of %zu bytes in %.3f s: %.0f copies/s, %.1f MB/s\n", total, len,
	       seconds, (double)total / seconds,
	       (double)total * (double)len / seconds / 1e6);
}

int main(int argc, char **argv)
{
	unsigned long tasks = 20000, window = 32, len = 1024;
	struct example_opt opts[] = {
		{ "tasks", &tasks, "copies per core" },
		{ "window", &window, "copies in flight per core (at most 1023)" },
		{ "len", &len, "bytes per copy" },
	};
	const char *dev_name = example_parse_args(argc, argv, about, "sw0", opts, 3);
	int cpus[256];
	int n = allowed_cpus(cpus, 256);
	struct core *cores = calloc((size_t)n, sizeof(*cores));
	struct doca_dev *dev;
	uint64_t start, end;

	if (!cores)
		example_fail("out of memory");
	if (!tasks || !window || window >= DOCA_CTX_DEFAULT_MAX_TASKS || !len)
		example_fail("--tasks and --len must be positive, --window 1..%u",
			     DOCA_CTX_DEFAULT_MAX_TASKS - 1);
	printf("per_core: %d CPUs, one PE + context each on \"%s\", %lu copies of %lu bytes per core\n", n,
	       dev_name, tasks, len);
	dev = example_open_dev(dev_name);
	for (int i = 0; i < n; i++)
		setup_core(&cores[i], cpus[i], dev, tasks, window, len);

	start = example_now_ns();
	for (int i = 0; i < n; i++)
		launch_core(&cores[i]);
	wait_all_done(cores, n, start);
	end = example_now_ns();

	for (int i = 0; i < n; i++)
		teardown_core(&cores[i]);
	EXAMPLE_CHECK(doca_dev_close(dev));
	for (int i = 0; i < n; i++) {
		EXAMPLE_CHECK(doca_ctx_destroy(cores[i].ctx));
		EXAMPLE_CHECK(doca_pe_destroy(cores[i].pe));
	}
	report(cores, n, len, start, end);
	free(cores);
	return EXIT_SUCCESS;
}
