/* tests/engine/registry.c — the RCU device registry: one backend device per
 * open string, shared by every handle, closed with its last user. */
#include <criterion/criterion.h>

#include "engine/engine.h"

Test(registry, the_same_string_shares_one_device)
{
	struct doca_dev *a, *b, *c;

	cr_assert_eq(doca_dev_open("sw0:engines=1", &a), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("sw0:engines=1", &b), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("sw0", &c), DOCA_SUCCESS);
	cr_assert_neq(a, b, "each open returns its own handle");
	cr_assert_eq(handle_deref(a)->entry, handle_deref(b)->entry, "one underlying device");
	cr_assert_neq(handle_deref(a)->entry, handle_deref(c)->entry, "another string, another device");
	cr_assert_eq(atomic_load(&handle_deref(a)->entry->refs), 2);
	cr_assert_eq(doca_dev_close(a), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&handle_deref(b)->entry->refs), 1, "closing one handle leaves the other working");
	cr_assert_eq(doca_dev_close(b), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(c), DOCA_SUCCESS);
}

Test(registry, a_memory_keeps_the_device_open_until_destroyed)
{
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_mem *mem;

	cr_assert_eq(doca_ctx_create(&ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("sw0", &dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(ctx, dev), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_create(ctx, 4096, DOCA_ACCESS_FLAG_READ, &mem), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&handle_deref(dev)->entry->refs), 2, "the handle and the registration");
	cr_assert_eq(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	cr_assert_eq(atomic_load(&handle_deref(dev)->entry->refs), 2, "a refused close changes nothing");
	cr_assert_eq(doca_mem_destroy(mem), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&handle_deref(dev)->entry->refs), 1);
	cr_assert_eq(doca_dev_close(dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(ctx), DOCA_SUCCESS);
}
