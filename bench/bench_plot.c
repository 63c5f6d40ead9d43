/*
 * bench_plot.c — data files for plot.gp and the gnuplot call (SVG).
 */
#include "bench.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static double gbps(const char *scenario, size_t size, unsigned batch, const char *who)
{
	const struct bench_result *r = bench_find(scenario, size, batch, 0, who);

	return r && !r->skip[0] ? r->gb_per_s : NAN;
}

/* The throughput columns: a contender's GB/s at each size. */
static const struct {
	const char *scenario;
	bool batched; /* measured at the run's batch (else one at a time) */
	const char *who;
	const char *title;
} tp_cols[] = {
	{ "inline", true, "doca", "doca inline (batch 32)" },
	{ "offload", false, "doca", "doca offload (engine on CPU 1)" },
	{ "offload", false, "dpdk-skeleton", "DPDK dma skeleton" },
	{ "offload", false, "memcpy", "memcpy, one thread" },
};
#define TP_COLS (sizeof(tp_cols) / sizeof(tp_cols[0]))

static double col_gbps(const struct bench_opts *o, size_t c, size_t size)
{
	return gbps(tp_cols[c].scenario, size, tp_cols[c].batched ? o->batch : 0, tp_cols[c].who);
}

/* Only the columns measured in this run (gnuplot warns on a column of no
 * points); @return how many, or -1. */
static int write_throughput(const struct bench_opts *o, const char *path)
{
	bool has[TP_COLS] = { false };
	int ncols = 0;
	FILE *f;

	for (size_t c = 0; c < TP_COLS; c++)
		for (unsigned s = 0; s < o->n_sizes && !has[c]; s++)
			has[c] = !isnan(col_gbps(o, c, o->sizes[s]));
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fprintf(f, "bytes");
	for (size_t c = 0; c < TP_COLS; c++)
		if (has[c]) {
			fprintf(f, " \"%s\"", tp_cols[c].title);
			ncols++;
		}
	fprintf(f, "\n");
	for (unsigned s = 0; s < o->n_sizes; s++) {
		fprintf(f, "%zu", o->sizes[s]);
		for (size_t c = 0; c < TP_COLS; c++)
			if (has[c])
				fprintf(f, " %g", col_gbps(o, c, o->sizes[s]));
		fprintf(f, "\n");
	}
	fclose(f);
	return ncols;
}

/* @return the rows written, or -1. */
static int write_latency(const struct bench_opts *o, const char *path)
{
	static const char *const who[] = { "doca", "dpdk-skeleton", "ck-pingpong" };
	FILE *f = fopen(path, "w");
	int rows = 0;

	if (!f)
		return -1;
	fprintf(f, "# label p50 p99 p99.9 (ns)\n");
	for (unsigned s = 0; s < o->n_lat_sizes; s++) {
		for (int w = 0; w < 3; w++) {
			const struct bench_result *r = bench_find("latency", o->lat_sizes[s], 0, 0, who[w]);

			if (r && !r->skip[0]) {
				fprintf(f, "\"%s %zu B\" %g %g %g\n", who[w], o->lat_sizes[s], r->p50_ns,
					r->p99_ns, r->p999_ns);
				rows++;
			}
		}
	}
	fclose(f);
	return rows;
}

void bench_plot(const struct bench_opts *o, const char *stamp)
{
	char tp[512], lat[512], expr[1200], out[512], latest[512], glog[512];
	int status;
	pid_t pid;

	/* the picture is of the inline, offload and latency scenarios only */
	if (!bench_find("inline", o->sizes[0], o->batch, 0, "doca") &&
	    !bench_find("offload", o->sizes[0], 0, 0, "doca") &&
	    !bench_find("latency", o->lat_sizes[0], 0, 0, "doca")) {
		printf("picture: none (no inline, offload or latency scenario in this run)\n");
		return;
	}
	snprintf(tp, sizeof(tp), "%s/throughput.dat", o->out_dir);
	snprintf(lat, sizeof(lat), "%s/latency.dat", o->out_dir);
	snprintf(out, sizeof(out), "%s/bench-%s.svg", o->out_dir, stamp);
	snprintf(latest, sizeof(latest), "%s/latest.svg", o->out_dir);
	snprintf(glog, sizeof(glog), "%s/gnuplot.log", o->out_dir);
	int tpcols = write_throughput(o, tp), latrows = write_latency(o, lat);

	if (tpcols < 0 || latrows < 0) {
		printf("picture: cannot write the data files in %s\n", o->out_dir);
		return;
	}
	for (int copy = 0; copy < 2; copy++) {
		snprintf(expr, sizeof(expr), "dir='%s'; out='%s'; tpcols=%d; latrows=%d", o->out_dir,
			 copy ? latest : out, tpcols, latrows);
		pid = fork();
		if (pid == 0) {
			/* its warnings (a range of one point) go to the log, not the run's output */
			int log = open(glog, O_WRONLY | O_CREAT | (copy ? O_APPEND : O_TRUNC), 0644);

			if (log >= 0)
				dup2(log, STDERR_FILENO);
			execlp("gnuplot", "gnuplot", "-e", expr, BENCH_SOURCE_DIR "/plot.gp", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			printf("picture: gnuplot failed (its messages: %s) or is missing (apt-get install gnuplot-nox)\n",
			       glog);
			return;
		}
	}
	printf("picture: %s (and %s)\n", latest, out);
}
