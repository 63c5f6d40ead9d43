/*
 * hw/hw_module_host.c — linked into each loadable module, not into the
 * library: what the module gets from the library that loaded it. The
 * library exports only the public API, so a backend's hw_diag reaches the
 * library's per-thread diagnostic through the host the loader hands over in
 * hw_module_attach, before any op runs.
 */
#include "hw/hw_module.h"

static struct hw_module_host host;

void hw_module_attach(const struct hw_module_host *h)
{
	host = *h;
}

void hw_diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	host.vdiag(fmt, ap);
	va_end(ap);
}
