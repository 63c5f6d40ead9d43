/*
 * engine/rcu.c — lazy RCU registration of application threads, and the
 * annotated grace-period calls.
 */
#include "engine/rcu.h"

#include <pthread.h>

DOCA_TLS bool doca_rcu_registered;

static pthread_key_t rcu_key;
static pthread_once_t rcu_once = PTHREAD_ONCE_INIT;

static void rcu_thread_exit(void *unused)
{
	(void)unused;
	rcu_unregister_thread();
	doca_rcu_registered = false;
}

static void rcu_key_create(void)
{
	(void)pthread_key_create(&rcu_key, rcu_thread_exit);
}

void doca_rcu_register_slow(void)
{
	pthread_once(&rcu_once, rcu_key_create);
	rcu_register_thread();
	doca_rcu_registered = true;
	/* any non-NULL value makes the destructor run at thread exit */
	(void)pthread_setspecific(rcu_key, &rcu_key);
}

void doca_synchronize_rcu(void)
{
	doca_rcu_ensure();
	synchronize_rcu();
	TSAN_RCU_GRACE_PASSED();
}

void doca_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *head))
{
	doca_rcu_ensure();
	TSAN_RELEASE(head);
	call_rcu(head, fn);
}

/* Pending call_rcu frees run before the process ends, so leak checkers see
 * every object returned. */
__attribute__((destructor)) static void doca_rcu_drain_at_exit(void)
{
	if (doca_rcu_registered)
		rcu_barrier();
}
