/*
 * tests/api/trap.c — the interposed write, nanosleep, clock_gettime,
 * sched_yield and pthread_create of trap.h. The pass-through is the raw
 * system call, so a trap never recurses into itself or into a sanitizer's
 * interceptor; pthread_create, which has no system call, passes to the
 * sanitizer's interceptor when there is one (it must see every thread),
 * else to libc's.
 */
#include "trap.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct trap_slot {
	_Atomic bool armed;
	enum trap_who who;
	pthread_t armer;
	bool parked;   /* a thread waits at the point */
	bool released; /* trap_release let it go */
	bool done;     /* its call returned */
	bool rearm;    /* trap_release_rearm: the released thread arms it again */
	pthread_t thread;
	int fd;
	ssize_t result;
};

static struct trap_slot slots[TRAP_POINTS];
static _Thread_local uint64_t clock_warp_ns; /* set in a thread released from TRAP_NANOSLEEP */
static pthread_mutex_t trap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t trap_cond;
static pthread_once_t trap_once = PTHREAD_ONCE_INIT;
static const char *const trap_names[TRAP_POINTS] = { "eventfd write", "nanosleep", "sched_yield",
						      "thread start" };

static void trap_init(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&trap_cond, &attr);
	pthread_condattr_destroy(&attr);
}

/* Wait on trap_cond (trap_lock held) until *flag; abort after TRAP_WAIT_MS
 * (any thread may wait here, and only a crash fails a test from any thread). */
static void trap_wait_flag(const bool *flag, enum trap_point point, const char *what)
{
	struct timespec deadline;

	pthread_once(&trap_once, trap_init);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += TRAP_WAIT_MS / 1000;
	while (!*flag) {
		if (pthread_cond_timedwait(&trap_cond, &trap_lock, &deadline) != 0 && !*flag) {
			fprintf(stderr, "trap: %s: nothing %s within %d ms\n", trap_names[point], what,
				TRAP_WAIT_MS);
			abort();
		}
	}
}

void trap_arm(enum trap_point point, enum trap_who who)
{
	struct trap_slot *s = &slots[point];

	pthread_once(&trap_once, trap_init);
	pthread_mutex_lock(&trap_lock);
	s->who = who;
	s->armer = pthread_self();
	s->parked = s->released = s->done = s->rearm = false;
	s->fd = -1;
	s->result = 0;
	atomic_store_explicit(&s->armed, true, memory_order_release);
	pthread_mutex_unlock(&trap_lock);
}

void trap_wait_parked(enum trap_point point)
{
	pthread_mutex_lock(&trap_lock);
	trap_wait_flag(&slots[point].parked, point, "parked");
	pthread_mutex_unlock(&trap_lock);
}

/* trap_release's body; @p rearm: trap_release_rearm's. */
static void trap_let_go(enum trap_point point, bool rearm)
{
	pthread_mutex_lock(&trap_lock);
	slots[point].rearm = rearm;
	slots[point].done = false; /* set by this release's call only: a rearmed park leaves it */
	slots[point].released = true;
	pthread_cond_broadcast(&trap_cond);
	trap_wait_flag(&slots[point].done, point, "returned");
	pthread_mutex_unlock(&trap_lock);
}

void trap_release(enum trap_point point)
{
	trap_let_go(point, false);
}

void trap_release_rearm(enum trap_point point)
{
	trap_let_go(point, true);
}

pthread_t trap_thread(enum trap_point point)
{
	pthread_mutex_lock(&trap_lock);
	pthread_t t = slots[point].thread;

	pthread_mutex_unlock(&trap_lock);
	return t;
}

int trap_fd(void)
{
	pthread_mutex_lock(&trap_lock);
	int fd = slots[TRAP_EVENTFD_WRITE].fd;

	pthread_mutex_unlock(&trap_lock);
	return fd;
}

ssize_t trap_write_result(void)
{
	pthread_mutex_lock(&trap_lock);
	ssize_t r = slots[TRAP_EVENTFD_WRITE].result;

	pthread_mutex_unlock(&trap_lock);
	return r;
}

/* Park the caller if @p point is armed for it; true if it was (the caller
 * then reports its call's end with trap_done). */
static bool trap_catch(enum trap_point point, int fd)
{
	struct trap_slot *s = &slots[point];
	bool caught = false;

	/* acquire: pairs with trap_arm's release. */
	if (!atomic_load_explicit(&s->armed, memory_order_acquire))
		return false;
	pthread_mutex_lock(&trap_lock);
	bool self = pthread_equal(s->armer, pthread_self()) != 0;

	if (atomic_load_explicit(&s->armed, memory_order_relaxed) &&
	    (s->who == TRAP_THIS_THREAD) == self) {
		atomic_store_explicit(&s->armed, false, memory_order_relaxed);
		s->thread = pthread_self();
		s->fd = fd;
		s->parked = true;
		pthread_cond_broadcast(&trap_cond);
		trap_wait_flag(&s->released, point, "released it");
		if (s->rearm) { /* armed again before this call goes on */
			s->rearm = s->parked = s->released = false;
			atomic_store_explicit(&s->armed, true, memory_order_release);
		}
		caught = true;
	}
	pthread_mutex_unlock(&trap_lock);
	return caught;
}

static void trap_done(enum trap_point point, ssize_t result)
{
	pthread_mutex_lock(&trap_lock);
	slots[point].result = result;
	slots[point].done = true;
	pthread_cond_broadcast(&trap_cond);
	pthread_mutex_unlock(&trap_lock);
}

static bool is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") == 0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	bool caught = n == sizeof(uint64_t) &&
		      atomic_load_explicit(&slots[TRAP_EVENTFD_WRITE].armed, memory_order_acquire) &&
		      is_eventfd(fd) && trap_catch(TRAP_EVENTFD_WRITE, fd);
	ssize_t r = syscall(SYS_write, fd, buf, n);

	if (caught)
		trap_done(TRAP_EVENTFD_WRITE, r);
	return r;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	bool caught = trap_catch(TRAP_NANOSLEEP, -1);
	int r = (int)syscall(SYS_nanosleep, req, rem);

	if (caught) {
		clock_warp_ns = TRAP_CLOCK_WARP_NS;
		trap_done(TRAP_NANOSLEEP, r);
	}
	return r;
}

int clock_gettime(clockid_t clock, struct timespec *ts)
{
	int r = (int)syscall(SYS_clock_gettime, clock, ts);

	if (r == 0 && clock == CLOCK_MONOTONIC && clock_warp_ns != 0)
		ts->tv_sec += (time_t)(clock_warp_ns / 1000000000ull);
	return r;
}

int sched_yield(void)
{
	bool caught = trap_catch(TRAP_YIELD, -1);
	int r = (int)syscall(SYS_sched_yield);

	if (caught)
		trap_done(TRAP_YIELD, r);
	return r;
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* The sanitizers' pthread_create (absent from plain builds). */
extern int __interceptor_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
					void *(*fn)(void *), void *arg) __attribute__((weak));

struct trap_start {
	void *(*fn)(void *);
	void *arg;
};

static void *trap_thread_start(void *p)
{
	struct trap_start start = *(struct trap_start *)p;

	free(p);
	if (trap_catch(TRAP_THREAD_START, -1))
		trap_done(TRAP_THREAD_START, 0);
	return start.fn(start.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static _Atomic(pthread_create_fn) real;
	pthread_create_fn create = atomic_load_explicit(&real, memory_order_relaxed);

	if (create == NULL) {
		create = __interceptor_pthread_create != NULL
				 ? __interceptor_pthread_create
				 : (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
		atomic_store_explicit(&real, create, memory_order_relaxed);
	}
	/* acquire: pairs with trap_arm's release. */
	if (!atomic_load_explicit(&slots[TRAP_THREAD_START].armed, memory_order_acquire))
		return create(thread, attr, fn, arg);
	struct trap_start *start = malloc(sizeof(*start));

	if (start == NULL)
		return EAGAIN;
	*start = (struct trap_start){ .fn = fn, .arg = arg };
	int err = create(thread, attr, trap_thread_start, start);

	if (err != 0)
		free(start);
	return err;
}
