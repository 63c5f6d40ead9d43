/*
 * tests/api/event_wakeups.c — what event mode costs in wake-ups: the loop
 * doca_pe.h shows (progress and reap, arm, sleep in epoll, clear) wakes at
 * most once per completion burst, and under load a wake-up almost never
 * finds no event. Before this was so, a PE fed from another thread woke
 * twice per task (once only to move the task out of the mailbox) and under
 * load half its wake-ups found nothing.
 *
 * The one-at-a-time tests count exactly: the loop arms before the task is
 * submitted, so the only thing that can make the fd readable is that
 * task's completion (or, inline, its submission), and every wake-up must
 * find exactly that one event.
 */
#include "common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define ONE_AT_A_TIME_TASKS 200
#define LOADED_PRODUCERS 2
#define LOADED_TASKS_EACH 10000
#define LOADED_MAX_TASKS 256

struct loop {
	struct api_fixture f;
	int epfd;
	unsigned long wakes; /* epoll_wait returns */
	unsigned long empty; /* wake-ups whose progress + get_event found no event */
	unsigned long events;
};

static void loop_open(struct loop *l, const char *dev_name, uint32_t max_tasks)
{
	struct epoll_event in = { .events = EPOLLIN };
	int fd = -1;

	memset(l, 0, sizeof(*l));
	fixture_init_started(&l->f, dev_name, 256, max_tasks);
	assert_ok(doca_pe_get_notification_handle(l->f.pe, &fd));
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	cr_assert_geq(l->epfd, 0, "epoll_create1: %s", strerror(errno));
	in.data.fd = fd;
	cr_assert_eq(epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &in), 0, "epoll_ctl: %s", strerror(errno));
}

static void loop_close(struct loop *l)
{
	close(l->epfd);
	fixture_fini(&l->f);
}

/* Progress once and reap every ready event (each a SUCCESS); how many. */
static unsigned reap(struct loop *l)
{
	struct doca_event *ev;
	unsigned n = 0;

	doca_pe_progress(l->f.pe);
	while ((ev = doca_pe_get_event(l->f.pe)) != NULL) {
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "event status %d",
			     doca_event_get_status(ev));
		doca_event_free(ev);
		n++;
	}
	l->events += n;
	return n;
}

/* The fd is armed: sleep until it is readable (failing after API_WAIT_MS),
 * clear, progress and reap; count the wake-up. Returns the events reaped. */
static unsigned sleep_and_reap(struct loop *l)
{
	struct epoll_event out;
	int n;

	do {
		n = epoll_wait(l->epfd, &out, 1, API_WAIT_MS);
	} while (n < 0 && errno == EINTR);
	cr_assert_eq(n, 1, "epoll_wait returned %d after %lu events: lost wake-up", n, l->events);
	assert_ok(doca_pe_clear_notification(l->f.pe));
	l->wakes++;
	unsigned got = reap(l);

	l->empty += got == 0;
	return got;
}

/* ---- one task at a time: exactly one wake-up per task ---- */

struct paced {
	struct loop *l;
	sem_t go;                  /* posted by the loop once the fd is armed */
	doca_error_t rc[ONE_AT_A_TIME_TASKS];
};

static void *paced_submitter(void *arg)
{
	struct paced *p = arg;

	for (int k = 0; k < ONE_AT_A_TIME_TASKS; k++) {
		while (sem_wait(&p->go) != 0 && errno == EINTR)
			;
		p->rc[k] = submit_copy(p->l->f.ctx, p->l->f.src, p->l->f.dst, (uint64_t)k, 0);
	}
	return NULL;
}

/* Arm, let another thread submit one copy, sleep: the one wake-up finds
 * the one event. */
static void one_at_a_time_from_another_thread(const char *dev_name)
{
	struct loop l;
	struct paced p;
	pthread_t th;

	loop_open(&l, dev_name, 0);
	p.l = &l;
	cr_assert_eq(sem_init(&p.go, 0, 0), 0, "sem_init");
	cr_assert_eq(pthread_create(&th, NULL, paced_submitter, &p), 0, "pthread_create");
	for (int k = 0; k < ONE_AT_A_TIME_TASKS; k++) {
		assert_ok(doca_pe_request_notification(l.f.pe));
		cr_assert_eq(sem_post(&p.go), 0, "sem_post");
		unsigned got = sleep_and_reap(&l);

		cr_assert_eq(got, 1, "wake-up %lu (task %d) found %u events instead of 1", l.wakes, k, got);
	}
	cr_assert_eq(pthread_join(th, NULL), 0, "pthread_join");
	for (int k = 0; k < ONE_AT_A_TIME_TASKS; k++)
		assert_ok(p.rc[k]);
	cr_assert_eq(l.wakes, ONE_AT_A_TIME_TASKS, "%lu wake-ups for %d tasks", l.wakes,
		     ONE_AT_A_TIME_TASKS);
	sem_destroy(&p.go);
	loop_close(&l);
}

Test(event_wakeups, engine_one_task_at_a_time_from_another_thread_wakes_once_per_task)
{
	one_at_a_time_from_another_thread("sw0:engines=1");
}

/* Inline, the submitting thread's post is what the PE must wake for. */
Test(event_wakeups, inline_one_task_at_a_time_from_another_thread_wakes_once_per_task)
{
	one_at_a_time_from_another_thread("sw0");
}

/* The PE's own thread arms, then submits: the completion is the only
 * wake-up, not the submission too. */
Test(event_wakeups, engine_one_task_at_a_time_from_the_pe_thread_wakes_once_per_task)
{
	struct loop l;

	loop_open(&l, "sw0:engines=1", 0);
	cr_assert_eq(reap(&l), 0, "an event before any task"); /* this thread runs the PE */
	for (int k = 0; k < ONE_AT_A_TIME_TASKS; k++) {
		assert_ok(doca_pe_request_notification(l.f.pe));
		assert_ok(submit_copy(l.f.ctx, l.f.src, l.f.dst, (uint64_t)k, 0));
		unsigned got = sleep_and_reap(&l);

		cr_assert_eq(got, 1, "wake-up %lu (task %d) found %u events instead of 1", l.wakes, k, got);
	}
	cr_assert_eq(l.wakes, ONE_AT_A_TIME_TASKS, "%lu wake-ups for %d tasks", l.wakes,
		     ONE_AT_A_TIME_TASKS);
	loop_close(&l);
}

/* A device whose ring is full (sw0's ring_max): the tasks it refused
 * wait in the engine until a completion makes room, and that completion
 * is what wakes the PE. Before this was so, every arm found the waiting
 * tasks "pending" and fired at once: the sleeping loop spun, about a
 * thousand wake-ups per completion, nearly all empty (found by a review).
 * Each burst of two completions may cost a wake-up and, at worst, one
 * empty one (a completion reaped by the progress after its wake-up was
 * sent): bounded by two per burst, far from a spin. */
Test(event_wakeups, a_full_ring_sleeps_until_a_completion_makes_room)
{
	enum { TASKS = 32, RING = 2 };
	struct loop l;

	cr_log_info("expect the device's \"queue is full\" warnings");
	loop_open(&l, "sw0:engines=1,delay_us=1000,ring_max=2", TASKS);
	for (int k = 0; k < TASKS; k++)
		assert_ok(submit_copy(l.f.ctx, l.f.src, l.f.dst, (uint64_t)k, 0));
	(void)reap(&l);
	while (l.events < TASKS) {
		assert_ok(doca_pe_request_notification(l.f.pe));
		(void)sleep_and_reap(&l);
	}
	cr_assert_eq(l.events, TASKS, "%lu events for %d tasks", l.events, TASKS);
	cr_assert_leq(l.wakes, 2 * TASKS / RING, "%lu wake-ups (%lu empty) for %d bursts of %d", l.wakes,
		      l.empty, TASKS / RING, RING);
	cr_assert_leq(l.empty, TASKS / RING, "%lu of %lu wake-ups empty", l.empty, l.wakes);
	loop_close(&l);
}

/* ---- inline with delay_us: the armed PE sleeps through the delay ---- */

#define DELAYED_TASKS 5
#define DELAY_MS 20
#define DELAYED_DEV "sw0:delay_us=20000" /* DELAY_MS */

/* Inline, a task waits in the device for delay_us after its submission,
 * and only a progress call runs it. The PE's own thread submits, then
 * arms: the one wake-up comes when the task is due (not before) and finds
 * its event. Before, the waiting task was "pending" at every arm and the
 * fd readable at once: the sleeping loop spun through the delay, about
 * 4 000 empty wake-ups for each 20 ms task (found by a review). */
Test(event_wakeups, inline_delay_sleeps_until_the_task_is_due)
{
	struct loop l;

	loop_open(&l, DELAYED_DEV, 0);
	cr_assert_eq(reap(&l), 0, "an event before any task"); /* this thread runs the PE */
	for (int k = 0; k < DELAYED_TASKS; k++) {
		uint64_t submitted = now_ns();

		assert_ok(submit_copy(l.f.ctx, l.f.src, l.f.dst, (uint64_t)k, 0));
		assert_ok(doca_pe_request_notification(l.f.pe));
		unsigned got = sleep_and_reap(&l);
		uint64_t waited = now_ns() - submitted;

		cr_assert_eq(got, 1, "wake-up %lu (task %d) found %u events instead of 1", l.wakes, k, got);
		cr_assert_geq(waited, DELAY_MS * 1000000ull, "task %d's event after %llu ns", k,
			      (unsigned long long)waited);
	}
	cr_assert_eq(l.wakes, DELAYED_TASKS, "%lu wake-ups (%lu empty) for %d tasks", l.wakes, l.empty,
		     DELAYED_TASKS);
	loop_close(&l);
}

/* Two tasks due 10 ms apart: the timer is set for the first, then, at the
 * arming after it ran, for the second. Every wake-up finds an event, none
 * before its task is due: one wake-up each, unless the thread came to a
 * progress only after the second was due too (a preemption of 10 ms,
 * common on a loaded machine: it then found both, 1 run in 100). The
 * times are read before each submission and after each progress, so a
 * preemption can only loosen the bounds. */
Test(event_wakeups, inline_delay_wakes_once_for_each_due_time)
{
	struct loop l;
	struct timespec gap = { .tv_nsec = 10000000 };
	uint64_t submitted[2];

	loop_open(&l, DELAYED_DEV, 0);
	cr_assert_eq(reap(&l), 0, "an event before any task");
	submitted[0] = now_ns();
	assert_ok(submit_copy(l.f.ctx, l.f.src, l.f.dst, 0, 0));
	if (reap(&l) != 0) /* only a progress preempted past the delay may find it */
		cr_assert_geq(now_ns(), submitted[0] + DELAY_MS * 1000000ull, "the first task ran before its delay");
	nanosleep(&gap, NULL);
	submitted[1] = now_ns();
	assert_ok(submit_copy(l.f.ctx, l.f.src, l.f.dst, 1, 0));
	while (l.events < 2) {
		assert_ok(doca_pe_request_notification(l.f.pe));
		unsigned got = sleep_and_reap(&l);
		uint64_t after = now_ns();

		cr_assert_geq(got, 1, "wake-up %lu found no event", l.wakes);
		cr_assert_geq(after, submitted[l.events - 1] + DELAY_MS * 1000000ull,
			      "task %lu's event %llu ns after its submission, delay is %d ms", l.events - 1,
			      (unsigned long long)(after - submitted[l.events - 1]), DELAY_MS);
	}
	cr_assert_eq(l.events, 2, "%lu events for 2 tasks", l.events);
	cr_assert_eq(l.empty, 0, "%lu of %lu wake-ups empty", l.empty, l.wakes);
	loop_close(&l);
}

/* ---- under load: fewer than 5 % of wake-ups find no event ---- */

struct loaded {
	struct loop *l;
	unsigned id;
	doca_error_t rc; /* the first refusal other than DOCA_ERROR_AGAIN */
};

static void *loaded_submitter(void *arg)
{
	struct loaded *s = arg;

	s->rc = DOCA_SUCCESS;
	for (int k = 0; k < LOADED_TASKS_EACH && s->rc == DOCA_SUCCESS;) {
		doca_error_t rc = submit_copy(s->l->f.ctx, s->l->f.src, s->l->f.dst,
					      (uint64_t)s->id * LOADED_TASKS_EACH + (uint64_t)k, 0);

		if (rc == DOCA_ERROR_AGAIN)
			sched_yield(); /* every credit is out: the loop frees them */
		else if (rc == DOCA_SUCCESS)
			k++;
		else
			s->rc = rc;
	}
	return NULL;
}

/* Producers keep the context's credits out; the application runs the loop
 * of doca_pe.h until every event is in. */
Test(event_wakeups, engine_loaded_by_other_threads_rarely_wakes_for_nothing)
{
	struct loop l;
	struct loaded s[LOADED_PRODUCERS];
	pthread_t th[LOADED_PRODUCERS];
	const unsigned long total = (unsigned long)LOADED_PRODUCERS * LOADED_TASKS_EACH;
	uint64_t deadline;

	loop_open(&l, "sw0:engines=1", LOADED_MAX_TASKS);
	for (unsigned i = 0; i < LOADED_PRODUCERS; i++) {
		s[i] = (struct loaded){ .l = &l, .id = i };
		cr_assert_eq(pthread_create(&th[i], NULL, loaded_submitter, &s[i]), 0, "pthread_create");
	}
	deadline = now_ns() + 60ull * 1000000000ull;
	reap(&l);
	while (l.events < total) {
		assert_ok(doca_pe_request_notification(l.f.pe));
		sleep_and_reap(&l);
		cr_assert_lt(now_ns(), deadline, "%lu of %lu events after 60 s", l.events, total);
	}
	for (unsigned i = 0; i < LOADED_PRODUCERS; i++) {
		cr_assert_eq(pthread_join(th[i], NULL), 0, "pthread_join");
		assert_ok(s[i].rc);
	}
	cr_assert_eq(l.events, total, "%lu events for %lu tasks", l.events, total);
	cr_assert_lt(l.empty * 100, l.wakes * 5, "%lu of %lu wake-ups (%.1f %%) found no event", l.empty,
		     l.wakes, 100.0 * (double)l.empty / (double)l.wakes);
	cr_log_info("%lu tasks: %lu wake-ups, %lu found no event", total, l.wakes, l.empty);
	loop_close(&l);
}

/* ---- a stop waiting for the device: the armed PE sleeps ---- */

#define STOP_BURST 6

/* A burst of 6 from the PE's thread on an engine whose ring holds 2 and
 * whose copies take 200 ms each: 2 on the device, 4 waiting for room (the
 * backlog); then a stop. The backlog is flushed only once the device has
 * given its descriptors back (to keep the order), so until then there is
 * nothing for a turn to do: an armed PE must sleep until the device's
 * completions wake it. (It woke at once, about 150 000 times in 0.25 s,
 * when the arming counted the waiting backlog as work; found by a review.)
 * Every task gets one event, in submission order. */
Test(event_wakeups, a_stop_waiting_for_the_device_lets_the_armed_pe_sleep)
{
	struct doca_task_desc descs[STOP_BURST];
	struct loop l;
	uint32_t accepted = 0;
	uint64_t next = 0;
	enum doca_ctx_state st = DOCA_CTX_STATE_STOPPING;

	loop_open(&l, "sw0:engines=1,ring_max=2,delay_us=200000", 16);
	(void)doca_pe_progress(l.f.pe); /* this thread runs the PE */
	for (int i = 0; i < STOP_BURST; i++)
		descs[i] = (struct doca_task_desc){
			.type = DOCA_TASK_COPY, .src = l.f.src, .dst = l.f.dst, .user_data = { .u64 = (uint64_t)i }
		};
	assert_ok(doca_task_submit_batch(l.f.ctx, descs, STOP_BURST, &accepted));
	cr_assert_eq(accepted, STOP_BURST);
	assert_doca(doca_ctx_stop(l.f.ctx), DOCA_ERROR_IN_PROGRESS);
	while (st != DOCA_CTX_STATE_IDLE) {
		struct doca_event *ev;
		unsigned got = 0;

		assert_ok(doca_pe_request_notification(l.f.pe));
		struct epoll_event out;
		int n;

		do {
			n = epoll_wait(l.epfd, &out, 1, API_WAIT_MS);
		} while (n < 0 && errno == EINTR);
		cr_assert_eq(n, 1, "epoll_wait returned %d after %llu events: lost wake-up", n,
			     (unsigned long long)next);
		assert_ok(doca_pe_clear_notification(l.f.pe));
		l.wakes++;
		(void)doca_pe_progress(l.f.pe);
		while ((ev = doca_pe_get_event(l.f.pe)) != NULL) {
			cr_assert_eq(doca_event_get_user_data(ev).u64, next, "event of task %llu, expected %llu",
				     (unsigned long long)doca_event_get_user_data(ev).u64, (unsigned long long)next);
			cr_assert(doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS ||
					  doca_event_get_error(ev) == DOCA_ERROR_SHUTDOWN,
				  "task %llu: status %d, error %d", (unsigned long long)next,
				  doca_event_get_status(ev), doca_event_get_error(ev));
			doca_event_free(ev);
			next++;
			got++;
		}
		l.empty += got == 0;
		cr_assert_lt(l.wakes, 100, "%lu wake-ups, %lu of them for nothing: the PE spins", l.wakes, l.empty);
		assert_ok(doca_ctx_get_state(l.f.ctx, &st));
	}
	cr_assert_eq(next, STOP_BURST, "%llu events", (unsigned long long)next);
	loop_close(&l);
}
