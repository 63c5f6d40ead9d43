/*
 * bench_syscalls.c — system calls per task in polling mode: strace -f over
 * two runs of the inline loop ("doca_bench loop") that differ only in
 * their number of tasks. Only the calls between the loop's two marks
 * (bench_syscall_marker: prctl naming the thread) count, so what the
 * dynamic loader's constructors do (libinfinipath, pulled in with
 * libfabric for the peers, sleeps in a loop whose length depends on the
 * machine's load) stays out; the first tasks' one-time costs (a chunk of
 * event slots) cancel out in the difference of the two runs, which is what
 * the steady state costs.
 */
#include "bench.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_NAMES 128
#define SHORT_RUN 100000ull
#define LONG_RUN 1100000ull

void bench_syscall_marker(const char *what)
{
	(void)prctl(PR_SET_NAME, what, 0, 0, 0);
}

struct census {
	char name[MAX_NAMES][64];
	long calls[MAX_NAMES];
	unsigned n;
	long total;
};

static bool run_strace(const char *self, unsigned batch, uint64_t tasks, const char *out)
{
	char n[32], b[16];
	int status;
	pid_t pid;

	snprintf(n, sizeof(n), "%llu", (unsigned long long)tasks);
	snprintf(b, sizeof(b), "%u", batch);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execlp("strace", "strace", "-f", "-qq", "-o", out, self, "loop",
		       "--sizes", "64", "--batch", b, "--tasks", n, (char *)NULL);
		_exit(127);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void census_add(struct census *c, const char *name)
{
	for (unsigned i = 0; i < c->n; i++) {
		if (!strcmp(c->name[i], name)) {
			c->calls[i]++;
			c->total++;
			return;
		}
	}
	if (c->n < MAX_NAMES) {
		snprintf(c->name[c->n], sizeof(c->name[0]), "%s", name);
		c->calls[c->n++] = 1;
		c->total++;
	}
}

/* Count the calls of every thread between the two marks of a trace
 * ("PID name(args) = ..."; a call another thread's line interrupted is
 * counted at its start, not at its "<... name resumed>"). False without
 * both marks. */
static bool read_census(const char *path, struct census *c)
{
	FILE *f = fopen(path, "r");
	char line[4096], name[64];
	int state = 0; /* 0: before the first mark, 1: between them, 2: after */

	memset(c, 0, sizeof(*c));
	if (!f)
		return false;
	while (state < 2 && fgets(line, sizeof(line), f)) {
		if (strstr(line, "\"" BENCH_LOOP_BEGIN "\"")) {
			state = 1;
			continue;
		}
		if (strstr(line, "\"" BENCH_LOOP_END "\"")) {
			state = state == 1 ? 2 : 0;
			continue;
		}
		if (state == 1 && !strstr(line, " resumed>") &&
		    sscanf(line, "%*d %63[a-z0-9_](", name) == 1)
			census_add(c, name);
	}
	fclose(f);
	return state == 2;
}

static long calls_of(const struct census *c, const char *name)
{
	for (unsigned i = 0; i < c->n; i++)
		if (!strcmp(c->name[i], name))
			return c->calls[i];
	return 0;
}

/* Append "name +N" for every syscall the long run made more often. */
static void list_growth(const struct census *a, const struct census *b, char *line, size_t cap)
{
	for (unsigned i = 0; i < b->n; i++) {
		long d = b->calls[i] - calls_of(a, b->name[i]);
		size_t len = strlen(line);

		if (d > 0 && len < cap)
			snprintf(line + len, cap - len, " %s +%ld", b->name[i], d);
	}
}

/**
 * Measure; @return syscalls per task (NAN when strace is missing or fails),
 * with a one-line account in @p line.
 */
double bench_syscalls(const char *self, unsigned batch, char *line, size_t cap)
{
	char a_path[] = "/tmp/doca_bench_strace_a.XXXXXX", b_path[] = "/tmp/doca_bench_strace_b.XXXXXX";
	struct census *a = calloc(2, sizeof(*a)), *b = a + 1;
	int fa = mkstemp(a_path), fb = mkstemp(b_path);
	double per_task = NAN;

	if (!a || fa < 0 || fb < 0) {
		snprintf(line, cap, "not measured: no temporary files");
	} else if (!run_strace(self, batch, SHORT_RUN, a_path) || !run_strace(self, batch, LONG_RUN, b_path) ||
		   !read_census(a_path, a) || !read_census(b_path, b)) {
		snprintf(line, cap, "not measured: strace failed, is not installed (apt-get install strace) "
			 "or its trace lacks the loop's marks");
	} else {
		per_task = (double)(b->total - a->total) / (double)(LONG_RUN - SHORT_RUN);
		snprintf(line, cap,
			 "%.6f syscalls/task (inline 64 B batch %u: %ld calls for %llu tasks, %ld for %llu; growth:",
			 per_task, batch, a->total, SHORT_RUN, b->total, LONG_RUN);
		list_growth(a, b, line, cap);
		if (b->total <= a->total)
			snprintf(line + strlen(line), cap - strlen(line), " none");
		snprintf(line + strlen(line), cap - strlen(line), ")");
	}
	if (fa >= 0) {
		close(fa);
		unlink(a_path);
	}
	if (fb >= 0) {
		close(fb);
		unlink(b_path);
	}
	free(a);
	return per_task;
}
