/*
 * hw/hw_diag.c — why a backend refused an open string, in words: the
 * backend writes one line (the calling thread's own buffer), the engine
 * takes it and logs it with the string it was given. A loadable module has
 * its own hw_diag (hw/hw_module_host.c) that hands the line to hw_vdiag.
 */
#include <stdarg.h>
#include <stdio.h>

#include "hw/hw.h"

static _Thread_local char diag[256];

void hw_vdiag(const char *fmt, va_list ap)
{
	vsnprintf(diag, sizeof(diag), fmt, ap);
}

void hw_diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hw_vdiag(fmt, ap);
	va_end(ap);
}

const char *hw_diag_take(void)
{
	static _Thread_local char taken[sizeof(diag)];

	snprintf(taken, sizeof(taken), "%s", diag);
	diag[0] = '\0';
	return taken;
}
