/*
 * actors/lib_thread.c — starting one of the library's own threads
 * (lib_thread.h).
 *
 * The signal mask: a new thread inherits its creator's, so the thread is
 * created while the creator blocks every asynchronous signal, and the
 * creator's own mask is put back at once. Blocked for good on our
 * threads, a signal sent to the process always reaches a thread of the
 * application. Left open: the synchronous signals, which the kernel
 * raises on the very thread that faulted (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGTRAP, SIGSYS) or that abort() raises on itself (SIGABRT):
 * blocked, a fault would kill the process without running any handler
 * (the sanitizers' reports, a crash handler). SIGKILL and SIGSTOP cannot
 * be blocked, and glibc drops the two signals it keeps for itself
 * (SIGCANCEL, SIGSETXID) from any mask given to pthread_sigmask. Other
 * fault-like signals are blocked: with SIGPIPE blocked, a write to a
 * closed pipe or socket on one of our threads (an application callback on
 * a worker) fails with EPIPE instead of ending the process.
 *
 * Why around pthread_create and not pthread_attr_setsigmask_np: that
 * attribute is glibc's alone (2.32 and later; musl has none), and the
 * window does no harm: a signal only the creator would take waits,
 * pending, until its mask is back a few instructions later.
 */
#include "lib_thread.h"

#include <signal.h>

void lib_thread_sigmask(sigset_t *set)
{
	static const int synchronous[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT };

	sigfillset(set);
	for (size_t i = 0; i < sizeof(synchronous) / sizeof(synchronous[0]); i++)
		sigdelset(set, synchronous[i]);
}

int lib_thread_start(pthread_t *thread, const cpu_set_t *cpus, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	sigset_t blocked, caller;
	int err = pthread_attr_init(&attr);

	if (err != 0)
		return err;
	err = pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus);
	lib_thread_sigmask(&blocked);
	if (err == 0)
		err = pthread_sigmask(SIG_SETMASK, &blocked, &caller);
	if (err == 0) {
		err = pthread_create(thread, &attr, fn, arg);
		/* cannot fail: the mask pthread_sigmask gave back is valid */
		(void)pthread_sigmask(SIG_SETMASK, &caller, NULL);
	}
	pthread_attr_destroy(&attr);
	return err;
}

void lib_thread_name_self(const char *name)
{
	/* the name is for people, nothing reads it back: a refusal (a name
	 * too long) leaves the thread unnamed and changes nothing else */
	(void)pthread_setname_np(pthread_self(), name);
}
