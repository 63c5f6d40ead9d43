/*
 * stress/explore/explore.h — the explorer: a test scheduler that runs a
 * scenario's threads, the library's threads included, one at a time and
 * chooses at every hook point which one runs next, by PCT (probabilistic
 * concurrency testing: Burckhardt et al., ASPLOS 2010).
 *
 * One schedule is one process (explore_main.c forks a child per schedule):
 * explore_start makes the calling thread the first controlled thread, the
 * scenario runs, explore_finish ends it with a verdict. Every thread the
 * program creates is controlled (pthread_create is wrapped); a thread runs
 * only while it holds the token, which passes at hook points
 * (actors/explore.h) and at the wrapped blocking calls (explore_libc.c),
 * where a thread that would block in the kernel is instead marked blocked
 * on what it waits for. No runnable thread left means a deadlock, reported
 * with where every thread stands; too many hook points, a livelock.
 */
#ifndef DOCA_EXPLORE_SCHED_H
#define DOCA_EXPLORE_SCHED_H

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "actors/explore.h"

#define EXPLORE_MAX_THREADS 32u
#define EXPLORE_MAX_DEPTH 8u

struct explore_opts {
	uint64_t seed;      /* priorities and change points come from it */
	unsigned depth;     /* PCT's d: d - 1 priority change points */
	uint64_t steps;     /* PCT's k: change points fall in [1, k] */
	uint64_t max_hooks; /* more hook points than this: livelock */
	bool trace;         /* print every switch */
};

/* The exit status of a schedule's process, and the verdict it stands for. */
enum explore_verdict {
	VERDICT_CLEAN = 0,
	VERDICT_DEADLOCK = 10,
	VERDICT_LIVELOCK = 11,
	VERDICT_FD_TOUCHED = 12,
	VERDICT_INVARIANT = 13, /* the line names which: "invariant: credits" */
	VERDICT_ABORT = 14,
	VERDICT_CRASH = 15,
	VERDICT_HARNESS = 16, /* a thread blocked outside the model: an explorer bug */
};

/* ---- the schedule (explore_sched.c) ---- */

/* Make the calling thread controlled thread 0 and start scheduling. */
void explore_start(const struct explore_opts *o);
/* The scenario is done: print the schedule's summary and verdict, exit. */
_Noreturn void explore_finish(void);
/* End the schedule at once with @p verdict; @p what follows it on the
 * VERDICT line ("credits: ..."), then every thread's state is printed. */
__attribute__((format(printf, 2, 3))) _Noreturn void explore_end(enum explore_verdict verdict,
								   const char *what, ...);
/* Name the calling thread in reports. */
void explore_name(const char *name);
/* Around the real fork() (the wrapper): in the child, the first call into
 * the explorer after it finds itself in a new process makes the forking
 * thread the only one that runs; the parent's other threads are lost,
 * keeping what they held (mutexes, read-side sections) as they do in a
 * real fork child. The child reports with a "fork child" prefix. */
void explore_forking(bool on);

/* ---- for the wrappers and the RCU model ---- */

enum explore_block {
	BLOCK_NONE,
	BLOCK_MUTEX,     /* obj: the mutex */
	BLOCK_JOIN,      /* obj: the thread's record */
	BLOCK_FDS,       /* the thread's pollfds */
	BLOCK_FUTEX,     /* obj: the futex word */
	BLOCK_GRACE,     /* waiting for the readers in its snapshot */
	BLOCK_CALLBACKS, /* the deferred-free thread, idle */
	BLOCK_BARRIER,   /* waiting for every deferred callback to have run */
};

enum explore_thread_state {
	THREAD_STARTING,
	THREAD_RUNNABLE,
	THREAD_BLOCKED,
	THREAD_FINISHED,
	THREAD_LOST, /* in a fork child: a thread of the parent, which does not exist here */
};

/* A controlled thread. Only the thread holding the token reads or writes
 * any record, so none needs a lock. */
struct explore_thread {
	unsigned id;
	char name[32];
	enum explore_thread_state state;
	uint64_t prio;  /* PCT priority: the runnable thread with the lowest value runs */
	sem_t turn;     /* posted when the thread is handed the token */
	pthread_t pthread;
	void *(*fn)(void *);
	void *arg;
	bool exit_armed; /* its exit-key destructor has run once */
	/* what it waits for while THREAD_BLOCKED */
	enum explore_block why;
	const void *obj;
	bool timed, timed_out;
	uint64_t blocked_at; /* order of blocking: the oldest timed wait expires first */
	struct pollfd *fds;
	unsigned nfds;
	uint64_t fds_seen;   /* explore_fds_changed count its fds were last polled at */
	/* where it is: the last library hook point and the last wrapped call */
	enum explore_kind kind;
	const char *file;
	int line;
	const char *call;
	const void *from;
	/* RCU model: read-side nesting, sections left, and (while it waits for
	 * a grace period) each thread's sections-left count at the snapshot,
	 * UINT64_MAX for a thread that was not inside a section then */
	unsigned rcu_nesting;
	uint64_t rcu_sections;
	uint64_t grace_snap[EXPLORE_MAX_THREADS];
};

/* The calling thread's record, NULL if it is not controlled (liburcu's
 * own threads, or no schedule running). */
struct explore_thread *explore_self(void);

/* A hook point of the library (installed as doca_explore_hook). */
void explore_hook(enum explore_kind kind, const char *file, int line);
/* A hook point of a wrapped libc call: @p call names it, @p from is the
 * caller's return address (printed as function+offset in reports). */
void explore_libc_point(const char *call, const void *from, bool yielding);
/* Block the calling thread until explore_wake or its condition (checked
 * by the scheduler: fds ready, grace period over, callbacks done). A timed
 * wait also ends when no other thread can run (time passes then); returns
 * true in that case. */
bool explore_block(enum explore_block why, const void *obj, bool timed);
/* Make every thread blocked on (why, obj) runnable again (it re-checks). */
unsigned explore_wake(enum explore_block why, const void *obj, unsigned max);
/* Set the pollfds a BLOCK_FDS wait is for (on the waiting thread). */
void explore_wait_fds(struct pollfd *fds, unsigned n);
/* An fd changed (written, read, closed, epoll set edited): fd waits are
 * looked at again. */
void explore_fds_changed(void);
/* A mutex was taken / released by the calling thread (for reports). */
void explore_mutex_owned(const void *m, bool taken);

/* Create a controlled thread (the wrapped pthread_create), named after
 * the function at @p from, the code that creates it. */
int explore_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg, const void *from);
/* The record of a controlled thread, from its pthread_t (NULL if none). */
struct explore_thread *explore_thread_of(pthread_t thread);
/* Each controlled thread in creation order; NULL past the last. */
struct explore_thread *explore_thread_at(unsigned id);

/* The RCU model (explore_rcu.c). A thread's read-side nesting is kept by
 * the scheduler at the RCU_LOCK / RCU_UNLOCK hook points; grace periods and
 * deferred callbacks are modelled here, on a controlled "deferred-free"
 * thread that stands for liburcu's call_rcu thread. */
void explore_rcu_start(void);
/* For the scheduler: whether a BLOCK_GRACE / BLOCK_BARRIER wait is over. */
bool explore_grace_over(const struct explore_thread *waiter);
bool explore_barrier_done(void);
/* Wait until every callback queued so far (and any they queue) has run. */
void explore_rcu_barrier(void);

/* The real libc calls behind the wrappers (-Wl,--wrap). */
int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg);
int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
ssize_t __real_read(int fd, void *buf, size_t n);
int __real_close(int fd);

/* ---- the application's fds (explore_sched.c) ---- */

/* Open @p n eventfds as the application's own, after teardown: they take
 * the lowest free numbers, those the library just closed. */
void explore_guards_open(unsigned n);
/* Called by the wrapped write: note a write into a guard. */
void explore_guard_written(int fd, const void *from);
/* End with VERDICT_FD_TOUCHED if anything was written into a guard. */
void explore_guards_check(void);

#endif /* DOCA_EXPLORE_SCHED_H */
