/* tests/engine/notify_arm.c — an arming the device refuses changes
 * nothing: doca_pe_request_notification returns the device's error and
 * leaves the PE as armed as it was before the call.
 *
 * A device ("fk0": the sw backend standing in for the verbs module, with a
 * completion channel of the test's own, an eventfd never written) whose
 * channel arming fails on demand. Were the PE left marked armed, its
 * turns would retry the arming and a submitter on another thread would
 * post straight to the device, as to a sleeping PE, instead of leaving
 * the task to the PE's next turn. */
#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/ring.h"
#include "hw/sw/sw.h"
#include "tests/api/common.h"
#include "tests/engine/fk_device.h"

static int channel_fd = -1;
static _Atomic doca_error_t arm_result; /* what the next armings return */
static _Atomic unsigned arm_calls;

static int fake_notify_fd(struct hw_qp *qp)
{
	(void)qp;
	return channel_fd;
}

static doca_error_t fake_notify_arm(struct hw_qp *qp)
{
	(void)qp;
	atomic_fetch_add(&arm_calls, 1);
	return atomic_load(&arm_result);
}

static bool fd_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1;
}

struct submit {
	struct api_fixture *f;
	doca_error_t err;
};

static void *submit_elsewhere(void *arg)
{
	struct submit *s = arg;
	struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = s->f->src, .dst = s->f->dst };

	s->err = doca_task_submit(s->f->ctx, &d);
	return NULL;
}

/* A task submitted on another thread (joined before returning). */
static void submit_from_another_thread(struct api_fixture *f)
{
	struct submit s = { .f = f, .err = DOCA_ERROR_UNKNOWN };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, submit_elsewhere, &s), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(s.err, DOCA_SUCCESS, "submit: %s", doca_error_get_name(s.err));
}

static void reap_one(struct api_fixture *f)
{
	struct doca_event *ev = wait_event(f->pe);

	cr_assert_not_null(ev);
	cr_assert_eq(doca_event_get_error(ev), DOCA_SUCCESS);
	doca_event_free(ev);
}

/* fk0 with the test's channel. */
static void fk_install_channel(void)
{
	fk_install();
	fk_ops.notify_fd = fake_notify_fd;
	fk_ops.notify_arm = fake_notify_arm;
	channel_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	cr_assert_geq(channel_fd, 0);
}

Test(notify_arm, a_refused_arming_leaves_the_pe_as_armed_as_it_was)
{
	struct api_fixture f;
	int fd;

	fk_install_channel();
	fixture_init_started(&f, "fk0:engines=1", 4096, 0);

	struct doca_pe *pe = handle_deref(f.pe);
	struct ctx_run *run = handle_deref(f.ctx)->run;

	cr_assert_eq(atomic_load(&pe->channels), 1, "the PE watches the device's channel");
	cr_assert_eq(doca_pe_get_notification_handle(f.pe, &fd), DOCA_SUCCESS);

	/* Refused on an unarmed PE: the device's error, and still unarmed. */
	atomic_store(&arm_result, DOCA_ERROR_DRIVER);
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_ERROR_DRIVER);
	cr_assert_eq(atomic_load(&arm_calls), 1);
	cr_assert_eq(atomic_load(&pe->armed), PE_DISARMED, "the refused arming left the PE armed");
	cr_assert(!fd_readable(fd, 0), "the refused arming fired");
	/* a turn does not retry it */
	cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert_eq(atomic_load(&arm_calls), 1, "a turn retried the refused arming");
	/* another thread's task waits for the PE's turn, as before any arming */
	submit_from_another_thread(&f);
	/* (ring21 step 1: a foreign task travels in a ring, not the mailbox) */
	cr_assert(ring_any(run), "the submitter posted to the device, as to an armed PE");
	cr_assert_eq(atomic_load(&run->on_device), 0);
	cr_assert(!fd_readable(fd, 0));
	reap_one(&f);
	cr_assert_eq(atomic_load(&arm_calls), 1, "turns retried the refused arming");

	/* A later arming the device accepts arms the PE. */
	atomic_store(&arm_result, DOCA_SUCCESS);
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&arm_calls), 2);
	cr_assert_eq(atomic_load(&pe->armed), PE_ARMED);
	cr_assert(!fd_readable(fd, 0), "armed with nothing to do");

	/* Refused on an armed PE: the earlier arming stands. */
	atomic_store(&arm_result, DOCA_ERROR_NO_MEMORY);
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_ERROR_NO_MEMORY);
	cr_assert_eq(atomic_load(&arm_calls), 3);
	cr_assert_eq(atomic_load(&pe->armed), PE_ARMED, "the refused arming disarmed the PE");
	cr_assert(!fd_readable(fd, 0));
	atomic_store(&arm_result, DOCA_SUCCESS);

	/* Armed: another thread posts straight to the device and the
	 * completion wakes the PE. */
	submit_from_another_thread(&f);
	cr_assert_not(mailbox_nonempty(&run->mbox), "the submitter did not post to an armed PE's device");
	cr_assert(fd_readable(fd, 5000), "the armed PE was not woken by the completion");
	cr_assert_eq(atomic_load(&pe->armed), PE_FIRED);
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_SUCCESS);
	reap_one(&f);

	fixture_fini(&f);
	close(channel_fd);
}

static _Atomic int worker_events;

static void on_event(struct doca_event *ev, union doca_data ud)
{
	(void)ud;
	if (doca_event_get_error(ev) == DOCA_SUCCESS)
		atomic_fetch_add(&worker_events, 1);
}

/* A worker whose arming is refused does not sleep on a PE nothing would
 * wake: it keeps progressing, so a task submitted meanwhile completes. */
Test(notify_arm, a_worker_whose_arming_is_refused_keeps_progressing)
{
	struct api_fixture f;
	struct doca_task_desc d;

	fk_install_channel();
	atomic_store(&arm_result, DOCA_ERROR_DRIVER);
	fixture_init(&f, "fk0:engines=1", 4096, 0);
	cr_assert_eq(doca_ctx_set_event_cb(f.ctx, on_event), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(f.ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_run_on_cpu(f.pe, -1), DOCA_SUCCESS);
	/* let the worker go idle and try to arm */
	for (int i = 0; i < 5000 && atomic_load(&arm_calls) == 0; i++)
		usleep(1000);
	cr_assert_geq(atomic_load(&arm_calls), 1, "the worker never tried to arm");
	usleep(10000); /* and, unfixed, fall asleep */
	d = (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = f.src, .dst = f.dst };
	cr_assert_eq(doca_task_submit(f.ctx, &d), DOCA_SUCCESS);
	for (int i = 0; i < 5000 && atomic_load(&worker_events) == 0; i++)
		usleep(1000);
	cr_assert_eq(atomic_load(&worker_events), 1, "the worker slept on a PE its arming left unarmed");
	cr_assert_eq(doca_pe_stop_run(f.pe), DOCA_SUCCESS);
	fixture_fini(&f);
	close(channel_fd);
}

/* A channel that behaves as a verbs completion channel: an arming is good
 * for one completion, which makes the channel readable (instead of the sw
 * engine thread's wake-up of the PE); arming drains an event left in it
 * first, as verbs_notify_arm does. */
static _Atomic bool one_shot_armed;

static void one_shot_drain(void)
{
	uint64_t n;

	while (read(channel_fd, &n, sizeof(n)) > 0)
		;
}

static doca_error_t one_shot_arm(struct hw_qp *qp)
{
	(void)qp;
	atomic_fetch_add(&arm_calls, 1);
	one_shot_drain();
	doca_error_t err = atomic_load(&arm_result);

	if (err == DOCA_SUCCESS)
		atomic_store(&one_shot_armed, true);
	return err;
}

static void one_shot_ack(struct hw_qp *qp)
{
	(void)qp;
	one_shot_drain();
}

static void one_shot_completion(void *arg, hw_unread_fn unread, const void *cq)
{
	uint64_t one = 1;

	(void)arg, (void)unread, (void)cq;
	if (atomic_exchange(&one_shot_armed, false))
		cr_assert_eq(write(channel_fd, &one, sizeof(one)), (ssize_t)sizeof(one));
}

static doca_error_t one_shot_qp_create(struct hw_dev *dev, const struct hw_qp_attr *attr, struct hw_qp **qp)
{
	struct hw_qp_attr mine = *attr;

	mine.wake = one_shot_completion;
	mine.wake_arg = NULL;
	doca_error_t err = hw_sw_ops.qp_create(dev, &mine, qp);

	if (err == DOCA_SUCCESS)
		(*qp)->ops = &fk_ops;
	return err;
}

/* A turn run while the PE is armed arms its channels again; when the
 * device refuses, the PE must not stay asleep on a channel the turn spent:
 * it fires, and the next request_notification reports the error. Left
 * armed, the completion of a task posted after that turn woke no one. */
Test(notify_arm, a_refused_rearm_in_a_turn_wakes_the_pe)
{
	struct api_fixture f;
	int fd;

	fk_install_channel();
	fk_ops.notify_arm = one_shot_arm;
	fk_ops.notify_ack = one_shot_ack;
	fk_ops.qp_create = one_shot_qp_create;
	fixture_init(&f, "fk0:engines=1", 4096, 0);
	cr_assert_eq(doca_ctx_set_event_cb(f.ctx, on_event), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(f.ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_get_notification_handle(f.pe, &fd), DOCA_SUCCESS);
	struct doca_pe *pe = handle_deref(f.pe);

	/* Armed; a task's completion makes the channel readable. */
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&arm_calls), 1);
	cr_assert_eq(submit_copy(f.ctx, f.src, f.dst, 0, 0), DOCA_SUCCESS);
	cr_assert(fd_readable(fd, 5000), "the armed channel did not report the completion");

	/* Progressed while armed (allowed: the fd stays armed): the turn takes
	 * the completion (its callback the event) and arms again: refused. */
	atomic_store(&arm_result, DOCA_ERROR_DRIVER);
	cr_assert_eq(doca_pe_progress(f.pe), 1);
	cr_assert_eq(atomic_load(&worker_events), 1);
	cr_assert_eq(atomic_load(&arm_calls), 2, "the turn did not arm again");
	cr_assert_not(atomic_load(&one_shot_armed));

	/* A task posted now completes with no channel armed: only the PE's
	 * own wake-up for the refusal lets a sleeping application know. */
	cr_assert_eq(submit_copy(f.ctx, f.src, f.dst, 0, 0), DOCA_SUCCESS);
	cr_assert(fd_readable(fd, 5000), "a refused re-arm left the PE asleep: the completion woke no one");
	cr_assert_eq(atomic_load(&pe->armed), PE_FIRED);
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_SUCCESS);
	for (int i = 0; i < 5000 && atomic_load(&worker_events) < 2; i++)
		if (doca_pe_progress(f.pe) == 0)
			usleep(1000);
	cr_assert_eq(atomic_load(&worker_events), 2);

	/* The next arming says why it cannot sleep, and changes nothing. */
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_ERROR_DRIVER);
	cr_assert_eq(atomic_load(&pe->armed), PE_DISARMED);
	atomic_store(&arm_result, DOCA_SUCCESS);
	fixture_fini(&f);
	close(channel_fd);
}
