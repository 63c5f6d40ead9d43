/*
 * actors/worker.c — the pinned worker thread and its stop handshake.
 */
#include "worker.h"
#include "explore.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>


static bool worker_should_run(struct worker *w)
{
	EXPLORE_POINT(ATOMIC);
	/* acquire: pairs with worker_stop's release of STOP. */
	return atomic_load_explicit(&w->state, memory_order_acquire) == WORKER_RUNNING;
}

static void worker_sleep(struct worker *w)
{
	struct pollfd fds[2] = {
		{ .fd = w->wait_fd, .events = POLLIN },
		{ .fd = w->stop_fd, .events = POLLIN },
	};

	if (!w->ops->prepare_sleep(w->arg))
		return;
	if (worker_should_run(w))
		(void)poll(fds, 2, -1);
	w->ops->after_wake(w->arg);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint32_t idle = 0;

	while (worker_should_run(w)) {
		if (w->ops->turn(w->arg) != 0) {
			idle = 0;
			continue;
		}
		if (++idle < w->spin) {
			sched_yield();
			continue;
		}
		idle = 0;
		worker_sleep(w);
	}
	EXPLORE_POINT(ATOMIC);
	/* release: everything the worker did happens before worker_stop returns. */
	atomic_store_explicit(&w->state, WORKER_STOPPED, memory_order_release);
	return NULL;
}

int worker_start(struct worker *w, const struct worker_ops *ops, void *arg, int wait_fd, int cpu,
		 uint32_t spin)
{
	pthread_attr_t attr;
	int err;

	w->ops = ops;
	w->arg = arg;
	w->wait_fd = wait_fd;
	w->cpu = cpu;
	w->spin = spin;
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->stop_fd < 0)
		return errno;
	err = pthread_attr_init(&attr);
	if (err == 0 && cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	atomic_store_explicit(&w->state, WORKER_RUNNING, memory_order_relaxed);
	if (err == 0)
		err = pthread_create(&w->thread, &attr, worker_main, w);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		atomic_store_explicit(&w->state, WORKER_IDLE, memory_order_relaxed);
		close(w->stop_fd);
		w->stop_fd = -1;
	}
	return err;
}

void worker_stop(struct worker *w)
{
	uint64_t one = 1;

	EXPLORE_POINT(ATOMIC);
	/* release: the worker's acquire load sees STOP and what preceded it. */
	atomic_store_explicit(&w->state, WORKER_STOP, memory_order_release);
	while (write(w->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(w->thread, NULL);
	close(w->stop_fd);
	w->stop_fd = -1;
	EXPLORE_POINT(ATOMIC);
	atomic_store_explicit(&w->state, WORKER_IDLE, memory_order_relaxed);
}

bool worker_is_self(const struct worker *w)
{
	EXPLORE_POINT(ATOMIC);
	int state = atomic_load_explicit(&w->state, memory_order_relaxed);

	return state != WORKER_IDLE && pthread_equal(w->thread, pthread_self());
}
