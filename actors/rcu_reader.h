/*
 * actors/rcu_reader.h — threads as liburcu (memb) readers, every one the
 * library registers tracked, so that a fork() child can forget the ones it
 * does not have (engine/fork.c). Engine, worker and backend threads and
 * application threads all register through here.
 */
#ifndef DOCA_RCU_READER_H
#define DOCA_RCU_READER_H

#include <stdbool.h>

/* Register the calling thread as an RCU reader (once per thread). */
void reader_register(void);

/* True if liburcu's readers need no fence (it found sys_membarrier at its
 * init, a choice it never changes): engine/rcu.h's inline read side is
 * then sound. Thread safety: any thread, after reader_register. */
bool reader_membarrier(void);

/* liburcu's read-side lock and unlock with its own test of
 * sys_membarrier (engine/rcu.h's way for a thread where it was not found).
 * Thread safety: a registered thread. */
void reader_read_lock(void);
void reader_read_unlock(void);

/* Unregister the calling thread; outside any read-side section. */
void reader_unregister(void);

/* synchronize_rcu(), never overlapping a fork. Never inside a read-side
 * section. */
void reader_synchronize(void);

/* fork(): prepare waits until no thread of ours is inside liburcu's
 * grace-period or registration code and holds it out; parent lets go;
 * child (single-threaded) removes every other thread's reader from
 * liburcu's registry, so no grace period waits for a thread that does not
 * exist (one may have been inside a read-side section at the fork). */
void reader_fork_prepare(void);
void reader_fork_parent(void);
void reader_fork_child(void);

#endif /* DOCA_RCU_READER_H */
