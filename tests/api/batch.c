/*
 * tests/api/batch.c — doca_task_submit_batch: a burst is taken in order, the
 * first refusal ends it, *accepted counts exactly the tasks that will get an
 * event, and refused tasks change nothing.
 */
#include <string.h>

#include "common.h"

#define BURST 16

/* A burst of copies of the fixture's 64-byte windows: task i copies src
 * window i into dst window i, user data i. */
static void make_burst(struct api_fixture *f, struct doca_buf **src, struct doca_buf **dst,
		       struct doca_task_desc *descs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		assert_ok(doca_buf_create(f->src_mem, 64u * i, 64, &src[i]));
		assert_ok(doca_buf_create(f->dst_mem, 64u * i, 64, &dst[i]));
		descs[i] = (struct doca_task_desc){
			.type = DOCA_TASK_COPY, .src = src[i], .dst = dst[i], .user_data = { .u64 = i },
		};
	}
}

static void drop_burst(struct doca_buf **src, struct doca_buf **dst, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		assert_ok(doca_buf_destroy(src[i]));
		assert_ok(doca_buf_destroy(dst[i]));
	}
}

/* Reap exactly @p n events in submission order (one ctx, one PE), each a
 * SUCCESS of 64 bytes, then assert nothing else comes. */
static void expect_burst_done(struct api_fixture *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		expect_success_event(f->pe, i, 64);
	expect_no_event_for(f->pe, 20);
	cr_assert_eq(memcmp(f->src_bytes, f->dst_bytes, 64u * n), 0, "copied bytes");
	cr_assert_eq(bytes_mismatch(f->dst_bytes + 64u * n, f->len - 64u * n, 0), f->len - 64u * n,
		     "nothing past the accepted tasks was written");
}

Test(batch, a_whole_burst_is_accepted_and_completes_in_order)
{
	struct api_fixture f;
	struct doca_buf *src[BURST], *dst[BURST];
	struct doca_task_desc descs[BURST];
	uint32_t accepted = 99;

	fixture_init_started(&f, "sw0", 64u * BURST, 0);
	make_burst(&f, src, dst, descs, BURST);
	assert_ok(doca_task_submit_batch(f.ctx, descs, BURST, &accepted));
	cr_assert_eq(accepted, BURST);
	expect_burst_done(&f, BURST);
	drop_burst(src, dst, BURST);
	fixture_fini(&f);
}

Test(batch, the_pool_running_dry_ends_the_burst_with_again)
{
	struct api_fixture f;
	struct doca_buf *src[BURST], *dst[BURST];
	struct doca_task_desc descs[BURST];
	uint32_t accepted = 99;

	fixture_init_started(&f, "sw0:engines=1", 64u * BURST, 5);
	make_burst(&f, src, dst, descs, BURST);
	assert_doca(doca_task_submit_batch(f.ctx, descs, BURST, &accepted), DOCA_ERROR_AGAIN);
	cr_assert_eq(accepted, 5, "exactly the pool's credits");
	expect_burst_done(&f, 5);
	drop_burst(src, dst, BURST);
	fixture_fini(&f);
}

Test(batch, a_bad_descriptor_ends_the_burst_with_its_own_error)
{
	struct api_fixture f;
	struct doca_buf *src[BURST], *dst[BURST];
	struct doca_task_desc descs[BURST];
	uint32_t accepted = 99;

	fixture_init_started(&f, "sw0", 64u * BURST, 0);
	make_burst(&f, src, dst, descs, BURST);
	descs[3].src = dst[3]; /* a WRITE-only memory as source */
	assert_doca(doca_task_submit_batch(f.ctx, descs, BURST, &accepted), DOCA_ERROR_NOT_PERMITTED);
	cr_assert_eq(accepted, 3);
	expect_burst_done(&f, 3);
	drop_burst(src, dst, BURST);
	fixture_fini(&f);
}

Test(batch, nothing_is_accepted_unless_running)
{
	struct api_fixture f;
	struct doca_buf *src[BURST], *dst[BURST];
	struct doca_task_desc descs[BURST];
	uint32_t accepted = 99;

	fixture_init(&f, "sw0", 64u * BURST, 0);
	make_burst(&f, src, dst, descs, BURST);
	assert_doca(doca_task_submit_batch(f.ctx, descs, BURST, &accepted), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(accepted, 0);
	assert_ok(doca_ctx_start(f.ctx));
	expect_no_event_for(f.pe, 20);
	assert_ok(doca_task_submit_batch(f.ctx, descs, 0, &accepted));
	cr_assert_eq(accepted, 0, "an empty burst");
	drop_burst(src, dst, BURST);
	fixture_fini(&f);
}

Test(batch, null_arguments_are_refused)
{
	struct api_fixture f;
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY };
	uint32_t accepted = 99;

	fixture_init_started(&f, "sw0", 64, 0);
	desc.src = f.src;
	desc.dst = f.dst;
	assert_doca(doca_task_submit_batch(NULL, &desc, 1, &accepted), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(accepted, 0);
	assert_doca(doca_task_submit_batch(f.ctx, NULL, 1, &accepted), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_task_submit_batch(f.ctx, &desc, 1, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_task_submit_batch((struct doca_ctx *)f.pe, &desc, 1, &accepted),
		    DOCA_ERROR_INVALID_VALUE);
	expect_no_event_for(f.pe, 20);
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}
