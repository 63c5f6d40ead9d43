/*
 * hw/fabric/fabric_module.c — the one symbol libdoca-core-fabric.so
 * exports: the libfabric backend, for the library of the same version and
 * hw interface to load.
 */
#include "hw/hw_module.h"
#include "hw/fabric/fabric_internal.h"

__attribute__((visibility("default"))) const struct hw_module doca_core_hw_module = {
	.version = DOCA_CORE_HW_ABI,
	.ops = &hw_fabric_ops,
	.attach = hw_module_attach,
};
