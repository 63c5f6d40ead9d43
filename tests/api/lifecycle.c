/*
 * tests/api/lifecycle.c — the seed's lifecycle in its exact order, its three
 * pitfalls as named tests, repeated open/close, sharing of devices and PEs,
 * restart and reconfiguration of a stopped context, device listing, and the
 * CPUs engine threads run on (never the opener's pinning; the cpus= list).
 */
#include "common.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Seed §3 step by step: every call succeeds, the copy is exact. */
Test(lifecycle, seed_order_every_step_succeeds)
{
	struct doca_ctx *ctx = NULL;
	struct doca_dev *dev = NULL;
	struct doca_mem *mem = NULL;
	struct doca_buf *buf = NULL, *dst = NULL;
	struct doca_pe *pe = NULL;
	struct doca_event *ev;
	uint8_t *base = NULL;
	void *data = NULL;
	size_t len = 0;

	assert_ok(doca_ctx_create(&ctx));
	assert_state(ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_dev_open("sw0", &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_ok(doca_mem_create(ctx, 1024 * 1024, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem));
	assert_ok(doca_mem_get_len(mem, &len));
	cr_assert_eq(len, 1024 * 1024, "memory length %zu", len);
	assert_ok(doca_mem_get_addr(mem, &data));
	base = data;
	cr_assert_eq((uintptr_t)base % 64, 0, "doca_mem_create memory is not 64-byte aligned");
	assert_ok(doca_buf_create(mem, 0, 4096, &buf));
	assert_ok(doca_buf_create(mem, 4096, 4096, &dst));
	assert_ok(doca_buf_get_data(dst, &data));
	cr_assert_eq(data, base + 4096, "buffer data is not memory start + offset");
	assert_ok(doca_buf_get_len(dst, &len));
	cr_assert_eq(len, 4096, "buffer length %zu", len);
	fill_pattern(base, 4096, 1);

	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_ok(doca_ctx_start(ctx));
	assert_state(ctx, DOCA_CTX_STATE_RUNNING);
	assert_ok(submit_copy(ctx, buf, dst, 42, 0));

	ev = wait_event(pe);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status %d", doca_event_get_status(ev));
	assert_ok(doca_event_get_error(ev));
	cr_assert_eq(doca_event_get_bytes(ev), 4096, "bytes %zu", doca_event_get_bytes(ev));
	cr_assert_eq(doca_event_get_user_data(ev).u64, 42, "user data");
	cr_assert_eq(doca_event_get_type(ev), DOCA_TASK_COPY, "type");
	cr_assert_eq(doca_event_get_ctx(ev), ctx, "event ctx");
	doca_event_free(ev);
	cr_assert_eq(pattern_mismatch(base + 4096, 4096, 1), 4096, "copy differs");
	cr_assert_eq(pattern_mismatch(base, 4096, 1), 4096, "source changed");

	assert_ok(doca_ctx_stop(ctx));
	assert_state(ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_buf_destroy(buf));
	assert_ok(doca_buf_destroy(dst));
	assert_ok(doca_mem_destroy(mem));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
}

/* Pitfall 1: destroying a running context is refused and the ctx keeps working. */
Test(lifecycle, pitfall_destroy_running_ctx_is_bad_state)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_doca(doca_ctx_destroy(f.ctx), DOCA_ERROR_BAD_STATE);
	assert_state(f.ctx, DOCA_CTX_STATE_RUNNING);
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* Pitfall 2: a memory cannot be destroyed before its buffer; the buffer still copies. */
Test(lifecycle, pitfall_mem_destroyed_before_its_buf_is_in_use_and_buf_still_usable)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 8192, 0);
	assert_doca(doca_mem_destroy(f.src_mem), DOCA_ERROR_IN_USE);
	assert_doca(doca_mem_destroy(f.dst_mem), DOCA_ERROR_IN_USE);
	fixture_copy_and_verify(&f);
	/* Still in use after the copy; gone only after its buffer. */
	assert_ok(doca_ctx_stop(f.ctx));
	assert_doca(doca_mem_destroy(f.src_mem), DOCA_ERROR_IN_USE);
	assert_ok(doca_buf_destroy(f.src));
	f.src = NULL;
	assert_ok(doca_mem_destroy(f.src_mem));
	f.src_mem = NULL;
	fixture_fini(&f);
}

/*
 * Pitfall 3: events never freed. With max_tasks events reaped but not freed,
 * the next submit returns DOCA_ERROR_AGAIN at once; freeing them recovers.
 */
Test(lifecycle, pitfall_unfreed_events_give_again_immediately_then_recover)
{
	enum { MAX = 16 };
	struct api_fixture f;
	struct doca_event *held[MAX];
	uint64_t t0, took;

	fixture_init_started(&f, "sw0", 4096, MAX);
	for (int i = 0; i < MAX; i++) {
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
		held[i] = wait_event(f.pe);
		cr_assert_eq(doca_event_get_user_data(held[i]).u64, (uint64_t)i, "events out of order");
	}
	t0 = now_ns();
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 999, 0), DOCA_ERROR_AGAIN);
	took = now_ns() - t0;
	cr_assert_lt(took, 50000000ull, "DOCA_ERROR_AGAIN took %llu ns, expected immediately",
		     (unsigned long long)took);
	/* Progress does not free anything by itself: still full, no event for the refused task. */
	expect_no_event_for(f.pe, 10);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 999, 0), DOCA_ERROR_AGAIN);

	for (int i = 0; i < MAX; i++)
		doca_event_free(held[i]);
	for (int round = 0; round < 2 * MAX; round++)
		fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* Open and close a device 1,000 times, each after a full correct teardown. */
Test(lifecycle, full_lifecycle_1000_times_leaks_no_fd, .timeout = 60)
{
	int fds_before = count_open_fds();

	for (int i = 0; i < 1000; i++) {
		struct api_fixture f;

		fixture_init_started(&f, "sw0", 256, 4);
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
		expect_success_event(f.pe, (uint64_t)i, 256);
		cr_assert_eq(pattern_mismatch(f.dst_bytes, 256, f.seed), 256, "copy %d differs", i);
		fixture_fini(&f);
	}
	/* The last PEs' fds may wait for an RCU grace period; a leak would be ~2000. */
	int fds_after = count_open_fds_settled(fds_before + 4);

	cr_assert_leq(fds_after, fds_before + 4, "fds grew from %d to %d", fds_before, fds_after);
}

Test(lifecycle, dev_open_close_1000_times)
{
	for (int i = 0; i < 1000; i++) {
		struct doca_dev *dev = NULL;

		assert_ok(doca_dev_open("sw0", &dev));
		assert_ok(doca_dev_close(dev));
	}
}

Test(lifecycle, dev_with_engine_thread_open_close_100_times)
{
	int fds_before = count_open_fds();

	for (int i = 0; i < 100; i++) {
		struct doca_dev *dev = NULL;

		assert_ok(doca_dev_open("sw0:engines=1", &dev));
		assert_ok(doca_dev_close(dev));
	}
	cr_assert_leq(count_open_fds(), fds_before + 4, "fds grew from %d to %d", fds_before, count_open_fds());
}

/* A stopped ctx can be started again and copies again. */
Test(lifecycle, ctx_restarts_after_stop)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 4096, 0);
	for (int i = 0; i < 5; i++) {
		fixture_copy_and_verify(&f);
		assert_ok(doca_ctx_stop(f.ctx));
		assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
		assert_ok(doca_ctx_start(f.ctx));
		assert_state(f.ctx, DOCA_CTX_STATE_RUNNING);
	}
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* Many contexts may bind one open device and share one PE. */
Test(lifecycle, two_ctxs_share_one_dev_and_one_pe)
{
	struct api_fixture f;
	struct doca_ctx *ctx2 = NULL;
	struct doca_mem *mem2 = NULL;
	struct doca_buf *src2 = NULL, *dst2 = NULL;
	uint8_t *m2 = NULL;
	void *addr = NULL;
	int got1 = 0, got2 = 0;

	fixture_init_started(&f, "sw0", 1024, 0);
	assert_ok(doca_ctx_create(&ctx2));
	assert_ok(doca_ctx_set_dev(ctx2, f.dev));
	assert_ok(doca_pe_connect_ctx(f.pe, ctx2));
	assert_ok(doca_mem_create(ctx2, 2048, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem2));
	assert_ok(doca_mem_get_addr(mem2, &addr));
	m2 = addr;
	fill_pattern(m2, 1024, 77);
	assert_ok(doca_buf_create(mem2, 0, 1024, &src2));
	assert_ok(doca_buf_create(mem2, 1024, 1024, &dst2));
	assert_ok(doca_ctx_start(ctx2));

	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_ok(submit_copy(ctx2, src2, dst2, 2, 0));
	for (int i = 0; i < 2; i++) {
		struct doca_event *ev = wait_event(f.pe);

		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
		if (doca_event_get_user_data(ev).u64 == 1) {
			cr_assert_eq(doca_event_get_ctx(ev), f.ctx, "event 1 names the wrong ctx");
			got1++;
		} else {
			cr_assert_eq(doca_event_get_user_data(ev).u64, 2, "unexpected user data");
			cr_assert_eq(doca_event_get_ctx(ev), ctx2, "event 2 names the wrong ctx");
			got2++;
		}
		doca_event_free(ev);
	}
	cr_assert(got1 == 1 && got2 == 1, "got %d events of ctx1 and %d of ctx2", got1, got2);
	cr_assert_eq(pattern_mismatch(m2 + 1024, 1024, 77), 1024, "ctx2 copy differs");
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 1024, f.seed), 1024, "ctx1 copy differs");

	/* The device cannot close while ctx2's memory is registered through it. */
	stop_and_drain(ctx2, f.pe);
	assert_ok(doca_buf_destroy(src2));
	assert_ok(doca_buf_destroy(dst2));
	assert_ok(doca_mem_destroy(mem2));
	/* Destroying ctx2 (device still bound) is refused; ctx1 is untouched. */
	assert_doca(doca_ctx_destroy(ctx2), DOCA_ERROR_IN_USE);
	fixture_copy_and_verify(&f);

	/* Closing the shared handle unbinds both IDLE ctxs; then ctx2 can go. */
	stop_and_drain(f.ctx, f.pe);
	assert_ok(doca_buf_destroy(f.src));
	assert_ok(doca_buf_destroy(f.dst));
	assert_ok(doca_mem_destroy(f.src_mem));
	assert_ok(doca_mem_destroy(f.dst_mem));
	f.src = f.dst = NULL;
	f.src_mem = f.dst_mem = NULL;
	assert_ok(doca_dev_close(f.dev));
	f.dev = NULL;
	assert_ok(doca_ctx_destroy(ctx2));
	fixture_fini(&f);
}

/* Each open of the same string returns its own handle, closed on its own. */
Test(lifecycle, same_open_string_twice_gives_independent_handles)
{
	struct doca_dev *a = NULL, *b = NULL;
	const char *name = NULL;

	assert_ok(doca_dev_open("sw0:engines=1", &a));
	assert_ok(doca_dev_open("sw0:engines=1", &b));
	cr_assert_neq(a, b, "two opens returned the same handle");
	assert_ok(doca_dev_close(a));
	assert_ok(doca_dev_get_name(b, &name));
	cr_assert_str_eq(name, "sw0", "device name");
	{
		struct api_fixture f;
		void *addr = NULL;

		/* b still works after a is closed. */
		memset(&f, 0, sizeof(f));
		assert_ok(doca_ctx_create(&f.ctx));
		f.dev = b;
		assert_ok(doca_ctx_set_dev(f.ctx, b));
		assert_ok(doca_pe_create(&f.pe));
		assert_ok(doca_pe_connect_ctx(f.pe, f.ctx));
		f.len = 512;
		assert_ok(doca_mem_create(f.ctx, 512, DOCA_ACCESS_FLAG_READ, &f.src_mem));
		assert_ok(doca_mem_create(f.ctx, 512, DOCA_ACCESS_FLAG_WRITE, &f.dst_mem));
		assert_ok(doca_mem_get_addr(f.src_mem, &addr));
		f.src_bytes = addr;
		assert_ok(doca_mem_get_addr(f.dst_mem, &addr));
		f.dst_bytes = addr;
		assert_ok(doca_buf_create(f.src_mem, 0, 512, &f.src));
		assert_ok(doca_buf_create(f.dst_mem, 0, 512, &f.dst));
		assert_ok(doca_ctx_start(f.ctx));
		fixture_copy_and_verify(&f);
		fixture_fini(&f);
	}
}

Test(lifecycle, dev_get_name_is_part_before_colon)
{
	struct doca_dev *dev = NULL;
	const char *name = NULL;

	assert_ok(doca_dev_open("sw0:engines=2,fail_every=5,partial_every=7,delay_us=0,cpus=0", &dev));
	assert_ok(doca_dev_get_name(dev, &name));
	cr_assert_str_eq(name, "sw0", "device name");
	assert_ok(doca_dev_close(dev));
}

Test(lifecycle, dev_list_includes_sw0)
{
	struct doca_dev_info infos[16];
	size_t count = 0;
	bool found = false;

	assert_ok(doca_dev_list(NULL, 0, &count));
	cr_assert_geq(count, 1, "no device listed");
	assert_ok(doca_dev_list(infos, 16, &count));
	for (size_t i = 0; i < count && i < 16; i++) {
		if (strcmp(infos[i].name, "sw0") == 0) {
			found = true;
			cr_assert_str_eq(infos[i].backend, "sw", "sw0 backend");
		}
	}
	cr_assert(found, "sw0 is not in doca_dev_list");
}

/* Only min(cap, count) entries are written. */
Test(lifecycle, dev_list_writes_at_most_cap_entries)
{
	struct doca_dev_info infos[2];
	size_t count = 0;

	memset(infos, 0x7e, sizeof(infos));
	assert_ok(doca_dev_list(infos, 1, &count));
	cr_assert_geq(count, 1, "no device listed");
	cr_assert_neq(infos[0].name[0], 0x7e, "entry 0 not written");
	cr_assert_eq(bytes_mismatch(&infos[1], sizeof(infos[1]), 0x7e), sizeof(infos[1]),
		     "doca_dev_list wrote past cap");
}

/* After a stop the ctx is IDLE and configurable again; the new pool size applies. */
Test(lifecycle, ctx_reconfigured_after_stop_uses_new_pool_size)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 64, 4);
	for (int i = 0; i < 4; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 9, 0), DOCA_ERROR_AGAIN);
	for (int i = 0; i < 4; i++)
		expect_success_event(f.pe, (uint64_t)i, 64);
	assert_ok(doca_ctx_stop(f.ctx));
	assert_ok(doca_ctx_set_max_tasks(f.ctx, 2));
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 10, 0));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 11, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 12, 0), DOCA_ERROR_AGAIN);
	expect_success_event(f.pe, 10, 64);
	expect_success_event(f.pe, 11, 64);
	fixture_fini(&f);
}

/* ---- engine threads choose their own CPUs ---- */


#define MAX_TIDS 256

static int list_tids(long *tids)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(dir, "opendir /proc/self/task");
	while ((de = readdir(dir)) != NULL && n < MAX_TIDS) {
		if (de->d_name[0] != '.')
			tids[n++] = strtol(de->d_name, NULL, 10);
	}
	closedir(dir);
	return n;
}

/* Threads in after[] that are not in before[]; returns how many. */
/* Is thread tid the library's deferred-free thread? It has named itself
 * by the time the call that started it returns (engine/rcu.c); an engine
 * thread may not have yet. */
static bool is_reclaimer(long tid)
{
	char path[64], comm[32] = "";
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", tid);
	fp = fopen(path, "r");
	if (fp == NULL)
		return false; /* ended since: not the thread a test looks for either */
	if (fgets(comm, sizeof(comm), fp) == NULL)
		comm[0] = '\0';
	fclose(fp);
	return strcmp(comm, "doca-rcu\n") == 0;
}

/* The threads in after but not in before, except the deferred-free
 * thread: it ends after the last object's destroy and starts again with
 * the next deferred free, which an open may make (the entry of a device
 * closed before it), so it may appear around any call (seen: "engines=1
 * started 2 threads", the second doca-rcu, 3 in 400 runs under load). */
static int new_tids(const long *before, int nb, const long *after, int na, long *out)
{
	int n = 0;

	for (int i = 0; i < na; i++) {
		bool old = false;

		for (int j = 0; j < nb; j++)
			old = old || after[i] == before[j];
		if (!old && !is_reclaimer(after[i]))
			out[n++] = after[i];
	}
	return n;
}

static void cpus_allowed_of(long tid, char *buf, size_t len)
{
	char path[64], line[256];
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
	fp = fopen(path, "r");
	cr_assert_not_null(fp, "open %s", path);
	buf[0] = '\0';
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
			char *v = line + 18;

			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, "\n")] = '\0';
			snprintf(buf, len, "%s", v);
		}
	}
	fclose(fp);
	cr_assert_neq(buf[0], '\0', "no Cpus_allowed_list for thread %ld", tid);
}

Test(lifecycle, engine_threads_do_not_inherit_the_openers_pinning)
{
	long before[MAX_TIDS], after[MAX_TIDS], fresh[MAX_TIDS];
	char orig[256], pinned[256], got[256];
	cpu_set_t orig_set, cpu0;
	struct doca_dev *dev = NULL;
	int nb, na, n;

	cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof(orig_set), &orig_set), 0, "getaffinity");
	cpus_allowed_of((long)gettid(), orig, sizeof(orig));
	/* Warm up: threads the library starts once per process (RCU) exist before we count. */
	{
		struct api_fixture f;

		fixture_init_started(&f, "sw0:engines=1", 64, 0);
		fixture_copy_and_verify(&f);
		fixture_fini(&f);
	}
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(cpu0), &cpu0), 0, "setaffinity");
	cpus_allowed_of((long)gettid(), pinned, sizeof(pinned));
	cr_assert_str_eq(pinned, "0", "pinning the test thread failed");

	/* An open string used nowhere else: a fresh device, not a shared one. */
	nb = list_tids(before);
	assert_ok(doca_dev_open("sw0:engines=1,delay_us=1", &dev));
	na = list_tids(after);
	n = new_tids(before, nb, after, na, fresh);
	cr_assert_eq(n, 1, "engines=1 started %d threads", n);
	cpus_allowed_of(fresh[0], got, sizeof(got));
	cr_assert_str_eq(got, orig, "engine thread may run on CPUs %s; expected the process's %s, not the opener's %s",
			 got, orig, pinned);
	assert_ok(doca_dev_close(dev));

	cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(orig_set), &orig_set), 0, "setaffinity");
}

Test(lifecycle, engine_threads_follow_the_cpus_list)
{
	long before[MAX_TIDS], after[MAX_TIDS], fresh[MAX_TIDS];
	char got[256], open_string[64], want[32];
	struct doca_dev *dev = NULL;
	long last_cpu = sysconf(_SC_NPROCESSORS_ONLN) - 1;
	int nb, na, n;

	/* The last online CPU (1 on the 2-CPU machines this runs on). */
	cr_assert_geq(last_cpu, 0, "sysconf");
	snprintf(open_string, sizeof(open_string), "sw0:engines=2,cpus=%ld", last_cpu);
	snprintf(want, sizeof(want), "%ld", last_cpu);
	{
		struct api_fixture f;

		fixture_init_started(&f, "sw0:engines=1", 64, 0);
		fixture_fini(&f);
	}
	nb = list_tids(before);
	assert_ok(doca_dev_open(open_string, &dev));
	na = list_tids(after);
	n = new_tids(before, nb, after, na, fresh);
	cr_assert_eq(n, 2, "engines=2 started %d threads", n);
	for (int i = 0; i < n; i++) {
		cpus_allowed_of(fresh[i], got, sizeof(got));
		cr_assert_str_eq(got, want, "engine thread %d may run on CPUs %s, expected %s (%s)", i, got, want,
				 open_string);
	}
	assert_ok(doca_dev_close(dev));
}
