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

#ifdef DOCA_HAVE_VALGRIND
/* Helgrind or DRD, not any Valgrind tool: under Memcheck or Callgrind the
 * library must run as it does natively (bench/ counts instructions with
 * Callgrind). Helgrind answers its GET_ABITS request with the number of
 * addressable bytes (1 here; any other tool leaves the default, -2, which
 * comes back truncated to 32 bits); DRD answers its first request,
 * GET_VALGRIND_THREAD_ID, with a thread id (0 from any other tool; drd.h is
 * not included because its ANNOTATE_ macros clash with helgrind.h's). */
static bool valgrind_race_detector(void)
{
	char probe = 0;

	if (!RUNNING_ON_VALGRIND)
		return false;
	return (int)VALGRIND_HG_GET_ABITS(&probe, NULL, 1) == 1 ||
	       VALGRIND_DO_CLIENT_REQUEST_EXPR(0, VG_USERREQ_TOOL_BASE('D', 'R'), 0, 0, 0, 0, 0) != 0;
}
#endif

/* priority 101: before runner_owner_way_choose (actors/runner.c), which
 * reads it */
__attribute__((constructor(101))) static void hb_detect(void)
{
	hb_tsan = __tsan_acquire != NULL && __tsan_release != NULL;
#ifdef DOCA_HAVE_VALGRIND
	hb_tool_present = hb_tsan || valgrind_race_detector();
#else
	hb_tool_present = hb_tsan;
#endif
}

/* Outside Valgrind a client request is a few register rotations that do
 * nothing, so both kinds of tool are told without asking which one runs
 * (DRD understands Helgrind's requests). */
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
