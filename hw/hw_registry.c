/*
 * hw/hw_registry.c — the one explicit list of backends, in lookup order:
 * the backends built into the library, then the loadable modules
 * (hw/hw_module.h), each loaded the first time its backend is asked for.
 */
#include <string.h>

#include "hw/hw_module.h"

extern const struct hw_ops hw_sw_ops;

static const struct hw_ops *const builtin[] = {
	&hw_sw_ops,
};

#define BUILTIN_COUNT (sizeof(builtin) / sizeof(builtin[0]))

static struct hw_module_slot modules[] = {
	{ .name = "verbs" },  /* rdma-core: libdoca-core-verbs.so */
	{ .name = "fabric" }, /* libfabric (fab0): libdoca-core-fabric.so */
};

const size_t hw_backend_count = BUILTIN_COUNT + sizeof(modules) / sizeof(modules[0]);

const char *hw_backend_name(size_t i)
{
	return i < BUILTIN_COUNT ? builtin[i]->name : modules[i - BUILTIN_COUNT].name;
}

const struct hw_ops *hw_backend_get(size_t i, const char **why)
{
	if (i < BUILTIN_COUNT) {
		*why = "";
		return builtin[i];
	}
	return hw_module_load(&modules[i - BUILTIN_COUNT], why);
}

void hw_module_preload(const char *name, const struct hw_ops *ops)
{
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
		if (strcmp(modules[i].name, name) == 0)
			atomic_store_explicit(&modules[i].ops, ops, memory_order_release);
}
