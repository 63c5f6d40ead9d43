/*
 * engine/alloc.c — every allocation the library makes goes through here:
 * jemalloc in the plain build (aligned memories, slow-path objects), libc
 * under sanitizers, under an application's race detector and when the
 * environment says DOCA_CORE_ALLOCATOR=libc (so an application's ASan or
 * valgrind sees the objects it leaks), and in test builds a counter that
 * can make the k-th allocation fail.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/alloc.h"
#include "engine/engine.h"

#ifdef DOCA_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#ifdef DOCA_ALLOC_FAIL_INJECTION
static _Atomic uint64_t alloc_count;
static _Atomic uint64_t alloc_fail_k;

void doca_alloc_fail_at(uint64_t k)
{
	atomic_store(&alloc_count, 0);
	atomic_store(&alloc_fail_k, k);
}

uint64_t doca_alloc_count(void)
{
	return atomic_load(&alloc_count);
}

static bool alloc_should_fail(void)
{
	uint64_t n = atomic_fetch_add(&alloc_count, 1) + 1;
	uint64_t k = atomic_load(&alloc_fail_k);

	return k != 0 && n == k;
}
#else
static inline bool alloc_should_fail(void)
{
	return false;
}
#endif

#ifdef DOCA_HAVE_JEMALLOC
static bool alloc_libc_asked; /* DOCA_CORE_ALLOCATOR=libc */

__attribute__((constructor)) static void alloc_choose(void)
{
	const char *env = getenv("DOCA_CORE_ALLOCATOR");

	alloc_libc_asked = env != NULL && strcmp(env, "libc") == 0;
	if (env != NULL && !alloc_libc_asked && strcmp(env, "jemalloc") != 0)
		doca_log(DOCA_LOG_WARN, "DOCA_CORE_ALLOCATOR=%s: unknown (libc or jemalloc); jemalloc used",
			 env);
}

/* jemalloc, unless a race detector watches the process (actors/hb_annotate.h)
 * or the environment asks for libc: then the process's allocator, which TSan,
 * ASan and Valgrind track, so they see every block's whole life — a leaked
 * object is reported, a free that races with a use is reported, and a
 * block's next life starts with no history. Decided before main, so a block
 * is always freed by the allocator that made it. */
static bool use_jemalloc(void)
{
	return !hb_tool_present && !alloc_libc_asked;
}
#endif

void *doca_alloc_aligned(size_t align, size_t size)
{
	void *p = NULL;

	if (alloc_should_fail())
		return NULL;
	if (size == 0)
		size = 1;
#ifdef DOCA_HAVE_JEMALLOC
	if (use_jemalloc())
		return mallocx(size, MALLOCX_ALIGN(align));
#endif
	return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

void *doca_zalloc(size_t size)
{
	void *p = NULL;

	if (alloc_should_fail())
		return NULL;
	if (size == 0)
		size = 1;
#ifdef DOCA_HAVE_JEMALLOC
	if (use_jemalloc())
		return mallocx(size, MALLOCX_ALIGN(64) | MALLOCX_ZERO);
#endif
	if (posix_memalign(&p, 64, size) != 0)
		return NULL;
	hb_private(p, size); /* an object of the library, never the application's */
	return memset(p, 0, size);
}

void doca_free(void *p)
{
	if (p == NULL)
		return;
#ifdef DOCA_HAVE_JEMALLOC
	if (use_jemalloc()) {
		dallocx(p, 0);
		return;
	}
#endif
	free(p);
}
