/*
 * bench_syscalls.c — system calls per task in polling mode: strace -c -f
 * over two runs of the inline loop ("doca_bench loop") that differ only in
 * their number of tasks; setup and teardown cancel out in the difference,
 * which is what the steady state costs.
 */
#include "bench.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_NAMES 128
#define SHORT_RUN 100000ull
#define LONG_RUN 1100000ull

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
		execlp("strace", "strace", "-f", "-c", "-U", "calls,name", "-o", out, self, "loop",
		       "--sizes", "64", "--batch", b, "--tasks", n, (char *)NULL);
		_exit(127);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool read_census(const char *path, struct census *c)
{
	FILE *f = fopen(path, "r");
	char line[256], name[64];
	long calls;

	memset(c, 0, sizeof(*c));
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %ld %63s", &calls, name) != 2)
			continue;
		if (!strcmp(name, "total")) {
			c->total = calls;
		} else if (c->n < MAX_NAMES) {
			snprintf(c->name[c->n], sizeof(c->name[0]), "%s", name);
			c->calls[c->n++] = calls;
		}
	}
	fclose(f);
	return true;
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
		snprintf(line, cap, "not measured: strace failed or is not installed (apt-get install strace)");
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
