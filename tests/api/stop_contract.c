/*
 * tests/api/stop_contract.c — a stop reports STOPPING whenever it has work
 * to finish, in every mode (issue 14, problem 10).
 *
 * The contract (include/doca_ctx.h): doca_ctx_stop returns DOCA_SUCCESS and
 * reports RUNNING → IDLE only when nothing of the context was outstanding;
 * a stop that flushes tasks (their SHUTDOWN events) goes RUNNING → STOPPING
 * → IDLE and returns DOCA_ERROR_IN_PROGRESS. With a worker running the PE,
 * the worker used to flush and deliver a stop's tasks during the stop's
 * grace period, so the stop counted nothing outstanding afterwards and
 * reported RUNNING → IDLE with SHUTDOWN callbacks already run.
 *
 * - flush_inside_the_grace_period: that interleaving, forced with trap.h —
 *   the worker parked at its idle sched_yield while a task waits in the
 *   mailbox, a submitter parked inside its read-side section (at the
 *   eventfd write that wakes another PE) so the stop's grace period cannot
 *   end, then the worker let go to flush and deliver, then the submitter.
 * - thousands_of_worker_mode_stops: 3000 start/stop cycles of a worker-
 *   driven context, two producer threads submitting all the time; each
 *   stop's exact transition sequence is checked against its SHUTDOWN
 *   callbacks, and every fourth cycle stops with nothing outstanding and
 *   must report RUNNING → IDLE.
 */
#include "common.h"
#include "trap.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define MAX_TRANSITIONS 8

struct stop_env {
	_Atomic uint32_t transitions;      /* recorded in `seq` */
	enum doca_ctx_state seq[MAX_TRANSITIONS][2];
	_Atomic uint32_t events;           /* every event delivered */
	_Atomic uint32_t shutdown_events;  /* those FAILURE / DOCA_ERROR_SHUTDOWN */
	_Atomic uint32_t other_failures;   /* any other non-SUCCESS event */
};

static void env_reset(struct stop_env *e)
{
	atomic_store(&e->transitions, 0);
	atomic_store(&e->shutdown_events, 0);
}

/* The state callback: reports of one ctx never run concurrently. */
static void on_state(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
		     enum doca_ctx_state next)
{
	struct stop_env *e = ud.ptr;
	uint32_t i = atomic_load(&e->transitions);

	(void)ctx;
	if (i < MAX_TRANSITIONS) {
		e->seq[i][0] = prev;
		e->seq[i][1] = next;
	}
	atomic_store(&e->transitions, i + 1);
}

static void on_event(struct doca_event *ev, union doca_data ud)
{
	struct stop_env *e = ud.ptr;

	if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_FAILURE &&
	    doca_event_get_error(ev) == DOCA_ERROR_SHUTDOWN)
		atomic_fetch_add(&e->shutdown_events, 1);
	else if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS)
		atomic_fetch_add(&e->other_failures, 1);
	atomic_fetch_add(&e->events, 1);
}

/* A fixture whose ctx reports into @p e, started, its PE not yet running. */
static void stop_fixture(struct api_fixture *f, struct stop_env *e, uint32_t max_tasks)
{
	fixture_init(f, "sw0", 64, max_tasks);
	assert_ok(doca_ctx_set_user_data(f->ctx, (union doca_data){ .ptr = e }));
	assert_ok(doca_ctx_set_event_cb(f->ctx, on_event));
	assert_ok(doca_ctx_set_state_changed_cb(f->ctx, on_state));
	assert_ok(doca_ctx_start(f->ctx));
}

static void wait_transitions(struct stop_env *e, uint32_t n)
{
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	while (atomic_load(&e->transitions) < n) {
		cr_assert_lt(now_ns(), deadline, "%u state reports, waiting for %u",
			     atomic_load(&e->transitions), n);
		sched_yield();
	}
}

/* Transition i of the log is prev → next. */
static void expect_transition(const struct stop_env *e, uint32_t i, enum doca_ctx_state prev,
			      enum doca_ctx_state next, uint32_t cycle)
{
	cr_assert(e->seq[i][0] == prev && e->seq[i][1] == next,
		  "cycle %u: report %u is %s → %s, expected %s → %s", cycle, i, state_name(e->seq[i][0]),
		  state_name(e->seq[i][1]), state_name(prev), state_name(next));
}

struct stopper {
	struct doca_ctx *ctx;
	doca_error_t rc;
};

static void *stop_thread(void *arg)
{
	struct stopper *s = arg;

	s->rc = doca_ctx_stop(s->ctx);
	return NULL;
}

struct submitter {
	struct api_fixture *f;
	doca_error_t rc;
};

static void *submit_thread(void *arg)
{
	struct submitter *s = arg;

	s->rc = submit_copy(s->f->ctx, s->f->src, s->f->dst, 2, 0);
	return NULL;
}

Test(stop_contract, flush_inside_the_grace_period, .timeout = 60)
{
	struct api_fixture a, b;
	struct stop_env env = { 0 };
	struct stopper stopper;
	struct submitter holder;
	pthread_t stop_t, holder_t;
	enum doca_ctx_state st = DOCA_CTX_STATE_RUNNING;

	stop_fixture(&a, &env, 8);
	fixture_init_started(&b, "sw0", 64, 8);
	assert_ok(doca_pe_request_notification(b.pe)); /* a submit into b writes b's eventfd */

	/* a's worker parked between idle turns */
	trap_arm(TRAP_YIELD, TRAP_OTHER_THREADS);
	assert_ok(doca_pe_run_on_cpu(a.pe, -1));
	trap_wait_parked(TRAP_YIELD);
	/* a task waits in a's mailbox (a's PE is not armed: no wake-up) */
	assert_ok(submit_copy(a.ctx, a.src, a.dst, 1, 0));

	/* a submitter parked inside its read-side section holds every grace period */
	holder = (struct submitter){ .f = &b, .rc = DOCA_ERROR_UNKNOWN };
	trap_arm(TRAP_EVENTFD_WRITE, TRAP_OTHER_THREADS);
	cr_assert_eq(pthread_create(&holder_t, NULL, submit_thread, &holder), 0);
	trap_wait_parked(TRAP_EVENTFD_WRITE);

	/* the stop stores STOPPING, then waits for the grace period */
	stopper = (struct stopper){ .ctx = a.ctx, .rc = DOCA_ERROR_UNKNOWN };
	cr_assert_eq(pthread_create(&stop_t, NULL, stop_thread, &stopper), 0);
	for (uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	     st != DOCA_CTX_STATE_STOPPING; sched_yield()) {
		assert_ok(doca_ctx_get_state(a.ctx, &st));
		cr_assert_lt(now_ns(), deadline, "the stop never stored STOPPING");
	}

	/* the worker flushes the task and runs its callback; parked again at
	 * its next idle turn, the turn that delivered is over */
	trap_release_rearm(TRAP_YIELD);
	trap_wait_parked(TRAP_YIELD);
	cr_assert_eq(atomic_load(&env.shutdown_events), 1, "the worker flushed the waiting task");
	cr_assert_eq(atomic_load(&env.transitions), 1, "only IDLE → RUNNING reported so far");

	/* the grace period ends; the stop decides */
	trap_release(TRAP_EVENTFD_WRITE);
	pthread_join(holder_t, NULL);
	assert_ok(holder.rc);
	pthread_join(stop_t, NULL);
	assert_doca(stopper.rc, DOCA_ERROR_IN_PROGRESS);
	wait_transitions(&env, 2);
	expect_transition(&env, 1, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING, 0);

	/* the worker finishes the stop on its next turn */
	trap_release(TRAP_YIELD);
	wait_transitions(&env, 3);
	cr_assert_eq(atomic_load(&env.transitions), 3);
	expect_transition(&env, 0, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING, 0);
	expect_transition(&env, 2, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE, 0);
	assert_ok(doca_pe_stop_run(a.pe));
	cr_assert_eq(atomic_load(&env.events), 1);
	fixture_fini(&a);
	fixture_fini(&b);
}

#define CYCLES 3000u
#define PRODUCERS 2

struct producers {
	struct api_fixture *f;
	atomic_bool go;          /* submit while set */
	atomic_bool done;
	_Atomic uint32_t active; /* producers between reading `go` and leaving submit */
	_Atomic uint64_t accepted;
	_Atomic int unexpected_rc; /* the first refusal other than BAD_STATE / AGAIN */
	uint64_t quiet_submitted; /* tasks the quiet cycles submitted */
};

static void *producer_main(void *arg)
{
	struct producers *p = arg;

	while (!atomic_load(&p->done)) {
		atomic_fetch_add(&p->active, 1);
		if (atomic_load(&p->go)) {
			doca_error_t rc = submit_copy(p->f->ctx, p->f->src, p->f->dst, 3, 0);

			if (rc == DOCA_SUCCESS)
				atomic_fetch_add(&p->accepted, 1);
			else if (rc != DOCA_ERROR_BAD_STATE && rc != DOCA_ERROR_AGAIN)
				atomic_store(&p->unexpected_rc, (int)rc);
		}
		atomic_fetch_sub(&p->active, 1);
		sched_yield();
	}
	return NULL;
}

/* Producers stop submitting; when this returns none is inside a submit. */
static void producers_pause(struct producers *p)
{
	atomic_store(&p->go, false);
	while (atomic_load(&p->active) != 0)
		sched_yield();
}

/* A cycle with producers submitting through the stop. */
static void busy_cycle(struct api_fixture *f, struct stop_env *e, struct producers *p, uint32_t c,
		       uint32_t *flushing_stops)
{
	uint64_t before = atomic_load(&p->accepted);
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	env_reset(e);
	assert_ok(doca_ctx_start(f->ctx));
	/* let a few tasks (0..7) through before stopping */
	while (atomic_load(&p->accepted) < before + c % 8u) {
		cr_assert_lt(now_ns(), deadline, "cycle %u: producers submit nothing", c);
		sched_yield();
	}
	doca_error_t rc = doca_ctx_stop(f->ctx);

	if (rc == DOCA_SUCCESS) {
		wait_transitions(e, 2);
		cr_assert_eq(atomic_load(&e->shutdown_events), 0,
			     "cycle %u: the stop reported RUNNING → IDLE after %u SHUTDOWN callbacks", c,
			     atomic_load(&e->shutdown_events));
		expect_transition(e, 1, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_IDLE, c);
	} else {
		assert_doca(rc, DOCA_ERROR_IN_PROGRESS);
		wait_transitions(e, 3);
		expect_transition(e, 1, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING, c);
		expect_transition(e, 2, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE, c);
	}
	expect_transition(e, 0, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING, c);
	*flushing_stops += atomic_load(&e->shutdown_events) != 0;
}

/* A cycle that stops with nothing outstanding: every event delivered and
 * freed (the worker joined), no producer. */
static void quiet_cycle(struct api_fixture *f, struct stop_env *e, struct producers *p, uint32_t c)
{
	producers_pause(p);
	env_reset(e);
	assert_ok(doca_ctx_start(f->ctx));
	uint32_t want = atomic_load(&e->events) + 1 + c % 4u;

	for (uint32_t i = 0; i < 1 + c % 4u; i++, p->quiet_submitted++)
		assert_ok(submit_copy(f->ctx, f->src, f->dst, 4, 0));
	for (uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	     atomic_load(&e->events) != want; sched_yield())
		cr_assert_lt(now_ns(), deadline, "cycle %u: events missing", c);
	assert_ok(doca_pe_stop_run(f->pe)); /* its last callback has returned */
	assert_doca(doca_ctx_stop(f->ctx), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&e->transitions), 2, "cycle %u: %u reports", c,
		     atomic_load(&e->transitions));
	expect_transition(e, 0, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING, c);
	expect_transition(e, 1, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_IDLE, c);
	assert_ok(doca_pe_run_on_cpu(f->pe, -1));
	atomic_store(&p->go, true);
}

Test(stop_contract, thousands_of_worker_mode_stops, .timeout = 240)
{
	struct api_fixture f;
	struct stop_env env = { 0 };
	struct producers p = { .f = &f };
	pthread_t threads[PRODUCERS];
	uint32_t flushing_stops = 0;

	stop_fixture(&f, &env, 16);
	assert_ok(doca_ctx_stop(f.ctx)); /* each cycle starts it */
	assert_ok(doca_pe_run_on_cpu(f.pe, -1));
	atomic_store(&p.go, true);
	for (int i = 0; i < PRODUCERS; i++)
		cr_assert_eq(pthread_create(&threads[i], NULL, producer_main, &p), 0);
	for (uint32_t c = 0; c < CYCLES; c++) {
		if (c % 4u == 3u)
			quiet_cycle(&f, &env, &p, c);
		else
			busy_cycle(&f, &env, &p, c, &flushing_stops);
	}
	atomic_store(&p.done, true);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(threads[i], NULL);
	assert_ok(doca_pe_stop_run(f.pe));
	cr_assert_eq(atomic_load(&p.unexpected_rc), DOCA_SUCCESS, "a submit was refused with %s",
		     doca_error_get_name((doca_error_t)atomic_load(&p.unexpected_rc)));
	/* every accepted task got exactly one event, and none failed otherwise */
	cr_assert_eq(atomic_load(&env.events), atomic_load(&p.accepted) + p.quiet_submitted,
		     "events %u, accepted %llu + %llu", atomic_load(&env.events),
		     (unsigned long long)atomic_load(&p.accepted),
		     (unsigned long long)p.quiet_submitted);
	cr_assert_eq(atomic_load(&env.other_failures), 0);
	cr_assert_gt(flushing_stops, 0, "no stop flushed anything: the test checked nothing");
	fprintf(stderr, "stop_contract: %u cycles, %u stops flushed tasks\n", CYCLES, flushing_stops);
	fixture_fini(&f);
}
