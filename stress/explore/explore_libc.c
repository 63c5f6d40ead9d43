/*
 * stress/explore/explore_libc.c — the libc calls that synchronise or block,
 * wrapped at link time (-Wl,--wrap=NAME: the library's and the scenarios'
 * references to NAME reach __wrap_NAME; __real_NAME is libc's). In a
 * controlled thread each call is a hook point, and a call that would block
 * in the kernel becomes a wait the scheduler knows about: the thread is
 * marked blocked on the mutex, thread, fds or futex word, gives the token
 * away, and is runnable again once that can have changed (it then looks
 * again, as a woken thread does). Outside a schedule, and in threads the
 * explorer does not control, every wrapper is the libc call itself.
 *
 * read and write are hook points, never waits: every fd the library and
 * the scenarios read is nonblocking (a blocking read that waited would be
 * outside the model, and the schedule's watchdog would report it). Time is
 * not modelled: a sleep or sched_yield is a yield (another thread
 * runs first), and a timed wait ends only when nothing else can run. A
 * poll or epoll_wait that may sleep is a yield too, even when it returns
 * at once: an event loop that finds its fd readable again and again (work
 * announced but not yet visible) would otherwise starve the thread it
 * waits for, which the kernel would have run.
 */
#include "explore.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CALLER() __builtin_return_address(0)

int __real_pthread_join(pthread_t thread, void **ret);
int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __real_pthread_mutex_trylock(pthread_mutex_t *m);
int __real_pthread_mutex_unlock(pthread_mutex_t *m);
int __real_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int __real_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int __real_pthread_rwlock_unlock(pthread_rwlock_t *l);
int __real_epoll_wait(int epfd, struct epoll_event *events, int max, int timeout);
int __real_epoll_ctl(int epfd, int op, int fd, struct epoll_event *event);
ssize_t __real_write(int fd, const void *buf, size_t n);
long __real_syscall(long number, ...);
int __real_sched_yield(void);
int __real_nanosleep(const struct timespec *req, struct timespec *rem);
pid_t __real_fork(void);

int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg);
int __wrap_pthread_join(pthread_t thread, void **ret);
int __wrap_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_mutex_trylock(pthread_mutex_t *m);
int __wrap_pthread_mutex_unlock(pthread_mutex_t *m);
int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *l);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_epoll_wait(int epfd, struct epoll_event *events, int max, int timeout);
int __wrap_epoll_ctl(int epfd, int op, int fd, struct epoll_event *event);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __wrap_close(int fd);
long __wrap_syscall(long number, ...);
int __wrap_sched_yield(void);
int __wrap_nanosleep(const struct timespec *req, struct timespec *rem);
pid_t __wrap_fork(void);

int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	if (explore_self() == NULL)
		return __real_pthread_create(thread, attr, fn, arg);
	explore_libc_point("pthread_create", CALLER(), false);
	return explore_thread_create(thread, attr, fn, arg, CALLER());
}

int __wrap_pthread_join(pthread_t thread, void **ret)
{
	if (explore_self() == NULL)
		return __real_pthread_join(thread, ret);
	explore_libc_point("pthread_join", CALLER(), false);
	struct explore_thread *t = explore_thread_of(thread);

	while (t != NULL && t->state != THREAD_FINISHED)
		explore_block(BLOCK_JOIN, t, false);
	/* it has handed the token on as its last act: this wait is brief */
	return __real_pthread_join(thread, ret);
}

int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
	if (explore_self() == NULL)
		return __real_pthread_mutex_lock(m);
	explore_libc_point("pthread_mutex_lock", CALLER(), false);
	for (;;) {
		int err = __real_pthread_mutex_trylock(m);

		if (err != EBUSY) {
			if (err == 0)
				explore_mutex_owned(m, true);
			return err;
		}
		explore_block(BLOCK_MUTEX, m, false);
	}
}

/* A rwlock (the library's fork lock, actors/rcu_reader.c): taken by trying,
 * blocked on the lock's address between tries, woken by its unlock. */
static int rwlock_take(pthread_rwlock_t *l, int (*try_take)(pthread_rwlock_t *), const char *what)
{
	explore_libc_point(what, CALLER(), false);
	for (;;) {
		int err = try_take(l);

		if (err != EBUSY)
			return err;
		explore_block(BLOCK_MUTEX, l, false);
	}
}

int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	if (explore_self() == NULL)
		return __real_pthread_rwlock_rdlock(l);
	return rwlock_take(l, pthread_rwlock_tryrdlock, "pthread_rwlock_rdlock");
}

int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	if (explore_self() == NULL)
		return __real_pthread_rwlock_wrlock(l);
	return rwlock_take(l, pthread_rwlock_trywrlock, "pthread_rwlock_wrlock");
}

int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	if (explore_self() == NULL)
		return __real_pthread_rwlock_unlock(l);
	explore_libc_point("pthread_rwlock_unlock", CALLER(), false);
	int err = __real_pthread_rwlock_unlock(l);

	if (err == 0)
		explore_wake(BLOCK_MUTEX, l, UINT32_MAX);
	return err;
}

int __wrap_pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (explore_self() == NULL)
		return __real_pthread_mutex_trylock(m);
	explore_libc_point("pthread_mutex_trylock", CALLER(), false);
	int err = __real_pthread_mutex_trylock(m);

	if (err == 0)
		explore_mutex_owned(m, true);
	return err;
}

int __wrap_pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (explore_self() == NULL)
		return __real_pthread_mutex_unlock(m);
	explore_libc_point("pthread_mutex_unlock", CALLER(), false);
	int err = __real_pthread_mutex_unlock(m);

	if (err == 0) {
		explore_mutex_owned(m, false);
		explore_wake(BLOCK_MUTEX, m, UINT32_MAX);
	}
	return err;
}

/* Wait until one of @p fds is ready: poll with timeout 0, block on them
 * while none is. Returns poll's result, 0 when a timed wait expired. */
static int wait_fds(struct pollfd *fds, nfds_t n, int timeout, int (*check)(void *), void *arg)
{
	for (;;) {
		int r = check(arg);

		if (r != 0 || timeout == 0)
			return r;
		explore_wait_fds(fds, (unsigned)n);
		if (explore_block(BLOCK_FDS, NULL, timeout > 0))
			return 0;
	}
}

struct poll_call {
	struct pollfd *fds;
	nfds_t n;
};

static int poll_check(void *arg)
{
	struct poll_call *c = arg;

	return __real_poll(c->fds, c->n, 0);
}

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (explore_self() == NULL)
		return __real_poll(fds, n, timeout);
	explore_libc_point("poll", CALLER(), timeout != 0);
	struct poll_call c = { fds, n };

	return wait_fds(fds, n, timeout, poll_check, &c);
}

struct epoll_call {
	int epfd;
	struct epoll_event *events;
	int max;
};

static int epoll_check(void *arg)
{
	struct epoll_call *c = arg;

	return __real_epoll_wait(c->epfd, c->events, c->max, 0);
}

int __wrap_epoll_wait(int epfd, struct epoll_event *events, int max, int timeout)
{
	if (explore_self() == NULL)
		return __real_epoll_wait(epfd, events, max, timeout);
	explore_libc_point("epoll_wait", CALLER(), timeout != 0);
	struct epoll_call c = { epfd, events, max };
	/* an epoll fd is readable while it has a ready event */
	struct pollfd pfd = { .fd = epfd, .events = POLLIN };

	return wait_fds(&pfd, 1, timeout, epoll_check, &c);
}

int __wrap_epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)
{
	if (explore_self() == NULL)
		return __real_epoll_ctl(epfd, op, fd, event);
	explore_libc_point("epoll_ctl", CALLER(), false);
	int r = __real_epoll_ctl(epfd, op, fd, event);

	explore_fds_changed();
	return r;
}

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	if (explore_self() == NULL)
		return __real_read(fd, buf, n);
	explore_libc_point("read", CALLER(), false);
	ssize_t r = __real_read(fd, buf, n);

	explore_fds_changed();
	return r;
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	if (explore_self() == NULL)
		return __real_write(fd, buf, n);
	explore_libc_point("write", CALLER(), false);
	ssize_t r = __real_write(fd, buf, n);

	if (r > 0)
		explore_guard_written(fd, CALLER());
	explore_fds_changed();
	return r;
}

int __wrap_close(int fd)
{
	if (explore_self() == NULL)
		return __real_close(fd);
	explore_libc_point("close", CALLER(), false);
	int r = __real_close(fd);

	explore_fds_changed();
	return r;
}

/* The futex syscall (the sw engine's sleep); any other syscall passes. */
long __wrap_syscall(long number, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number != SYS_futex || explore_self() == NULL)
		return __real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	_Atomic uint32_t *word = (_Atomic uint32_t *)a[0];
	int op = (int)a[1] & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
	uint32_t val = (uint32_t)a[2];

	if (op == FUTEX_WAIT) {
		explore_libc_point("futex_wait", CALLER(), false);
		if (atomic_load(word) != val) {
			errno = EAGAIN;
			return -1;
		}
		if (explore_block(BLOCK_FUTEX, word, a[3] != 0)) {
			errno = ETIMEDOUT;
			return -1;
		}
		return 0;
	}
	if (op == FUTEX_WAKE) {
		explore_libc_point("futex_wake", CALLER(), false);
		return explore_wake(BLOCK_FUTEX, word, val);
	}
	return __real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int __wrap_sched_yield(void)
{
	if (explore_self() == NULL)
		return __real_sched_yield();
	explore_libc_point("sched_yield", CALLER(), true);
	return 0;
}

int __wrap_nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (explore_self() == NULL)
		return __real_nanosleep(req, rem);
	explore_libc_point("nanosleep", CALLER(), true);
	return 0;
}

pid_t __wrap_fork(void)
{
	if (explore_self() == NULL)
		return __real_fork();
	explore_libc_point("fork", CALLER(), false);
	explore_forking(true);
	pid_t pid = __real_fork();

	if (pid != 0)
		explore_forking(false);
	else
		(void)explore_self(); /* the child takes over the schedule now */
	return pid;
}
