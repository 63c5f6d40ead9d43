/*
 * hw/hw_module.h — backends built as loadable modules. A backend whose
 * library the core must not depend on (verbs: libibverbs, libnl) is a
 * shared object libdoca-core-NAME.so that exports one symbol,
 * HW_MODULE_SYMBOL, a struct hw_module. The registry (hw_registry.c) names
 * the modules; hw_module_load.c finds and loads one the first time a caller
 * asks for its backend, so a program that only uses sw0 never maps it.
 *
 * Where a module is looked for: in $DOCA_CORE_MODULE_DIR alone when that is
 * set (build trees, tests); else in the directory "doca-core" beside the
 * object that holds the library (dladdr: $libdir/doca-core/ when installed),
 * then in the install directory, DOCA_CORE_MODULE_INSTALL_DIR.
 *
 * The hw interface is internal and changes between versions, and within
 * one while it is developed: a module is loaded only by a library of the
 * same DOCA_CORE_HW_ABI, the version and a digest of the headers they
 * share ("0.1.0+hw.1a2b..."; meson.build), so a stale module whose structs
 * differ is refused by name, never misread.
 */
#ifndef DOCA_HW_MODULE_H
#define DOCA_HW_MODULE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "hw/hw.h"

/** The name of the one symbol a module exports. */
#define HW_MODULE_SYMBOL "doca_core_hw_module"
/** Environment variable naming the one directory modules are loaded from. */
#define HW_MODULE_DIR_ENV "DOCA_CORE_MODULE_DIR"

/** What the library gives a module when it loads it. */
struct hw_module_host {
	/* The library's hw_vdiag: the module's hw_diag writes through it. */
	void (*vdiag)(const char *fmt, va_list ap);
};

/** The symbol a module exports (HW_MODULE_SYMBOL). */
struct hw_module {
	const char *version;      /* the DOCA_CORE_HW_ABI it was built from */
	const struct hw_ops *ops; /* its backend; ops->name is the module's name */
	/* Called once by the loader, before any op. */
	void (*attach)(const struct hw_module_host *host);
};

/** The module's own definition (hw/<name>/<name>_module.c, modules only). */
extern const struct hw_module doca_core_hw_module;
/** A module's attach (hw/hw_module_host.c, linked into each module). */
void hw_module_attach(const struct hw_module_host *host);

/** One module of the registry; the loader fills it in once. */
struct hw_module_slot {
	const char *name; /* "verbs": the file libdoca-core-verbs.so */
	_Atomic(const struct hw_ops *) ops; /* published when loaded */
	atomic_bool failed;                 /* published when the load failed */
	char why[384];                      /* why it failed; written before `failed` */
};

/* The slot's ops, loading the module if nobody tried yet; NULL when it
 * cannot be loaded, *why then says why. Thread safety: any thread. */
const struct hw_ops *hw_module_load(struct hw_module_slot *slot, const char **why);

/* Tests: a backend linked into the program itself stands in for module
 * `name` (its fake device lives in the program's copy of the backend). Call
 * before anything lists or opens a device. */
void hw_module_preload(const char *name, const struct hw_ops *ops);

#endif /* DOCA_HW_MODULE_H */
