/* tests/engine/device_reason.c — a device's refusal is logged with the
 * device's reason, once, by the public call that called it: doca_dev_open,
 * doca_ctx_start, doca_mem_create and doca_mem_create_from (as
 * doca_mem_export and doca_mem_import, tests/remote) say "CALL: REASON
 * (ERROR)", and a reason an earlier failure left is never shown as theirs.
 *
 * The device is fk0 (the sw backend standing in for the verbs module)
 * whose open, queue-pair creation or registration refuses on demand with
 * the reason (hw_diag) and error the test sets. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "hw/sw/sw.h"
#include "tests/engine/fk_device.h"

static doca_error_t refuse_err;  /* what the device's next calls return */
static const char *refuse_why;   /* the reason they give; NULL: none */

static void refuse_say(void)
{
	if (refuse_why != NULL)
		hw_diag("%s", refuse_why);
}

static doca_error_t refusing_open(const char *name, const char *params, struct hw_dev **out)
{
	(void)name;
	(void)params;
	(void)out;
	refuse_say();
	return refuse_err;
}

static doca_error_t refusing_qp_create(struct hw_dev *dev, const struct hw_qp_attr *attr,
				       struct hw_qp **qp)
{
	(void)dev;
	(void)attr;
	(void)qp;
	refuse_say();
	return refuse_err;
}

static doca_error_t refusing_mem_register(struct hw_dev *dev, void *addr, size_t len, uint32_t access,
					  struct hw_mr **mr)
{
	(void)dev;
	(void)addr;
	(void)len;
	(void)access;
	(void)mr;
	refuse_say();
	return refuse_err;
}

#define LINES_MAX 8

static struct {
	int count;
	enum doca_log_level level[LINES_MAX];
	char text[LINES_MAX][512];
} got;

static void keep(enum doca_log_level level, const char *message, void *user)
{
	(void)user;
	if (got.count < LINES_MAX) {
		got.level[got.count] = level;
		snprintf(got.text[got.count], sizeof(got.text[0]), "%s", message);
	}
	got.count++;
}

static struct doca_dev *dev;
static struct doca_ctx *ctx;
static struct doca_pe *pe;

static void setup(void)
{
	fk_install();
	cr_assert_eq(doca_dev_open("fk0:engines=1", &dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_create(&ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&pe), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(ctx, dev), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_log_set_level(DOCA_LOG_WARN), DOCA_SUCCESS);
	cr_assert_eq(doca_log_set_handler(keep, NULL), DOCA_SUCCESS);
}

static void teardown(void)
{
	cr_assert_eq(doca_log_set_handler(NULL, NULL), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(dev), DOCA_SUCCESS); /* unbinds the context */
	cr_assert_eq(doca_ctx_destroy(ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(pe), DOCA_SUCCESS);
}

TestSuite(device_reason, .init = setup, .fini = teardown);

static void assert_idle(void)
{
	enum doca_ctx_state st = DOCA_CTX_STATE_RUNNING;

	cr_assert_eq(doca_ctx_get_state(ctx, &st), DOCA_SUCCESS);
	cr_assert_eq(st, DOCA_CTX_STATE_IDLE, "state %d", (int)st);
}

/* Line @p i of the log is the last so far, at @p level, saying @p text. */
static void assert_line(int i, enum doca_log_level level, const char *text)
{
	cr_assert_eq(got.count, i + 1, "%d lines", got.count);
	cr_assert_eq(got.level[i], level);
	cr_assert_str_eq(got.text[i], text);
}

Test(device_reason, a_refused_ctx_start_logs_the_devices_reason_once)
{
	doca_error_t (*qp_create)(struct hw_dev *, const struct hw_qp_attr *, struct hw_qp **) =
		fk_ops.qp_create;

	fk_ops.qp_create = refusing_qp_create;
	refuse_err = DOCA_ERROR_DRIVER;
	refuse_why = "fk0: no queue pair today";
	cr_assert_eq(doca_ctx_start(ctx), DOCA_ERROR_DRIVER);
	assert_idle();
	assert_line(0, DOCA_LOG_ERROR, "doca_ctx_start: fk0: no queue pair today (DOCA_ERROR_DRIVER)");
	/* AGAIN is "not now": a warning */
	refuse_err = DOCA_ERROR_AGAIN;
	refuse_why = "fk0: later";
	cr_assert_eq(doca_ctx_start(ctx), DOCA_ERROR_AGAIN);
	assert_idle();
	assert_line(1, DOCA_LOG_WARN, "doca_ctx_start: fk0: later (DOCA_ERROR_AGAIN)");
	cr_assert_str_eq(hw_diag_take(), "", "the start left its reason behind");
	/* nothing changed: the device's queue pair, the start runs, no line */
	fk_ops.qp_create = qp_create;
	cr_assert_eq(doca_ctx_start(ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_stop(ctx), DOCA_SUCCESS);
	cr_assert_eq(got.count, 2, "%d lines", got.count);
}

Test(device_reason, a_refused_mem_create_logs_the_devices_reason_once)
{
	static uint8_t region[4096];
	struct doca_mem *mem = NULL;

	fk_ops.mem_register = refusing_mem_register;
	refuse_err = DOCA_ERROR_OPERATING_SYSTEM;
	refuse_why = "getrandom: no key";
	cr_assert_eq(doca_mem_create(ctx, 4096, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_OPERATING_SYSTEM);
	cr_assert_null(mem);
	assert_line(0, DOCA_LOG_ERROR, "doca_mem_create: getrandom: no key (DOCA_ERROR_OPERATING_SYSTEM)");
	refuse_err = DOCA_ERROR_NOT_PERMITTED;
	refuse_why = "registration denied";
	cr_assert_eq(doca_mem_create_from(ctx, region, sizeof(region), DOCA_ACCESS_FLAG_WRITE, &mem),
		     DOCA_ERROR_NOT_PERMITTED);
	cr_assert_null(mem);
	assert_line(1, DOCA_LOG_ERROR, "doca_mem_create_from: registration denied (DOCA_ERROR_NOT_PERMITTED)");
	cr_assert_str_eq(hw_diag_take(), "", "the create left its reason behind");
	/* no memory was counted: the context is destroyed by the teardown */
}

Test(device_reason, a_reason_left_by_an_earlier_failure_is_not_shown)
{
	struct doca_mem *mem = NULL;

	fk_ops.mem_register = refusing_mem_register;
	fk_ops.qp_create = refusing_qp_create;
	fk_ops.open = refusing_open;
	refuse_err = DOCA_ERROR_DRIVER;
	refuse_why = NULL; /* the device says nothing */
	hw_diag("stale");
	cr_assert_eq(doca_mem_create(ctx, 64, DOCA_ACCESS_FLAG_READ, &mem), DOCA_ERROR_DRIVER);
	hw_diag("stale");
	cr_assert_eq(doca_ctx_start(ctx), DOCA_ERROR_DRIVER);
	hw_diag("stale");
	cr_assert_eq(doca_dev_open("fk0:engines=2", &(struct doca_dev *){ NULL }), DOCA_ERROR_DRIVER);
	cr_assert_eq(got.count, 0, "%d lines, the first \"%s\"", got.count, got.text[0]);
}

Test(device_reason, a_refused_dev_open_logs_the_devices_reason_whatever_the_error)
{
	struct doca_dev *d = NULL;

	fk_ops.open = refusing_open;
	refuse_err = DOCA_ERROR_DRIVER;
	refuse_why = "prov=tcp: fi_domain failed: oops";
	cr_assert_eq(doca_dev_open("fk0:engines=2", &d), DOCA_ERROR_DRIVER);
	cr_assert_null(d);
	assert_line(0, DOCA_LOG_ERROR, "doca_dev_open(\"fk0:engines=2\"): prov=tcp: fi_domain failed: oops (DOCA_ERROR_DRIVER)");
	cr_assert_str_eq(hw_diag_take(), "", "the open left its reason behind");
}
