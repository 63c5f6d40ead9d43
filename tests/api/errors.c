/*
 * tests/api/errors.c — DESIGN.md §4 "Rules that are errors, not undefined
 * behaviour": one test per row, each asserting the exact error code and
 * that nothing changed (the object still works afterwards).
 */
#include "common.h"

#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- submit on a ctx that is not RUNNING → BAD_STATE, no event ---- */

Test(error_table, submit_on_idle_ctx_is_bad_state_and_makes_no_event)
{
	struct api_fixture f;

	fixture_init(&f, "sw0", 4096, 2);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 1, 0), DOCA_ERROR_BAD_STATE);
	expect_no_event_for(f.pe, 10);
	assert_ok(doca_ctx_start(f.ctx));
	expect_no_event_for(f.pe, 10);
	/* No credit was taken by the refusal: the whole pool is available. */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 2, 0));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 3, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 4, 0), DOCA_ERROR_AGAIN);
	expect_success_event(f.pe, 2, 4096);
	expect_success_event(f.pe, 3, 4096);
	expect_no_event_for(f.pe, 10);
	fixture_fini(&f);
}

Test(error_table, submit_on_stopping_ctx_is_bad_state_and_makes_no_event)
{
	struct api_fixture f;
	struct doca_event *ev;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 2, 0), DOCA_ERROR_BAD_STATE);
	/* Exactly one event: the accepted task's (flushed: never progressed). */
	ev = wait_event(f.pe);
	cr_assert_eq(doca_event_get_user_data(ev).u64, 1, "event of the refused task");
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE, "flushed task status");
	assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
	doca_event_free(ev);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	expect_no_event_for(f.pe, 10);
	/* The ctx still works after a restart. */
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(error_table, submit_on_stopped_ctx_is_bad_state_and_makes_no_event)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_ok(doca_ctx_stop(f.ctx));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 1, 0), DOCA_ERROR_BAD_STATE);
	expect_no_event_for(f.pe, 10);
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* ---- start without a device or without a PE → NOT_CONNECTED ---- */

Test(error_table, start_without_dev_is_not_connected_and_ctx_stays_idle)
{
	struct doca_ctx *ctx = NULL;
	struct doca_pe *pe = NULL;
	struct doca_dev *dev = NULL;

	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_doca(doca_ctx_start(ctx), DOCA_ERROR_NOT_CONNECTED);
	assert_state(ctx, DOCA_CTX_STATE_IDLE);
	/* Still configurable and startable once it has a device. */
	assert_ok(doca_dev_open("sw0", &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_ok(doca_ctx_start(ctx));
	assert_ok(doca_ctx_stop(ctx));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
}

Test(error_table, start_without_pe_is_not_connected_and_ctx_stays_idle)
{
	struct doca_ctx *ctx = NULL;
	struct doca_pe *pe = NULL;
	struct doca_dev *dev = NULL;

	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_dev_open("sw0", &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_doca(doca_ctx_start(ctx), DOCA_ERROR_NOT_CONNECTED);
	assert_state(ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_ok(doca_ctx_start(ctx));
	assert_ok(doca_ctx_stop(ctx));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
}

Test(error_table, start_with_neither_dev_nor_pe_is_not_connected)
{
	struct doca_ctx *ctx = NULL;

	assert_ok(doca_ctx_create(&ctx));
	assert_doca(doca_ctx_start(ctx), DOCA_ERROR_NOT_CONNECTED);
	assert_state(ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_ctx_destroy(ctx));
}

/* ---- configure / connect a ctx that is not IDLE → BAD_STATE ---- */

static void dummy_event_cb(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
}

static int dummy_state_calls;

static void dummy_state_cb(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
			   enum doca_ctx_state next)
{
	(void)ctx;
	(void)ud;
	(void)prev;
	(void)next;
	dummy_state_calls++;
}

static void expect_configuration_refused(struct api_fixture *f)
{
	union doca_data ud = { .u64 = 7 };
	uint32_t n = 0;

	assert_doca(doca_ctx_set_max_tasks(f->ctx, 8), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_ctx_set_user_data(f->ctx, ud), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_ctx_set_event_cb(f->ctx, dummy_event_cb), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_ctx_set_state_changed_cb(f->ctx, dummy_state_cb), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_ctx_set_event_cb(f->ctx, NULL), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_ctx_set_state_changed_cb(f->ctx, NULL), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_ctx_get_max_tasks(f->ctx, &n));
	cr_assert_eq(n, 4, "max_tasks changed to %u by a refused call", n);
}

Test(error_table, configure_running_ctx_is_bad_state_and_changes_nothing)
{
	struct api_fixture f;

	dummy_state_calls = 0;
	fixture_init_started(&f, "sw0", 4096, 4);
	expect_configuration_refused(&f);
	/* The event callback was not installed: events still come through get_event. */
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
	/* Nor was the state callback: the stop reported nothing. */
	cr_assert_eq(dummy_state_calls, 0, "a refused doca_ctx_set_state_changed_cb took effect");
}

Test(error_table, configure_stopping_ctx_is_bad_state_and_changes_nothing)
{
	struct api_fixture f;
	struct doca_event *ev;

	dummy_state_calls = 0;
	fixture_init_started(&f, "sw0", 4096, 4);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	expect_configuration_refused(&f);
	ev = wait_event(f.pe);
	assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
	doca_event_free(ev);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
	cr_assert_eq(dummy_state_calls, 0, "a refused doca_ctx_set_state_changed_cb took effect");
}

/*
 * A RUNNING ctx always has a device and a PE, so set_dev and connect on it
 * could be refused for two reasons; the table puts "not IDLE → BAD_STATE"
 * first and the headers list BAD_STATE first: the state check wins.
 */
Test(error_table, set_dev_and_connect_on_running_ctx_are_bad_state_before_not_permitted)
{
	struct api_fixture f;
	struct doca_pe *other = NULL;
	struct doca_dev *other_dev = NULL;

	assert_ok(doca_pe_create(&other));
	assert_ok(doca_dev_open("sw0", &other_dev));
	fixture_init_started(&f, "sw0", 4096, 0);
	assert_doca(doca_ctx_set_dev(f.ctx, other_dev), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_ctx_set_dev(f.ctx, f.dev), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_pe_connect_ctx(other, f.ctx), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_pe_connect_ctx(f.pe, f.ctx), DOCA_ERROR_BAD_STATE);
	fixture_copy_and_verify(&f);
	cr_assert_eq(doca_pe_progress(other), 0, "the other PE made events");
	assert_ok(doca_pe_destroy(other));
	assert_ok(doca_dev_close(other_dev));
	fixture_fini(&f);
}

/* ---- connect to a second PE → NOT_PERMITTED ---- */

Test(error_table, connect_ctx_to_second_pe_is_not_permitted_and_first_pe_keeps_it)
{
	struct api_fixture f;
	struct doca_pe *other = NULL;

	assert_ok(doca_pe_create(&other));
	fixture_init(&f, "sw0", 4096, 0);
	assert_doca(doca_pe_connect_ctx(other, f.ctx), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(doca_pe_connect_ctx(f.pe, f.ctx), DOCA_ERROR_NOT_PERMITTED);
	/* other has no ctx; f.pe still serves f.ctx. */
	assert_ok(doca_pe_destroy(other));
	assert_doca(doca_pe_destroy(f.pe), DOCA_ERROR_IN_USE);
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* ---- set_dev on a ctx that has a device → NOT_PERMITTED ---- */

Test(error_table, set_second_dev_is_not_permitted_and_first_binding_stays)
{
	struct api_fixture f;
	struct doca_dev *second = NULL;

	assert_ok(doca_dev_open("sw0:engines=1", &second));
	fixture_init(&f, "sw0", 4096, 0);
	assert_doca(doca_ctx_set_dev(f.ctx, second), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(doca_ctx_set_dev(f.ctx, f.dev), DOCA_ERROR_NOT_PERMITTED);
	/* The memories are registered through the first device, not the second. */
	assert_ok(doca_dev_close(second));
	assert_doca(doca_dev_close(f.dev), DOCA_ERROR_IN_USE);
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* ---- destroy a ctx that is RUNNING or STOPPING → BAD_STATE ---- */

Test(error_table, destroy_running_ctx_is_bad_state_and_ctx_still_copies)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 4096, 0);
	/* With a task in flight too: nothing freed, nothing lost. */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 5, 0));
	assert_doca(doca_ctx_destroy(f.ctx), DOCA_ERROR_BAD_STATE);
	assert_state(f.ctx, DOCA_CTX_STATE_RUNNING);
	expect_success_event(f.pe, 5, 4096);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 4096, f.seed), 4096, "copy differs");
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(error_table, destroy_stopping_ctx_is_bad_state_and_nothing_is_lost)
{
	struct api_fixture f;
	int events = 0;
	unsigned seen = 0;

	fixture_init_started(&f, "sw0", 4096, 0);
	for (int i = 0; i < 3; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_doca(doca_ctx_destroy(f.ctx), DOCA_ERROR_BAD_STATE);
	assert_state(f.ctx, DOCA_CTX_STATE_STOPPING);
	while (events < 3) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t user = doca_event_get_user_data(ev).u64;

		cr_assert_lt(user, 3, "unexpected user data %llu", (unsigned long long)user);
		cr_assert_eq(seen & (1u << user), 0, "two events for task %llu", (unsigned long long)user);
		seen |= 1u << user;
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE, "flushed task status");
		assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
		doca_event_free(ev);
		events++;
		/* Still refused while any event is outstanding. */
		if (events < 3)
			assert_doca(doca_ctx_destroy(f.ctx), DOCA_ERROR_BAD_STATE);
	}
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	expect_no_event_for(f.pe, 10);
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* ---- destroy a ctx that still has memories or a device → IN_USE ---- */

Test(error_table, destroy_ctx_with_memories_is_in_use_and_memories_still_copy)
{
	struct api_fixture f;

	fixture_init(&f, "sw0", 4096, 0);
	assert_doca(doca_ctx_destroy(f.ctx), DOCA_ERROR_IN_USE);
	assert_state(f.ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(error_table, destroy_ctx_with_bound_dev_is_in_use_until_dev_closed)
{
	struct doca_ctx *ctx = NULL;
	struct doca_dev *dev = NULL;
	struct doca_mem *mem = NULL;

	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_dev_open("sw0", &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_doca(doca_ctx_destroy(ctx), DOCA_ERROR_IN_USE);
	/* Still bound: a memory can be registered. */
	assert_ok(doca_mem_create(ctx, 64, DOCA_ACCESS_FLAG_READ, &mem));
	assert_ok(doca_mem_destroy(mem));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_ctx_destroy(ctx));
}

/* ---- destroy a mem that still has buffers → IN_USE ---- */

Test(error_table, destroy_mem_with_buffers_is_in_use_and_buffers_still_copy)
{
	struct api_fixture f;
	struct doca_buf *extra = NULL;

	fixture_init(&f, "sw0", 4096, 0);
	assert_ok(doca_buf_create(f.dst_mem, 100, 50, &extra));
	assert_doca(doca_mem_destroy(f.src_mem), DOCA_ERROR_IN_USE);
	assert_doca(doca_mem_destroy(f.dst_mem), DOCA_ERROR_IN_USE);
	assert_ok(doca_buf_destroy(f.dst));
	f.dst = NULL;
	/* One buffer left is still one too many. */
	assert_doca(doca_mem_destroy(f.dst_mem), DOCA_ERROR_IN_USE);
	f.dst = extra;
	assert_ok(doca_ctx_start(f.ctx));
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 9, DOCA_TASK_FLAG_ALLOW_PARTIAL));
	{
		struct doca_event *ev = wait_event(f.pe);

		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_PARTIAL, "status");
		assert_doca(doca_event_get_error(ev), DOCA_ERROR_TOO_BIG);
		cr_assert_eq(doca_event_get_bytes(ev), 50, "bytes %zu", doca_event_get_bytes(ev));
		doca_event_free(ev);
	}
	cr_assert_eq(pattern_mismatch(f.dst_bytes + 100, 50, f.seed), 50, "copy through remaining buffer differs");
	cr_assert_eq(bytes_mismatch(f.dst_bytes, 100, 0), 100, "bytes before the window changed");
	fixture_fini(&f);
}

/* ---- destroy a buf used by an in-flight task → IN_USE ---- */

Test(error_table, destroy_buf_of_in_flight_task_is_in_use_until_event_freed)
{
	struct api_fixture f;
	struct doca_event *ev;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	/* Submitted, not yet progressed. */
	assert_doca(doca_buf_destroy(f.src), DOCA_ERROR_IN_USE);
	assert_doca(doca_buf_destroy(f.dst), DOCA_ERROR_IN_USE);
	/* Completed but the event is not freed: still in use. */
	ev = wait_event(f.pe);
	assert_doca(doca_buf_destroy(f.src), DOCA_ERROR_IN_USE);
	assert_doca(doca_buf_destroy(f.dst), DOCA_ERROR_IN_USE);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
	doca_event_free(ev);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 4096, f.seed), 4096, "copy differs");
	/* Buffers still work after the refusals. */
	fixture_copy_and_verify(&f);
	assert_ok(doca_buf_destroy(f.src));
	f.src = NULL;
	fixture_fini(&f);
}

/* ---- close a dev with memories, or whose ctx is not IDLE → IN_USE ---- */

Test(error_table, close_dev_with_memories_is_in_use_and_dev_still_works)
{
	struct api_fixture f;

	fixture_init(&f, "sw0", 4096, 0);
	assert_doca(doca_dev_close(f.dev), DOCA_ERROR_IN_USE);
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(error_table, close_dev_of_running_ctx_is_in_use_even_without_memories)
{
	struct doca_ctx *ctx = NULL;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct doca_mem *mem = NULL;

	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_dev_open("sw0", &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_ok(doca_ctx_start(ctx));
	assert_doca(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	/* Still bound: memories can be registered on the running ctx. */
	assert_ok(doca_mem_create(ctx, 128, DOCA_ACCESS_FLAG_WRITE, &mem));
	assert_ok(doca_mem_destroy(mem));
	assert_ok(doca_ctx_stop(ctx));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
}

Test(error_table, close_dev_of_stopping_ctx_is_in_use)
{
	struct doca_ctx *ctx = NULL;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct doca_mem *mem = NULL;
	struct doca_buf *src = NULL, *dst = NULL;
	struct doca_event *ev;

	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_dev_open("sw0", &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_ok(doca_mem_create(ctx, 128, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem));
	assert_ok(doca_buf_create(mem, 0, 64, &src));
	assert_ok(doca_buf_create(mem, 64, 64, &dst));
	assert_ok(doca_ctx_start(ctx));
	assert_ok(submit_copy(ctx, src, dst, 1, 0));
	assert_doca(doca_ctx_stop(ctx), DOCA_ERROR_IN_PROGRESS);
	assert_doca(doca_buf_destroy(dst), DOCA_ERROR_IN_USE);
	assert_doca(doca_buf_destroy(src), DOCA_ERROR_IN_USE);
	assert_doca(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	ev = wait_event(pe);
	doca_event_free(ev);
	progress_until_state(pe, ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_buf_destroy(src));
	assert_ok(doca_buf_destroy(dst));
	assert_ok(doca_mem_destroy(mem));
	/* Only now, with the ctx IDLE and no memory, may the device close. */
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
}

Test(error_table, close_dev_under_idle_ctx_unbinds_it)
{
	struct doca_ctx *ctx = NULL;
	struct doca_dev *dev = NULL, *dev2 = NULL;
	struct doca_pe *pe = NULL;
	struct doca_mem *mem = NULL;

	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_dev_open("sw0", &dev));
	assert_ok(doca_ctx_set_dev(ctx, dev));
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_ok(doca_dev_close(dev));
	/* Unbound: no memory, no start, and a new device may be bound. */
	assert_doca(doca_mem_create(ctx, 64, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_NOT_CONNECTED);
	assert_doca(doca_ctx_start(ctx), DOCA_ERROR_NOT_CONNECTED);
	assert_ok(doca_dev_open("sw0", &dev2));
	assert_ok(doca_ctx_set_dev(ctx, dev2));
	assert_ok(doca_ctx_start(ctx));
	assert_ok(doca_ctx_stop(ctx));
	assert_ok(doca_dev_close(dev2));
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
}

/* ---- destroy a PE with connected ctxs → IN_USE ---- */

Test(error_table, destroy_pe_with_connected_ctx_is_in_use_and_pe_still_progresses)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_doca(doca_pe_destroy(f.pe), DOCA_ERROR_IN_USE);
	fixture_copy_and_verify(&f);
	assert_ok(doca_ctx_stop(f.ctx));
	/* An IDLE ctx is still connected. */
	assert_doca(doca_pe_destroy(f.pe), DOCA_ERROR_IN_USE);
	fixture_fini(&f); /* destroying the ctx disconnects it, then the PE goes */
}

Test(error_table, destroy_ctx_disconnects_it_from_its_pe)
{
	struct doca_ctx *ctx = NULL;
	struct doca_pe *pe = NULL;

	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_ctx_create(&ctx));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_doca(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	assert_ok(doca_ctx_destroy(ctx));
	assert_ok(doca_pe_destroy(pe));
}

/* ---- buf outside its mem → INVALID_VALUE ---- */

Test(error_table, buf_outside_mem_is_invalid_value_and_creates_nothing)
{
	struct api_fixture f;
	struct doca_buf *b = NULL;
	const size_t len = 4096;

	fixture_init(&f, "sw0", len, 0);
	assert_doca(doca_buf_create(f.dst_mem, 0, len + 1, &b), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.dst_mem, 1, len, &b), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.dst_mem, len, 1, &b), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.dst_mem, len + 1, 0, &b), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.dst_mem, SIZE_MAX, 2, &b), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.dst_mem, 2, SIZE_MAX, &b), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.dst_mem, SIZE_MAX, SIZE_MAX, &b), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.dst_mem, SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 1, &b), DOCA_ERROR_INVALID_VALUE);
	/* The edges themselves are inside. */
	assert_ok(doca_buf_create(f.dst_mem, len - 1, 1, &b));
	assert_ok(doca_buf_destroy(b));
	assert_ok(doca_buf_create(f.dst_mem, len, 0, &b));
	assert_ok(doca_buf_destroy(b));
	/* The refused creates left no buffer behind: the memory goes once its one buffer does. */
	assert_ok(doca_buf_destroy(f.dst));
	f.dst = NULL;
	assert_ok(doca_mem_destroy(f.dst_mem));
	f.dst_mem = NULL;
	fixture_fini(&f);
}

/* ---- copy into a mem without WRITE, or from one without READ → NOT_PERMITTED ---- */

Test(error_table, copy_without_access_rights_is_not_permitted_and_takes_no_credit)
{
	struct api_fixture f;
	struct doca_mem *ro = NULL, *wo = NULL;
	struct doca_buf *ro_buf = NULL, *wo_buf = NULL;

	fixture_init(&f, "sw0", 4096, 1);
	assert_ok(doca_mem_create(f.ctx, 4096, DOCA_ACCESS_FLAG_READ, &ro));
	assert_ok(doca_mem_create(f.ctx, 4096, DOCA_ACCESS_FLAG_WRITE, &wo));
	assert_ok(doca_buf_create(ro, 0, 4096, &ro_buf));
	assert_ok(doca_buf_create(wo, 0, 4096, &wo_buf));
	assert_ok(doca_ctx_start(f.ctx));

	/* Destination without WRITE. */
	assert_doca(submit_copy(f.ctx, f.src, ro_buf, 1, 0), DOCA_ERROR_NOT_PERMITTED);
	/* Source without READ. */
	assert_doca(submit_copy(f.ctx, wo_buf, f.dst, 2, 0), DOCA_ERROR_NOT_PERMITTED);
	/* Both wrong (the fixture's own buffers, reversed). */
	assert_doca(submit_copy(f.ctx, f.dst, f.src, 3, 0), DOCA_ERROR_NOT_PERMITTED);
	expect_no_event_for(f.pe, 10);
	/* The one credit is still free and the allowed direction works. */
	fixture_copy_and_verify(&f);

	stop_and_drain(f.ctx, f.pe);
	assert_ok(doca_buf_destroy(ro_buf));
	assert_ok(doca_buf_destroy(wo_buf));
	assert_ok(doca_mem_destroy(ro));
	assert_ok(doca_mem_destroy(wo));
	fixture_fini(&f);
}

/* ---- dst shorter than src → INVALID_VALUE ---- */

Test(error_table, dst_shorter_than_src_is_invalid_value_and_dst_untouched)
{
	struct api_fixture f;
	struct doca_buf *short_dst = NULL;

	fixture_init(&f, "sw0", 4096, 1);
	assert_ok(doca_buf_create(f.dst_mem, 0, 4095, &short_dst));
	assert_ok(doca_ctx_start(f.ctx));
	assert_doca(submit_copy(f.ctx, f.src, short_dst, 1, 0), DOCA_ERROR_INVALID_VALUE);
	expect_no_event_for(f.pe, 10);
	cr_assert_eq(bytes_mismatch(f.dst_bytes, 4096, 0), 4096, "destination was written");
	/* Credit untouched; buffer not marked in use. */
	fixture_copy_and_verify(&f);
	assert_ok(doca_buf_destroy(short_dst));
	fixture_fini(&f);
}

/* ---- task pool full → AGAIN, immediately ---- */

Test(error_table, pool_full_is_again_and_refused_task_gets_no_event)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 4096, 3);
	for (int i = 0; i < 3; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 100, 0), DOCA_ERROR_AGAIN);
	for (int i = 0; i < 3; i++)
		expect_success_event(f.pe, (uint64_t)i, 4096);
	expect_no_event_for(f.pe, 10);
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* ---- unknown device name → NOT_FOUND ---- */

Test(error_table, unknown_device_is_not_found_and_sets_no_handle)
{
	struct doca_dev *dev = NULL;

	assert_doca(doca_dev_open("mlx5_9", &dev), DOCA_ERROR_NOT_FOUND);
	cr_assert_null(dev, "a handle was returned for an unknown device");
	assert_doca(doca_dev_open("no_such_device", &dev), DOCA_ERROR_NOT_FOUND);
	cr_assert_null(dev, "a handle was returned for an unknown device");
	/* A real device still opens afterwards. */
	assert_ok(doca_dev_open("sw0", &dev));
	assert_ok(doca_dev_close(dev));
}

/* ---- NULL or wrong-type handle → INVALID_VALUE (details in bad_inputs.c) ---- */

Test(error_table, null_and_wrong_type_handles_are_invalid_value)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 4096, 0);
	assert_doca(doca_ctx_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_destroy((struct doca_ctx *)f.pe), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_destroy((struct doca_mem *)f.src), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_destroy((struct doca_buf *)f.src_mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_dev_close((struct doca_dev *)f.ctx), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_destroy((struct doca_pe *)f.dev), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy((struct doca_ctx *)f.dst, f.src, f.dst, 1, 0), DOCA_ERROR_INVALID_VALUE);
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* The NOT_FOUND log line names the devices that exist. */
Test(error_table, unknown_device_log_lists_existing_devices, .init = cr_redirect_stderr)
{
	struct doca_dev *dev = NULL;
	char text[8192];

	setenv("DOCA_LOG_LEVEL", "error", 1);
	assert_doca(doca_dev_open("mlx5_9", &dev), DOCA_ERROR_NOT_FOUND);
	read_redirected_stderr(text, sizeof(text));
	cr_assert_not_null(strstr(text, "mlx5_9"), "the log does not name the unknown device: \"%s\"", text);
	cr_assert_not_null(strstr(text, "sw0"), "the log does not list sw0: \"%s\"", text);
}

/* Memories and buffers may be created on a ctx in any state, STOPPING included. */
Test(error_table, mem_and_buf_create_are_allowed_on_stopping_ctx)
{
	struct api_fixture f;
	struct doca_mem *mem = NULL;
	struct doca_buf *buf = NULL;

	fixture_init_started(&f, "sw0", 64, 0);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_ok(doca_mem_create(f.ctx, 64, DOCA_ACCESS_FLAG_WRITE, &mem));
	assert_ok(doca_buf_create(mem, 0, 64, &buf));
	stop_and_drain(f.ctx, f.pe);
	assert_ok(doca_buf_destroy(buf));
	assert_ok(doca_mem_destroy(mem));
	fixture_fini(&f);
}
