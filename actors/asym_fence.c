/* actors/asym_fence.c — the heavy side of asym_fence.h and the choice of mode. */
#include <linux/membarrier.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asym_fence.h"

bool asym_fence_kernel;

/* priority 101: before runner_owner_way_choose (actors/runner.c), which
 * reads the mode */
__attribute__((constructor(101))) static void asym_fence_choose(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	asym_fence_kernel = cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
			    syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

void asym_fence_heavy(void)
{
	if (!asym_fence_kernel) {
		atomic_thread_fence(memory_order_seq_cst); /* the light side fences too */
		return;
	}
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		abort(); /* registered at load: the kernel has no reason to refuse */
}
