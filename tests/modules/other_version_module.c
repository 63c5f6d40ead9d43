/*
 * tests/modules/other_version_module.c — a module as another doca-core
 * version would build it (tests/modules/module_load.c), or, built with
 * TEST_MODULE_TAG, one of this version built from other hw headers (a
 * stale install): the loader must refuse it without calling anything of it.
 */
#include <stdlib.h>

#include "hw/hw_module.h"

static void attach_must_not_run(const struct hw_module_host *host)
{
	abort();
}

__attribute__((visibility("default"))) const struct hw_module doca_core_hw_module = {
#ifdef TEST_MODULE_TAG
	.version = TEST_MODULE_TAG,
#else
	.version = "0.0.0-test",
#endif
	.ops = NULL,
	.attach = attach_must_not_run,
};
