/*
 * bench_plot.c — data files for plot.gp and the gnuplot call (SVG).
 */
#include "bench.h"

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

static bool write_throughput(const struct bench_opts *o, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	fprintf(f, "# bytes doca_inline doca_offload dpdk_skeleton memcpy (GB/s)\n");
	for (unsigned s = 0; s < o->n_sizes; s++) {
		size_t z = o->sizes[s];

		fprintf(f, "%zu %g %g %g %g\n", z, gbps("inline", z, o->batch, "doca"),
			gbps("offload", z, 0, "doca"), gbps("offload", z, 0, "dpdk-skeleton"),
			gbps("offload", z, 0, "memcpy"));
	}
	fclose(f);
	return true;
}

static bool write_latency(const struct bench_opts *o, const char *path)
{
	static const char *const who[] = { "doca", "dpdk-skeleton", "ck-pingpong" };
	FILE *f = fopen(path, "w");

	if (!f)
		return false;
	fprintf(f, "# label p50 p99 p99.9 (ns)\n");
	for (unsigned s = 0; s < o->n_lat_sizes; s++) {
		for (int w = 0; w < 3; w++) {
			const struct bench_result *r = bench_find("latency", o->lat_sizes[s], 0, 0, who[w]);

			if (r && !r->skip[0])
				fprintf(f, "\"%s %zu B\" %g %g %g\n", who[w], o->lat_sizes[s], r->p50_ns,
					r->p99_ns, r->p999_ns);
		}
	}
	fclose(f);
	return true;
}

void bench_plot(const struct bench_opts *o, const char *stamp)
{
	char tp[512], lat[512], expr[1200], out[512], latest[512];
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
	if (!write_throughput(o, tp) || !write_latency(o, lat)) {
		printf("picture: cannot write the data files in %s\n", o->out_dir);
		return;
	}
	for (int copy = 0; copy < 2; copy++) {
		snprintf(expr, sizeof(expr), "dir='%s'; out='%s'", o->out_dir, copy ? latest : out);
		pid = fork();
		if (pid == 0) {
			execlp("gnuplot", "gnuplot", "-e", expr, BENCH_SOURCE_DIR "/plot.gp", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			printf("picture: gnuplot failed or is missing (apt-get install gnuplot-nox)\n");
			return;
		}
	}
	printf("picture: %s (and %s)\n", latest, out);
}
