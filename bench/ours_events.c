/*
 * ours_events.c — doca in event mode: the loop doca_pe.h shows (progress and
 * reap, arm with doca_pe_request_notification, sleep in epoll_wait on the
 * PE's fd, clear), counting the wake-ups and those whose progress and
 * get_event found no event. Tasks come from the application thread itself
 * or from a producer thread (the embedding of issue 14: producers submit,
 * an event loop reaps); the producer is not pinned and sleeps on a
 * semaphore while depth tasks are in flight, so it never spins against the
 * engine thread.
 */
#include "ours_rig.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define EVENTS_BURST_MAX 64u
#define EVENTS_WAIT_MS 10000 /* a longer sleep is a lost wake-up: fail */

struct ours_events {
	struct ours_rig rig;
	bool producer;       /* tasks from a producer thread, else from the loop's thread */
	int epfd;
	size_t slot;         /* next slot to submit (one submitting thread at a time) */
	uint64_t tag;
	unsigned batch;
	sem_t bursts;        /* bursts the producer may submit */
	atomic_bool stop;    /* producer: submit no more */
	atomic_uint_fast64_t submitted;
};

static void events_submit_burst(struct ours_events *o, unsigned n)
{
	struct doca_task_desc descs[EVENTS_BURST_MAX];
	uint32_t accepted;

	ours_rig_descs(&o->rig, descs, n, &o->slot, &o->tag);
	ours_check(doca_task_submit_batch(o->rig.ctx, descs, n, &accepted), "doca_task_submit_batch");
	atomic_fetch_add_explicit(&o->submitted, n, memory_order_relaxed);
}

static void *events_producer(void *arg)
{
	struct ours_events *o = arg;

	for (;;) {
		while (sem_wait(&o->bursts) != 0 && errno == EINTR)
			;
		if (atomic_load_explicit(&o->stop, memory_order_relaxed))
			return NULL;
		events_submit_burst(o, o->batch);
	}
}

static const char *events_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct ours_events *o = c->priv;
	struct ours_rig_conf conf = {
		.dev_open = BENCH_OFFLOAD_DEV,
		.slots = bench_slots(bc->size, bc->depth),
		.max_tasks = bc->depth > DOCA_CTX_DEFAULT_MAX_TASKS ? bc->depth : 0,
	};
	struct epoll_event in = { .events = EPOLLIN };
	const char *why;
	int fd;

	if (bc->batch > EVENTS_BURST_MAX)
		return "batch above 64";
	o->slot = 0;
	why = ours_rig_open(&o->rig, bc->size, &conf);
	if (why)
		return why;
	ours_check(doca_pe_get_notification_handle(o->rig.pe, &fd), "doca_pe_get_notification_handle");
	o->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (o->epfd < 0 || epoll_ctl(o->epfd, EPOLL_CTL_ADD, fd, &in) != 0)
		bench_fail("epoll: %s", strerror(errno));
	return NULL;
}

static void events_teardown(struct bench_contender *c)
{
	struct ours_events *o = c->priv;

	close(o->epfd);
	ours_rig_close(&o->rig);
}

/* Arm, sleep, clear, progress and reap: one wake-up. @return events reaped. */
static uint64_t events_wait(struct ours_events *o, struct bench_measure *m)
{
	struct epoll_event out;
	uint64_t n;
	int r;

	ours_check(doca_pe_request_notification(o->rig.pe), "doca_pe_request_notification");
	do
		r = epoll_wait(o->epfd, &out, 1, EVENTS_WAIT_MS);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		bench_fail("doca event mode: no wake-up within %d ms (a lost wake-up)", EVENTS_WAIT_MS);
	ours_check(doca_pe_clear_notification(o->rig.pe), "doca_pe_clear_notification");
	n = ours_progress_and_reap(o->rig.pe);
	m->wakeups++;
	m->empty_wakeups += n == 0;
	return n;
}

/* Keep depth tasks in flight in bursts of batch until the deadline, then
 * let them complete; the loop's own thread or the producer submits. */
static void events_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		       struct bench_measure *m)
{
	struct ours_events *o = c->priv;
	unsigned bursts = bc->depth / bc->batch;
	uint64_t t0 = bench_now_ns(), deadline = t0 + (uint64_t)(seconds * 1e9), done = 0, owed = 0;
	pthread_t th;

	o->batch = bc->batch;
	atomic_store(&o->stop, false);
	atomic_store(&o->submitted, 0);
	m->wakeups = m->empty_wakeups = 0;
	if (o->producer) {
		if (sem_init(&o->bursts, 0, bursts) != 0 ||
		    pthread_create(&th, NULL, events_producer, o) != 0)
			bench_fail("cannot start the producer thread");
	}
	for (bool stopping = false;;) {
		if (!stopping && bench_now_ns() >= deadline) {
			stopping = true;
			if (o->producer) {
				atomic_store(&o->stop, true);
				sem_post(&o->bursts);
				pthread_join(th, NULL);
				sem_destroy(&o->bursts);
			}
		}
		if (!o->producer && !stopping)
			while (atomic_load(&o->submitted) - done + bc->batch <= bc->depth)
				events_submit_burst(o, bc->batch);
		if (stopping && done == atomic_load(&o->submitted))
			break;
		uint64_t n = events_wait(o, m);

		done += n;
		/* the producer's credit back: one burst per batch completed */
		for (owed += n; o->producer && !stopping && owed >= bc->batch; owed -= bc->batch)
			sem_post(&o->bursts);
	}
	m->ns = bench_now_ns() - t0;
	m->tasks = done;
	m->bytes = done * bc->size;
}

static const struct bench_contender_ops events_ops = { events_setup, events_run, events_teardown };

void ours_events_contender(struct bench_contender *c, bool producer)
{
	struct ours_events *o = calloc(1, sizeof(*o));

	if (!o)
		bench_fail("out of memory");
	o->producer = producer;
	*c = (struct bench_contender){ .name = producer ? "event-producer" : "event-own",
				       .ops = &events_ops,
				       .priv = o };
}
