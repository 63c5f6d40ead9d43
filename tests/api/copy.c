/*
 * tests/api/copy.c — copy correctness on the software device, inline and on
 * engine threads: sizes from 1 B to 4 MiB at odd offsets, exact destination
 * bytes, nothing outside the destination window touched, source unchanged;
 * longer destinations, overlapping buffers (memmove), caller-owned memory.
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>

#define GUARD_BYTE 0xA5
#define MiB (1024u * 1024u)

static const size_t copy_sizes[] = { 1, 7, 64, 4095, 4096, 65537, 1 * MiB, 4 * MiB };
#define N_SIZES (sizeof(copy_sizes) / sizeof(copy_sizes[0]))

/* One memory pair large enough for every size at any offset below 64. */
struct copy_env {
	struct api_fixture f;
	size_t mem_len;
};

static void copy_env_init(struct copy_env *e, const char *dev_name, size_t mem_len)
{
	fixture_init_started(&e->f, dev_name, mem_len, 0);
	e->mem_len = mem_len;
}

/* Copy len bytes from src_mem+src_off to dst_mem+dst_off and check every byte of both memories. */
static void copy_and_check(struct copy_env *e, size_t len, size_t src_off, size_t dst_off, uint32_t seed)
{
	struct api_fixture *f = &e->f;
	struct doca_buf *src = NULL, *dst = NULL;
	struct doca_event *ev;
	void *data = NULL;
	size_t mm;

	cr_assert_leq(src_off + len, e->mem_len, "test bug: source window too large");
	cr_assert_leq(dst_off + len, e->mem_len, "test bug: destination window too large");
	fill_pattern(f->src_bytes, e->mem_len, seed);
	memset(f->dst_bytes, GUARD_BYTE, e->mem_len);
	assert_ok(doca_buf_create(f->src_mem, src_off, len, &src));
	assert_ok(doca_buf_create(f->dst_mem, dst_off, len, &dst));
	assert_ok(doca_buf_get_data(src, &data));
	cr_assert_eq(data, f->src_bytes + src_off, "buffer data is not memory start + offset");

	assert_ok(submit_copy(f->ctx, src, dst, len, 0));
	ev = wait_event(f->pe);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "%zu B copy: status %d error %s", len,
		     doca_event_get_status(ev), doca_error_get_name(doca_event_get_error(ev)));
	assert_ok(doca_event_get_error(ev));
	cr_assert_eq(doca_event_get_bytes(ev), len, "%zu B copy reported %zu bytes", len, doca_event_get_bytes(ev));
	cr_assert_eq(doca_event_get_user_data(ev).u64, len, "user data");
	cr_assert_eq(doca_event_get_type(ev), DOCA_TASK_COPY, "type");
	cr_assert_eq(doca_event_get_ctx(ev), f->ctx, "ctx");
	doca_event_free(ev);

	mm = memcmp(f->dst_bytes + dst_off, f->src_bytes + src_off, len) == 0 ? len : 0;
	if (mm != len) {
		for (mm = 0; mm < len && f->dst_bytes[dst_off + mm] == f->src_bytes[src_off + mm]; mm++)
			;
	}
	cr_assert_eq(mm, len, "%zu B copy (src+%zu -> dst+%zu) differs at byte %zu", len, src_off, dst_off, mm);
	cr_assert_eq(bytes_mismatch(f->dst_bytes, dst_off, GUARD_BYTE), dst_off,
		     "%zu B copy wrote before its destination window", len);
	mm = e->mem_len - dst_off - len;
	cr_assert_eq(bytes_mismatch(f->dst_bytes + dst_off + len, mm, GUARD_BYTE), mm,
		     "%zu B copy wrote after its destination window (at +%zu)", len,
		     bytes_mismatch(f->dst_bytes + dst_off + len, mm, GUARD_BYTE));
	cr_assert_eq(pattern_mismatch(f->src_bytes, e->mem_len, seed), e->mem_len, "%zu B copy changed its source",
		     len);
	assert_ok(doca_buf_destroy(src));
	assert_ok(doca_buf_destroy(dst));
}

static void all_sizes_one_by_one(const char *dev_name)
{
	static const size_t src_offs[] = { 1, 3, 13, 63 };
	static const size_t dst_offs[] = { 5, 1, 33, 7 };
	struct copy_env e;

	copy_env_init(&e, dev_name, 4 * MiB + 128);
	for (size_t i = 0; i < N_SIZES; i++) {
		size_t k = i % 4;

		copy_and_check(&e, copy_sizes[i], src_offs[k], dst_offs[k], (uint32_t)i + 1);
	}
	/* Offset 0 on both sides and the very end of the memories. */
	copy_and_check(&e, 4096, 0, 0, 100);
	copy_and_check(&e, 4097, e.mem_len - 4097, e.mem_len - 4097, 101);
	fixture_fini(&e.f);
}

Test(copy, all_sizes_at_odd_offsets_inline, .timeout = 60)
{
	all_sizes_one_by_one("sw0");
}

Test(copy, all_sizes_at_odd_offsets_one_engine, .timeout = 60)
{
	all_sizes_one_by_one("sw0:engines=1");
}

Test(copy, all_sizes_at_odd_offsets_two_engines, .timeout = 60)
{
	all_sizes_one_by_one("sw0:engines=2");
}

/* Every size in flight at once, into disjoint windows, each checked. */
static void all_sizes_in_flight(const char *dev_name)
{
	struct api_fixture f;
	struct doca_buf *src[N_SIZES], *dst[N_SIZES];
	size_t src_off[N_SIZES], dst_off[N_SIZES];
	size_t total = 0, got = 0;
	unsigned seen = 0;

	for (size_t i = 0; i < N_SIZES; i++)
		total += copy_sizes[i] + 16;
	fixture_init(&f, dev_name, total, 0);
	fill_pattern(f.src_bytes, total, 9);
	memset(f.dst_bytes, GUARD_BYTE, total);
	{
		size_t pos = 0;

		for (size_t i = 0; i < N_SIZES; i++) {
			src_off[i] = pos + 3;
			dst_off[i] = pos + 9;
			assert_ok(doca_buf_create(f.src_mem, src_off[i], copy_sizes[i], &src[i]));
			assert_ok(doca_buf_create(f.dst_mem, dst_off[i], copy_sizes[i], &dst[i]));
			pos += copy_sizes[i] + 16;
		}
	}
	assert_ok(doca_ctx_start(f.ctx));
	for (size_t i = 0; i < N_SIZES; i++)
		assert_ok(submit_copy(f.ctx, src[i], dst[i], i, 0));
	while (got < N_SIZES) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t i = doca_event_get_user_data(ev).u64;

		cr_assert_lt(i, N_SIZES, "user data");
		cr_assert_eq(seen & (1u << i), 0, "second event for task %llu", (unsigned long long)i);
		seen |= 1u << i;
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
		cr_assert_eq(doca_event_get_bytes(ev), copy_sizes[i], "bytes");
		doca_event_free(ev);
		got++;
	}
	{
		size_t pos = 0;

		for (size_t i = 0; i < N_SIZES; i++) {
			size_t len = copy_sizes[i];

			cr_assert_eq(memcmp(f.dst_bytes + dst_off[i], f.src_bytes + src_off[i], len), 0,
				     "%zu B copy differs", len);
			cr_assert_eq(bytes_mismatch(f.dst_bytes + pos, 9, GUARD_BYTE), 9,
				     "bytes before the %zu B window changed", len);
			cr_assert_eq(bytes_mismatch(f.dst_bytes + dst_off[i] + len, 7, GUARD_BYTE), 7,
				     "bytes after the %zu B window changed", len);
			pos += len + 16;
		}
	}
	cr_assert_eq(pattern_mismatch(f.src_bytes, total, 9), total, "a source changed");
	stop_and_drain(f.ctx, f.pe);
	for (size_t i = 0; i < N_SIZES; i++) {
		assert_ok(doca_buf_destroy(src[i]));
		assert_ok(doca_buf_destroy(dst[i]));
	}
	fixture_fini(&f);
}

Test(copy, all_sizes_in_flight_together_inline, .timeout = 60)
{
	all_sizes_in_flight("sw0");
}

Test(copy, all_sizes_in_flight_together_one_engine, .timeout = 60)
{
	all_sizes_in_flight("sw0:engines=1");
}

Test(copy, all_sizes_in_flight_together_two_engines, .timeout = 60)
{
	all_sizes_in_flight("sw0:engines=2");
}

/* A destination longer than the source receives len(src) bytes; the rest is untouched. */
static void dst_longer_than_src(const char *dev_name)
{
	struct api_fixture f;
	struct doca_buf *small = NULL;

	fixture_init_started(&f, dev_name, 4096, 0);
	memset(f.dst_bytes, GUARD_BYTE, 4096);
	assert_ok(doca_buf_create(f.src_mem, 11, 1000, &small));
	assert_ok(submit_copy(f.ctx, small, f.dst, 3, 0));
	expect_success_event(f.pe, 3, 1000);
	cr_assert_eq(memcmp(f.dst_bytes, f.src_bytes + 11, 1000), 0, "copy differs");
	cr_assert_eq(bytes_mismatch(f.dst_bytes + 1000, 3096, GUARD_BYTE), 3096, "bytes past len(src) changed");
	stop_and_drain(f.ctx, f.pe);
	assert_ok(doca_buf_destroy(small));
	fixture_fini(&f);
}

Test(copy, dst_longer_than_src_copies_src_length_inline)
{
	dst_longer_than_src("sw0");
}

Test(copy, dst_longer_than_src_copies_src_length_engine)
{
	dst_longer_than_src("sw0:engines=1");
}

/* Overlapping source and destination behave as memmove on the software device. */
static void overlap_like_memmove(const char *dev_name)
{
	struct doca_ctx *ctx = NULL;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct doca_mem *mem = NULL;
	struct doca_buf *a = NULL, *b = NULL;
	uint8_t *base, expect[3000];
	void *addr = NULL;

	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_dev_open(dev_name, &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_ok(doca_mem_create(ctx, 3000, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem));
	assert_ok(doca_mem_get_addr(mem, &addr));
	base = addr;
	assert_ok(doca_ctx_start(ctx));

	/* Forward overlap: [0, 2000) -> [500, 2500). */
	fill_pattern(base, 3000, 21);
	memcpy(expect, base, 3000);
	memmove(expect + 500, expect, 2000);
	assert_ok(doca_buf_create(mem, 0, 2000, &a));
	assert_ok(doca_buf_create(mem, 500, 2000, &b));
	assert_ok(submit_copy(ctx, a, b, 1, 0));
	expect_success_event(pe, 1, 2000);
	cr_assert_eq(memcmp(base, expect, 3000), 0, "forward overlapping copy is not memmove");

	/* Backward overlap: [500, 2500) -> [0, 2000). */
	fill_pattern(base, 3000, 22);
	memcpy(expect, base, 3000);
	memmove(expect, expect + 500, 2000);
	assert_ok(submit_copy(ctx, b, a, 2, 0));
	expect_success_event(pe, 2, 2000);
	cr_assert_eq(memcmp(base, expect, 3000), 0, "backward overlapping copy is not memmove");

	/* Same buffer as source and destination: unchanged. */
	fill_pattern(base, 3000, 23);
	assert_ok(submit_copy(ctx, a, a, 3, 0));
	expect_success_event(pe, 3, 2000);
	cr_assert_eq(pattern_mismatch(base, 3000, 23), 3000, "self copy changed the memory");

	assert_ok(doca_ctx_stop(ctx));
	assert_ok(doca_buf_destroy(a));
	assert_ok(doca_buf_destroy(b));
	assert_ok(doca_mem_destroy(mem));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
}

Test(copy, overlapping_buffers_copy_like_memmove_inline)
{
	overlap_like_memmove("sw0");
}

Test(copy, overlapping_buffers_copy_like_memmove_engine)
{
	overlap_like_memmove("sw0:engines=1");
}

/* Caller-owned memory: copied exactly, still the caller's after destroy. */
Test(copy, mem_create_from_caller_memory_copies_exactly)
{
	struct doca_ctx *ctx = NULL;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct doca_mem *smem = NULL, *dmem = NULL;
	struct doca_buf *src = NULL, *dst = NULL;
	uint8_t *sraw = malloc(10001), *draw = malloc(10007);
	void *addr = NULL;
	size_t len = 0;

	cr_assert(sraw != NULL && draw != NULL, "malloc");
	fill_pattern(sraw, 10001, 31);
	memset(draw, GUARD_BYTE, 10007);
	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_dev_open("sw0:engines=1", &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	/* Odd addresses on purpose. */
	assert_ok(doca_mem_create_from(ctx, sraw + 1, 10000, DOCA_ACCESS_FLAG_READ, &smem));
	assert_ok(doca_mem_create_from(ctx, draw + 3, 10000, DOCA_ACCESS_FLAG_WRITE, &dmem));
	assert_ok(doca_mem_get_addr(smem, &addr));
	cr_assert_eq(addr, sraw + 1, "doca_mem_get_addr of caller memory");
	assert_ok(doca_mem_get_len(dmem, &len));
	cr_assert_eq(len, 10000, "length");
	assert_ok(doca_buf_create(smem, 0, 10000, &src));
	assert_ok(doca_buf_create(dmem, 0, 10000, &dst));
	assert_ok(doca_ctx_start(ctx));
	assert_ok(submit_copy(ctx, src, dst, 5, 0));
	expect_success_event(pe, 5, 10000);
	assert_ok(doca_ctx_stop(ctx));
	assert_ok(doca_buf_destroy(src));
	assert_ok(doca_buf_destroy(dst));
	assert_ok(doca_mem_destroy(smem));
	assert_ok(doca_mem_destroy(dmem));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
	/* The caller still owns both regions (ASan would flag a free by the library). */
	cr_assert_eq(memcmp(draw + 3, sraw + 1, 10000), 0, "copy differs");
	cr_assert_eq(bytes_mismatch(draw, 3, GUARD_BYTE), 3, "bytes before the region changed");
	cr_assert_eq(bytes_mismatch(draw + 10003, 4, GUARD_BYTE), 4, "bytes after the region changed");
	cr_assert_eq(pattern_mismatch(sraw, 10001, 31), 10001, "source changed");
	free(sraw);
	free(draw);
}

/* Many small copies into distinct windows through two engines: each lands in its own window. */
Test(copy, many_small_copies_two_engines_land_in_their_windows)
{
	enum { N = 512, W = 33 };
	struct api_fixture f;
	struct doca_buf *src[N], *dst[N];
	int got = 0;

	fixture_init(&f, "sw0:engines=2", N * W + 1, 0);
	memset(f.dst_bytes, GUARD_BYTE, N * W + 1);
	for (int i = 0; i < N; i++) {
		/* Source window i is copied to destination window N-1-i. */
		assert_ok(doca_buf_create(f.src_mem, (size_t)i * W + 1, W, &src[i]));
		assert_ok(doca_buf_create(f.dst_mem, (size_t)(N - 1 - i) * W, W, &dst[i]));
	}
	assert_ok(doca_ctx_start(f.ctx));
	for (int i = 0; i < N; i++)
		assert_ok(submit_copy(f.ctx, src[i], dst[i], (uint64_t)i, 0));
	while (got < N) {
		struct doca_event *ev = wait_event(f.pe);

		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
		doca_event_free(ev);
		got++;
	}
	for (int i = 0; i < N; i++)
		cr_assert_eq(memcmp(f.dst_bytes + (size_t)(N - 1 - i) * W, f.src_bytes + (size_t)i * W + 1, W), 0,
			     "window %d differs", i);
	cr_assert_eq(f.dst_bytes[N * W], GUARD_BYTE, "byte after the last window changed");
	stop_and_drain(f.ctx, f.pe);
	for (int i = 0; i < N; i++) {
		assert_ok(doca_buf_destroy(src[i]));
		assert_ok(doca_buf_destroy(dst[i]));
	}
	fixture_fini(&f);
}
