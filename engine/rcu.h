/*
 * engine/rcu.h — liburcu (memb flavour) as the engine uses it.
 *
 * Application threads never call anything RCU-specific: the first doca call
 * that needs RCU registers the calling thread, and a pthread key destructor
 * unregisters it when the thread exits.
 *
 * TSan cannot see liburcu's asm (TOOLCHAIN.md). The annotations: a reader
 * releases one global token when it leaves a read-side section; the token is
 * acquired only right after synchronize_rcu() returns or at the start of a
 * deferred-free callback — places that really follow a grace period — so an
 * annotation never grants an ordering that did not happen. doca_call_rcu
 * releases on the rcu_head; the callback acquires it. Deferred frees run on
 * the library's own reclaimer thread (engine/rcu.c), handed over under a
 * mutex and joined at exit, so no suppression is needed. In the plain build
 * the reader's release and the grace period's acquire are made again through
 * actors/hb_annotate.h, for the race detector of an application that embeds
 * the library (the rcu_head hand-off is a mutex, which it sees anyway).
 */
#ifndef DOCA_ENGINE_RCU_H
#define DOCA_ENGINE_RCU_H

#include <stdbool.h>

#ifdef _LGPL_SOURCE
/*
 * liburcu's inline read side compiled as if sys_membarrier were certain:
 * its three tests of urcu_memb_has_sys_membarrier per section (one in the
 * lock, two in the unlock) go, each barrier a compiler barrier. Sound only
 * where liburcu found sys_membarrier at its init, which it decides once
 * and never changes: the thread-local doca_rcu_fast (below) is set at
 * registration only then (actors/rcu_reader.c, reader_membarrier), and a
 * section takes this inline way only while it is set; any other thread
 * takes liburcu's own inline way, with its tests, compiled in
 * actors/rcu_reader.c (reader_read_lock). Both ways are the same
 * algorithm on the same reader word, so a lock and an unlock of one
 * section may take either. A file that includes <urcu.h> before this
 * one keeps liburcu's tests (still sound, only slower); one that includes
 * this one calls only doca_rcu_read_lock/unlock, never rcu_read_lock
 * itself (its thread's doca_rcu_fast unchecked).
 */
#define CONFIG_RCU_FORCE_SYS_MEMBARRIER 1
#endif

#include <urcu.h>
#include <urcu/rculfhash.h>

#include "actors/explore.h"
#include "actors/hb_annotate.h"
#include "actors/rcu_reader.h"
#include "actors/tsan_annotate.h"

#ifdef _LGPL_SOURCE
/*
 * liburcu's inline read-side fast path reads its thread-local reader
 * record. Declared initial-exec here, each read is one %fs-relative load
 * instead of a TLS-descriptor call. Sound because the library is already
 * initial-exec for its own thread-locals (DOCA_TLS): it must be loaded at
 * program start, or by a dlopen that finds room in the static TLS block,
 * and either way liburcu-memb, a DT_NEEDED of the library, is loaded with
 * it into the same static block (the modules in hw/ are opened after the
 * library, with liburcu already there).
 */
extern __thread struct urcu_reader urcu_memb_reader __attribute__((tls_model("initial-exec")));
#endif

extern DOCA_TLS bool doca_rcu_registered;
/* Registered, and the rcu_read_lock compiled here is sound for this
 * thread (see CONFIG_RCU_FORCE_SYS_MEMBARRIER above; without
 * _LGPL_SOURCE it is liburcu's function, sound always): one test per
 * lock and one per unlock. */
extern DOCA_TLS bool doca_rcu_fast;

void doca_rcu_register_slow(void);

/* Register the calling thread with RCU if it is not yet. */
static inline void doca_rcu_ensure(void)
{
	if (__builtin_expect(!doca_rcu_registered, 0))
		doca_rcu_register_slow();
}

/* doca_rcu_read_lock for a thread not doca_rcu_fast (engine/rcu.c). */
void doca_rcu_read_lock_slow(void);

static inline void doca_rcu_read_lock(void)
{
	if (__builtin_expect(!doca_rcu_fast, 0)) {
		doca_rcu_read_lock_slow();
		return;
	}
	EXPLORE_POINT(RCU_LOCK);
	rcu_read_lock();
}

static inline void doca_rcu_read_unlock(void)
{
	TSAN_RCU_READER_EXIT();
	EXPLORE_POINT(RCU_UNLOCK);
	hb_release(&tsan_rcu_token); /* the same edge, for an application's tool */
	if (__builtin_expect(doca_rcu_fast, 1))
		rcu_read_unlock();
	else
		reader_read_unlock();
}

/* Wait for every read-side section that began before the call. Never inside one. */
void doca_synchronize_rcu(void);

/* Run fn(head) after a grace period, on the library's reclaimer thread.
 * Callbacks run in the order they were queued; one may queue another. */
void doca_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *head));

/* Wait until every callback queued before the call (and every one those
 * queue) has run. Never inside a read-side section or a callback. */
void doca_rcu_barrier(void);

/* Wait until every callback queued before the call has run (not those
 * queued meanwhile, or by them: frees queued by other threads all along
 * never hold it up). Never inside a read-side section or a callback.
 * (The explorer does not model it: only a fab0 close calls it.) */
void doca_rcu_wait_queued(void);

/* The library's last live object was destroyed or its first one created
 * (engine/live.c): while none lives (live_none, read under the reclaimer's
 * lock, so the last of racing transitions decides), the reclaimer thread ends once it has run every
 * queued callback (and every one those queue), and so does any thread a
 * later deferred free starts (a reference dropped after the last destroy)
 * until an object is created again. Returns at once. */
void doca_rcu_live_changed(void);


/* fork() (engine/fork.c): prepare leaves no thread of ours inside
 * liburcu's grace-period or registration code and holds the reclaimer's
 * queue; the child forgets the readers of threads it does not have and
 * starts the reclaimer again, its inherited queue never run. */
void doca_rcu_fork_prepare(void);
void doca_rcu_fork_parent(void);
void doca_rcu_fork_child(void);

/* First statement of every deferred-free callback. */
#define DOCA_RCU_CALLBACK_ENTER(head)            \
	do {                                     \
		TSAN_ACQUIRE(head);              \
		TSAN_RCU_GRACE_PASSED();         \
	} while (0)

#endif /* DOCA_ENGINE_RCU_H */
