/*
 * engine/log.c — one-line log messages on stderr. The level comes from the
 * DOCA_LOG_LEVEL environment variable (error, warn, info, debug; default warn).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

static int log_threshold(void)
{
	static _Atomic int level = -1;
	int l = atomic_load_explicit(&level, memory_order_relaxed);

	if (l >= 0)
		return l;
	const char *env = getenv("DOCA_LOG_LEVEL");
	static const char *const names[] = { "error", "warn", "info", "debug" };

	l = DOCA_LOG_WARN;
	for (int i = 0; env != NULL && i < 4; i++)
		if (strcmp(env, names[i]) == 0)
			l = i;
	atomic_store_explicit(&level, l, memory_order_relaxed);
	return l;
}

void doca_log(enum doca_log_level level, const char *fmt, ...)
{
	static const char *const tags[] = { "ERROR", "WARN", "INFO", "DEBUG" };
	char line[512];
	va_list ap;

	if ((int)level > log_threshold())
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[doca-core %s] %s\n", tags[level], line);
}
