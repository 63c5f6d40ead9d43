/*
 * tests/verbs/test_verbs_real.c — the verbs backend with the REAL
 * libibverbs call table, on whatever this machine has. Without RDMA (this
 * kernel: ibv_get_device_list fails with ENOSYS) probe lists no device and
 * opening "mlx5_0" is DOCA_ERROR_NOT_FOUND; with devices, probe lists exactly
 * what libibverbs lists.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "hw/hw.h"
#include "hw/verbs/verbs_internal.h"

/** How many devices libibverbs itself lists here; *err is its errno when none. */
static int real_device_count(int *err, bool *has_mlx5_0)
{
	struct ibv_device **list;
	int num = 0;

	errno = 0;
	list = ibv_get_device_list(&num);
	*err = errno;
	*has_mlx5_0 = false;
	if (!list)
		return 0;
	for (int i = 0; i < num; i++)
		if (strcmp(ibv_get_device_name(list[i]), "mlx5_0") == 0)
			*has_mlx5_0 = true;
	ibv_free_device_list(list);
	return num;
}

Test(verbs_real, the_real_call_table_is_the_default)
{
	cr_assert_eq(verbs_calls, &verbs_calls_real);
	cr_assert_eq(verbs_calls_real.get_device_list, ibv_get_device_list);
	cr_assert_eq(verbs_calls_real.open_device, ibv_open_device);
}

Test(verbs_real, the_backend_is_a_module_looked_up_after_sw)
{
	bool found = false;

	cr_assert_str_eq(hw_backend_name(0), "sw");
	for (size_t i = 0; i < hw_backend_count; i++)
		if (strcmp(hw_backend_name(i), "verbs") == 0)
			found = i > 0;
	cr_assert(found, "the verbs module registered, after the software backend");
	cr_assert_str_eq(hw_verbs_ops.name, "verbs");
}

Test(verbs_real, probe_lists_what_libibverbs_lists)
{
	struct hw_dev_desc descs[16];
	size_t count = 99;
	bool has_mlx5_0;
	int err, n = real_device_count(&err, &has_mlx5_0);

	cr_assert_eq(hw_verbs_ops.probe(descs, 16, &count), DOCA_SUCCESS);
	cr_assert_eq(count, (size_t)n);
	if (n == 0)
		cr_log_info("no RDMA device here (ibv_get_device_list: %s)", strerror(err));
}

Test(verbs_real, open_mlx5_0_without_it_is_not_found)
{
	struct hw_dev *dev = NULL;
	bool has_mlx5_0;
	int err;

	real_device_count(&err, &has_mlx5_0);
	if (has_mlx5_0)
		cr_skip_test("this machine has an mlx5_0");
	cr_assert_eq(hw_verbs_ops.open("mlx5_0", NULL, &dev), DOCA_ERROR_NOT_FOUND);
	cr_assert_null(dev);
	cr_assert_eq(hw_verbs_ops.open("no_such_nic", NULL, &dev), DOCA_ERROR_NOT_FOUND);
}
