/*
 * tests/api/library_threads.c — the threads the library creates, as an
 * embedding application sees them in /proc/self/task: each is named
 * ("doca-worker", "doca-sw0-N", "doca-rcu"), and none inherits what the
 * application set on the thread that happened to make the call.
 *
 * One world starts every kind at once: a worker with no CPU
 * (doca_pe_run_on_cpu(pe, -1)), sw0 with two engine threads, and the
 * deferred-free thread (started by the destroy of a spare PE, and kept
 * alive by the objects still alive).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define MAX_THREADS 64

struct lib_thread_seen {
	char comm[32];
	int tid;
};

/* Read /proc/self/task/TID/FILE into @p buf; false if it is gone. */
static bool read_task_file(int tid, const char *file, char *buf, size_t cap)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, file);
	FILE *fp = fopen(path, "r");

	if (fp == NULL)
		return false;
	size_t n = fread(buf, 1, cap - 1, fp);

	fclose(fp);
	buf[n] = '\0';
	return true;
}

/* Every thread of the process whose name starts with "doca-". */
static unsigned library_threads(struct lib_thread_seen *out, unsigned cap)
{
	DIR *d = opendir("/proc/self/task");
	unsigned n = 0;

	cr_assert_not_null(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		struct lib_thread_seen t = { .tid = atoi(e->d_name) };

		if (t.tid <= 0 || !read_task_file(t.tid, "comm", t.comm, sizeof(t.comm)))
			continue;
		t.comm[strcspn(t.comm, "\n")] = '\0';
		if (strncmp(t.comm, "doca-", 5) != 0)
			continue;
		cr_assert_lt(n, cap);
		out[n++] = t;
	}
	closedir(d);
	return n;
}

/* library_threads once the world's four threads have named themselves
 * (each does first thing when it runs), or after API_WAIT_MS. */
static unsigned world_threads(struct lib_thread_seen *out, unsigned cap)
{
	uint64_t deadline = now_ns() + API_WAIT_MS * 1000000ull;
	unsigned n;

	while ((n = library_threads(out, cap)) < 4 && now_ns() < deadline)
		sleep_ms(1);
	return n;
}

static unsigned count_named(const struct lib_thread_seen *t, unsigned n, const char *comm)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		k += strcmp(t[i].comm, comm) == 0;
	return k;
}

/* The world: a worker, sw0 with two engines, the deferred-free thread. */
struct threads_world {
	struct api_fixture f;
	struct doca_pe *spare;
};

static void world_event_cb(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
}

static void world_start(struct threads_world *w)
{
	fixture_init(&w->f, "sw0:engines=2", 64, 4);
	assert_ok(doca_ctx_set_event_cb(w->f.ctx, world_event_cb));
	assert_ok(doca_ctx_start(w->f.ctx));
	assert_ok(doca_pe_run_on_cpu(w->f.pe, -1));
	/* the first deferred free starts the reclaimer; the fixture's objects
	 * keep it running */
	assert_ok(doca_pe_create(&w->spare));
	assert_ok(doca_pe_destroy(w->spare));
}

static void world_stop(struct threads_world *w)
{
	uint64_t deadline = now_ns() + API_WAIT_MS * 1000000ull;
	enum doca_ctx_state state;
	doca_error_t err = doca_ctx_stop(w->f.ctx);

	cr_assert(err == DOCA_SUCCESS || err == DOCA_ERROR_IN_PROGRESS, "stop: %s",
		  doca_error_get_name(err));
	do {
		assert_ok(doca_ctx_get_state(w->f.ctx, &state));
		cr_assert_lt(now_ns(), deadline, "the worker did not run the ctx to IDLE");
	} while (state != DOCA_CTX_STATE_IDLE && (sleep_ms(1), true));
	assert_ok(doca_pe_stop_run(w->f.pe));
	fixture_fini(&w->f);
}

/* Each kind of library thread is there once, under its name. */
Test(library_threads, every_thread_of_the_library_is_named)
{
	struct lib_thread_seen seen[MAX_THREADS];
	struct threads_world w;

	world_start(&w);
	unsigned n = world_threads(seen, MAX_THREADS);

	world_stop(&w);
	cr_assert_eq(count_named(seen, n, "doca-worker"), 1u);
	cr_assert_eq(count_named(seen, n, "doca-sw0-0"), 1u);
	cr_assert_eq(count_named(seen, n, "doca-sw0-1"), 1u);
	cr_assert_eq(count_named(seen, n, "doca-rcu"), 1u);
	cr_assert_eq(n, 4u, "no other thread is named doca-*");
}

/* The CPUs a thread of this process may run on. */
static void task_cpus(int tid, cpu_set_t *set)
{
	cr_assert_eq(sched_getaffinity(tid, sizeof(*set), set), 0, "sched_getaffinity(%d)", tid);
}

/*
 * None of them inherits the pinning of the thread that started it: an
 * application thread pinned to one CPU (polling there at a high
 * priority) would otherwise starve a worker with no CPU, the engines and
 * the deferred-free thread, and a close or destroy waiting for a grace
 * period would wait with them. The calling thread keeps its own pinning.
 */
Test(library_threads, no_thread_of_the_library_inherits_the_callers_pinning)
{
	struct lib_thread_seen seen[MAX_THREADS];
	cpu_set_t process, caller, now, got;
	struct threads_world w;

	pin_to_first_cpu(&process);
	cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof(caller), &caller), 0);
	world_start(&w);
	unsigned n = world_threads(seen, MAX_THREADS);
	cpu_set_t cpus[MAX_THREADS];

	for (unsigned i = 0; i < n; i++)
		task_cpus(seen[i].tid, &cpus[i]);
	cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof(now), &now), 0);
	world_stop(&w);
	cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(process), &process), 0);
	cr_assert(CPU_EQUAL(&now, &caller), "the calling thread's own pinning changed");
	cr_assert_eq(n, 4u, "worker, two engines, reclaimer");
	for (unsigned i = 0; i < n; i++) {
		CPU_AND(&got, &cpus[i], &process);
		cr_assert(CPU_EQUAL(&got, &process),
			  "%s may run on %d CPU(s), the process on %d: it kept the caller's pinning",
			  seen[i].comm, CPU_COUNT(&cpus[i]), CPU_COUNT(&process));
	}
}

/* SigBlk of /proc/self/task/TID/status, as the kernel keeps it. */
static unsigned long long task_sigblk(int tid)
{
	char status[4096];
	unsigned long long mask;

	cr_assert(read_task_file(tid, "status", status, sizeof(status)), "task %d is gone", tid);
	const char *line = strstr(status, "\nSigBlk:");

	cr_assert_not_null(line, "no SigBlk in task %d's status", tid);
	cr_assert_eq(sscanf(line, "\nSigBlk: %llx", &mask), 1);
	return mask;
}

/*
 * Every asynchronous signal is blocked on the library's threads, whatever
 * the mask of the thread that started them, so a signal sent to the
 * process always goes to a thread of the application: one that blocks
 * SIGTERM in its own threads to take it with sigwait or a signalfd does
 * not have it delivered to (and, by default action, the process killed
 * through) a library thread, and no handler of its runs there.
 *
 * The exact mask: all of 1..64 but the synchronous signals, raised by the
 * faulting thread itself (SIGILL 4, SIGTRAP 5, SIGABRT 6, SIGBUS 7,
 * SIGFPE 8, SIGSEGV 11, SIGSYS 31: blocked, the kernel would kill the
 * process without running a handler, the sanitizers' included), those
 * that cannot be blocked (SIGKILL 9, SIGSTOP 19) and the two glibc keeps
 * for itself (32, 33).
 */
#define LIBRARY_SIGBLK 0xfffffffe3ffbfa07ull
#define CALLER_SIGBLK (1ull << (SIGUSR1 - 1)) /* what the test blocks itself */

Test(library_threads, every_thread_of_the_library_blocks_asynchronous_signals)
{
	struct lib_thread_seen seen[MAX_THREADS];
	unsigned long long masks[MAX_THREADS];
	sigset_t usr1, before;
	struct threads_world w;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	cr_assert_eq(pthread_sigmask(SIG_SETMASK, &usr1, &before), 0);
	cr_assert_eq(task_sigblk(gettid()), CALLER_SIGBLK);
	world_start(&w);
	unsigned n = world_threads(seen, MAX_THREADS);

	for (unsigned i = 0; i < n; i++)
		masks[i] = task_sigblk(seen[i].tid);
	unsigned long long caller = task_sigblk(gettid());

	world_stop(&w);
	cr_assert_eq(pthread_sigmask(SIG_SETMASK, &before, NULL), 0);
	cr_assert_eq(caller, CALLER_SIGBLK, "the calling thread's mask changed: %016llx", caller);
	cr_assert_eq(n, 4u, "worker, two engines, reclaimer");
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(masks[i], LIBRARY_SIGBLK, "%s blocks %016llx, not %016llx", seen[i].comm,
			     masks[i], LIBRARY_SIGBLK);
}
