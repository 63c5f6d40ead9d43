/*
 * actors/lib_thread.c — starting one of the library's own threads
 * (lib_thread.h).
 */
#include "lib_thread.h"

int lib_thread_start(pthread_t *thread, const cpu_set_t *cpus, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int err = pthread_attr_init(&attr);

	if (err != 0)
		return err;
	err = pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus);
	if (err == 0)
		err = pthread_create(thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

void lib_thread_name_self(const char *name)
{
	/* the name is for people, nothing reads it back: a refusal (a name
	 * too long) leaves the thread unnamed and changes nothing else */
	(void)pthread_setname_np(pthread_self(), name);
}
