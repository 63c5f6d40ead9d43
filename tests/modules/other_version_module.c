/*
 * tests/modules/other_version_module.c — a module as another doca-core
 * version would build it (tests/modules/module_load.c): the loader must
 * refuse it without calling anything of it.
 */
#include <stdlib.h>

#include "hw/hw_module.h"

static void attach_must_not_run(const struct hw_module_host *host)
{
	abort();
}

__attribute__((visibility("default"))) const struct hw_module doca_core_hw_module = {
	.version = "0.0.0-test",
	.ops = NULL,
	.attach = attach_must_not_run,
};
