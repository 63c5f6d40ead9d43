/*
 * tests/api/trap.h — park one chosen thread inside a libc call, so a test
 * forces an interleaving instead of hoping for it.
 *
 * A test binary that links trap.c defines write, nanosleep, clock_gettime,
 * sched_yield and pthread_create itself. Its definitions win over libc's (and over the
 * sanitizers' weak interceptors) for every caller in the process, the
 * library included; unarmed they go straight to the system call. Armed, the
 * first call at that point made by a matching thread parks there until the
 * test calls trap_release, while the test plays the other side of the race:
 *
 *   TRAP_EVENTFD_WRITE  an 8-byte write into an eventfd (a wake-up); it is
 *                       performed after the release, into whatever file the
 *                       number names by then;
 *   TRAP_NANOSLEEP      nanosleep (a thread idling outside any read-side
 *                       section, e.g. an engine waiting for a delayed
 *                       descriptor it has taken); after the release that
 *                       thread's CLOCK_MONOTONIC runs TRAP_CLOCK_WARP_NS
 *                       ahead, so the delay it was waiting out has passed;
 *   TRAP_YIELD          sched_yield (a spin loop's back-off);
 *   TRAP_THREAD_START   the start of a thread created while it is armed,
 *                       before its start routine runs: a thread the
 *                       scheduler has not run yet. Arm it for
 *                       TRAP_OTHER_THREADS (the new thread is never the
 *                       armer).
 *
 * Each point catches one call per arming. The waits fail the test after
 * TRAP_WAIT_MS instead of hanging.
 */
#ifndef DOCA_TESTS_TRAP_H
#define DOCA_TESTS_TRAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define TRAP_WAIT_MS 10000
#define TRAP_CLOCK_WARP_NS (60ull * 1000000000ull)

enum trap_point { TRAP_EVENTFD_WRITE, TRAP_NANOSLEEP, TRAP_YIELD, TRAP_THREAD_START, TRAP_POINTS };

enum trap_who {
	TRAP_THIS_THREAD,   /* only the thread that arms it */
	TRAP_OTHER_THREADS, /* any thread but the one that arms it */
};

/* Arm @p point for the threads @p who names (relative to the caller). */
void trap_arm(enum trap_point point, enum trap_who who);
/* Wait until a thread is parked at @p point; the test fails after TRAP_WAIT_MS. */
void trap_wait_parked(enum trap_point point);
/* Let the parked thread go on, and wait until its call has returned. */
void trap_release(enum trap_point point);
/* trap_release, with @p point armed again for the same threads by the
 * released thread itself before its call goes on: its next arrival
 * parks, however late the test runs next. (trap_release then trap_arm
 * leaves a window: a worker released from its idle sched_yield can run
 * its remaining idle turns in it and go to sleep on its fd, never to
 * yield again.) */
void trap_release_rearm(enum trap_point point);
/* The parked thread, and for TRAP_EVENTFD_WRITE the fd it was writing and
 * (after trap_release) what the write returned. */
pthread_t trap_thread(enum trap_point point);
int trap_fd(void);
ssize_t trap_write_result(void);

#endif /* DOCA_TESTS_TRAP_H */
