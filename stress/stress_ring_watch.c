/*
 * stress/stress_ring_watch.c — bursts with random gaps from foreign
 * submitters, so the PE watches their rings, stops watching them and
 * watches them again (engine/ring.c, the watch: a watched ring's producer
 * neither announces nor runs the wake check).
 *
 * Rounds of about 200 ms, each on a new context (sw0, inline: only the
 * PE's turns run its tasks) and PE that the main thread runs, either
 * polling (doca_pe_progress in a loop) or in event mode (the loop of
 * doca_pe.h: progress, arm, sometimes progress once more while armed,
 * sleep on the notification fd, clear), with one or two foreign
 * submitter threads. A submitter writes a burst of 1-8 copies (single
 * submits or one batch), waits until every one of them has its event,
 * then sleeps or spins a random gap (0-3 ms) before the next burst. So
 * its ring's watch begins (a turn drains it), ends (WATCH_IDLE empty
 * visits, an arming, the round's stop) and begins again, and its tasks
 * meet every one of those moments.
 *
 * What is checked, exactly:
 * - every task of a burst has its event within DEADLINE_MS of its submit
 *   (a task stranded in a ring nobody looks at, or whose wake-up was
 *   lost while the PE sleeps, is late; in event mode the PE's sleep is
 *   much longer than the deadline);
 * - one event per accepted task: each task's tag (thread, sequence) is in
 *   its slot's in-flight word until its event takes it back with a CAS;
 *   a second event finds it gone; at the end accepted == events per
 *   thread;
 * - each event SUCCESS with every byte of its task's pattern;
 * - every submit accepted (max_tasks is twice what may be in flight, so
 *   DOCA_ERROR_AGAIN is a violation), every teardown call DOCA_SUCCESS.
 *
 *   stress_ring_watch [--seconds S] [--seed N] [--sabotage lost|dup]
 *
 * --sabotage lost ignores one event (its burst is then late), dup handles
 * one twice: each must be reported.
 */
#include "stress_common.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define THREADS_MAX 2u
#define BURST_MAX 8u
#define SLOTS (THREADS_MAX * BURST_MAX) /* a thread's slots: its burst's */
#define MAX_TASKS (2u * SLOTS)
#define LEN 64u
#define ROUND_MS 200u
#define DEADLINE_MS 2000u /* generous: the sanitizer builds run it too */
#define SLEEP_MS 10000    /* the event loop's sleep: longer than the deadline */

struct submitter {
	pthread_t thread;
	unsigned id;
	struct rng rng;
	struct round *round;
	atomic_uint done;     /* events of its current burst */
	unsigned long accepted, events, bursts, batches;
};

struct round {
	struct stress_rig rig;
	bool event_mode;
	unsigned threads;
	uint64_t end;                 /* submitters: no burst after this time */
	int done_fd;                  /* an eventfd each submitter writes as it leaves */
	atomic_bool stop;             /* submitters: no burst after this (a late one) */
	atomic_uint submitters_done;
	_Atomic uint64_t inflight[SLOTS]; /* the tag of the slot's task, 0 when free */
	struct submitter subs[THREADS_MAX];
};

static struct stress_opts opts;
static atomic_bool sabotaged;
static atomic_ulong late_bursts;
static unsigned long armed_turns, sleeps, bursts, batches;

static uint64_t tag_of(unsigned thread, uint64_t seq)
{
	return (uint64_t)(thread + 1u) << 48 | seq;
}

/* Submit one burst of @p k tasks from slots id * BURST_MAX .. + k - 1. */
static void burst(struct submitter *s, unsigned k, uint64_t *seq)
{
	struct round *r = s->round;
	struct doca_task_desc d[BURST_MAX];

	for (unsigned i = 0; i < k; i++) {
		unsigned slot = s->id * BURST_MAX + i;
		uint64_t tag = tag_of(s->id, ++*seq);

		stress_pattern(tag, stress_rig_src(&r->rig, slot), LEN);
		memset(stress_rig_dst(&r->rig, slot), STRESS_POISON, LEN);
		atomic_store(&r->inflight[slot], tag);
		d[i] = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = r->rig.src[slot],
						.dst = r->rig.dst[slot], .user_data = { .u64 = tag } };
	}
	atomic_store(&s->done, 0);
	if (k > 1 && rng_pct(&s->rng, 50)) {
		uint32_t accepted = 0;

		STRESS_OK(doca_task_submit_batch(r->rig.ctx, d, k, &accepted));
		if (accepted != k)
			stress_violation("thread %u: a batch of %u accepted %u", s->id, k, accepted);
		s->batches++;
	} else {
		for (unsigned i = 0; i < k; i++)
			STRESS_OK(doca_task_submit(r->rig.ctx, &d[i]));
	}
	s->accepted += k;
}

static void *submitter_main(void *arg)
{
	struct submitter *s = arg;
	struct round *r = s->round;
	uint64_t seq = 0;

	while (!atomic_load(&r->stop) && stress_now_ns() < r->end) {
		unsigned k = 1u + rng_below(&s->rng, BURST_MAX);
		uint64_t t0 = stress_now_ns();

		burst(s, k, &seq);
		while (atomic_load(&s->done) < k) {
			if (stress_now_ns() - t0 > (uint64_t)DEADLINE_MS * 1000000u) {
				stress_violation("thread %u: %u of a burst of %u tasks late or lost after %u ms (%s PE)",
						 s->id, k - atomic_load(&s->done), k, DEADLINE_MS,
						 r->event_mode ? "event-mode" : "polling");
				atomic_fetch_add(&late_bursts, 1);
				atomic_store(&r->stop, true);
				goto out;
			}
			sched_yield();
		}
		s->bursts++;
		unsigned gap = rng_below(&s->rng, 3000);

		if (rng_pct(&s->rng, 50))
			stress_sleep_us(gap);
		else
			stress_spin(gap * 20u);
	}
out:
	atomic_fetch_add(&r->submitters_done, 1);
	uint64_t one = 1;

	if (write(r->done_fd, &one, sizeof(one)) != sizeof(one)) /* wakes the event loop's sleep */
		stress_fatal("eventfd write: %s", strerror(errno));
	return NULL;
}

/* Check and free one event (the main thread, the PE's). */
static void handle(struct round *r, struct doca_event *ev)
{
	uint64_t tag = doca_event_get_user_data(ev).u64;
	unsigned thread = (unsigned)(tag >> 48) - 1u;
	bool sabotage = opts.sabotage != SABOTAGE_NONE && !atomic_exchange(&sabotaged, true);

	if (thread >= r->threads) {
		stress_violation("an event of tag %#" PRIx64 ": no such thread", tag);
		doca_event_free(ev);
		return;
	}
	struct submitter *s = &r->subs[thread];
	unsigned slot = UINT32_MAX;

	for (unsigned i = thread * BURST_MAX; i < (thread + 1u) * BURST_MAX; i++)
		if (atomic_load(&r->inflight[i]) == tag)
			slot = i;
	if (sabotage && opts.sabotage == SABOTAGE_LOST) {
		doca_event_free(ev); /* as if it never came */
		return;
	}
	for (unsigned times = sabotage && opts.sabotage == SABOTAGE_DUP ? 2 : 1; times != 0; times--) {
		uint64_t want = tag;

		if (slot == UINT32_MAX || !atomic_compare_exchange_strong(&r->inflight[slot], &want, 0)) {
			stress_violation("thread %u: a second event of task %#" PRIx64 ", or one never accepted",
					 thread, tag);
			continue;
		}
		if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS ||
		    doca_event_get_bytes(ev) != LEN) {
			stress_violation("thread %u: task %#" PRIx64 ": status %d, %zu bytes", thread, tag,
					 (int)doca_event_get_status(ev), (size_t)doca_event_get_bytes(ev));
		} else {
			uint8_t want_bytes[LEN];

			stress_pattern(tag, want_bytes, LEN);
			if (memcmp(want_bytes, stress_rig_dst(&r->rig, slot), LEN) != 0)
				stress_violation("thread %u: task %#" PRIx64 ": wrong bytes", thread, tag);
		}
		s->events++;
		atomic_fetch_add(&s->done, 1);
	}
	doca_event_free(ev);
}

static uint32_t reap(struct round *r)
{
	uint32_t n = 0;

	for (struct doca_event *ev; (ev = doca_pe_get_event(r->rig.pe)) != NULL; n++)
		handle(r, ev);
	return n;
}

static bool round_over(struct round *r)
{
	return atomic_load(&r->submitters_done) == r->threads;
}

/* The PE's loop until the submitters are done: polling, or doca_pe.h's
 * event loop (one more progress call while armed, half of the time). */
static void pe_loop(struct round *r, struct rng *rng)
{
	int fd = -1, ep = -1;

	if (r->event_mode) {
		/* the PE's fd and the submitters' leaving: a sleep ends with a
		 * wake-up of the PE's or the round's end, nothing else */
		struct epoll_event a = { .events = EPOLLIN, .data.u32 = 0 }, b = { .events = EPOLLIN, .data.u32 = 1 };

		STRESS_OK(doca_pe_get_notification_handle(r->rig.pe, &fd));
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &a) != 0 ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, r->done_fd, &b) != 0)
			stress_fatal("epoll: %s", strerror(errno));
	}
	while (!round_over(r)) {
		uint32_t n = doca_pe_progress(r->rig.pe);

		n += reap(r);
		if (!r->event_mode || n != 0)
			continue;
		STRESS_OK(doca_pe_request_notification(r->rig.pe));
		if (rng_pct(rng, 50)) {
			n = doca_pe_progress(r->rig.pe) + reap(r); /* a turn while armed */
			armed_turns++;
		}
		if (n == 0 && !round_over(r)) {
			struct epoll_event e;
			int rc;

			/* a submitter waiting for its burst ends the round with a
			 * violation after DEADLINE_MS: we are woken by it */
			while ((rc = epoll_wait(ep, &e, 1, SLEEP_MS)) < 0 && errno == EINTR)
				;
			sleeps++;
		}
		STRESS_OK(doca_pe_clear_notification(r->rig.pe));
	}
	if (ep >= 0)
		close(ep);
}

static unsigned long totals[2][2]; /* [event mode][threads - 1]: rounds */

static void run_round(struct rng *rng, unsigned long n)
{
	static struct round r;
	unsigned long accepted = 0, events = 0;

	memset(&r, 0, sizeof(r));
	r.event_mode = (n & 1u) != 0;
	r.threads = 1u + (unsigned)((n >> 1) & 1u);
	stress_rig_up(&r.rig, MAX_TASKS, SLOTS, LEN);
	r.end = stress_now_ns() + (uint64_t)ROUND_MS * 1000000u;
	r.done_fd = eventfd(0, EFD_CLOEXEC);
	if (r.done_fd < 0)
		stress_fatal("eventfd: %s", strerror(errno));
	for (unsigned i = 0; i < r.threads; i++) {
		struct submitter *s = &r.subs[i];

		s->id = i;
		s->round = &r;
		rng_init(&s->rng, opts.seed, n * THREADS_MAX + i + 1u);
		if (pthread_create(&s->thread, NULL, submitter_main, s) != 0)
			stress_fatal("pthread_create");
	}
	/* the submitters stop at the round's end; a late burst stops them first */
	pe_loop(&r, rng);
	for (unsigned i = 0; i < r.threads; i++) {
		pthread_join(r.subs[i].thread, NULL);
		accepted += r.subs[i].accepted;
		events += r.subs[i].events;
		bursts += r.subs[i].bursts;
		batches += r.subs[i].batches;
	}
	close(r.done_fd);
	/* a late burst's tasks may still come: take them before the stop */
	for (uint64_t t0 = stress_now_ns(); events < accepted && stress_now_ns() - t0 < 1000000000u;) {
		(void)doca_pe_progress(r.rig.pe);
		(void)reap(&r);
		events = 0;
		for (unsigned i = 0; i < r.threads; i++)
			events += r.subs[i].events;
	}
	if (events != accepted)
		stress_violation("round %lu: %lu tasks accepted, %lu events", n, accepted, events);
	stress_rig_down(&r.rig);
	totals[r.event_mode][r.threads - 1u]++;
}

int main(int argc, char **argv)
{
	struct rng rng;
	unsigned long rounds = 0;

	stress_parse_kinds(argc, argv, &opts, STRESS_KIND(SABOTAGE_LOST) | STRESS_KIND(SABOTAGE_DUP));
	stress_watchdog(opts.seconds);
	rng_init(&rng, opts.seed, 0);
	for (uint64_t end = stress_now_ns() + (uint64_t)(opts.seconds * 1e9); stress_now_ns() < end;)
		run_round(&rng, rounds++);
	printf("  %lu rounds (polling 1/2 threads: %lu/%lu, event mode: %lu/%lu), %lu bursts (%lu batches), "
	       "%lu turns while armed, %lu sleeps, %lu late bursts\n",
	       rounds, totals[0][0], totals[0][1], totals[1][0], totals[1][1], bursts, batches, armed_turns, sleeps,
	       atomic_load(&late_bursts));
	printf("stress_ring_watch: %s seed=%llu %.1fs violations=%lu\n", stress_violation_count() ? "FAIL" : "PASS",
	       (unsigned long long)opts.seed, opts.seconds, stress_violation_count());
	return stress_violation_count() == 0 ? 0 : 1;
}
