/*
 * bench_main.c — doca_bench: the benchmark of doca-core against its peers
 * (raw memcpy, DPDK dmadev skeleton, io_uring NOP, Concurrency Kit rings).
 * See bench/README.md and `doca_bench --help`.
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name;
	void (*run)(const struct bench_opts *o);
} scenarios[] = {
	{ "inline", scenario_inline },   { "offload", scenario_offload }, { "latency", scenario_latency },
	{ "mailbox", scenario_mailbox }, { "scaling", scenario_scaling }, { "events", scenario_events },
	{ "contexts", scenario_contexts }, { "watched", scenario_watched },
	{ "remote", scenario_remote }, /* asked for by name only: needs fab0 and a second process */
};

const char *bench_self_path(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		bench_fail("cannot find my own executable");
	path[n] = '\0';
	return path;
}

/* "loop": the pump on --dev ("offload": the offload scenario's device and
 * --depth in flight; sw0, the default: the inline scenario's loop, --batch
 * in flight), or a shape of ours_shapes.c (inline sw0 only). */
static int cmd_loop(const struct bench_opts *o)
{
	bool pump = !strcmp(o->shape, "pump");
	const char *dev = !strcmp(o->dev, "offload") ? BENCH_OFFLOAD_DEV : o->dev;
	unsigned depth = !strcmp(dev, BENCH_INLINE_DEV) ? o->batch : o->depth;
	uint64_t done, empty = 0;

	if (!pump && strcmp(dev, BENCH_INLINE_DEV))
		bench_fail("--shape %s runs on %s only", o->shape, BENCH_INLINE_DEV);
	done = pump ? ours_pump_loop(dev, o->sizes[0], o->batch, depth, o->tasks, &empty)
		    : ours_shape_loop(o->shape, o->sizes[0], o->batch, o->tasks);
	printf("loop (%s): %llu copies of %zu B in bursts of %u, %u in flight, on %s; %llu empty reaps\n",
	       o->shape, (unsigned long long)done, o->sizes[0], o->batch, pump ? depth : o->batch, dev,
	       (unsigned long long)empty);
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	const char *cmd;
	char sys_line[512] = "not measured (run `doca_bench` or `doca_bench syscalls`)";
	double sys_per_task = NAN, instr[2];
	bool all;

	bench_parse(argc, argv, &o, &cmd);
	if (bench_pin_self(BENCH_APP_CPU))
		fprintf(stderr, "doca_bench: cannot pin to CPU %d; numbers will be noisier\n", BENCH_APP_CPU);
	if (!strcmp(cmd, "loop"))
		return cmd_loop(&o);
	if (!strcmp(cmd, "ctxmem"))
		return ours_ctxmem(&o);
	if (!strcmp(cmd, "instr"))
		return bench_instr(bench_self_path(), o.batch, false, instr);
	all = !strcmp(cmd, "all");
	if (all) {
		bench_instr(bench_self_path(), o.batch, true, instr);
		bench_report_instr(instr[0], instr[1]);
	}
	if (all || !strcmp(cmd, "syscalls")) {
		bench_progress("syscalls: strace -c -f over the inline loop");
		sys_per_task = bench_syscalls(bench_self_path(), o.batch, sys_line, sizeof(sys_line));
		bench_progress_done();
		if (!all) {
			printf("syscalls: %s\n", sys_line);
			return isnan(sys_per_task) ? 1 : 0;
		}
	}
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if ((all && scenarios[i].run != scenario_remote) || !strcmp(cmd, scenarios[i].name))
			scenarios[i].run(&o);
	bench_report(&o, sys_per_task, sys_line);
	peer_dpdk_cleanup();
	return 0;
}
