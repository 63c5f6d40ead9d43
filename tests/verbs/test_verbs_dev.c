/*
 * tests/verbs/test_verbs_dev.c — the verbs backend's devices and memory
 * registrations against the fake: probe, open/close, open-string rules,
 * the HW_ACCESS → IBV_ACCESS mapping, and every slow-path failure on those
 * paths returning its documented doca_error_t without leaking.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tests/verbs/verbs_test.h"

TestSuite(verbs_dev, .init = vt_setup, .fini = vt_teardown);

/* ---- probe ---- */

VT_TEST(verbs_dev, probe_lists_every_device_by_its_own_name)
{
	struct hw_dev_desc descs[8];
	size_t count = 0;

	fake_verbs_add_device("mlx5_1", NULL);
	fake_verbs_add_device("rxe0", NULL);
	cr_assert_eq(hw_verbs_ops.probe(descs, 8, &count), DOCA_SUCCESS);
	cr_assert_eq(count, 3);
	cr_assert_str_eq(descs[0].name, "mlx5_0");
	cr_assert_str_eq(descs[1].name, "mlx5_1");
	cr_assert_str_eq(descs[2].name, "rxe0");
	for (int i = 0; i < 3; i++)
		cr_assert_str_eq(descs[i].caps, "copy,rdma_write,event");
	cr_assert_str_eq(fake_verbs_trace(), "get_device_list free_device_list");
}

VT_TEST(verbs_dev, probe_counts_devices_beyond_cap_and_writes_only_cap)
{
	struct hw_dev_desc descs[2];
	size_t count = 0;

	memset(descs, 0x5a, sizeof(descs));
	fake_verbs_add_device("rxe0", NULL);
	fake_verbs_add_device("rxe1", NULL);
	cr_assert_eq(hw_verbs_ops.probe(descs, 1, &count), DOCA_SUCCESS);
	cr_assert_eq(count, 3);
	cr_assert_str_eq(descs[0].name, "mlx5_0");
	cr_assert_eq((unsigned char)descs[1].name[0], 0x5a, "entry beyond cap written");
	cr_assert_eq(hw_verbs_ops.probe(NULL, 0, &count), DOCA_SUCCESS);
	cr_assert_eq(count, 3);
}

VT_TEST(verbs_dev, probe_with_no_device_is_empty)
{
	size_t count = 7;

	vt_reset_fake();
	cr_assert_eq(hw_verbs_ops.probe(NULL, 0, &count), DOCA_SUCCESS);
	cr_assert_eq(count, 0);
}

VT_TEST(verbs_dev, probe_without_rdma_stack_is_empty_not_an_error)
{
	static const int no_stack[] = { ENOSYS, ENODEV, ENOENT, EIO };
	struct hw_dev_desc desc;
	size_t count;

	for (size_t i = 0; i < sizeof(no_stack) / sizeof(no_stack[0]); i++) {
		count = 7;
		fake_verbs_fail(FAKE_GET_DEVICE_LIST, 1, no_stack[i]);
		cr_assert_eq(hw_verbs_ops.probe(&desc, 1, &count), DOCA_SUCCESS);
		cr_assert_eq(count, 0, "errno %d", no_stack[i]);
	}
}

VT_TEST(verbs_dev, probe_out_of_memory)
{
	size_t count = 7;

	fake_verbs_fail(FAKE_GET_DEVICE_LIST, 1, ENOMEM);
	cr_assert_eq(hw_verbs_ops.probe(NULL, 0, &count), DOCA_ERROR_NO_MEMORY);
	cr_assert_eq(count, 0);
}

/* ---- open / close ---- */

VT_TEST(verbs_dev, open_makes_context_and_pd_close_releases_them)
{
	struct hw_dev *dev = vt_open("mlx5_0");
	struct verbs_dev *vdev = verbs_dev_of(dev);

	cr_assert_eq(dev->ops, &hw_verbs_ops);
	cr_assert_str_eq(vdev->name, "mlx5_0");
	cr_assert_not_null(vdev->ctx);
	cr_assert_not_null(vdev->pd);
	cr_assert_eq(vdev->max_qp_wr, 16384);
	cr_assert_eq(vdev->max_cqe, 16384);
	cr_assert_str_eq(fake_verbs_trace(),
			 "get_device_list open_device query_device alloc_pd free_device_list");
	cr_assert_eq(fake_verbs_live(), 2, "context + PD, the list freed");
	fake_verbs_trace_clear();
	hw_verbs_ops.close(dev);
	cr_assert_str_eq(fake_verbs_trace(), "dealloc_pd close_device");
}

VT_TEST(verbs_dev, open_picks_the_named_device)
{
	struct hw_dev *dev;

	fake_verbs_add_device("rxe0", NULL);
	dev = vt_open("rxe0");
	cr_assert_str_eq(verbs_dev_of(dev)->ctx->device->name, "rxe0");
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_dev, open_unknown_name_is_not_found)
{
	static const char *const names[] = { "mlx5_9", "sw0", "mlx5", "mlx5_00", "" };
	struct hw_dev *dev = NULL;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cr_assert_eq(hw_verbs_ops.open(names[i], NULL, &dev), DOCA_ERROR_NOT_FOUND, "%s",
			     names[i]);
		/* Another backend's parameters do not turn NOT_FOUND into INVALID_VALUE. */
		cr_assert_eq(hw_verbs_ops.open(names[i], "engines=1", &dev), DOCA_ERROR_NOT_FOUND);
	}
	cr_assert_null(dev);
	cr_assert_eq(fake_verbs_calls(FAKE_OPEN_DEVICE), 0);
}

VT_TEST(verbs_dev, open_without_rdma_stack_is_not_found)
{
	struct hw_dev *dev = NULL;

	fake_verbs_fail(FAKE_GET_DEVICE_LIST, 1, ENOSYS);
	cr_assert_eq(hw_verbs_ops.open("mlx5_0", NULL, &dev), DOCA_ERROR_NOT_FOUND);
	cr_assert_null(dev);
}

VT_TEST(verbs_dev, open_rejects_any_parameter)
{
	static const char *const params[] = { "x=1", "engines=1", "port=2", ":" };
	struct hw_dev *dev = NULL;

	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		cr_assert_eq(hw_verbs_ops.open("mlx5_0", params[i], &dev), DOCA_ERROR_INVALID_VALUE,
			     "%s", params[i]);
	cr_assert_null(dev);
	cr_assert_eq(fake_verbs_calls(FAKE_OPEN_DEVICE), 0);
	/* An empty parameter string ("mlx5_0:") is no parameter. */
	cr_assert_eq(hw_verbs_ops.open("mlx5_0", "", &dev), DOCA_SUCCESS);
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_dev, two_opens_are_two_contexts)
{
	struct hw_dev *a = vt_open("mlx5_0"), *b = vt_open("mlx5_0");

	cr_assert_neq(verbs_dev_of(a)->ctx, verbs_dev_of(b)->ctx);
	cr_assert_eq(fake_verbs_live(), 4);
	hw_verbs_ops.close(a);
	hw_verbs_ops.close(b);
}

/* Each slow-path call of open failing in turn: its error, nothing left behind. */
VT_TEST(verbs_dev, open_failures_return_mapped_errors_and_leak_nothing)
{
	static const struct {
		enum fake_call call;
		int err;
		doca_error_t expect;
		const char *trace;
	} cases[] = {
		{ FAKE_GET_DEVICE_LIST, ENOMEM, DOCA_ERROR_NO_MEMORY, "get_device_list!" },
		{ FAKE_OPEN_DEVICE, ENOMEM, DOCA_ERROR_NO_MEMORY,
		  "get_device_list open_device! free_device_list" },
		{ FAKE_OPEN_DEVICE, EACCES, DOCA_ERROR_NOT_PERMITTED,
		  "get_device_list open_device! free_device_list" },
		{ FAKE_OPEN_DEVICE, EPERM, DOCA_ERROR_NOT_PERMITTED,
		  "get_device_list open_device! free_device_list" },
		{ FAKE_OPEN_DEVICE, EIO, DOCA_ERROR_DRIVER,
		  "get_device_list open_device! free_device_list" },
		{ FAKE_QUERY_DEVICE, EIO, DOCA_ERROR_DRIVER,
		  "get_device_list open_device query_device! close_device free_device_list" },
		{ FAKE_QUERY_DEVICE, EOPNOTSUPP, DOCA_ERROR_NOT_SUPPORTED,
		  "get_device_list open_device query_device! close_device free_device_list" },
		{ FAKE_ALLOC_PD, ENOMEM, DOCA_ERROR_NO_MEMORY,
		  "get_device_list open_device query_device alloc_pd! close_device free_device_list" },
		{ FAKE_ALLOC_PD, ENOSYS, DOCA_ERROR_NOT_SUPPORTED,
		  "get_device_list open_device query_device alloc_pd! close_device free_device_list" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hw_dev *dev = NULL;

		vt_reset_fake();
		fake_verbs_add_device("mlx5_0", NULL);
		fake_verbs_fail(cases[i].call, 1, cases[i].err);
		cr_assert_eq(hw_verbs_ops.open("mlx5_0", NULL, &dev), cases[i].expect,
			     "case %zu", i);
		cr_assert_null(dev, "case %zu", i);
		cr_assert_eq(fake_verbs_live(), 0, "case %zu leaked", i);
		cr_assert_str_eq(fake_verbs_trace(), cases[i].trace, "case %zu", i);
	}
}

/* close cannot fail; a refused dealloc is reported and close goes on. */
VT_TEST(verbs_dev, close_goes_on_when_dealloc_pd_fails)
{
	struct hw_dev *dev = vt_open("mlx5_0");

	fake_verbs_trace_clear();
	fake_verbs_fail(FAKE_DEALLOC_PD, 1, EBUSY);
	hw_verbs_ops.close(dev);
	cr_assert_str_eq(fake_verbs_trace(), "dealloc_pd! close_device");
	vt_reset_fake(); /* the fake kept the PD (and the context it refused to close) */
}

/* ---- memory registration ---- */

VT_TEST(verbs_dev, register_maps_access_to_least_privilege)
{
	static const struct {
		uint32_t access;
		int ibv;
	} cases[] = {
		{ 0, 0 },
		{ HW_ACCESS_READ, 0 },
		{ HW_ACCESS_WRITE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE },
		{ HW_ACCESS_READ | HW_ACCESS_WRITE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE },
	};
	struct hw_dev *dev = vt_open("mlx5_0");
	static char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hw_mr *mr = vt_register(dev, buf + i, 100, cases[i].access);
		struct ibv_mr *ibmr = verbs_mr_of(mr)->mr;

		cr_assert_eq(verbs_access_flags(cases[i].access), cases[i].ibv);
		cr_assert_eq(fake_verbs_mr_access(ibmr), cases[i].ibv, "access %u", cases[i].access);
		cr_assert_eq(mr->addr, buf + i);
		cr_assert_eq(mr->len, 100);
		cr_assert_eq(mr->access, cases[i].access);
		cr_assert_eq(ibmr->pd, verbs_dev_of(dev)->pd);
		hw_verbs_ops.mem_deregister(mr);
	}
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_dev, register_never_grants_remote_read_atomic_or_bind)
{
	const int never = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND |
			  IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND;

	for (uint32_t a = 0; a <= (HW_ACCESS_READ | HW_ACCESS_WRITE); a++)
		cr_assert_eq(verbs_access_flags(a) & never, 0, "access %u", a);
}

VT_TEST(verbs_dev, register_rejects_unknown_access_bits)
{
	struct hw_dev *dev = vt_open("mlx5_0");
	struct hw_mr *mr = NULL;
	static char buf[64];

	cr_assert_eq(hw_verbs_ops.mem_register(dev, buf, sizeof(buf), 1u << 5, &mr),
		     DOCA_ERROR_INVALID_VALUE);
	cr_assert_null(mr);
	cr_assert_eq(fake_verbs_calls(FAKE_REG_MR), 0);
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_dev, register_failures_return_mapped_errors_and_leak_nothing)
{
	static const struct {
		int err;
		doca_error_t expect;
	} cases[] = {
		{ ENOMEM, DOCA_ERROR_NO_MEMORY },     { EACCES, DOCA_ERROR_NOT_PERMITTED },
		{ EPERM, DOCA_ERROR_NOT_PERMITTED },  { EFAULT, DOCA_ERROR_DRIVER },
		{ EINVAL, DOCA_ERROR_DRIVER },        { EOPNOTSUPP, DOCA_ERROR_NOT_SUPPORTED },
	};
	struct hw_dev *dev = vt_open("mlx5_0");
	static char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hw_mr *mr = NULL;

		fake_verbs_fail(FAKE_REG_MR, 1, cases[i].err);
		cr_assert_eq(hw_verbs_ops.mem_register(dev, buf, sizeof(buf), HW_ACCESS_WRITE, &mr),
			     cases[i].expect, "errno %d", cases[i].err);
		cr_assert_null(mr);
		cr_assert_eq(fake_verbs_live(), 2, "errno %d leaked", cases[i].err);
	}
	hw_verbs_ops.close(dev);
}

VT_TEST(verbs_dev, deregister_goes_on_when_dereg_mr_fails)
{
	struct hw_dev *dev = vt_open("mlx5_0");
	static char buf[64];
	struct hw_mr *mr = vt_register(dev, buf, sizeof(buf), HW_ACCESS_READ);

	fake_verbs_trace_clear();
	fake_verbs_fail(FAKE_DEREG_MR, 1, EBUSY);
	hw_verbs_ops.mem_deregister(mr); /* the backend's own object is freed (ASan checks) */
	cr_assert_str_eq(fake_verbs_trace(), "dereg_mr!");
	hw_verbs_ops.close(dev); /* refused by the fake too: the MR holds the PD */
	vt_reset_fake();
}

/* ---- the errno table itself ---- */

VT_TEST(verbs_dev, errno_table)
{
	cr_assert_eq(verbs_errno_to_doca(ENOMEM), DOCA_ERROR_NO_MEMORY);
	cr_assert_eq(verbs_errno_to_doca(EPERM), DOCA_ERROR_NOT_PERMITTED);
	cr_assert_eq(verbs_errno_to_doca(EACCES), DOCA_ERROR_NOT_PERMITTED);
	cr_assert_eq(verbs_errno_to_doca(EOPNOTSUPP), DOCA_ERROR_NOT_SUPPORTED);
	cr_assert_eq(verbs_errno_to_doca(ENOSYS), DOCA_ERROR_NOT_SUPPORTED);
	cr_assert_eq(verbs_errno_to_doca(EINVAL), DOCA_ERROR_DRIVER);
	cr_assert_eq(verbs_errno_to_doca(EIO), DOCA_ERROR_DRIVER);
	cr_assert_eq(verbs_errno_to_doca(0), DOCA_ERROR_DRIVER);
	cr_assert_eq(verbs_rc_errno(EBUSY), EBUSY);
	errno = EAGAIN;
	cr_assert_eq(verbs_rc_errno(-1), EAGAIN);
}
