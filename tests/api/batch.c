/*
 * tests/api/batch.c — doca_task_submit_batch: a burst is taken in order, the
 * first refusal ends it, *accepted counts exactly the tasks that will get an
 * event, and refused tasks change nothing.
 */
#include <string.h>

#include "common.h"

#define BURST 16

/* A fixture plus a burst of copies of its 64-byte windows: task i copies
 * src window i into dst window i, user data i. */
struct burst {
	struct api_fixture f;
	struct doca_buf *src[BURST], *dst[BURST];
	struct doca_task_desc descs[BURST];
	uint32_t accepted;
};

static void burst_up(struct burst *b, const char *dev, uint32_t max_tasks, bool started)
{
	if (started)
		fixture_init_started(&b->f, dev, 64u * BURST, max_tasks);
	else
		fixture_init(&b->f, dev, 64u * BURST, max_tasks);
	for (uint32_t i = 0; i < BURST; i++) {
		assert_ok(doca_buf_create(b->f.src_mem, 64u * i, 64, &b->src[i]));
		assert_ok(doca_buf_create(b->f.dst_mem, 64u * i, 64, &b->dst[i]));
		b->descs[i] = (struct doca_task_desc){
			.type = DOCA_TASK_COPY, .src = b->src[i], .dst = b->dst[i], .user_data = { .u64 = i },
		};
	}
	b->accepted = 99;
}

static void burst_down(struct burst *b)
{
	for (uint32_t i = 0; i < BURST; i++) {
		assert_ok(doca_buf_destroy(b->src[i]));
		assert_ok(doca_buf_destroy(b->dst[i]));
	}
	fixture_fini(&b->f);
}

/* Submit descs[from, from + n) of @p b as one burst and assert its exact
 * answer: @p expect returned and @p accepted tasks accepted. */
static void burst_submit(struct burst *b, uint32_t from, uint32_t n, doca_error_t expect, uint32_t accepted)
{
	assert_doca(doca_task_submit_batch(b->f.ctx, b->descs + from, n, &b->accepted), expect);
	cr_assert_eq(b->accepted, accepted, "burst of %u from %u: %u accepted, expected %u", n, from, b->accepted,
		     accepted);
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
	struct burst b;

	burst_up(&b, "sw0", 0, true);
	burst_submit(&b, 0, BURST, DOCA_SUCCESS, BURST);
	expect_burst_done(&b.f, BURST);
	burst_down(&b);
}

Test(batch, the_pool_running_dry_ends_the_burst_with_again)
{
	struct burst b;

	burst_up(&b, "sw0:engines=1", 5, true);
	burst_submit(&b, 0, BURST, DOCA_ERROR_AGAIN, 5); /* exactly the pool's credits */
	expect_burst_done(&b.f, 5);
	burst_down(&b);
}

Test(batch, a_bad_descriptor_ends_the_burst_with_its_own_error)
{
	struct burst b;

	burst_up(&b, "sw0", 0, true);
	b.descs[3].src = b.dst[3]; /* a WRITE-only memory as source */
	burst_submit(&b, 0, BURST, DOCA_ERROR_NOT_PERMITTED, 3);
	expect_burst_done(&b.f, 3);
	burst_down(&b);
}

/* A burst from the PE's own thread (a progress call made it the PE's
 * home: the burst takes the guard) on a fresh pool, whose first take
 * finds no returned slot: every event filled, in order. */
Test(batch, a_burst_under_the_guard_on_a_fresh_pool_completes_in_order)
{
	struct burst b;

	burst_up(&b, "sw0", 0, true);
	cr_assert_eq(doca_pe_progress(b.f.pe), 0, "nothing to reap yet");
	burst_submit(&b, 0, BURST, DOCA_SUCCESS, BURST);
	expect_burst_done(&b.f, BURST);
	burst_down(&b);
}

/* A burst under the guard whose first take finds fewer returned slots on
 * the owner's stack than it has tasks (engine/task.c,
 * task_pin_take_fill_guarded: the stack's slots popped and filled as
 * their tasks are pinned, then the rest pinned and given fresh slots):
 * every task accepted, completed once, in order. */
Test(batch, a_burst_under_the_guard_takes_the_stacks_slots_then_fresh_ones_in_order)
{
	struct burst b;

	burst_up(&b, "sw0", 0, true);
	cr_assert_eq(doca_pe_progress(b.f.pe), 0, "nothing to reap yet");
	burst_submit(&b, 0, BURST / 2, DOCA_SUCCESS, BURST / 2);
	expect_burst_done(&b.f, BURST / 2); /* their slots back on the stack */
	burst_submit(&b, 0, BURST, DOCA_SUCCESS, BURST);
	expect_burst_done(&b.f, BURST);
	burst_down(&b);
}

/* A burst under the guard whose credits run out while it pops the
 * owner's stack (three of eight credits out, five slots on the stack):
 * exactly the five accepted, in order after the three, then AGAIN; the
 * refused tasks hold nothing (the buffers destroy at the end). */
Test(batch, a_burst_under_the_guard_ends_with_again_at_exactly_the_free_credits)
{
	struct burst b;

	burst_up(&b, "sw0", BURST / 2, true);
	cr_assert_eq(doca_pe_progress(b.f.pe), 0, "nothing to reap yet");
	burst_submit(&b, 0, BURST / 2, DOCA_SUCCESS, BURST / 2);
	expect_burst_done(&b.f, BURST / 2); /* every slot back on the stack */
	burst_submit(&b, 0, 3, DOCA_SUCCESS, 3);
	burst_submit(&b, 3, BURST - 3, DOCA_ERROR_AGAIN, BURST / 2 - 3); /* exactly the free credits */
	expect_burst_done(&b.f, BURST / 2);
	burst_down(&b);
}

/* The first task refused once the pool's credits have come back (its
 * stack holds the returned slots): no credit is taken for the refused
 * chunk, so the next burst gets every one of them. */
Test(batch, a_refused_first_task_takes_no_returned_credit)
{
	struct burst b;

	burst_up(&b, "sw0", BURST, true);
	burst_submit(&b, 0, BURST, DOCA_SUCCESS, BURST);
	expect_burst_done(&b.f, BURST);
	b.descs[0].src = b.dst[0]; /* a WRITE-only memory as source */
	burst_submit(&b, 0, BURST, DOCA_ERROR_NOT_PERMITTED, 0);
	expect_no_event_for(b.f.pe, 20);
	b.descs[0].src = b.src[0];
	burst_submit(&b, 0, BURST, DOCA_SUCCESS, BURST); /* every credit back */
	expect_burst_done(&b.f, BURST);
	burst_down(&b);
}

Test(batch, nothing_is_accepted_unless_running)
{
	struct burst b;

	burst_up(&b, "sw0", 0, false);
	burst_submit(&b, 0, BURST, DOCA_ERROR_BAD_STATE, 0);
	assert_ok(doca_ctx_start(b.f.ctx));
	expect_no_event_for(b.f.pe, 20);
	burst_submit(&b, 0, 0, DOCA_SUCCESS, 0); /* an empty burst */
	burst_down(&b);
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
