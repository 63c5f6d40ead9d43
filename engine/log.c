/*
 * engine/log.c — the library's log (include/doca_log.h): a threshold, a
 * handler, and a rate limit per call site.
 *
 * The rate limit: each message's format string (its call site) has a slot
 * in a small table; per one-second window a site passes DOCA_LOG_BURST
 * messages and counts the rest, and its next message in a later window is
 * preceded by the count. Everything after the threshold check runs under
 * log_lock, which also makes handler calls one at a time.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"

#define LOG_SITES 64u

struct log_site {
	const char *fmt;   /* the call site; NULL: free */
	int64_t window;    /* the second its counts belong to */
	uint32_t passed;   /* messages passed in that window */
	uint32_t dropped;  /* messages counted, not passed, since the last pass */
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct log_site sites[LOG_SITES]; /* log_lock */
static doca_log_handler_t handler;       /* log_lock */
static void *handler_user;               /* log_lock */
static _Atomic int threshold = -2;       /* -2: not read from the environment yet */

static int log_threshold(void)
{
	int l = atomic_load_explicit(&threshold, memory_order_relaxed);

	if (l != -2)
		return l;
	const char *env = getenv("DOCA_LOG_LEVEL");
	static const char *const names[] = { "none", "error", "warn", "info", "debug" };

	l = DOCA_LOG_WARN;
	for (int i = 0; env != NULL && i < 5; i++)
		if (strcmp(env, names[i]) == 0)
			l = i - 1;
	int unset = -2;

	/* a level set meanwhile wins over the environment */
	if (!atomic_compare_exchange_strong_explicit(&threshold, &unset, l, memory_order_relaxed,
						     memory_order_relaxed))
		l = unset;
	return l;
}

doca_error_t doca_log_set_level(enum doca_log_level level)
{
	if ((int)level < DOCA_LOG_NONE || (int)level > DOCA_LOG_DEBUG)
		return DOCA_ERROR_INVALID_VALUE;
	atomic_store_explicit(&threshold, (int)level, memory_order_relaxed);
	return DOCA_SUCCESS;
}

enum doca_log_level doca_log_get_level(void)
{
	return (enum doca_log_level)log_threshold();
}

/* fork(): no thread of the parent is inside a message or a handler change
 * while the process is copied (a child that logs would wait for ever on a
 * lock held by a thread it does not have). */
void log_fork_prepare(void)
{
	pthread_mutex_lock(&log_lock);
}

void log_fork_parent(void)
{
	pthread_mutex_unlock(&log_lock);
}

void log_fork_child(void)
{
	pthread_mutex_unlock(&log_lock); /* prepare's, on this thread (actors/rcu_reader.c) */
}

doca_error_t doca_log_set_handler(doca_log_handler_t h, void *user)
{
	pthread_mutex_lock(&log_lock);
	handler = h;
	handler_user = user;
	pthread_mutex_unlock(&log_lock);
	return DOCA_SUCCESS;
}

/* One line to the handler or stderr (log_lock held). */
static void log_emit(enum doca_log_level level, const char *line)
{
	static const char *const tags[] = { "ERROR", "WARN", "INFO", "DEBUG" };

	if (handler != NULL)
		handler(level, line, handler_user);
	else
		fprintf(stderr, "[doca-core %s] %s\n", tags[level], line);
}

/* The site of `fmt`, claimed (or taken over) if new (log_lock held). */
static struct log_site *log_site(const char *fmt)
{
	struct log_site *s = &sites[((uintptr_t)fmt >> 3) % LOG_SITES];

	if (s->fmt != fmt)
		*s = (struct log_site){ .fmt = fmt, .window = -1 };
	return s;
}

void doca_log(enum doca_log_level level, const char *fmt, ...)
{
	struct timespec now;
	char line[512];
	va_list ap;

	if ((int)level > log_threshold())
		return;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	pthread_mutex_lock(&log_lock);
	struct log_site *s = log_site(fmt);

	if (s->window != (int64_t)now.tv_sec) {
		s->window = (int64_t)now.tv_sec;
		s->passed = 0;
	}
	if (s->passed == DOCA_LOG_BURST) {
		s->dropped++;
		pthread_mutex_unlock(&log_lock);
		return;
	}
	s->passed++;
	if (s->dropped != 0) {
		snprintf(line, sizeof(line), "(%u similar messages suppressed: \"%s\")", s->dropped, fmt);
		s->dropped = 0;
		log_emit(level, line);
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_emit(level, line);
	pthread_mutex_unlock(&log_lock);
}

bool log_device_reason(const char *call, doca_error_t err)
{
	const char *why = hw_diag_take();

	if (err == DOCA_SUCCESS || why[0] == '\0')
		return false;
	doca_log(err == DOCA_ERROR_AGAIN ? DOCA_LOG_WARN : DOCA_LOG_ERROR, "%s: %s (%s)", call, why,
		 doca_error_get_name(err));
	return true;
}
