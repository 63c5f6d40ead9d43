/*
 * bench_cli.c — command line of doca_bench: a command and its options.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: doca_bench [COMMAND] [OPTIONS]\n"
	"\n"
	"commands (default: all):\n"
	"  all        every scenario below, the syscall and instruction counts, table,\n"
	"             CSV, JSON, picture\n"
	"  inline     (a) one thread, sw0 inline, batch 1 and --batch; at the first size\n"
	"             and --batch also the task and burst loops (doca-task, doca-burst)\n"
	"  offload    (b) app on CPU 0, sw0:engines=1,cpus=1, --depth in bursts of --batch\n"
	"  latency    (c) one copy at a time (offload), p50/p99/p99.9\n"
	"  mailbox    (d) 1..--threads foreign submitters into one context, vs the PE\n"
	"             submitting to itself (doca-self) and vs 1 submitter (doca-1sub)\n"
	"  scaling    (e) one context + worker PE per CPU vs one\n"
	"  events     (f) event mode, sw0:engines=1: one task at a time and --depth in\n"
	"             flight; wake-ups per task and the share that found no event\n"
	"  contexts   (g) 1..10000 started contexts on one PE, one active: empty\n"
	"             progress calls/s, the active one's tasks/s, RSS per context\n"
	"  watched    one foreign submitter's tasks to one context while W = 1, 64, 256,\n"
	"             1024 other contexts of its PE are watched: tasks/s, p50/p99\n"
	"             submit-to-event, each W against W=1\n"
	"  ctxmem     (used by contexts) RSS bytes per idle started context: --contexts\n"
	"             of them on --dev, in a fresh process\n"
	"  remote     (g) RDMA WRITE into another process over fab0, QD1 and QD64, 64 B..1 MiB,\n"
	"             vs a raw libfabric loop (same provider and flags); not part of all\n"
	"  syscalls   strace -c -f over two inline runs: syscalls per task\n"
	"  instr      callgrind over the inline 64 B loop, per-task and burst shapes:\n"
	"             instructions per task (needs valgrind)\n"
	"  loop       only the inline loop (for strace, callgrind): --sizes first size,\n"
	"             --batch, --tasks, --shape; with --dev offload the offload\n"
	"             scenario's pump instead (sw0:engines=1,cpus=1, --depth in flight)\n"
	"\n"
	"options:\n"
	"  --sizes LIST      copy sizes, e.g. 64,4K,64K,1M (default)\n"
	"  --lat-sizes LIST  latency copy sizes (default 64,4K)\n"
	"  --batch N         tasks per burst (default 32)\n"
	"  --depth N         offload tasks in flight (default 512)\n"
	"  --threads N       most mailbox submitters (default: CPUs)\n"
	"  --duration SEC    seconds per measurement (default 0.25)\n"
	"  --reps N          interleaved repetitions, median reported (default 5)\n"
	"  --seed N          buffer contents and first contender order (default 1)\n"
	"  --tasks N         loop: copies to run (default 1000000)\n"
	"  --shape S         loop: pump (default: the inline scenario's loop), task\n"
	"                    (doca_task_submit, doca_pe_get_event + doca_event_free) or\n"
	"                    burst (doca_task_submit_batch, doca_pe_get_events +\n"
	"                    doca_event_free_bulk)\n"
	"  --contexts N      contexts: the largest count (default 10000; then /10 down to 1);\n"
	"                    ctxmem: the count\n"
	"  --dev STR         ctxmem: the device open string (default sw0); loop (pump\n"
	"                    shape): the device, \"offload\" for the offload scenario's\n"
	"                    (sw0 keeps --batch in flight, any other --depth)\n"
	"  --out DIR         results directory (default bench/results in the source tree)\n"
	"  --no-plot         skip gnuplot\n";

static const char *const commands[] = { "all", "inline", "offload", "latency", "mailbox",
					 "scaling", "events", "contexts", "watched", "ctxmem", "syscalls", "instr",
					 "loop", "remote" };

static _Noreturn void bad(const char *what, const char *arg)
{
	fprintf(stderr, "doca_bench: %s \"%s\"\n\n%s", what, arg ? arg : "", usage);
	exit(2);
}

/* "64", "4K", "1M" */
static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || !v || *s == '-')
		bad("bad size", s);
	return (size_t)v;
}

static unsigned parse_list(const char *s, size_t *out)
{
	char buf[256], *save = NULL;
	unsigned n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == BENCH_MAX_SIZES)
			bad("too many sizes in", s);
		out[n++] = parse_size(tok);
	}
	if (!n)
		bad("empty size list", s);
	return n;
}

static unsigned long parse_uint(const char *s, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long v = s ? strtoul(s, &end, 0) : 0;

	if (!s || *end || *s == '-' || v < lo || v > hi)
		bad("bad number", s);
	return v;
}

static void defaults(struct bench_opts *o)
{
	static const size_t sizes[] = { 64, 4096, 65536, 1 << 20 };

	memset(o, 0, sizeof(*o));
	memcpy(o->sizes, sizes, sizeof(sizes));
	o->n_sizes = 4;
	o->lat_sizes[0] = 64;
	o->lat_sizes[1] = 4096;
	o->n_lat_sizes = 2;
	o->batch = 32;
	o->depth = 512;
	o->threads = (unsigned)bench_cpu_count();
	o->duration = 0.25;
	o->reps = 5;
	o->seed = 1;
	o->tasks = 1000000;
	o->shape = "pump";
	o->out_dir = BENCH_SOURCE_DIR "/results";
	o->plot = true;
	o->contexts = 10000;
	o->dev = BENCH_INLINE_DEV;
}

/** Fill @p o and @p cmd from argv; exits on bad usage or --help. */
int bench_parse(int argc, char **argv, struct bench_opts *o, const char **cmd)
{
	int i = 1;

	defaults(o);
	*cmd = "all";
	if (argc > 1 && argv[1][0] != '-') {
		bool known = false;

		for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
			known |= !strcmp(argv[1], commands[c]);
		if (!known)
			bad("unknown command", argv[1]);
		*cmd = argv[1];
		i = 2;
	}
	for (; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			exit(0);
		} else if (!strcmp(a, "--no-plot")) {
			o->plot = false;
			continue;
		} else if (!v) {
			bad("missing value after", a);
		} else if (!strcmp(a, "--sizes")) {
			o->n_sizes = parse_list(v, o->sizes);
		} else if (!strcmp(a, "--lat-sizes")) {
			o->n_lat_sizes = parse_list(v, o->lat_sizes);
		} else if (!strcmp(a, "--batch")) {
			o->batch = (unsigned)parse_uint(v, 1, 4096);
		} else if (!strcmp(a, "--depth")) {
			o->depth = (unsigned)parse_uint(v, 1, 1u << 20);
		} else if (!strcmp(a, "--threads")) {
			o->threads = (unsigned)parse_uint(v, 1, 64);
		} else if (!strcmp(a, "--duration")) {
			o->duration = strtod(v, NULL);
			if (!(o->duration > 0 && o->duration <= 60))
				bad("bad duration", v);
		} else if (!strcmp(a, "--reps")) {
			o->reps = (unsigned)parse_uint(v, 1, BENCH_MAX_REPS);
		} else if (!strcmp(a, "--seed")) {
			o->seed = parse_uint(v, 0, ~0ul);
		} else if (!strcmp(a, "--tasks")) {
			o->tasks = parse_uint(v, 0, ~0ul);
		} else if (!strcmp(a, "--shape")) {
			if (strcmp(v, "pump") && strcmp(v, "task") && strcmp(v, "burst"))
				bad("unknown loop shape", v);
			o->shape = v;
		} else if (!strcmp(a, "--contexts")) {
			o->contexts = (unsigned)parse_uint(v, 1, 1000000);
		} else if (!strcmp(a, "--dev")) {
			o->dev = v;
		} else if (!strcmp(a, "--out")) {
			o->out_dir = v;
		} else {
			bad("unknown option", a);
		}
		i++;
	}
	if (o->depth < o->batch)
		bad("--depth must be at least --batch", NULL);
	return 0;
}
