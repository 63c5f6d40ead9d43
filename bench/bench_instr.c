/*
 * bench_instr.c — instructions per task by callgrind (issue 12's targets):
 * `valgrind --tool=callgrind` over `doca_bench loop --shape S --sizes 64`
 * (inline sw0, bursts of --batch) with two task counts, for the per-task
 * shape and the burst shape (ours_shapes.c). Setup and teardown cancel out
 * in the difference of the two totals; the count covers every thread of
 * the process, the application's loop included. `doca_bench all` runs it
 * quietly and lists both counts among its targets.
 */
#include "bench.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHORT_TASKS 32000ull
#define LONG_TASKS 320000ull

static const struct {
	const char *shape;
	const char *calls;
	double target; /* issue 12: at most this many instructions per task */
} shapes[] = {
	{ "task", "32 x doca_task_submit, doca_pe_progress, doca_pe_get_event + doca_event_free",
	  BENCH_INSTR_TASK_GOAL },
	{ "burst", "doca_task_submit_batch(32), doca_pe_progress, doca_pe_get_events + doca_event_free_bulk",
	  BENCH_INSTR_BURST_GOAL },
};

/* Run the loop under callgrind; @return its total instruction count, or -1. */
static long long callgrind_total(const char *self, const char *shape, unsigned batch, uint64_t tasks)
{
	char out[] = "/tmp/doca_bench_callgrind.XXXXXX", n[32], b[16], outarg[64], line[512];
	int fd = mkstemp(out), status;
	long long total = -1;
	pid_t pid;
	FILE *f;

	if (fd < 0)
		return -1;
	close(fd);
	snprintf(n, sizeof(n), "%llu", (unsigned long long)tasks);
	snprintf(b, sizeof(b), "%u", batch);
	snprintf(outarg, sizeof(outarg), "--callgrind-out-file=%s", out);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execlp("valgrind", "valgrind", "--tool=callgrind", outarg, self, "loop", "--shape", shape, "--sizes",
		       "64", "--batch", b, "--tasks", n, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    (f = fopen(out, "r")) != NULL) {
		/* "summary: N" (older callgrind) or "totals: N": the Ir of the whole run */
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "summary: %lld", &total) == 1 || sscanf(line, "totals: %lld", &total) == 1)
				break;
		fclose(f);
	}
	unlink(out);
	return total;
}

int bench_instr(const char *self, unsigned batch, bool quiet, double per_task[2])
{
	bool measured = true;

	if (!quiet)
		printf("instructions per task (callgrind), inline %s, 64 B, bursts of %u: %llu and %llu tasks, "
		       "difference / %llu\n",
		       BENCH_INLINE_DEV, batch, SHORT_TASKS, LONG_TASKS, LONG_TASKS - SHORT_TASKS);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		long long a, b;

		bench_progress("instr: callgrind over the %s loop", shapes[i].shape);
		a = callgrind_total(self, shapes[i].shape, batch, SHORT_TASKS);
		b = a < 0 ? -1 : callgrind_total(self, shapes[i].shape, batch, LONG_TASKS);
		bench_progress_done();
		per_task[i] = a < 0 || b < 0 ? NAN : (double)(b - a) / (double)(LONG_TASKS - SHORT_TASKS);
		measured = measured && !isnan(per_task[i]);
		if (quiet)
			continue;
		if (isnan(per_task[i])) {
			printf("  %-6s not measured: valgrind failed or is not installed (apt-get install valgrind)\n",
			       shapes[i].shape);
			continue;
		}
		printf("  %-6s %7.1f instr/task  (%lld for %llu tasks, %lld for %llu)  target <= %.0f: %s\n"
		       "         %s\n",
		       shapes[i].shape, per_task[i], a, SHORT_TASKS, b, LONG_TASKS, shapes[i].target,
		       per_task[i] <= shapes[i].target ? "MET" : "MISSED", shapes[i].calls);
	}
	return measured ? 0 : 1;
}
