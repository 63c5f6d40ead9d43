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
 * call_rcu callback — places that really follow a grace period — so an
 * annotation never grants an ordering that did not happen. call_rcu releases
 * on the rcu_head; the callback acquires it.
 */
#ifndef DOCA_ENGINE_RCU_H
#define DOCA_ENGINE_RCU_H

#include <stdbool.h>

#include <urcu.h>
#include <urcu/rculfhash.h>

#include "actors/explore.h"
#include "actors/tsan_annotate.h"

extern DOCA_TLS bool doca_rcu_registered;

void doca_rcu_register_slow(void);

/* Register the calling thread with RCU if it is not yet. */
static inline void doca_rcu_ensure(void)
{
	if (__builtin_expect(!doca_rcu_registered, 0))
		doca_rcu_register_slow();
}

static inline void doca_rcu_read_lock(void)
{
	doca_rcu_ensure();
	EXPLORE_POINT(RCU_LOCK);
	rcu_read_lock();
}

static inline void doca_rcu_read_unlock(void)
{
	TSAN_RCU_READER_EXIT();
	EXPLORE_POINT(RCU_UNLOCK);
	rcu_read_unlock();
}

/* Wait for every read-side section that began before the call. Never inside one. */
void doca_synchronize_rcu(void);

/* Run fn(head) after a grace period, on liburcu's call_rcu thread. */
void doca_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *head));

/* First statement of every call_rcu callback. liburcu registered its
 * call_rcu thread itself: note that, so doca_rcu_ensure never registers it
 * a second time. */
#define DOCA_RCU_CALLBACK_ENTER(head)            \
	do {                                     \
		doca_rcu_registered = true;      \
		TSAN_ACQUIRE(head);              \
		TSAN_RCU_GRACE_PASSED();         \
	} while (0)

#endif /* DOCA_ENGINE_RCU_H */
