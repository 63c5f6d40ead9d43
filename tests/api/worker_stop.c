/*
 * tests/api/worker_stop.c — doca_pe_stop_run waits for the worker with no
 * lock held (issue 11, defect 2).
 *
 * The stopper is parked (trap.h) at the write that wakes the worker for STOP,
 * past every check, just before it waits for the worker to finish. Meanwhile
 * the worker's event callback starts or stops another PE's worker, or a
 * second thread calls doca_pe_stop_run on the same PE. Had the stopper kept
 * a process-wide lock until the join, the callback would wait for the lock
 * and the stopper for the callback: the test would time out.
 */
#include "common.h"
#include "trap.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

struct cross_env {
	struct doca_pe *other;
	doca_error_t (*action)(struct doca_pe *pe); /* applied to `other` in the callback */
	atomic_bool in_callback;
	doca_error_t rc;
};

static doca_error_t start_worker(struct doca_pe *pe)
{
	return doca_pe_run_on_cpu(pe, -1);
}

/* A's callback: once A's stopper is parked, act on the other PE. */
static void act_on_other_pe(struct doca_event *ev, union doca_data ud)
{
	struct cross_env *env = ud.ptr;

	(void)ev;
	atomic_store(&env->in_callback, true);
	trap_wait_parked(TRAP_EVENTFD_WRITE);
	env->rc = env->action(env->other);
	trap_release(TRAP_EVENTFD_WRITE);
}

/* A ctx on PE A whose callback runs env->action on env->other, handed to a
 * worker, with one task in flight. */
static void worker_with_callback(struct api_fixture *a, struct cross_env *env)
{
	fixture_init(a, "sw0", 64, 4);
	assert_ok(doca_ctx_set_user_data(a->ctx, (union doca_data){ .ptr = env }));
	assert_ok(doca_ctx_set_event_cb(a->ctx, act_on_other_pe));
	assert_ok(doca_ctx_start(a->ctx));
	assert_ok(doca_pe_run_on_cpu(a->pe, -1));
	assert_ok(submit_copy(a->ctx, a->src, a->dst, 1, 0));
}

/* Stop A's worker while its callback is running, parked at the stop's wake-up. */
static void stop_while_in_callback(struct api_fixture *a, struct cross_env *env)
{
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	while (!atomic_load(&env->in_callback)) {
		cr_assert_lt(now_ns(), deadline, "the worker never ran the callback");
		sched_yield();
	}
	trap_arm(TRAP_EVENTFD_WRITE, TRAP_THIS_THREAD);
	assert_ok(doca_pe_stop_run(a->pe));
	assert_ok(env->rc);
}

Test(worker_stop, callback_starts_another_pe_while_its_own_pe_is_being_stopped, .timeout = 30)
{
	struct api_fixture a;
	struct doca_pe *b;
	struct cross_env env = { .action = start_worker, .rc = DOCA_ERROR_UNKNOWN };

	assert_ok(doca_pe_create(&b));
	env.other = b;
	worker_with_callback(&a, &env);
	stop_while_in_callback(&a, &env);
	/* B's worker really started, and A's stop completed. */
	assert_ok(doca_pe_stop_run(b));
	assert_doca(doca_pe_stop_run(a.pe), DOCA_ERROR_BAD_STATE);
	fixture_fini(&a);
	assert_ok(doca_pe_destroy(b));
}

Test(worker_stop, callback_stops_another_pe_while_its_own_pe_is_being_stopped, .timeout = 30)
{
	struct api_fixture a;
	struct doca_pe *b;
	struct cross_env env = { .action = doca_pe_stop_run, .rc = DOCA_ERROR_UNKNOWN };

	assert_ok(doca_pe_create(&b));
	assert_ok(doca_pe_run_on_cpu(b, -1));
	env.other = b;
	worker_with_callback(&a, &env);
	stop_while_in_callback(&a, &env);
	/* The callback's stop of B really happened. */
	assert_doca(doca_pe_stop_run(b), DOCA_ERROR_BAD_STATE);
	assert_doca(doca_pe_stop_run(a.pe), DOCA_ERROR_BAD_STATE);
	fixture_fini(&a);
	assert_ok(doca_pe_destroy(b));
}

struct second_stopper {
	struct doca_pe *pe;
	doca_error_t stop_rc;
	doca_error_t run_rc;
};

/* While the first stopper is parked mid-stop: stop again, start again. */
static void *stop_during_stop(void *arg)
{
	struct second_stopper *s = arg;

	trap_wait_parked(TRAP_EVENTFD_WRITE);
	s->stop_rc = doca_pe_stop_run(s->pe);
	s->run_rc = doca_pe_run_on_cpu(s->pe, -1);
	trap_release(TRAP_EVENTFD_WRITE);
	return NULL;
}

Test(worker_stop, a_second_stopper_is_refused_at_once_and_changes_nothing, .timeout = 30)
{
	struct api_fixture f;
	struct second_stopper s = { .stop_rc = DOCA_ERROR_UNKNOWN, .run_rc = DOCA_ERROR_UNKNOWN };
	pthread_t t;

	fixture_init(&f, "sw0", 64, 4);
	s.pe = f.pe;
	/* The worker's first idle spin proves it has run: a stop now must wake
	 * it (a worker that has not run yet is abandoned without a wake). */
	trap_arm(TRAP_YIELD, TRAP_OTHER_THREADS);
	assert_ok(doca_pe_run_on_cpu(f.pe, -1));
	trap_wait_parked(TRAP_YIELD);
	trap_release(TRAP_YIELD);
	cr_assert_eq(pthread_create(&t, NULL, stop_during_stop, &s), 0);
	trap_arm(TRAP_EVENTFD_WRITE, TRAP_THIS_THREAD);
	assert_ok(doca_pe_stop_run(f.pe));
	pthread_join(t, NULL);
	assert_doca(s.stop_rc, DOCA_ERROR_IN_PROGRESS);
	assert_doca(s.run_rc, DOCA_ERROR_BAD_STATE);
	/* No worker is left: the PE is the application's to progress again. */
	assert_doca(doca_pe_stop_run(f.pe), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_ctx_start(f.ctx));
	fixture_copy_and_verify(&f);
	fixture_fini(&f);
}
