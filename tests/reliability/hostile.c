/*
 * tests/reliability/hostile.c — hostile inputs: each gets its documented
 * error (or its documented meaning), and afterwards nothing has changed: the
 * objects it named still work (a full copy through them succeeds).
 */
#include "../api/common.h"

#include <string.h>

/* Sizes near SIZE_MAX make the allocator fail; under ASan that must be NULL, not a report. */
#if defined(__SANITIZE_ADDRESS__)
#define HOSTILE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOSTILE_ASAN 1
#endif
#endif
#ifdef HOSTILE_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

/* ---- doca_dev_open strings ---- */

static void expect_open(const char *name, doca_error_t want)
{
	struct doca_dev *dev = NULL;

	assert_doca(doca_dev_open(name, &dev), want);
	if (want == DOCA_SUCCESS)
		assert_ok(doca_dev_close(dev));
	else
		cr_assert_null(dev, "a refused open (%s) handed out a handle", doca_error_get_name(want));
}

Test(reliability_hostile, open_strings)
{
	char huge[300];
	char max_len[256];

	memset(huge, 'a', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	/* exactly 255 characters: long enough to be read, an unknown key */
	memset(max_len, 'x', sizeof(max_len) - 1);
	memcpy(max_len, "sw0:", 4);
	max_len[sizeof(max_len) - 1] = '\0';

	expect_open(NULL, DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_dev_open("sw0", NULL), DOCA_ERROR_INVALID_VALUE);
	expect_open("", DOCA_ERROR_INVALID_VALUE);
	expect_open(huge, DOCA_ERROR_INVALID_VALUE);
	expect_open(max_len, DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:", DOCA_ERROR_INVALID_VALUE);
	expect_open(":engines=1", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:colour=blue", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines=", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines=65", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines=-1", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines=1x", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:fail_every=99999999999", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:delay_us=10000001", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines=1,engines=2", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:fail_every=3,fail_every=3", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:cpus=99", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines=1,cpus=99", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines=1,cpus=1-0", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines=1,,fail_every=2", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:\xff\xfe=1", DOCA_ERROR_INVALID_VALUE);
	expect_open("sw0:engines=\xc3\xa9", DOCA_ERROR_INVALID_VALUE);
	expect_open("\xff\xfe\xfd", DOCA_ERROR_NOT_FOUND);
	expect_open("sw1", DOCA_ERROR_NOT_FOUND);
	expect_open("sw0 ", DOCA_ERROR_NOT_FOUND);
	/* nothing changed: the device still opens, with and without options */
	expect_open("sw0", DOCA_SUCCESS);
	expect_open("sw0:engines=1,cpus=0", DOCA_SUCCESS);
	expect_open("sw0:engines=0", DOCA_SUCCESS);
	expect_open("sw0:fail_every=1000000000", DOCA_SUCCESS);
}

/* ---- sizes and offsets ---- */

Test(reliability_hostile, memory_sizes_near_size_max)
{
	struct api_fixture f;
	struct doca_mem *mem = NULL;
	static uint8_t region[64];

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_doca(doca_mem_create(f.ctx, SIZE_MAX, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(f.ctx, SIZE_MAX / 2 + 1, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(f.ctx, SIZE_MAX / 2, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_NO_MEMORY);
	assert_doca(doca_mem_create(f.ctx, 0, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(f.ctx, 64, 0, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(f.ctx, 64, 1u << 7, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(f.ctx, (void *)(UINTPTR_MAX - 8), 64, DOCA_ACCESS_FLAG_READ, &mem),
		    DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(f.ctx, region, SIZE_MAX, DOCA_ACCESS_FLAG_READ, &mem),
		    DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(f.ctx, NULL, 64, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_INVALID_VALUE);
	cr_assert_null(mem, "a refused memory was handed out");
	/* nothing changed: the ctx's memories still close in order, copies still work */
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(reliability_hostile, buffer_offsets_that_overflow)
{
	struct api_fixture f;
	struct doca_buf *buf = NULL;
	const size_t len = 4096;

	fixture_init_started(&f, "sw0", len, 0);
	assert_doca(doca_buf_create(f.src_mem, SIZE_MAX, 2, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.src_mem, 1, SIZE_MAX, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.src_mem, SIZE_MAX / 2, SIZE_MAX / 2 + 2, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.src_mem, len + 1, 0, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.src_mem, len, 1, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.src_mem, 0, len + 1, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.src_mem, 0, 16, NULL), DOCA_ERROR_INVALID_VALUE);
	cr_assert_null(buf, "a refused buffer was handed out");
	/* the edge itself is fine: a zero-length buffer at the very end */
	assert_ok(doca_buf_create(f.src_mem, len, 0, &buf));
	assert_ok(doca_buf_destroy(buf));
	/* nothing changed: the memory has no extra buffer (it still destroys) */
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(reliability_hostile, zero_length_buffers)
{
	struct api_fixture f;
	struct doca_buf *empty_src, *empty_dst;

	fixture_init_started(&f, "sw0", 256, 0);
	assert_ok(doca_buf_create(f.src_mem, 0, 0, &empty_src));
	assert_ok(doca_buf_create(f.dst_mem, 128, 0, &empty_dst));
	assert_doca(submit_copy(f.ctx, empty_src, f.dst, 1, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(f.ctx, f.src, empty_dst, 2, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(f.ctx, f.src, empty_dst, 3, DOCA_TASK_FLAG_ALLOW_PARTIAL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(f.ctx, empty_src, empty_dst, 4, DOCA_TASK_FLAG_ALLOW_PARTIAL),
		    DOCA_ERROR_INVALID_VALUE);
	/* refused tasks change nothing and get no event; the buffers are not in use */
	expect_no_event_for(f.pe, 10);
	cr_assert_eq(bytes_mismatch(f.dst_bytes, f.len, 0), f.len, "a refused task wrote");
	assert_ok(doca_buf_destroy(empty_src));
	assert_ok(doca_buf_destroy(empty_dst));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* A copy inside one read-write memory: [src_off, +len) → [dst_off, +len). */
static void copy_within(const char *dev, size_t src_off, size_t dst_off, size_t len)
{
	struct api_fixture f;
	struct doca_mem *rw;
	struct doca_buf *src, *dst;
	uint8_t *bytes, expect[512];
	void *addr;

	fixture_init_started(&f, dev, 64, 0);
	assert_ok(doca_mem_create(f.ctx, 512, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &rw));
	assert_ok(doca_mem_get_addr(rw, &addr));
	bytes = addr;
	fill_pattern(bytes, 512, 9);
	memcpy(expect, bytes, 512);
	memmove(expect + dst_off, expect + src_off, len);
	assert_ok(doca_buf_create(rw, src_off, len, &src));
	if (src_off == dst_off)
		dst = src;
	else
		assert_ok(doca_buf_create(rw, dst_off, len, &dst));
	assert_ok(submit_copy(f.ctx, src, dst, 7, 0));
	expect_success_event(f.pe, 7, len);
	cr_assert_eq(memcmp(bytes, expect, 512), 0, "%s: copy %zu→%zu of %zu bytes is not memmove's result", dev,
		     src_off, dst_off, len);
	if (dst != src)
		assert_ok(doca_buf_destroy(dst));
	assert_ok(doca_buf_destroy(src));
	assert_ok(doca_mem_destroy(rw));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(reliability_hostile, same_buffer_as_src_and_dst)
{
	copy_within("sw0", 100, 100, 200);
	copy_within("sw0:engines=1", 100, 100, 200);
}

Test(reliability_hostile, overlapping_buffers_have_memmove_semantics)
{
	copy_within("sw0", 0, 10, 300);   /* dst after src */
	copy_within("sw0", 10, 0, 300);   /* dst before src */
	copy_within("sw0:engines=1", 0, 1, 500);
	copy_within("sw0:engines=1", 1, 0, 500);
}

Test(reliability_hostile, memory_registered_twice)
{
	struct api_fixture f;
	static uint8_t region[1024];
	struct doca_mem *a, *b;
	struct doca_buf *ba, *bb;
	void *addr_a, *addr_b;

	fixture_init_started(&f, "sw0", 1024, 0);
	assert_ok(doca_mem_create_from(f.ctx, region, sizeof(region), DOCA_ACCESS_FLAG_WRITE, &a));
	assert_ok(doca_mem_create_from(f.ctx, region, sizeof(region), DOCA_ACCESS_FLAG_WRITE, &b));
	cr_assert_neq(a, b, "two registrations gave one handle");
	assert_ok(doca_mem_get_addr(a, &addr_a));
	assert_ok(doca_mem_get_addr(b, &addr_b));
	cr_assert(addr_a == region && addr_b == region, "a caller's region moved");
	assert_ok(doca_buf_create(a, 0, 1024, &ba));
	assert_ok(doca_buf_create(b, 0, 1024, &bb));
	/* each is independent: b's buffer does not keep a alive, destroying a leaves b working */
	assert_doca(doca_mem_destroy(a), DOCA_ERROR_IN_USE);
	assert_ok(doca_buf_destroy(ba));
	assert_ok(doca_mem_destroy(a));
	assert_ok(submit_copy(f.ctx, f.src, bb, 11, 0));
	expect_success_event(f.pe, 11, 1024);
	cr_assert_eq(pattern_mismatch(region, 1024, f.seed), (size_t)1024, "copy through the second registration");
	assert_ok(doca_buf_destroy(bb));
	assert_ok(doca_mem_destroy(b));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(reliability_hostile, ctx_connected_to_two_pes)
{
	struct api_fixture f;
	struct doca_pe *other;

	fixture_init(&f, "sw0", 256, 0);
	assert_ok(doca_pe_create(&other));
	assert_doca(doca_pe_connect_ctx(other, f.ctx), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(doca_pe_connect_ctx(f.pe, f.ctx), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(doca_ctx_set_dev(f.ctx, f.dev), DOCA_ERROR_NOT_PERMITTED);
	/* nothing changed: the other PE has no ctx (it destroys), the ctx runs on its own PE */
	assert_ok(doca_pe_destroy(other));
	assert_ok(doca_ctx_start(f.ctx));
	assert_doca(doca_pe_connect_ctx(f.pe, f.ctx), DOCA_ERROR_BAD_STATE);
	fixture_copy_and_verify(&f);
	cr_assert_eq(doca_pe_progress(f.pe), 0u, "events appeared on the PE");
	fixture_fini(&f);
}
