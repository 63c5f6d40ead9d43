/*
 * tests/conformance/copy.c — copies on the device under test: sizes from one
 * byte to a mebibyte, unaligned windows, many in flight at once, partial
 * copies when allowed, and the access flags.
 */
#include <string.h>

#include "tests/conformance/conformance.h"

#define BIG (1u << 20)

/* Copy [soff, soff + len) of the fixture's src into [doff, doff + len) of
 * its zeroed dst; check the event, the bytes, and both neighbours of the window. */
static void copy_window(struct api_fixture *f, size_t soff, size_t doff, size_t len, uint64_t user)
{
	struct doca_buf *src, *dst;

	memset(f->dst_bytes, 0, f->len);
	assert_ok(doca_buf_create(f->src_mem, soff, len, &src));
	assert_ok(doca_buf_create(f->dst_mem, doff, len, &dst));
	conf_submit_ok(f->ctx, src, dst, user);
	expect_success_event(f->pe, user, len);
	cr_assert_eq(memcmp(f->dst_bytes + doff, f->src_bytes + soff, len), 0,
		     "%zu-byte copy: destination differs", len);
	if (doff > 0)
		cr_assert_eq(f->dst_bytes[doff - 1], 0, "byte before the window written");
	if (doff + len < f->len)
		cr_assert_eq(f->dst_bytes[doff + len], 0, "byte after the window written");
	assert_ok(doca_buf_destroy(src));
	assert_ok(doca_buf_destroy(dst));
}

Test(conf_copy, sizes_from_one_byte_to_a_mebibyte)
{
	static const size_t sizes[] = { 1, 3, 64, 4095, 4096, 65537, BIG };
	struct api_fixture f;

	fixture_init_started(&f, conf_dev(), BIG, 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		copy_window(&f, 0, 0, sizes[i], i);
	fixture_fini(&f);
}

Test(conf_copy, unaligned_windows)
{
	struct api_fixture f;

	fixture_init_started(&f, conf_dev(), 8192, 0);
	copy_window(&f, 3, 5, 1000, 1);
	copy_window(&f, 4093, 1, 4099, 2);
	copy_window(&f, 8191, 8191, 1, 3);
	fixture_fini(&f);
}

Test(conf_copy, many_in_flight_each_completes_once)
{
	enum { N = 256, SLICE = 64 };
	struct api_fixture f;
	struct doca_buf *src[N], *dst[N];
	uint8_t outcome[N] = { 0 };

	fixture_init_started(&f, conf_dev(), N * SLICE, N);
	for (uint32_t i = 0; i < N; i++) {
		assert_ok(doca_buf_create(f.src_mem, (size_t)i * SLICE, SLICE, &src[i]));
		assert_ok(doca_buf_create(f.dst_mem, (size_t)i * SLICE, SLICE, &dst[i]));
		conf_submit_ok(f.ctx, src[i], dst[i], i);
	}
	conf_reap(f.pe, N, outcome, SLICE, false);
	cr_assert_eq(memcmp(f.dst_bytes, f.src_bytes, f.len), 0, "destination differs");
	for (uint32_t i = 0; i < N; i++) {
		assert_ok(doca_buf_destroy(src[i]));
		assert_ok(doca_buf_destroy(dst[i]));
	}
	fixture_fini(&f);
}

Test(conf_copy, short_destination_is_refused_or_partial_when_allowed)
{
	struct api_fixture f;
	struct doca_buf *src, *dst;
	struct doca_event *ev;

	fixture_init_started(&f, conf_dev(), 256, 0);
	assert_ok(doca_buf_create(f.src_mem, 0, 150, &src));
	assert_ok(doca_buf_create(f.dst_mem, 0, 100, &dst));
	assert_doca(submit_copy(f.ctx, src, dst, 1, 0), DOCA_ERROR_INVALID_VALUE);
	assert_ok(submit_copy(f.ctx, src, dst, 2, DOCA_TASK_FLAG_ALLOW_PARTIAL));
	ev = wait_event(f.pe);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_PARTIAL);
	assert_doca(doca_event_get_error(ev), DOCA_ERROR_TOO_BIG);
	cr_assert_eq(doca_event_get_bytes(ev), 100);
	cr_assert_eq(doca_event_get_user_data(ev).u64, 2);
	doca_event_free(ev);
	cr_assert_eq(memcmp(f.dst_bytes, f.src_bytes, 100), 0);
	cr_assert_eq(f.dst_bytes[100], 0, "wrote past the destination");
	assert_ok(doca_buf_destroy(src));
	assert_ok(doca_buf_destroy(dst));
	fixture_fini(&f);
}

Test(conf_copy, access_flags_are_enforced)
{
	struct api_fixture f;
	struct doca_mem *rw;
	struct doca_buf *wr_only, *rd_only, *both_a, *both_b;
	void *addr;

	fixture_init_started(&f, conf_dev(), 512, 0);
	assert_ok(doca_buf_create(f.dst_mem, 0, 64, &wr_only));
	assert_ok(doca_buf_create(f.src_mem, 0, 64, &rd_only));
	/* Reading a WRITE-only memory, writing a READ-only one: refused. */
	assert_doca(submit_copy(f.ctx, wr_only, wr_only, 1, 0), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(submit_copy(f.ctx, rd_only, rd_only, 2, 0), DOCA_ERROR_NOT_PERMITTED);
	/* A READ|WRITE memory serves as both. */
	assert_ok(doca_mem_create(f.ctx, 512, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &rw));
	assert_ok(doca_mem_get_addr(rw, &addr));
	assert_ok(doca_buf_create(rw, 0, 64, &both_a));
	assert_ok(doca_buf_create(rw, 256, 64, &both_b));
	fill_pattern(addr, 64, 9);
	conf_submit_ok(f.ctx, both_a, both_b, 3);
	expect_success_event(f.pe, 3, 64);
	cr_assert_eq(pattern_mismatch((uint8_t *)addr + 256, 64, 9), 64);
	conf_submit_ok(f.ctx, rd_only, both_a, 4);
	expect_success_event(f.pe, 4, 64);
	conf_submit_ok(f.ctx, both_b, wr_only, 5);
	expect_success_event(f.pe, 5, 64);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 64, 9), 64);
	assert_ok(doca_buf_destroy(both_a));
	assert_ok(doca_buf_destroy(both_b));
	assert_ok(doca_buf_destroy(wr_only));
	assert_ok(doca_buf_destroy(rd_only));
	assert_ok(doca_mem_destroy(rw));
	fixture_fini(&f);
}

/* Overlapping windows of one memory copy as memmove does, forwards and
 * backwards, on the devices that promise it (doca_task.h: the software
 * device, and fab0 between local memories); undefined on verbs. */
Test(conf_copy, overlapping_windows_copy_like_memmove)
{
	struct api_fixture f;
	struct doca_dev_info info;
	struct doca_mem *rw;
	struct doca_buf *lo, *hi;
	uint8_t expect[3000];
	void *addr;

	conf_dev_info(&info);
	if (strcmp(info.backend, "verbs") == 0)
		cr_skip_test("overlapping copies are undefined on verbs (doca_task.h)");
	fixture_init_started(&f, conf_dev(), 64, 0);
	assert_ok(doca_mem_create(f.ctx, 3000, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &rw));
	assert_ok(doca_mem_get_addr(rw, &addr));
	assert_ok(doca_buf_create(rw, 0, 2000, &lo));
	assert_ok(doca_buf_create(rw, 500, 2000, &hi));
	for (int backwards = 0; backwards < 2; backwards++) {
		fill_pattern(addr, 3000, (uint32_t)(40 + backwards));
		memcpy(expect, addr, 3000);
		if (backwards)
			memmove(expect, expect + 500, 2000);
		else
			memmove(expect + 500, expect, 2000);
		conf_submit_ok(f.ctx, backwards ? hi : lo, backwards ? lo : hi, (uint64_t)backwards);
		expect_success_event(f.pe, (uint64_t)backwards, 2000);
		cr_assert_eq(memcmp(addr, expect, 3000), 0, "%s overlapping copy is not memmove",
			     backwards ? "backward" : "forward");
	}
	assert_ok(doca_buf_destroy(lo));
	assert_ok(doca_buf_destroy(hi));
	assert_ok(doca_mem_destroy(rw));
	fixture_fini(&f);
}

