/*
 * hw/verbs/verbs_module.c — the one symbol libdoca-core-verbs.so exports:
 * the verbs backend, for the library of the same version and hw interface
 * to load.
 */
#include "hw/hw_module.h"
#include "hw/verbs/verbs_internal.h"

__attribute__((visibility("default"))) const struct hw_module doca_core_hw_module = {
	.version = DOCA_CORE_HW_ABI,
	.ops = &hw_verbs_ops,
	.attach = hw_module_attach,
};
