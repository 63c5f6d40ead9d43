/*
 * actors/lib_thread.h — how the library starts a thread of its own (the
 * PE workers, sw0's engine threads, the deferred-free thread).
 *
 * Such a thread lives inside an application that did not ask for it, so
 * it carries nothing of the application thread that happened to make the
 * call: it gets its CPUs from the caller of lib_thread_start (never the
 * creator's pinning, see cpu_every.h) and every asynchronous signal
 * blocked (lib_thread_sigmask), whatever the creator's mask: a signal sent
 * to the process goes to one of the application's threads, never ours.
 * And it names itself first thing (lib_thread_name_self: "doca-...", at
 * most 15 characters), the name top -H, ps -L, gdb and
 * /proc/PID/task/TID/comm show. Itself, not by its creator: naming
 * another thread means opening /proc/self/task/TID/comm, an fd glibc
 * opens without O_CLOEXEC (an application's concurrent fork and exec
 * would inherit it) and a lookup that took milliseconds with other
 * threads spinning; a thread names itself with one prctl.
 *
 * Thread safety: any thread.
 */
#ifndef DOCA_LIB_THREAD_H
#define DOCA_LIB_THREAD_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>

/* The mask of the library's threads: every signal but the synchronous
 * ones (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT). */
void lib_thread_sigmask(sigset_t *set);

/* Start @p fn(@p arg) on a new thread allowed on @p cpus, with
 * lib_thread_sigmask's mask; the caller's own mask is unchanged when this
 * returns. Returns 0 or pthread_create's errno value (EINVAL when the
 * kernel refuses every CPU of @p cpus: offline, or outside the process's
 * cpuset). */
int lib_thread_start(pthread_t *thread, const cpu_set_t *cpus, void *(*fn)(void *), void *arg);

/* Name the calling thread @p name (at most 15 characters); a thread that
 * lib_thread_start started calls it before anything else. */
void lib_thread_name_self(const char *name);

#endif /* DOCA_LIB_THREAD_H */
