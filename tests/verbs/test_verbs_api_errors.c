/*
 * tests/verbs/test_verbs_api_errors.c — the public calls that pass a
 * device's error on (doca_dev_open, doca_ctx_start, doca_mem_create) on a
 * verbs device, the fake of tests/verbs standing in for the verbs module:
 * each returns the code its header names for that failure, and changes
 * nothing (no handle, the context IDLE with no report, no memory counted),
 * so the same call succeeds once the device stops refusing.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include <doca_core.h>

#include "hw/hw_module.h"
#include "tests/verbs/verbs_test.h"

static void api_setup(void)
{
	hw_module_preload("verbs", &hw_verbs_ops); /* this program's copy, which has the fake */
	vt_setup();                                /* "mlx5_0", port 1 ACTIVE */
}

TestSuite(verbs_api_errors, .init = api_setup, .fini = vt_teardown);

/* ---- doca_dev_open: the driver's refusals (doca_dev.h) ---- */

Test(verbs_api_errors, dev_open_passes_on_the_drivers_refusal_and_opens_nothing)
{
	static const struct {
		enum fake_call call;
		int err;
		doca_error_t expect;
	} cases[] = {
		{ FAKE_OPEN_DEVICE, EACCES, DOCA_ERROR_NOT_PERMITTED },
		{ FAKE_OPEN_DEVICE, EPERM, DOCA_ERROR_NOT_PERMITTED },
		{ FAKE_QUERY_DEVICE, EOPNOTSUPP, DOCA_ERROR_NOT_SUPPORTED },
		{ FAKE_ALLOC_PD, ENOSYS, DOCA_ERROR_NOT_SUPPORTED },
		{ FAKE_OPEN_DEVICE, EIO, DOCA_ERROR_DRIVER },
		{ FAKE_ALLOC_PD, ENOMEM, DOCA_ERROR_NO_MEMORY },
	};

	doca_log_set_level(DOCA_LOG_NONE);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doca_dev *dev = NULL;

		fake_verbs_fail(cases[i].call, 1, cases[i].err);
		doca_error_t rc = doca_dev_open("mlx5_0", &dev);

		cr_assert_eq(rc, cases[i].expect, "case %zu: %s, expected %s", i, doca_error_get_name(rc),
			     doca_error_get_name(cases[i].expect));
		cr_assert_null(dev, "case %zu set a handle", i);
		cr_assert_eq(fake_verbs_live(), 0, "case %zu left verbs objects", i);
	}
	/* nothing was left behind: the device opens and closes */
	struct doca_dev *dev = NULL;

	cr_assert_eq(doca_dev_open("mlx5_0", &dev), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(dev), DOCA_SUCCESS);
}

/* ---- doca_ctx_start: the device's queue-pair error (doca_ctx.h) ---- */

static int reports;

static void count_report(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
			 enum doca_ctx_state next)
{
	(void)ctx;
	(void)ud;
	(void)prev;
	(void)next;
	reports++;
}

struct api_objs {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
};

static void objs_init(struct api_objs *o, const char *dev_name)
{
	cr_assert_eq(doca_ctx_create(&o->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open(dev_name, &o->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&o->pe), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(o->ctx, o->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(o->pe, o->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_state_changed_cb(o->ctx, count_report), DOCA_SUCCESS);
}

static void objs_fini(struct api_objs *o)
{
	cr_assert_eq(doca_dev_close(o->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(o->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(o->pe), DOCA_SUCCESS);
}

static void assert_idle(struct doca_ctx *ctx)
{
	enum doca_ctx_state st = DOCA_CTX_STATE_RUNNING;

	cr_assert_eq(doca_ctx_get_state(ctx, &st), DOCA_SUCCESS);
	cr_assert_eq(st, DOCA_CTX_STATE_IDLE, "state %d", (int)st);
}

Test(verbs_api_errors, ctx_start_on_a_port_that_is_down_is_not_connected_and_stays_idle)
{
	struct fake_dev_config down = fake_verbs_default_config();
	struct api_objs o;

	doca_log_set_level(DOCA_LOG_NONE);
	down.state = IBV_PORT_DOWN;
	fake_verbs_add_device("mlx5_down", &down);
	objs_init(&o, "mlx5_down");
	cr_assert_eq(doca_ctx_start(o.ctx), DOCA_ERROR_NOT_CONNECTED);
	assert_idle(o.ctx);
	cr_assert_eq(reports, 0, "a refused start reported a transition");
	/* still configurable (IDLE), and the same refusal again */
	cr_assert_eq(doca_ctx_set_max_tasks(o.ctx, 8), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(o.ctx), DOCA_ERROR_NOT_CONNECTED);
	objs_fini(&o);
}

Test(verbs_api_errors, ctx_start_passes_on_the_drivers_refusal_and_a_retry_starts)
{
	static const struct {
		enum fake_call call;
		int err;
		doca_error_t expect;
	} cases[] = {
		{ FAKE_CREATE_QP, EPERM, DOCA_ERROR_NOT_PERMITTED },
		{ FAKE_CREATE_CQ, EOPNOTSUPP, DOCA_ERROR_NOT_SUPPORTED },
		{ FAKE_MODIFY_QP, EINVAL, DOCA_ERROR_DRIVER },
		{ FAKE_CREATE_COMP_CHANNEL, ENOMEM, DOCA_ERROR_NO_MEMORY },
	};
	struct api_objs o;

	doca_log_set_level(DOCA_LOG_NONE);
	objs_init(&o, "mlx5_0");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_verbs_fail(cases[i].call, 1, cases[i].err);
		cr_assert_eq(doca_ctx_start(o.ctx), cases[i].expect, "case %zu", i);
		assert_idle(o.ctx);
		cr_assert_eq(reports, 0, "case %zu: a refused start reported a transition", i);
	}
	/* nothing changed: the next start runs, stops, and reports both */
	cr_assert_eq(doca_ctx_start(o.ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_stop(o.ctx), DOCA_SUCCESS);
	cr_assert_eq(reports, 2);
	objs_fini(&o);
}

/* ---- doca_mem_create: the device's registration error (doca_mem.h) ---- */

Test(verbs_api_errors, mem_create_passes_on_the_registration_error_and_counts_no_memory)
{
	static const struct {
		int err;
		doca_error_t expect;
	} cases[] = {
		{ EACCES, DOCA_ERROR_NOT_PERMITTED },
		{ EOPNOTSUPP, DOCA_ERROR_NOT_SUPPORTED },
		{ EFAULT, DOCA_ERROR_DRIVER },
		{ ENOMEM, DOCA_ERROR_NO_MEMORY },
	};
	struct api_objs o;
	static uint8_t region[4096];

	doca_log_set_level(DOCA_LOG_NONE);
	objs_init(&o, "mlx5_0");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doca_mem *mem = NULL;

		fake_verbs_fail(FAKE_REG_MR, 1, cases[i].err);
		cr_assert_eq(doca_mem_create(o.ctx, 4096, DOCA_ACCESS_FLAG_WRITE, &mem), cases[i].expect,
			     "case %zu (create)", i);
		cr_assert_null(mem, "case %zu", i);
		fake_verbs_fail(FAKE_REG_MR, 1, cases[i].err);
		cr_assert_eq(doca_mem_create_from(o.ctx, region, sizeof(region), DOCA_ACCESS_FLAG_READ, &mem),
			     cases[i].expect, "case %zu (create_from)", i);
		cr_assert_null(mem, "case %zu", i);
	}
	/* no memory was counted: the device closes and the context goes */
	objs_fini(&o);
}
