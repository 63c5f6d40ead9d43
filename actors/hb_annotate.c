/*
 * actors/hb_annotate.c — the slow paths of actors/hb_annotate.h: which tool
 * watches the process, and the calls into it.
 */
#include "hb_annotate.h"

#ifndef DOCA_TSAN
#ifdef DOCA_HAVE_VALGRIND
#include <valgrind/helgrind.h>
#endif

/* Defined by the TSan runtime, which lives in the executable of a program
 * built with -fsanitize=thread; NULL everywhere else. */
void __tsan_acquire(void *addr) __attribute__((weak));
void __tsan_release(void *addr) __attribute__((weak));

bool hb_tool_present;
static bool hb_tsan;

__attribute__((constructor)) static void hb_detect(void)
{
	hb_tsan = __tsan_acquire != NULL && __tsan_release != NULL;
#ifdef DOCA_HAVE_VALGRIND
	hb_tool_present = hb_tsan || RUNNING_ON_VALGRIND;
#else
	hb_tool_present = hb_tsan;
#endif
}

/* Outside Valgrind a client request is a few register rotations that do
 * nothing, so every tool is told without asking which one runs (DRD
 * understands Helgrind's requests). */
void hb_release_slow(const void *obj)
{
	if (hb_tsan)
		__tsan_release((void *)obj);
#ifdef DOCA_HAVE_VALGRIND
	ANNOTATE_HAPPENS_BEFORE(obj);
#endif
}

void hb_acquire_slow(const void *obj)
{
	if (hb_tsan)
		__tsan_acquire((void *)obj);
#ifdef DOCA_HAVE_VALGRIND
	ANNOTATE_HAPPENS_AFTER(obj);
#endif
}

/* TSan does not see the library's own accesses (it is not instrumented):
 * only Valgrind's tools need telling. */
void hb_private_slow(const void *p, size_t len)
{
#ifdef DOCA_HAVE_VALGRIND
	VALGRIND_HG_DISABLE_CHECKING(p, len);
#else
	(void)p;
	(void)len;
#endif
}

void hb_app_memory_slow(const void *p, size_t len)
{
#ifdef DOCA_HAVE_VALGRIND
	VALGRIND_HG_ENABLE_CHECKING(p, len);
#else
	(void)p;
	(void)len;
#endif
}
#endif /* !DOCA_TSAN */
