/*
 * bench_alloc.c — heap bytes allocated by the calling thread, from jemalloc's
 * per-thread counter "thread.allocated" (cumulative, tcache hits included).
 * doca_bench links jemalloc ahead of libc, so jemalloc is the process's
 * malloc and the library's mallocx calls land in the same counter: a zero
 * difference across a run means zero heap allocations on that thread.
 */
#include "bench.h"

#ifdef BENCH_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>

double bench_thread_allocated(void)
{
	uint64_t bytes;
	size_t len = sizeof(bytes);

	if (mallctl("thread.allocated", &bytes, &len, NULL, 0))
		return -1;
	return (double)bytes;
}

const char *bench_alloc_method(void)
{
	return "jemalloc thread.allocated";
}
#else
double bench_thread_allocated(void)
{
	return -1;
}

const char *bench_alloc_method(void)
{
	return "none (jemalloc not found at build time)";
}
#endif
