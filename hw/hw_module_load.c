/*
 * hw/hw_module_load.c — finds and loads a backend module (hw/hw_module.h).
 *
 * Why the unlocked fast path is correct: a slot changes at most once, from
 * "untried" to "loaded" (ops) or "failed" (failed, why), under load_lock.
 * The loader writes why (and runs the module's attach) before it publishes
 * ops or failed with a release store; a reader that sees either with an
 * acquire load also sees what was written before. A reader that sees
 * neither takes the lock and looks again, so a module is loaded once.
 * Modules are never unloaded: their ops may be in use until exit.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/hw_module.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct hw_module_host host = {
	.vdiag = hw_vdiag,
};

void hw_modules_after_fork_child(void)
{
	/* A thread of the parent may have held it; slots it was filling stay
	 * untried, and loading again finds the mapping already there. */
	load_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

/* The directories to look in, in order (hw/hw_module.h); returns how many. */
static size_t module_dirs(char dirs[2][PATH_MAX])
{
	const char *env = secure_getenv(HW_MODULE_DIR_ENV);
	Dl_info info;
	size_t n = 0;

	if (env != NULL && env[0] != '\0') {
		snprintf(dirs[0], PATH_MAX, "%s", env);
		return 1;
	}
	if (dladdr((void *)module_dirs, &info) != 0 && info.dli_fname != NULL) {
		const char *slash = strrchr(info.dli_fname, '/');

		if (slash != NULL)
			snprintf(dirs[n++], PATH_MAX, "%.*s/doca-core", (int)(slash - info.dli_fname),
				 info.dli_fname);
	}
	if (n == 0 || strcmp(dirs[0], DOCA_CORE_MODULE_INSTALL_DIR) != 0)
		snprintf(dirs[n++], PATH_MAX, "%s", DOCA_CORE_MODULE_INSTALL_DIR);
	return n;
}

/* dlopen the module at `path` and check what it exports; NULL and why if it
 * cannot serve as backend `slot->name`. */
static const struct hw_ops *module_open(const struct hw_module_slot *slot, const char *path,
					const char *file, char *why, size_t len)
{
	void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	const struct hw_module *mod;

	if (handle == NULL) {
		const char *err = dlerror();
		size_t plen = strlen(path);

		/* dlerror starts with the path it was given: name the file once */
		if (strncmp(err, path, plen) == 0 && strncmp(err + plen, ": ", 2) == 0)
			err += plen + 2;
		snprintf(why, len, "%s: %s", file, err);
		return NULL;
	}
	mod = dlsym(handle, HW_MODULE_SYMBOL);
	if (mod == NULL)
		snprintf(why, len, "%s exports no %s", file, HW_MODULE_SYMBOL);
	else if (strcmp(mod->version, DOCA_CORE_HW_ABI) != 0)
		snprintf(why, len, "%s was built for doca-core %s, this library is %s", file,
			 mod->version, DOCA_CORE_HW_ABI);
	else if (strcmp(mod->ops->name, slot->name) != 0)
		snprintf(why, len, "%s holds backend '%s', not '%s'", file, mod->ops->name,
			 slot->name);
	else {
		mod->attach(&host);
		return mod->ops;
	}
	dlclose(handle);
	return NULL;
}

/* Find module `slot->name` and load it (load_lock held). */
static const struct hw_ops *module_find(const struct hw_module_slot *slot, char *why, size_t len)
{
	char dirs[2][PATH_MAX];
	char file[64];
	char path[PATH_MAX + sizeof(file)];
	size_t n = module_dirs(dirs);

	snprintf(file, sizeof(file), "libdoca-core-%s.so", slot->name);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], file);
		if (access(path, F_OK) == 0)
			return module_open(slot, path, file, why, len);
	}
	snprintf(why, len, "%s not found in %.150s%s%.150s", file, dirs[0], n > 1 ? ", " : "",
		 n > 1 ? dirs[1] : "");
	return NULL;
}

const struct hw_ops *hw_module_load(struct hw_module_slot *slot, const char **why)
{
	const struct hw_ops *ops = atomic_load_explicit(&slot->ops, memory_order_acquire);

	*why = slot->why;
	if (ops != NULL || atomic_load_explicit(&slot->failed, memory_order_acquire))
		return ops;
	pthread_mutex_lock(&load_lock);
	ops = atomic_load_explicit(&slot->ops, memory_order_relaxed);
	if (ops == NULL && !atomic_load_explicit(&slot->failed, memory_order_relaxed)) {
		ops = module_find(slot, slot->why, sizeof(slot->why));
		if (ops != NULL)
			atomic_store_explicit(&slot->ops, ops, memory_order_release);
		else
			atomic_store_explicit(&slot->failed, true, memory_order_release);
	}
	pthread_mutex_unlock(&load_lock);
	return ops;
}
