/*
 * tests/modules/module_load.c — backend modules are loaded on demand and a
 * missing one is reported (hw/hw_module.h), seen from the public API and
 * /proc/self/maps of each Criterion test process (each runs alone, from a
 * fresh start). The program links the shared library; meson points
 * DOCA_CORE_MODULE_DIR at this build's modules (module_env), and tests that
 * need another directory set it before their first library call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "tests/api/common.h"

#define VERBS_MODULE "libdoca-core-verbs.so"
#define FABRIC_MODULE "libdoca-core-fabric.so"
/* Backends listed after sw0 when no module loads: verbs, and fabric when
 * this build has it (TEST_HAVE_FABRIC). */
#ifdef TEST_HAVE_FABRIC
#define MODULES 2u
#else
#define MODULES 1u
#endif

/** With fabric built: the fabric entry of a listing made from an empty or
 * foreign module directory says its module is not in dir. */
static void expect_fabric_unavailable(const struct doca_dev_info *infos, size_t count, const char *dir)
{
#ifdef TEST_HAVE_FABRIC
	char caps[128];

	cr_assert_eq(count, 3);
	cr_assert_str_eq(infos[2].name, "fabric");
	snprintf(caps, sizeof(caps), "unavailable: " FABRIC_MODULE " not found in %s", dir);
	cr_assert_str_eq(infos[2].caps, caps);
#else
	(void)infos;
	(void)count;
	(void)dir;
#endif
}

/** Whether a mapping of this process names a file containing `what`. */
static bool mapped(const char *what)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096];
	bool found = false;

	cr_assert_not_null(maps, "/proc/self/maps");
	while (!found && fgets(line, sizeof(line), maps) != NULL)
		found = strstr(line, what) != NULL;
	fclose(maps);
	return found;
}

/** A new empty directory, made the module directory of this process. */
static void module_dir_empty(char dir[64])
{
	snprintf(dir, 64, "/tmp/doca-modules-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp");
	cr_assert_eq(setenv("DOCA_CORE_MODULE_DIR", dir, 1), 0);
}

Test(modules, sw0_work_maps_no_module_and_no_libibverbs)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0:engines=1", 4096, 8);
	for (uint64_t i = 0; i < 8; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	for (uint64_t i = 0; i < 8; i++)
		expect_success_event(f.pe, i, 4096);
	fixture_copy_and_verify(&f);
	cr_assert(!mapped(VERBS_MODULE), "the verbs module was loaded for sw0");
	cr_assert(!mapped("libibverbs"), "libibverbs was loaded for sw0");
	cr_assert(!mapped(FABRIC_MODULE), "the fabric module was loaded for sw0");
	cr_assert(!mapped("libfabric.so"), "libfabric was loaded for sw0");
	fixture_fini(&f);
	cr_assert(!mapped(VERBS_MODULE), "the verbs module was loaded by a teardown");
}

Test(modules, dev_list_loads_the_verbs_module)
{
	struct doca_dev_info infos[8];
	size_t count = 0;

	cr_assert(!mapped(VERBS_MODULE), "loaded before anything asked for it");
	assert_ok(doca_dev_list(infos, 8, &count));
	cr_assert(mapped(VERBS_MODULE), "doca_dev_list did not load the verbs module");
	cr_assert(mapped("libibverbs.so.1"), "the verbs module came without libibverbs");
	cr_assert_geq(count, 1);
	cr_assert_str_eq(infos[0].name, "sw0");
	for (size_t i = 0; i < count && i < 8; i++)
		cr_assert_null(strstr(infos[i].caps, "unavailable"), "entry %zu: %s %s", i,
			       infos[i].name, infos[i].caps);
}

Test(modules, opening_a_name_sw_lacks_loads_the_verbs_module)
{
	struct doca_dev *dev = NULL;

	assert_doca(doca_dev_open("mlx5_9", &dev), DOCA_ERROR_NOT_FOUND);
	cr_assert_null(dev);
	cr_assert(mapped(VERBS_MODULE), "the open did not try the verbs module");
}

Test(modules, missing_module_is_listed_with_the_reason)
{
	struct doca_dev_info infos[4];
	char dir[64], caps[128];
	size_t count = 0;

	module_dir_empty(dir);
	memset(infos, 0x7e, sizeof(infos));
	assert_ok(doca_dev_list(infos, 4, &count));
	cr_assert_eq(count, 1 + MODULES);
	cr_assert_str_eq(infos[0].name, "sw0");
	cr_assert_str_eq(infos[0].backend, "sw");
	cr_assert_str_eq(infos[1].name, "verbs");
	cr_assert_str_eq(infos[1].backend, "verbs");
	snprintf(caps, sizeof(caps), "unavailable: " VERBS_MODULE " not found in %s", dir);
	cr_assert_str_eq(infos[1].caps, caps);
	expect_fabric_unavailable(infos, count, dir);
	cr_assert_eq(bytes_mismatch(&infos[count], sizeof(infos[count]), 0x7e), sizeof(infos[count]),
		     "an entry past count was written");
	cr_assert(!mapped("libibverbs"), "libibverbs was loaded without its module");
	rmdir(dir);
}

Test(modules, opening_a_missing_module_names_it, .init = cr_redirect_stderr)
{
	struct doca_dev *dev = NULL;
	char dir[64], text[8192], line[512];

	module_dir_empty(dir);
	setenv("DOCA_LOG_LEVEL", "error", 1);
	assert_doca(doca_dev_open("verbs", &dev), DOCA_ERROR_NOT_SUPPORTED);
	cr_assert_null(dev);
	assert_doca(doca_dev_open("mlx5_0", &dev), DOCA_ERROR_NOT_FOUND);
	cr_assert_null(dev);
	read_redirected_stderr(text, sizeof(text));
	snprintf(line, sizeof(line),
		 "doca_dev_open(\"verbs\"): the verbs backend is not loaded: " VERBS_MODULE
		 " not found in %s\n", dir);
	cr_assert_not_null(strstr(text, line), "no line \"%s\" in \"%s\"", line, text);
	snprintf(line, sizeof(line),
		 "no device named 'mlx5_0'; devices that exist: sw0 (sw); the verbs backend is not"
		 " loaded (" VERBS_MODULE " not found in %s)"
#ifdef TEST_HAVE_FABRIC
		 "; the fabric backend is not loaded (" FABRIC_MODULE " not found in %s)\n", dir, dir);
#else
		 "\n", dir);
#endif
	cr_assert_not_null(strstr(text, line), "no line \"%s\" in \"%s\"", line, text);
	/* The refusals changed nothing: sw0 opens, the module is still not there. */
	assert_ok(doca_dev_open("sw0", &dev));
	assert_ok(doca_dev_close(dev));
	cr_assert(!mapped(VERBS_MODULE));
	rmdir(dir);
}

Test(modules, a_file_that_is_no_module_is_reported)
{
	struct doca_dev_info infos[4];
	char dir[64], path[128];
	size_t count = 0;
	FILE *f;

	module_dir_empty(dir);
	snprintf(path, sizeof(path), "%s/" VERBS_MODULE, dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "%0256d\n", 0); /* long enough for an ELF header, and not one */
	fclose(f);
	assert_ok(doca_dev_list(infos, 4, &count));
	cr_assert_eq(count, 1 + MODULES);
	cr_assert_str_eq(infos[1].caps, "unavailable: " VERBS_MODULE ": invalid ELF header");
	expect_fabric_unavailable(infos, count, dir);
	unlink(path);
	rmdir(dir);
}

Test(modules, a_module_of_another_version_is_refused)
{
	struct doca_dev_info infos[4];
	size_t count = 0;

	/* other_version_module.c, built as libdoca-core-verbs.so beside this program */
	cr_assert_eq(setenv("DOCA_CORE_MODULE_DIR", TEST_MODULE_DIR, 1), 0);
	assert_ok(doca_dev_list(infos, 4, &count));
	cr_assert_eq(count, 1 + MODULES);
	cr_assert_str_eq(infos[1].caps, "unavailable: " VERBS_MODULE
					" was built for doca-core 0.0.0-test, this library is "
					DOCA_CORE_HW_ABI);
	expect_fabric_unavailable(infos, count, TEST_MODULE_DIR);
	cr_assert(!mapped(TEST_MODULE_DIR "/" VERBS_MODULE), "a refused module stays mapped");
}

Test(modules, a_module_of_this_version_built_from_other_hw_headers_is_refused)
{
	struct doca_dev_info infos[4];
	size_t count = 0;

	/* The tag names this version, so only the digest tells them apart. */
	cr_assert_eq(strncmp(TEST_OTHER_HW_TAG, DOCA_CORE_HW_ABI, strlen(DOCA_CORE_VERSION "+hw.")), 0);
	cr_assert_str_neq(TEST_OTHER_HW_TAG, DOCA_CORE_HW_ABI);
	cr_assert_eq(setenv("DOCA_CORE_MODULE_DIR", TEST_OTHER_HW_MODULE_DIR, 1), 0);
	assert_ok(doca_dev_list(infos, 4, &count));
	cr_assert_eq(count, 1 + MODULES);
	cr_assert_str_eq(infos[1].caps, "unavailable: " VERBS_MODULE " was built for doca-core " TEST_OTHER_HW_TAG
					", this library is " DOCA_CORE_HW_ABI);
	expect_fabric_unavailable(infos, count, TEST_OTHER_HW_MODULE_DIR);
	cr_assert(!mapped(TEST_OTHER_HW_MODULE_DIR "/" VERBS_MODULE), "a refused module stays mapped");
}
