/*
 * actors/asym_fence.h — an asymmetric fence pair, for a Dekker handshake
 * whose one side runs on every task and whose other side runs rarely.
 *
 * Each side stores its own flag, fences, then loads the other's. Both
 * fences full: one of the two loads sees the other side's store. Here the
 * frequent side's fence is only a compiler barrier, and the rare side runs
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): the kernel runs a full
 * barrier on every CPU that runs a thread of this process before the call
 * returns, so for every such thread the rare side's earlier stores are
 * visible to its later loads, and its earlier stores are visible to the
 * rare side's later loads — what its own full fence would have given. A
 * thread not running at that moment went through the scheduler, itself a
 * full barrier. Where the kernel refuses membarrier (an old kernel, a
 * seccomp filter), the light fence is a real seq_cst fence and the heavy
 * one too: slower, never wrong.
 *
 * Thread safety: both functions, any thread; the mode is chosen once, by
 * a constructor that runs before any thread of the library exists.
 */
#ifndef DOCA_ASYM_FENCE_H
#define DOCA_ASYM_FENCE_H

#include <stdatomic.h>
#include <stdbool.h>

/* membarrier is registered (set once, at load). Hidden: the library's own
 * (the version script exports no such symbol), so its tests read it
 * directly, without the GOT's address load. */
extern __attribute__((visibility("hidden"))) bool asym_fence_kernel;

/* The frequent side's fence: a compiler barrier when the heavy side
 * synchronises through the kernel. */
static inline void asym_fence_light(void)
{
	if (__builtin_expect(asym_fence_kernel, 1))
		atomic_signal_fence(memory_order_seq_cst);
	else
		atomic_thread_fence(memory_order_seq_cst);
}

/* asym_fence_light for a caller that may have tested asym_fence_kernel
 * already (@p kernel: it did and found it true; the flag never changes
 * once a thread of the library runs), so that a path running several
 * light fences tests the flag once. */
static inline void asym_fence_light_known(bool kernel)
{
	if (kernel)
		atomic_signal_fence(memory_order_seq_cst);
	else
		asym_fence_light();
}

/* The rare side's fence (a system call, about a microsecond). */
void asym_fence_heavy(void);

#endif /* DOCA_ASYM_FENCE_H */
