/*
 * engine/fork.c — what a fork() child inherits, and what it may do.
 *
 * The contract (README, "fork"): a child may call exit(); it may create its
 * own objects and use them normally — a fresh device registry, fresh engine
 * and worker threads; every object inherited from the parent is refused
 * with DOCA_ERROR_BAD_STATE. The parent is unaffected, but for what the
 * child's copies of its fds keep: while the child lives, a fab0 device's
 * port stays bound (the parent cannot open it again after a close) and
 * peers can still connect to it (their accesses then fail only after
 * retry_ms). The library cannot close those copies: they are libfabric's.
 *
 * Why refuse rather than share: an inherited object names threads that do
 * not exist in the child (sw engine threads, PE workers, the reclaimer),
 * fds and device queues shared with the parent, and credits the parent
 * also spends. Nothing of it can be used safely, so nothing of it is.
 *
 * How:
 * - every handle records the fork epoch it was made in; the child bumps the
 *   epoch, so the handle checks (engine.h) refuse what came before;
 * - prepare: no thread of ours is inside liburcu's grace-period or
 *   registration code, the reclaimer's queue is consistent (rcu.c), and no
 *   thread is inside a cell put or a log message (their locks are held
 *   across the copy);
 * - child: the library's global locks are made anew (whatever state they
 *   guarded belongs to inherited objects, which are refused), the
 *   registry is new, the readers of threads that do not exist in the child
 *   leave liburcu's registry (one of them may have been inside a read-side
 *   section, which would stall every grace period forever), the reclaimer
 *   starts again with an empty queue, and thread slots of absent threads
 *   are free again.
 * Inherited memory stays reachable (the old queue and registry are kept),
 * so leak checkers in the child report nothing the child did not leak.
 */
#include <pthread.h>

#include "engine/cells.h"
#include "engine/engine.h"
#include "actors/explore_revert.h"
#include "actors/thread_slot.h"

uint32_t g_fork_epoch;
uint64_t g_fork_epoch_key;
uint64_t g_event_key = MAGIC_EVENT; /* head_key(MAGIC_EVENT) in epoch 0 */
uint64_t g_pe_key = MAGIC_PE;
uint64_t g_ctx_key = MAGIC_CTX;
uint64_t g_buf_fold = UINT64_C(1) << HANDLE_LOW_BITS; /* buf_fold_made(0) */

/* The leaf locks (cells, log) last: a reclaimer callback may need the
 * cells' lock before the RCU side is quiet, and nothing is taken under
 * them. */
static void fork_prepare(void)
{
	doca_rcu_fork_prepare();
	runner_fork_prepare();
	cells_fork_prepare();
	log_fork_prepare();
}

static void fork_parent(void)
{
	log_fork_parent();
	cells_fork_parent();
	runner_fork_parent();
	doca_rcu_fork_parent();
}

static void fork_child(void)
{
	g_fork_epoch++;
	g_fork_epoch_key = (uint64_t)g_fork_epoch << 32;
	g_event_key = head_key_made(MAGIC_EVENT);
	g_pe_key = head_key_made(MAGIC_PE);
	g_ctx_key = head_key_made(MAGIC_CTX);
	g_buf_fold = buf_fold_made(g_fork_epoch);
	log_fork_child();
	runner_fork_child();
	doca_rcu_fork_child();
	dev_after_fork_child();
	cells_after_fork_child();
	hw_modules_after_fork_child();
	pe_worker_after_fork_child();
	thread_slot_after_fork_child();
	live_after_fork_child();
}

__attribute__((constructor)) static void fork_handlers_install(void)
{
	if (DOCA_REVERTED("fork_no_atfork"))
		return;
	(void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}
