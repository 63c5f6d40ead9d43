/*
 * bench_report.c — the results as a table (stdout), CSV, JSON and Markdown
 * (under the results directory), and the targets of issue 4 as MET/MISSED.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

struct target {
	const char *name;
	const char *verdict; /* "MET", "MISSED", "N/A" */
	double value;        /* the measured ratio or count */
	char detail[200];
};

#define MAX_TARGETS 32
static struct target targets[MAX_TARGETS];
static int n_targets; /* filled by evaluate() */
static char machine[640];
static double instr_task = NAN, instr_burst = NAN; /* bench_report_instr */

static void describe_machine(void)
{
	char model[128] = "unknown CPU", line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	struct utsname u;

	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			snprintf(model, sizeof(model), "%s", colon + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	uname(&u);
	f = fopen("/proc/loadavg", "r");
	if (!f || !fgets(line, sizeof(line), f))
		snprintf(line, sizeof(line), "?");
	if (f)
		fclose(f);
	line[strcspn(line, " ")] = '\0';
	line[16] = '\0';
	snprintf(machine, sizeof(machine), "%d CPUs, %s, Linux %s, load average %s at the end (other work "
		 "on the machine makes the spread column large)", bench_cpu_count(), model, u.release, line);
}

/* ours/peer ratio against a goal; lower_better for latencies. */
static void ratio_target(struct target *t, const char *name, const char *scenario, size_t size,
			 unsigned batch, unsigned threads, const char *peer, double goal, bool lower_better)
{
	const struct bench_result *r = bench_find(scenario, size, batch, threads, peer);

	t->name = name;
	t->value = r ? r->ratio : NAN;
	if (!r || r->skip[0] || isnan(r->ratio)) {
		t->verdict = "N/A";
		snprintf(t->detail, sizeof(t->detail), "%s not measured%s%s", peer,
			 r && r->skip[0] ? ": " : "", r ? r->skip : "");
		return;
	}
	t->verdict = (lower_better ? r->ratio <= goal : r->ratio >= goal) ? "MET" : "MISSED";
	snprintf(t->detail, sizeof(t->detail), "ours/%s = %.2f (goal %s %.2f)", peer, r->ratio,
		 lower_better ? "<=" : ">=", goal);
}

/* Median of per-repetition ratios between two contenders of one case (neither
 * of them the case's first contender). */
static void pair_target(struct target *t, const char *name, const char *scenario, size_t size,
			unsigned batch, unsigned threads, const char *a, const char *b, double goal)
{
	const struct bench_result *ra = bench_find(scenario, size, batch, threads, a);
	const struct bench_result *rb = bench_find(scenario, size, batch, threads, b);

	t->name = name;
	t->value = bench_pair_ratio(ra, rb);
	if (isnan(t->value)) {
		t->verdict = "N/A";
		snprintf(t->detail, sizeof(t->detail), "%s or %s not measured", a, b);
		return;
	}
	t->verdict = t->value >= goal ? "MET" : "MISSED";
	snprintf(t->detail, sizeof(t->detail), "%s/%s = %.2f (goal >= %.2f)", a, b, t->value, goal);
}

/* 2..N foreign submitters: the worst of the mailbox rows' ratio doca (t
 * submitters) / doca-1sub, measured interleaved in each case. */
static void mailbox_many_target(struct target *t)
{
	size_t n;
	const struct bench_result *r = bench_results(&n);
	double worst = NAN;
	unsigned at = 0, most = 0;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(r[i].bc.scenario, "mailbox") || strcmp(r[i].contender, "doca-1sub") ||
		    r[i].skip[0] || isnan(r[i].ratio))
			continue;
		most = r[i].bc.threads > most ? r[i].bc.threads : most;
		if (isnan(worst) || r[i].ratio < worst) {
			worst = r[i].ratio;
			at = r[i].bc.threads;
		}
	}
	t->name = "mailbox 2..N foreign submitters >= 1 submitter's tasks/s";
	t->value = worst;
	t->verdict = isnan(worst) ? "N/A" : worst >= 1.0 ? "MET" : "MISSED";
	if (isnan(worst))
		snprintf(t->detail, sizeof(t->detail), "not measured (mailbox with --threads 2 or more)");
	else
		snprintf(t->detail, sizeof(t->detail), "lowest doca/doca-1sub over 2..%u submitters = %.2f at %u "
			 "(goal >= 1.00)", most, worst, at);
}

/* Callgrind's instructions per task (bench_instr), when it ran in this run. */
static void instr_target(struct target *t, const char *name, double per_task, double goal)
{
	t->name = name;
	t->value = per_task;
	t->verdict = isnan(per_task) ? "N/A" : per_task <= goal ? "MET" : "MISSED";
	if (isnan(per_task))
		snprintf(t->detail, sizeof(t->detail), "not measured (`doca_bench all` or `doca_bench instr`; "
			 "needs valgrind)");
	else
		snprintf(t->detail, sizeof(t->detail), "%.1f instr/task by callgrind (goal <= %.0f)", per_task,
			 goal);
}

void bench_report_instr(double task, double burst)
{
	instr_task = task;
	instr_burst = burst;
}

/* Largest heap bytes per task over every doca row (doca, doca-task, doca-burst)
 * of the inline and offload scenarios. */
static void alloc_target(struct target *t)
{
	size_t n;
	const struct bench_result *r = bench_results(&n);
	double worst = NAN;

	for (size_t i = 0; i < n; i++)
		if (!strncmp(r[i].contender, "doca", 4) && !isnan(r[i].alloc_per_task) &&
		    (!strcmp(r[i].bc.scenario, "inline") || !strcmp(r[i].bc.scenario, "offload")))
			worst = isnan(worst) ? r[i].alloc_per_task : fmax(worst, r[i].alloc_per_task);
	t->name = "steady state: zero heap allocations per task";
	t->value = worst;
	t->verdict = isnan(worst) ? "N/A" : worst == 0 ? "MET" : "MISSED";
	snprintf(t->detail, sizeof(t->detail), "%.3f bytes/task at most on the submitting thread (%s)",
		 worst, bench_alloc_method());
}

/* Scaling is judged on >= 8 cores only; here it is measured and reported. */
static void scaling_target(struct target *t)
{
	size_t n;
	const struct bench_result *r = bench_results(&n), *s = NULL;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].bc.scenario, "scaling") && !isnan(r[i].ratio))
			s = &r[i];
	t->name = "scaling: N CPUs vs 1 (judged on >= 8 cores only)";
	t->value = s ? s->ratio : NAN;
	t->verdict = "N/A";
	if (bench_cpu_count() >= 8)
		t->verdict = s ? "MEASURED" : "N/A";
	snprintf(t->detail, sizeof(t->detail), "%d CPUs here%s; measured x%u/x1 = %.2f", bench_cpu_count(),
		 bench_cpu_count() < 8 ? ", too few to judge scaling" : "", s ? s->bc.threads : 0,
		 s ? s->ratio : NAN);
}

/* RSS per idle started context at the largest count, against a budget. */
static void ctx_memory_target(struct target *t, double budget)
{
	const struct bench_result *r = bench_find("idle-sw0", 0, 0, 0, "ctxs=10000");
	const struct bench_result *e = bench_find("idle-e1", 0, 0, 0, "ctxs=10000");
	double worst = NAN;

	if (r && !isnan(r->bytes_per_ctx))
		worst = r->bytes_per_ctx;
	if (e && !isnan(e->bytes_per_ctx))
		worst = isnan(worst) ? e->bytes_per_ctx : fmax(worst, e->bytes_per_ctx);
	t->name = "contexts: RSS per idle started context (max_tasks 1024) <= 16 KiB";
	t->value = worst;
	t->verdict = isnan(worst) ? "N/A" : worst <= budget ? "MET" : "MISSED";
	snprintf(t->detail, sizeof(t->detail), "%.0f bytes per context at 10000 (worst of sw0 and "
		 "sw0:engines=1)", worst);
}

static void syscall_target(struct target *t, double per_task, const char *line)
{
	t->name = "polling mode: zero syscalls per task";
	t->value = per_task;
	t->verdict = isnan(per_task) ? "N/A" : per_task < 1e-4 ? "MET" : "MISSED";
	snprintf(t->detail, sizeof(t->detail), "%s", line);
}

/* The worst ours/raw ratio of a remote scenario over its sizes: every
 * size must meet the goal. */
static void remote_target(struct target *t, const char *name, const char *scenario, double goal,
			  bool lower_better)
{
	size_t n, count = 0;
	const struct bench_result *r = bench_results(&n);
	double worst = NAN;
	size_t worst_size = 0;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(r[i].bc.scenario, scenario) || strcmp(r[i].contender, "libfabric-raw") ||
		    isnan(r[i].ratio))
			continue;
		count++;
		if (isnan(worst) || (lower_better ? r[i].ratio > worst : r[i].ratio < worst)) {
			worst = r[i].ratio;
			worst_size = r[i].bc.size;
		}
	}
	t->name = name;
	t->value = worst;
	if (count == 0) {
		t->verdict = "N/A";
		snprintf(t->detail, sizeof(t->detail), "not measured (run `doca_bench remote`)");
		return;
	}
	t->verdict = (lower_better ? worst <= goal : worst >= goal) ? "MET" : "MISSED";
	snprintf(t->detail, sizeof(t->detail), "worst ours/libfabric-raw = %.2f at %zu B over %zu sizes (goal %s %.2f)",
		 worst, worst_size, count, lower_better ? "<=" : ">=", goal);
}

static void evaluate(double sys_per_task, const char *sys_line)
{
	struct target *t = targets;

	pair_target(t++, "inline 64 B per-task calls (doca-task) >= 3x io_uring NOP batch 32", "inline", 64, 32,
		    0, "doca-task", "io_uring-nop", 3.0);
	pair_target(t++, "inline 64 B burst calls (doca-burst) >= 5x io_uring NOP batch 32", "inline", 64, 32,
		    0, "doca-burst", "io_uring-nop", 5.0);
	ratio_target(t++, "offload 64 B >= 1.5x DPDK skeleton tasks/s", "offload", 64, 0, 0,
		     "dpdk-skeleton", 1.5, false);
	ratio_target(t++, "offload 4 KiB >= 1.0x DPDK GB/s", "offload", 4096, 0, 0, "dpdk-skeleton", 1.0,
		     false);
	ratio_target(t++, "offload 64 KiB >= 1.0x DPDK GB/s", "offload", 65536, 0, 0, "dpdk-skeleton", 1.0,
		     false);
	ratio_target(t++, "offload 1 MiB >= 0.9x raw memcpy GB/s", "offload", 1 << 20, 0, 0, "memcpy", 0.9,
		     false);
	ratio_target(t++, "latency 64 B p50 <= DPDK skeleton p50", "latency", 64, 0, 0, "dpdk-skeleton", 1.0,
		     true);
	ratio_target(t++, "latency 64 B p50 <= 1.5x ck ping-pong RTT", "latency", 64, 0, 0, "ck-pingpong",
		     1.5, true);
	ratio_target(t++, "mailbox 1 foreign submitter >= 0.8x the PE submitting to itself", "mailbox", 0, 0, 1,
		     "doca-self", 0.8, false);
	mailbox_many_target(t++);
	instr_target(t++, "instructions per task, inline 64 B, per-task calls <= 250", instr_task,
		     BENCH_INSTR_TASK_GOAL);
	instr_target(t++, "instructions per task, inline 64 B, burst calls <= 150", instr_burst,
		     BENCH_INSTR_BURST_GOAL);
	alloc_target(t++);
	syscall_target(t++, sys_per_task, sys_line);
	scaling_target(t++);
	ratio_target(t++, "contexts: empty progress, 10000 ctxs >= 0.9x 1 ctx (sw0)", "idle-sw0", 0, 0, 0,
		     "ctxs=1", 0.9, false);
	ratio_target(t++, "contexts: empty progress, 10000 ctxs >= 0.9x 1 ctx (sw0:engines=1)", "idle-e1", 0,
		     0, 0, "ctxs=1", 0.9, false);
	ratio_target(t++, "contexts: active ctx tasks/s, 10000 ctxs >= 0.9x 1 ctx (sw0)", "busy-sw0", 0, 0, 0,
		     "ctxs=1", 0.9, false);
	ratio_target(t++, "contexts: active ctx tasks/s, 10000 ctxs >= 0.9x 1 ctx (sw0:engines=1)", "busy-e1",
		     0, 0, 0, "ctxs=1", 0.9, false);
	ctx_memory_target(t++, 16384);
	remote_target(t++, "remote QD64 writes >= 0.9x raw libfabric ops/s at every size", "remote", 0.9,
		      false);
	remote_target(t++, "remote QD1 write p50 <= 1.1x raw libfabric p50 at every size", "remote-lat", 1.1,
		      true);
	n_targets = (int)(t - targets);
}

static void fmt_num(char *buf, size_t cap, double v, const char *fmt)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, fmt, v);
}

/* One row's printable cells; md selects Markdown separators. */
static void print_row(FILE *out, const struct bench_result *r, bool md)
{
	char mt[16], gb[16], p50[16], p99[16], p999[16], ratio[16], spread[16], alloc[16], note[160];
	const char *sep = md ? " | " : "  ";

	fmt_num(mt, sizeof(mt), r->tasks_per_s / 1e6, "%.3f");
	fmt_num(gb, sizeof(gb), r->bc.size > 1 || strcmp(r->bc.scenario, "mailbox") ? r->gb_per_s : NAN,
		"%.2f");
	fmt_num(p50, sizeof(p50), r->p50_ns, "%.0f");
	fmt_num(p99, sizeof(p99), r->p99_ns, "%.0f");
	fmt_num(p999, sizeof(p999), r->p999_ns, "%.0f");
	fmt_num(ratio, sizeof(ratio), r->ratio, "%.2f");
	fmt_num(spread, sizeof(spread), r->spread * 100, "%.0f%%");
	fmt_num(alloc, sizeof(alloc), r->alloc_per_task, "%.1f");
	if (r->skip[0])
		snprintf(note, sizeof(note), "skipped: %s", r->skip);
	else if (!isnan(r->bytes_per_ctx))
		snprintf(note, sizeof(note), "RSS %.1f KiB per idle context", r->bytes_per_ctx / 1024);
	else if (!isnan(r->wakeups_per_task))
		snprintf(note, sizeof(note), "%.3f wake-ups/task, %.1f %% empty", r->wakeups_per_task,
			 100 * r->empty_share);
	else
		snprintf(note, sizeof(note), "%s", r->note);
	fprintf(out, "%s%-8s%s%8zu%s%5u%s%3u%s%-14s%s%9s%s%7s%s%7s%s%7s%s%7s%s%6s%s%6s%s%6s%s%s%s\n",
		md ? "| " : "", r->bc.scenario, sep, r->bc.size, sep, r->bc.batch, sep, r->bc.threads, sep,
		r->contender, sep, mt, sep, gb, sep, p50, sep, p99, sep, p999, sep, ratio, sep, spread, sep,
		alloc, sep, note, md ? " |" : "");
}

static void print_table(FILE *out, bool md)
{
	size_t n;
	const struct bench_result *r = bench_results(&n);
	const char *sep = md ? " | " : "  ";

	fprintf(out, "%s%-8s%s%8s%s%5s%s%3s%s%-14s%s%9s%s%7s%s%7s%s%7s%s%7s%s%6s%s%6s%s%6s%s%s%s\n",
		md ? "| " : "", "scenario", sep, "bytes", sep, "batch", sep, "thr", sep, "contender", sep,
		"Mtasks/s", sep, "GB/s", sep, "p50 ns", sep, "p99 ns", sep, "p99.9ns", sep, "ours/x", sep,
		"spread", sep, "B/task", sep, "note", md ? " |" : "");
	if (md)
		fprintf(out, "|---|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
	for (size_t i = 0; i < n; i++)
		print_row(out, &r[i], md);
}

static void print_targets(FILE *out, bool md)
{
	for (int i = 0; i < n_targets; i++)
		fprintf(out, "%s%-7s %s — %s\n", md ? "- " : "  ", targets[i].verdict, targets[i].name,
			targets[i].detail);
}

static void json_num(FILE *f, const char *key, double v, bool comma)
{
	if (isnan(v))
		fprintf(f, "\"%s\": null%s", key, comma ? ", " : "");
	else
		fprintf(f, "\"%s\": %.6g%s", key, v, comma ? ", " : "");
}

static void write_json(const char *path, const struct bench_opts *o)
{
	FILE *f = fopen(path, "w");
	size_t n;
	const struct bench_result *r = bench_results(&n);

	if (!f)
		bench_fail("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "{\n  \"machine\": \"%s\",\n  \"duration_s\": %g, \"reps\": %u, \"seed\": %llu,\n",
		machine, o->duration, o->reps, (unsigned long long)o->seed);
	fprintf(f, "  \"results\": [\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "    {\"scenario\": \"%s\", \"bytes\": %zu, \"batch\": %u, \"depth\": %u, "
			"\"threads\": %u, \"contender\": \"%s\", \"skip\": \"%s\", ",
			r[i].bc.scenario, r[i].bc.size, r[i].bc.batch, r[i].bc.depth, r[i].bc.threads,
			r[i].contender, r[i].skip);
		json_num(f, "tasks_per_s", r[i].tasks_per_s, true);
		json_num(f, "gb_per_s", r[i].gb_per_s, true);
		json_num(f, "p50_ns", r[i].p50_ns, true);
		json_num(f, "p99_ns", r[i].p99_ns, true);
		json_num(f, "p999_ns", r[i].p999_ns, true);
		json_num(f, "ratio_ours_over_this", r[i].ratio, true);
		json_num(f, "spread", r[i].spread, true);
		json_num(f, "alloc_bytes_per_task", r[i].alloc_per_task, true);
		json_num(f, "wakeups_per_task", r[i].wakeups_per_task, true);
		json_num(f, "empty_wakeup_share", r[i].empty_share, false);
		fprintf(f, "}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "  ],\n  \"targets\": [\n");
	for (int i = 0; i < n_targets; i++) {
		fprintf(f, "    {\"target\": \"%s\", \"verdict\": \"%s\", ", targets[i].name, targets[i].verdict);
		json_num(f, "value", targets[i].value, true);
		fprintf(f, "\"detail\": \"%s\"}%s\n", targets[i].detail, i + 1 < n_targets ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	fclose(f);
}

static void write_csv(const char *path)
{
	FILE *f = fopen(path, "w");
	size_t n;
	const struct bench_result *r = bench_results(&n);

	if (!f)
		bench_fail("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "scenario,bytes,batch,depth,threads,contender,tasks_per_s,gb_per_s,p50_ns,p99_ns,"
		"p999_ns,ratio_ours_over_this,spread,alloc_bytes_per_task,skip,wakeups_per_task,"
		"empty_wakeup_share\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s,%zu,%u,%u,%u,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,\"%s\",%.6g,%.6g\n",
			r[i].bc.scenario, r[i].bc.size, r[i].bc.batch, r[i].bc.depth, r[i].bc.threads,
			r[i].contender, r[i].tasks_per_s, r[i].gb_per_s, r[i].p50_ns, r[i].p99_ns,
			r[i].p999_ns, r[i].ratio, r[i].spread, r[i].alloc_per_task, r[i].skip,
			r[i].wakeups_per_task, r[i].empty_share);
	fclose(f);
}

static void write_markdown(const char *path, const struct bench_opts *o)
{
	FILE *f = fopen(path, "w");

	if (!f)
		bench_fail("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "Machine: %s. %u interleaved repetitions of %.2f s each, medians.\n\n", machine,
		o->reps, o->duration);
	print_table(f, true);
	fprintf(f, "\nTargets:\n\n");
	print_targets(f, true);
	fclose(f);
}

/* results/<name>-<stamp>.<ext> and results/latest.<ext> */
static void write_all(const struct bench_opts *o, const char *stamp)
{
	static const char *const exts[] = { "csv", "json", "md" };
	char path[512];

	if (mkdir(o->out_dir, 0755) && errno != EEXIST)
		bench_fail("cannot create %s: %s", o->out_dir, strerror(errno));
	for (int copy = 0; copy < 2; copy++) {
		for (int e = 0; e < 3; e++) {
			snprintf(path, sizeof(path), "%s/%s%s.%s", o->out_dir, copy ? "bench-" : "latest",
				 copy ? stamp : "", exts[e]);
			if (e == 0)
				write_csv(path);
			else if (e == 1)
				write_json(path, o);
			else
				write_markdown(path, o);
		}
	}
	printf("\nwritten: %s/latest.{csv,json,md} and bench-%s.*\n", o->out_dir, stamp);
}

void bench_report(const struct bench_opts *o, double sys_per_task, const char *sys_line)
{
	char stamp[32];
	time_t now = time(NULL);

	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&now));
	describe_machine();
	evaluate(sys_per_task, sys_line);
	bench_progress_done();
	printf("\nmachine: %s; %u interleaved reps x %.2f s, medians; ours/x = median of per-rep "
	       "ratios doca/x (latency: p50 ratio, lower is better)\n\n", machine, o->reps, o->duration);
	print_table(stdout, false);
	printf("\ntargets:\n");
	print_targets(stdout, false);
	write_all(o, stamp);
	if (o->plot)
		bench_plot(o, stamp);
}
