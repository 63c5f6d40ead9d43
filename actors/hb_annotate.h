/*
 * actors/hb_annotate.h — happens-before at the API boundary, for the race
 * detector of an application that embeds the plain (uninstrumented) library.
 *
 * An application built with -fsanitize=thread, or run under Valgrind's
 * Helgrind or DRD, sees what the library does through libc — the memmove of
 * a copy, pthread mutexes, free, fds — but not its atomics: every hand-off
 * made through a lock-free ring or a counter is invisible, so the
 * application's correct code would be reported. These calls put the edges
 * the API contract promises where the tool sees them: hb_release(obj) on the
 * giving side, hb_acquire(obj) on the taking side, keyed by an address.
 * Valgrind's tools also see every access the library makes to its own
 * objects, all ordered by those atomics: hb_private() takes such memory out
 * of their checking (the library's own TSan build checks it instead), and
 * hb_app_memory() puts memory the application will use again back in, as new.
 * No mutex annotations: the library's locks are pthread mutexes, which the
 * tools intercept, and its one hand-made lock (the runner guard) orders
 * nothing the application touches that the edges on events do not.
 *
 * Cost: without a tool (Memcheck and Callgrind are none: only TSan,
 * Helgrind and DRD count), one load of a flag set once at load time and a
 * branch that is never taken. With one, an out-of-line call makes TSan's
 * __tsan_release / __tsan_acquire (weak symbols: they resolve exactly when
 * the executable carries the TSan runtime) and the Valgrind client requests
 * (compiled in when valgrind/helgrind.h was found at build time).
 *
 * Not actors/tsan_annotate.h: that one is the library's own TSan build
 * (DOCA_TSAN), where every atomic is instrumented and only the asm of
 * Concurrency Kit and liburcu needs annotating. There these compile to
 * nothing: an edge at the API boundary would only hide an internal ordering
 * bug from the stress programs.
 */
#ifndef DOCA_HB_ANNOTATE_H
#define DOCA_HB_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef DOCA_TSAN
#define hb_release(obj) ((void)(obj))
#define hb_acquire(obj) ((void)(obj))
#define hb_private(p, len) ((void)(p), (void)(len))
#define hb_app_memory(p, len) ((void)(p), (void)(len))
#define hb_watching() false
#else
#define HB_HIDDEN __attribute__((visibility("hidden")))

/* A race detector watches this process (set once, before main). */
extern HB_HIDDEN bool hb_tool_present;

HB_HIDDEN void hb_release_slow(const void *obj);
HB_HIDDEN void hb_acquire_slow(const void *obj);
HB_HIDDEN void hb_private_slow(const void *p, size_t len);
HB_HIDDEN void hb_app_memory_slow(const void *p, size_t len);

/* A race detector watches: a loop of annotated hand-offs tests it once
 * (hb_release and hb_acquire test it again, which costs nothing then). */
static inline bool hb_watching(void)
{
	return __builtin_expect(hb_tool_present, 0);
}
/* Everything this thread did so far happens before what follows an
 * hb_acquire(obj) on any thread. */
static inline void hb_release(const void *obj)
{
	if (__builtin_expect(hb_tool_present, 0))
		hb_release_slow(obj);
}

static inline void hb_acquire(const void *obj)
{
	if (__builtin_expect(hb_tool_present, 0))
		hb_acquire_slow(obj);
}

/* [p, p + len) is touched by the library's code only, ordered by its own
 * atomics: not the application's race detector's business. */
static inline void hb_private(const void *p, size_t len)
{
	if (__builtin_expect(hb_tool_present, 0))
		hb_private_slow(p, len);
}

/* [p, p + len) is handed to the application: checked from now on, with no
 * history (it may be reused memory of an hb_private object). */
static inline void hb_app_memory(const void *p, size_t len)
{
	if (__builtin_expect(hb_tool_present, 0))
		hb_app_memory_slow(p, len);
}
#endif

#endif /* DOCA_HB_ANNOTATE_H */
