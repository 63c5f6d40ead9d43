/* tests/engine/no_membarrier.c — the library where the kernel refuses
 * membarrier (an old kernel, a seccomp filter): liburcu's readers fence
 * (engine/rcu.h takes liburcu's own read side, doca_rcu_fast false), the
 * asymmetric fence's light side is a real fence (actors/asym_fence.h),
 * and a grace period still waits for a reader, an event still comes for a
 * foreign submit. Both choices are made at load, so the test runs this
 * binary again in a child that a seccomp filter makes refuse membarrier
 * (ENOSYS) from its exec on, and checks the answers there. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actors/asym_fence.h"
#include "actors/rcu_reader.h"
#include "engine/engine.h"
#include "engine/rcu.h"
#include "tests/api/common.h"

#define CHILD_ENV "DOCA_TEST_NO_MEMBARRIER"
#define FOREIGN_TASKS 2000u

/* In the child, before its exec: membarrier fails with ENOSYS from now on
 * (inherited across exec; no privilege needed with no_new_privs). */
static void refuse_membarrier(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		_exit(3);
}

/* In the child, before its exec: the test runner's sandbox variables
 * (BXFI_*) would make the new image take itself for this test's sandbox
 * and abort; it is a runner of its own. */
static void forget_sandbox(void)
{
	for (;;) {
		char **e = environ;

		while (*e != NULL && strncmp(*e, "BXFI", 4) != 0)
			e++;
		if (*e == NULL)
			return;
		char name[128];
		size_t n = strcspn(*e, "=");

		if (n >= sizeof(name))
			_exit(5);
		memcpy(name, *e, n);
		name[n] = '\0';
		unsetenv(name);
	}
}

Test(no_membarrier, the_library_runs_where_the_kernel_refuses_membarrier)
{
	pid_t pid = fork();

	cr_assert_neq(pid, -1);
	if (pid == 0) {
		refuse_membarrier();
		forget_sandbox();
		setenv(CHILD_ENV, "1", 1);
		execl("/proc/self/exe", "no_membarrier", "--filter=no_membarrier/in_a_process_without_membarrier",
		      "--jobs=1", (char *)NULL);
		_exit(4);
	}
	int status = 0;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the child died (signal %d)", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	cr_assert_eq(WEXITSTATUS(status), 0, "the child's run failed (exit %d: 3 seccomp, 4 exec, 1 a test)",
		     WEXITSTATUS(status));
}

static void *fast_of_new_thread(void *arg)
{
	doca_rcu_read_lock();
	*(bool *)arg = doca_rcu_fast;
	doca_rcu_read_unlock();
	return NULL;
}

/* Where the kernel has membarrier: a thread's inline way is chosen by
 * liburcu's own decision, made before any registration returns (the
 * main thread, a new thread, and a new thread of a fork child, whose
 * grace period then still works: the registration the child inherits). */
Test(no_membarrier, a_threads_way_is_liburcus_decision_before_and_after_fork)
{
	bool fast = !reader_membarrier();
	pthread_t t;

	doca_rcu_read_lock();
	cr_assert_eq(doca_rcu_fast, reader_membarrier());
	doca_rcu_read_unlock();
	cr_assert_eq(pthread_create(&t, NULL, fast_of_new_thread, &fast), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(fast, reader_membarrier());

	pid_t pid = fork();

	cr_assert_neq(pid, -1);
	if (pid == 0) {
		fast = !reader_membarrier();
		if (pthread_create(&t, NULL, fast_of_new_thread, &fast) != 0 || pthread_join(t, NULL) != 0)
			_exit(2);
		doca_synchronize_rcu();
		_exit(fast == reader_membarrier() ? 0 : 1);
	}
	int status = 0;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the fork child's thread took another way");
}

struct reader {
	atomic_int inside; /* 1 once in its section */
	atomic_int left;   /* 1 just before its unlock */
	bool fast;         /* its doca_rcu_fast inside the section */
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	doca_rcu_read_lock();
	r->fast = doca_rcu_fast;
	atomic_store(&r->inside, 1);
	sleep_ms(100);
	atomic_store(&r->left, 1);
	doca_rcu_read_unlock();
	return NULL;
}

struct foreign {
	struct api_fixture *f;
	uint32_t accepted;
};

static void *foreign_main(void *arg)
{
	struct foreign *s = arg;

	while (s->accepted < FOREIGN_TASKS) {
		doca_error_t err = submit_copy(s->f->ctx, s->f->src, s->f->dst, s->accepted, 0);

		if (err == DOCA_SUCCESS)
			s->accepted++;
		else if (err != DOCA_ERROR_AGAIN)
			return (void *)(uintptr_t)err;
	}
	return NULL;
}

/* Run only in the child above (skipped in the ordinary run). */
Test(no_membarrier, in_a_process_without_membarrier)
{
	if (getenv(CHILD_ENV) == NULL)
		cr_skip_test("run by the_library_runs_where_the_kernel_refuses_membarrier");
	cr_assert_eq(syscall(__NR_membarrier, 0, 0, 0), -1);
	cr_assert_eq(errno, ENOSYS, "the filter is in place");
	cr_assert(!asym_fence_kernel, "the asymmetric fence fell back to fences");

	/* a registered thread: liburcu found no membarrier, so its read
	 * side is liburcu's own with the fences, on every thread */
	doca_rcu_read_lock();
	cr_assert(!doca_rcu_fast);
	doca_rcu_read_unlock();
	cr_assert(!reader_membarrier());

	/* a grace period waits for a reader that registered on its own
	 * (its first section): it returns only after the reader left */
	struct reader r = { 0 };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, reader_main, &r), 0);
	while (atomic_load(&r.inside) == 0)
		sleep_ms(1);
	doca_synchronize_rcu();
	cr_assert_eq(atomic_load(&r.left), 1, "the grace period ended inside the reader's section");
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert(!r.fast);

	/* a foreign submitter against the PE's thread: every task accepted
	 * gives exactly one event (the submit's fences and the guard's
	 * asymmetric ones, all real fences here) */
	struct api_fixture f;
	struct foreign s = { .f = &f };
	void *ret = NULL;
	uint32_t events = 0;

	fixture_init_started(&f, "sw0:engines=1", 64, 16);
	cr_assert_eq(pthread_create(&t, NULL, foreign_main, &s), 0);
	uint64_t deadline = now_ns() + 20ull * 1000 * 1000 * 1000;

	while (events < FOREIGN_TASKS && now_ns() < deadline) {
		struct doca_event *ev;

		(void)doca_pe_progress(f.pe);
		while ((ev = doca_pe_get_event(f.pe)) != NULL) {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
			cr_assert_eq(doca_event_get_user_data(ev).u64, events, "the events in submit order");
			doca_event_free(ev);
			events++;
		}
	}
	cr_assert_eq(pthread_join(t, &ret), 0);
	cr_assert_null(ret, "a foreign submit failed: %s", doca_error_get_name((doca_error_t)(uintptr_t)ret));
	cr_assert_eq(s.accepted, FOREIGN_TASKS);
	cr_assert_eq(events, FOREIGN_TASKS);
	fixture_fini(&f);
}
