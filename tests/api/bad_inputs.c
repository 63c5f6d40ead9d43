/*
 * tests/api/bad_inputs.c — every public function given NULL, a handle of
 * another type, out-of-range values; submit's order of checks; malformed
 * open strings. Each refusal is exact and leaves the objects working.
 */
#include "common.h"

#include <string.h>

static void dummy_event_cb(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
}

static void dummy_state_cb(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
			   enum doca_ctx_state next)
{
	(void)ctx;
	(void)ud;
	(void)prev;
	(void)next;
}

Test(bad_inputs, null_out_parameters_are_invalid_value)
{
	struct api_fixture f;

	assert_doca(doca_ctx_create(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_create(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_dev_open("sw0", NULL), DOCA_ERROR_INVALID_VALUE);
	fixture_init(&f, "sw0", 256, 0);
	assert_doca(doca_mem_create(f.ctx, 64, DOCA_ACCESS_FLAG_READ, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(f.ctx, f.src_bytes, 64, DOCA_ACCESS_FLAG_READ, NULL),
		    DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_get_addr(f.src_mem, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_get_len(f.src_mem, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(f.src_mem, 0, 1, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_get_data(f.src, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_get_len(f.src, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_get_state(f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_get_max_tasks(f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_get_notification_handle(f.pe, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_dev_get_name(f.dev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_dev_list(NULL, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	{
		size_t count = 0;

		assert_doca(doca_dev_list(NULL, 1, &count), DOCA_ERROR_INVALID_VALUE);
	}
	/* Nothing was created: the fixture tears down exactly as built. */
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(bad_inputs, null_handles_are_invalid_value_for_every_function)
{
	struct api_fixture f;
	struct doca_task_desc desc;
	struct doca_dev *dev_out = NULL;
	struct doca_mem *mem_out = NULL;
	struct doca_buf *buf_out = NULL;
	void *addr = NULL;
	size_t len = 77;
	uint32_t n = 77;
	int fd = -77;
	const char *name = NULL;
	enum doca_ctx_state st = DOCA_CTX_STATE_STOPPING;
	union doca_data ud = { .u64 = 1 };

	fixture_init_started(&f, "sw0", 256, 0);

	assert_doca(doca_dev_open(NULL, &dev_out), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_dev_close(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_dev_get_name(NULL, &name), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_dev(NULL, f.dev), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_dev(f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_max_tasks(NULL, 4), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_get_max_tasks(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_user_data(NULL, ud), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_event_cb(NULL, dummy_event_cb), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_state_changed_cb(NULL, dummy_state_cb), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_start(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_get_state(NULL, &st), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(NULL, 64, DOCA_ACCESS_FLAG_READ, &mem_out), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(NULL, f.src_bytes, 64, DOCA_ACCESS_FLAG_READ, &mem_out),
		    DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(f.ctx, NULL, 64, DOCA_ACCESS_FLAG_READ, &mem_out),
		    DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_get_addr(NULL, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_get_len(NULL, &len), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(NULL, 0, 1, &buf_out), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_get_data(NULL, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_get_len(NULL, &len), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_connect_ctx(NULL, f.ctx), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_connect_ctx(f.pe, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_get_notification_handle(NULL, &fd), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_request_notification(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_clear_notification(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_run_on_cpu(NULL, -1), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_stop_run(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_progress(NULL), 0, "doca_pe_progress(NULL)");
	cr_assert_null(doca_pe_get_event(NULL), "doca_pe_get_event(NULL)");

	/* Submit: NULL ctx, desc, src, dst. */
	memset(&desc, 0, sizeof(desc));
	desc.type = DOCA_TASK_COPY;
	desc.src = f.src;
	desc.dst = f.dst;
	assert_doca(doca_task_submit(NULL, &desc), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_task_submit(f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	desc.src = NULL;
	assert_doca(doca_task_submit(f.ctx, &desc), DOCA_ERROR_INVALID_VALUE);
	desc.src = f.src;
	desc.dst = NULL;
	assert_doca(doca_task_submit(f.ctx, &desc), DOCA_ERROR_INVALID_VALUE);

	/* Event getters on NULL give the documented neutral values; free ignores NULL. */
	cr_assert_eq(doca_event_get_status(NULL), DOCA_EVENT_STATUS_FAILURE, "status of NULL");
	assert_doca(doca_event_get_error(NULL), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_event_get_bytes(NULL), 0, "bytes of NULL");
	cr_assert_eq(doca_event_get_user_data(NULL).u64, 0, "user data of NULL");
	cr_assert_eq((int)doca_event_get_type(NULL), 0, "type of NULL");
	cr_assert_null(doca_event_get_ctx(NULL), "ctx of NULL");
	doca_event_free(NULL);

	/* Refused calls returned no object and wrote no output. */
	cr_assert_eq(len, 77, "a refused getter wrote len %zu", len);
	cr_assert_eq(n, 77, "a refused getter wrote n %u", n);
	cr_assert_eq(fd, -77, "a refused getter wrote fd %d", fd);
	cr_assert_null(name, "a refused getter wrote a name");
	cr_assert_null(addr, "a refused getter wrote an address");
	cr_assert_eq(st, DOCA_CTX_STATE_STOPPING, "a refused getter wrote state %d", (int)st);
	cr_assert_null(dev_out, "doca_dev_open returned a handle on failure");
	cr_assert_null(mem_out, "doca_mem_create returned a memory on failure");
	cr_assert_null(buf_out, "doca_buf_create returned a buffer on failure");

	/* Nothing changed. */
	expect_no_event_for(f.pe, 10);
	assert_state(f.ctx, DOCA_CTX_STATE_RUNNING);
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

/* Handles of another type: each function refuses them and the real objects keep working. */
Test(bad_inputs, wrong_type_handles_are_invalid_value_and_harm_nothing)
{
	struct api_fixture f;
	struct doca_ctx *as_ctx_pe, *as_ctx_dev, *as_ctx_mem, *as_ctx_buf;
	struct doca_dev *as_dev_ctx, *as_dev_mem;
	struct doca_mem *as_mem_ctx, *as_mem_buf, *as_mem_dev;
	struct doca_buf *as_buf_mem, *as_buf_ctx, *as_buf_pe;
	struct doca_pe *as_pe_ctx, *as_pe_dev;
	struct doca_task_desc desc;
	struct doca_mem *mem_out = NULL;
	struct doca_buf *buf_out = NULL;
	void *addr = NULL;
	size_t len = 0;
	uint32_t n = 0;
	int fd = -1;
	const char *name = NULL;
	enum doca_ctx_state st;
	union doca_data ud = { .u64 = 1 };

	fixture_init(&f, "sw0", 256, 0);
	as_ctx_pe = (struct doca_ctx *)f.pe;
	as_ctx_dev = (struct doca_ctx *)f.dev;
	as_ctx_mem = (struct doca_ctx *)f.src_mem;
	as_ctx_buf = (struct doca_ctx *)f.src;
	as_dev_ctx = (struct doca_dev *)f.ctx;
	as_dev_mem = (struct doca_dev *)f.dst_mem;
	as_mem_ctx = (struct doca_mem *)f.ctx;
	as_mem_buf = (struct doca_mem *)f.dst;
	as_mem_dev = (struct doca_mem *)f.dev;
	as_buf_mem = (struct doca_buf *)f.src_mem;
	as_buf_ctx = (struct doca_buf *)f.ctx;
	as_buf_pe = (struct doca_buf *)f.pe;
	as_pe_ctx = (struct doca_pe *)f.ctx;
	as_pe_dev = (struct doca_pe *)f.dev;

	/* ctx functions */
	assert_doca(doca_ctx_set_dev(as_ctx_pe, f.dev), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_dev(f.ctx, as_dev_ctx), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_dev(f.ctx, as_dev_mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_max_tasks(as_ctx_dev, 4), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_get_max_tasks(as_ctx_mem, &n), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_user_data(as_ctx_buf, ud), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_event_cb(as_ctx_pe, dummy_event_cb), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_set_state_changed_cb(as_ctx_dev, dummy_state_cb), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_start(as_ctx_pe), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_stop(as_ctx_dev), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_get_state(as_ctx_mem, &st), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_destroy(as_ctx_buf), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_destroy(as_ctx_pe), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_ctx_destroy(as_ctx_dev), DOCA_ERROR_INVALID_VALUE);
	/* dev functions */
	assert_doca(doca_dev_close(as_dev_ctx), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_dev_close(as_dev_mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_dev_get_name(as_dev_ctx, &name), DOCA_ERROR_INVALID_VALUE);
	/* mem functions */
	assert_doca(doca_mem_create(as_ctx_pe, 64, DOCA_ACCESS_FLAG_READ, &mem_out), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(as_ctx_mem, 64, DOCA_ACCESS_FLAG_READ, &mem_out), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(as_ctx_dev, f.src_bytes, 64, DOCA_ACCESS_FLAG_READ, &mem_out),
		    DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_get_addr(as_mem_ctx, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_get_addr(as_mem_buf, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_get_len(as_mem_dev, &len), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_destroy(as_mem_buf), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_destroy(as_mem_ctx), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_destroy(as_mem_dev), DOCA_ERROR_INVALID_VALUE);
	/* buf functions */
	assert_doca(doca_buf_create(as_mem_buf, 0, 1, &buf_out), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_create(as_mem_ctx, 0, 1, &buf_out), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_get_data(as_buf_mem, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_get_len(as_buf_ctx, &len), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_destroy(as_buf_mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_destroy(as_buf_ctx), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_buf_destroy(as_buf_pe), DOCA_ERROR_INVALID_VALUE);
	/* pe functions */
	assert_doca(doca_pe_connect_ctx(as_pe_ctx, f.ctx), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_connect_ctx(f.pe, as_ctx_pe), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_get_notification_handle(as_pe_ctx, &fd), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_request_notification(as_pe_dev), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_clear_notification(as_pe_ctx), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_run_on_cpu(as_pe_ctx, -1), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_stop_run(as_pe_dev), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_destroy(as_pe_ctx), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_pe_destroy(as_pe_dev), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_progress(as_pe_ctx), 0, "progress of a ctx posing as a PE");
	cr_assert_null(doca_pe_get_event(as_pe_dev), "get_event of a dev posing as a PE");

	assert_ok(doca_ctx_start(f.ctx));
	/* submit: wrong-type ctx and buffers (checked before the state and everything else) */
	memset(&desc, 0, sizeof(desc));
	desc.type = DOCA_TASK_COPY;
	desc.src = f.src;
	desc.dst = f.dst;
	assert_doca(doca_task_submit(as_ctx_buf, &desc), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_task_submit(as_ctx_pe, &desc), DOCA_ERROR_INVALID_VALUE);
	desc.src = as_buf_mem;
	assert_doca(doca_task_submit(f.ctx, &desc), DOCA_ERROR_INVALID_VALUE);
	desc.src = f.src;
	desc.dst = as_buf_ctx;
	assert_doca(doca_task_submit(f.ctx, &desc), DOCA_ERROR_INVALID_VALUE);
	expect_no_event_for(f.pe, 10);

	/* Every object is intact and usable. */
	assert_state(f.ctx, DOCA_CTX_STATE_RUNNING);
	assert_ok(doca_dev_get_name(f.dev, &name));
	cr_assert_str_eq(name, "sw0", "device name");
	assert_ok(doca_mem_get_len(f.src_mem, &len));
	cr_assert_eq(len, 256, "memory length");
	assert_ok(doca_buf_get_len(f.dst, &len));
	cr_assert_eq(len, 256, "buffer length");
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}

Test(bad_inputs, mem_create_rejects_bad_length_and_access)
{
	struct api_fixture f;
	struct doca_mem *mem = NULL;
	struct doca_ctx *unbound = NULL;
	uint8_t raw[64];

	fixture_init(&f, "sw0", 256, 0);
	assert_doca(doca_mem_create(f.ctx, 0, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(f.ctx, SIZE_MAX, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(f.ctx, SIZE_MAX / 2 + 1, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(f.ctx, 64, 0, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(f.ctx, 64, 1u << 2, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create(f.ctx, 64, DOCA_ACCESS_FLAG_READ | (1u << 31), &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(f.ctx, raw, 0, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(f.ctx, raw, 64, 0, &mem), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_mem_create_from(f.ctx, raw, 64, 1u << 3, &mem), DOCA_ERROR_INVALID_VALUE);
	/* addr + len overflows */
	assert_doca(doca_mem_create_from(f.ctx, (void *)(UINTPTR_MAX - 15), 64, DOCA_ACCESS_FLAG_READ, &mem),
		    DOCA_ERROR_INVALID_VALUE);
	cr_assert_null(mem, "a memory was returned by a refused create");
	/* Without a device: NOT_CONNECTED. */
	assert_ok(doca_ctx_create(&unbound));
	assert_doca(doca_mem_create(unbound, 64, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_NOT_CONNECTED);
	assert_doca(doca_mem_create_from(unbound, raw, 64, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_NOT_CONNECTED);
	assert_ok(doca_ctx_destroy(unbound)); /* no memory was left on it */
	/* Valid flags work; the refusals left no memory behind. */
	assert_ok(doca_mem_create_from(f.ctx, raw, 64, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem));
	assert_ok(doca_mem_destroy(mem));
	fixture_fini(&f);
}

/* ---- submit: bad descriptors and the documented order of checks ---- */

static doca_error_t submit_raw(struct doca_ctx *ctx, uint32_t type, struct doca_buf *src, struct doca_buf *dst,
			       uint32_t flags)
{
	struct doca_task_desc desc;

	memset(&desc, 0, sizeof(desc));
	desc.type = (enum doca_task_type)type;
	desc.src = src;
	desc.dst = dst;
	desc.flags = flags;
	return doca_task_submit(ctx, &desc);
}

Test(bad_inputs, submit_rejects_unknown_type_unknown_flag_and_zero_length)
{
	struct api_fixture f;
	struct doca_buf *empty_src = NULL, *empty_dst = NULL;

	fixture_init(&f, "sw0", 256, 0);
	assert_ok(doca_buf_create(f.src_mem, 10, 0, &empty_src));
	assert_ok(doca_buf_create(f.dst_mem, 10, 0, &empty_dst));
	assert_ok(doca_ctx_start(f.ctx));
	assert_doca(submit_raw(f.ctx, 0, f.src, f.dst, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, 2, f.src, f.dst, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, 999, f.src, f.dst, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, UINT32_MAX, f.src, f.dst, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, f.src, f.dst, 1u << 1), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, f.src, f.dst, 1u << 31), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, f.src, f.dst, DOCA_TASK_FLAG_ALLOW_PARTIAL | (1u << 4)),
		    DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, empty_src, f.dst, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, empty_src, empty_dst, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, empty_src, f.dst, DOCA_TASK_FLAG_ALLOW_PARTIAL),
		    DOCA_ERROR_INVALID_VALUE);
	/* A non-empty source into an empty destination: dst shorter than src. */
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, f.src, empty_dst, 0), DOCA_ERROR_INVALID_VALUE);
	expect_no_event_for(f.pe, 10);
	fixture_copy_and_verify(&f);
	stop_and_drain(f.ctx, f.pe);
	assert_ok(doca_buf_destroy(empty_src));
	assert_ok(doca_buf_destroy(empty_dst));
	fixture_fini(&f);
}

Test(bad_inputs, submit_rejects_buffer_of_another_ctx)
{
	struct api_fixture a, b;

	fixture_init_started(&a, "sw0", 128, 0);
	fixture_init_started(&b, "sw0", 128, 0);
	assert_doca(submit_copy(a.ctx, b.src, a.dst, 1, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(a.ctx, a.src, b.dst, 2, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(a.ctx, b.src, b.dst, 3, 0), DOCA_ERROR_INVALID_VALUE);
	expect_no_event_for(a.pe, 10);
	expect_no_event_for(b.pe, 10);
	cr_assert_eq(bytes_mismatch(b.dst_bytes, 128, 0), 128, "another ctx's memory was written");
	fixture_copy_and_verify(&a);
	fixture_copy_and_verify(&b);
	fixture_fini(&a);
	fixture_fini(&b);
}

/*
 * Order of checks in submit (DESIGN §4 "Precise rules"): handle → state →
 * type/flag/zero length/foreign buffer → access → dst length → credit.
 * Each assertion pairs two faults and expects the earlier one's code.
 */
Test(bad_inputs, submit_checks_in_documented_order)
{
	struct api_fixture f, other;
	struct doca_buf *empty = NULL, *short_dst = NULL, *short_ro = NULL, *ro = NULL;
	struct doca_mem *ro_mem = NULL;

	fixture_init(&f, "sw0", 256, 1);
	fixture_init_started(&other, "sw0", 256, 0);
	assert_ok(doca_buf_create(f.src_mem, 0, 0, &empty));
	assert_ok(doca_buf_create(f.dst_mem, 0, 100, &short_dst));
	assert_ok(doca_mem_create(f.ctx, 256, DOCA_ACCESS_FLAG_READ, &ro_mem));
	assert_ok(doca_buf_create(ro_mem, 0, 256, &ro));
	assert_ok(doca_buf_create(ro_mem, 0, 100, &short_ro));

	/* Not RUNNING beats every descriptor fault except a bad handle. */
	assert_doca(submit_copy((struct doca_ctx *)f.dst, f.src, f.dst, 1, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(f.ctx, (struct doca_buf *)f.src_mem, f.dst, 1, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, 999, f.src, f.dst, 0), DOCA_ERROR_BAD_STATE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, empty, f.dst, 0), DOCA_ERROR_BAD_STATE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, f.src, f.dst, 1u << 9), DOCA_ERROR_BAD_STATE);
	assert_doca(submit_copy(f.ctx, f.src, ro, 1, 0), DOCA_ERROR_BAD_STATE);
	assert_doca(submit_copy(f.ctx, f.src, short_dst, 1, 0), DOCA_ERROR_BAD_STATE);
	assert_doca(submit_copy(f.ctx, other.src, f.dst, 1, 0), DOCA_ERROR_BAD_STATE);

	assert_ok(doca_ctx_start(f.ctx));
	/* Type/flag/zero length/foreign buffer beat access and length. */
	assert_doca(submit_raw(f.ctx, 999, f.src, ro, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, f.src, ro, 1u << 9), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_raw(f.ctx, DOCA_TASK_COPY, empty, ro, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(f.ctx, other.src, ro, 1, 0), DOCA_ERROR_INVALID_VALUE);
	/* Access beats length: a short read-only destination is NOT_PERMITTED. */
	assert_doca(submit_copy(f.ctx, f.src, short_ro, 1, 0), DOCA_ERROR_NOT_PERMITTED);
	/* ALLOW_PARTIAL does not waive access. */
	assert_doca(submit_copy(f.ctx, f.src, short_ro, 1, DOCA_TASK_FLAG_ALLOW_PARTIAL), DOCA_ERROR_NOT_PERMITTED);

	/* Use the single credit: now every fault above still reports itself, not AGAIN. */
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 50, 0));
	assert_doca(submit_copy(f.ctx, f.src, f.dst, 51, 0), DOCA_ERROR_AGAIN);
	assert_doca(submit_copy(f.ctx, f.src, short_dst, 52, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(f.ctx, f.src, ro, 53, 0), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(submit_raw(f.ctx, 999, f.src, f.dst, 0), DOCA_ERROR_INVALID_VALUE);
	assert_doca(submit_copy(f.ctx, other.src, f.dst, 54, 0), DOCA_ERROR_INVALID_VALUE);
	/* ALLOW_PARTIAL makes a short destination acceptable: only the credit is missing. */
	assert_doca(submit_copy(f.ctx, f.src, short_dst, 55, DOCA_TASK_FLAG_ALLOW_PARTIAL), DOCA_ERROR_AGAIN);
	expect_success_event(f.pe, 50, 256);
	expect_no_event_for(f.pe, 10);
	expect_no_event_for(other.pe, 10);

	stop_and_drain(f.ctx, f.pe);
	assert_ok(doca_buf_destroy(empty));
	assert_ok(doca_buf_destroy(short_dst));
	assert_ok(doca_buf_destroy(short_ro));
	assert_ok(doca_buf_destroy(ro));
	assert_ok(doca_mem_destroy(ro_mem));
	fixture_fini(&f);
	fixture_fini(&other);
}

/* ---- open strings ---- */

Test(bad_inputs, malformed_open_strings_are_invalid_value)
{
	static const char *const bad[] = {
		"",
		"sw0:",
		"sw0:engines=x",
		"sw0:bogus=1",
		"sw0:engines=100000",
		"sw0:engines=65",
		"sw0:engines=-1",
		"sw0:engines=",
		"sw0:engines",
		"sw0:=1",
		"sw0:engines=1,",
		"sw0:,engines=1",
		"sw0:engines=1x",
		"sw0:engines=99999999999999999999999",
		"sw0:fail_every=abc",
		"sw0:partial_every=-3",
		"sw0:delay_us=10000001",
		"sw0:delay_us=1e3",
		"sw0:ring_max=65537",
		"sw0:ring_max=16,ring_max=32",
		"sw0:cpus=abc",
		"sw0:cpus=",
		"sw0:cpus=1-",
		"sw0:engines=1,bogus=2",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct doca_dev *dev = NULL;
		doca_error_t rc = doca_dev_open(bad[i], &dev);

		cr_assert_eq(rc, DOCA_ERROR_INVALID_VALUE, "doca_dev_open(\"%s\") returned %s, expected INVALID_VALUE",
			     bad[i], doca_error_get_name(rc));
		cr_assert_null(dev, "doca_dev_open(\"%s\") returned a handle on failure", bad[i]);
	}
}

Test(bad_inputs, over_long_open_string_is_invalid_value)
{
	static char name[8192];
	struct doca_dev *dev = NULL;

	memcpy(name, "sw0:engines=1", 13);
	memset(name + 13, '0', sizeof(name) - 14);
	name[sizeof(name) - 1] = '\0';
	assert_doca(doca_dev_open(name, &dev), DOCA_ERROR_INVALID_VALUE);
	memset(name, 'a', sizeof(name) - 1);
	assert_doca(doca_dev_open(name, &dev), DOCA_ERROR_INVALID_VALUE);
	cr_assert_null(dev, "a handle was returned");
}

Test(bad_inputs, unknown_device_names_are_not_found)
{
	static const char *const unknown[] = { "mlx5_9", "rxe7", "nonexistent" };

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		struct doca_dev *dev = NULL;
		doca_error_t rc = doca_dev_open(unknown[i], &dev);

		cr_assert_eq(rc, DOCA_ERROR_NOT_FOUND, "doca_dev_open(\"%s\") returned %s, expected NOT_FOUND",
			     unknown[i], doca_error_get_name(rc));
		cr_assert_null(dev, "a handle for \"%s\"", unknown[i]);
	}
}

Test(bad_inputs, valid_open_strings_open)
{
	static const char *const good[] = {
		"sw0",
		"sw0:engines=0",
		"sw0:engines=1",
		"sw0:engines=2,cpus=0",
		"sw0:engines=2,cpus=0-1",
		"sw0:engines=3,cpus=0,1",
		"sw0:fail_every=7",
		"sw0:partial_every=5",
		"sw0:delay_us=0",
		"sw0:delay_us=10000000",
		"sw0:ring_max=65536",
		"sw0:engines=1,ring_max=2",
		"sw0:engines=1,fail_every=1000,partial_every=999,delay_us=10",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct doca_dev *dev = NULL;
		doca_error_t rc = doca_dev_open(good[i], &dev);

		cr_assert_eq(rc, DOCA_SUCCESS, "doca_dev_open(\"%s\") returned %s", good[i], doca_error_get_name(rc));
		assert_ok(doca_dev_close(dev));
	}
}
