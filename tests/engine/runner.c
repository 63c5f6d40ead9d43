/* tests/engine/runner.c — at most one thread runs a PE; others are refused
 * and change nothing: progress, event mode's arm and clear, destroying one
 * PE twice at once (decided under the guard); a free from another thread is
 * never refused; the loop's thread keeps the guard parked, and another
 * thread revokes it only while that thread is outside; the owner ways'
 * flag is set before an application's own constructors run. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "actors/asym_fence.h"
#include "actors/hb_annotate.h"
#include "actors/runner.h"
#include "engine/buf_pin.h"
#include "engine/engine.h"
#include "tests/api/common.h"
#include "tests/api/trap.h"

/* runner_owner_way as this program's own constructor (default priority)
 * found it, and what it is once set. This test links the library
 * statically, as an application may: its constructors then run in link
 * order, ours after the program's, unless a priority puts them first. */
static bool owner_way_at_ctor, owner_way_due_at_ctor;

__attribute__((constructor)) static void application_constructor(void)
{
	owner_way_at_ctor = runner_owner_way;
	owner_way_due_at_ctor = asym_fence_kernel && !hb_watching();
}

struct fixture {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_mem *mem;
	struct doca_buf *src, *dst;
	struct doca_pe *pe;
};

static void fixture_up_with(struct fixture *f, doca_event_cb_t cb)
{
	cr_assert_eq(doca_ctx_create(&f->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_event_cb(f->ctx, cb), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("sw0", &f->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(f->ctx, f->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_create(f->ctx, 8192, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &f->mem),
		     DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(f->mem, 0, 4096, &f->src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(f->mem, 4096, 4096, &f->dst), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&f->pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(f->pe, f->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(f->ctx), DOCA_SUCCESS);
}

static void fixture_up(struct fixture *f)
{
	fixture_up_with(f, NULL);
}

static void fixture_down(struct fixture *f)
{
	cr_assert_eq(doca_ctx_stop(f->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(f->src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(f->dst), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_destroy(f->mem), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(f->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(f->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(f->pe), DOCA_SUCCESS);
}

struct holder {
	struct doca_pe *pe;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int phase; /* 1: holding the guard, 2: told to release */
};

static void *hold_runner(void *arg)
{
	struct holder *h = arg;

	cr_assert_eq(runner_enter(&handle_deref(h->pe)->runner), RUNNER_ENTERED);
	pthread_mutex_lock(&h->lock);
	h->phase = 1;
	pthread_cond_broadcast(&h->cond);
	while (h->phase != 2)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	runner_exit(&handle_deref(h->pe)->runner);
	return NULL;
}

Test(runner, a_second_thread_is_refused_and_nothing_changes)
{
	struct fixture f;
	struct holder h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct doca_task_desc desc;
	pthread_t t;

	fixture_up(&f);
	memset(&desc, 0, sizeof(desc));
	desc.type = DOCA_TASK_COPY;
	desc.src = f.src;
	desc.dst = f.dst;
	memset(handle_deref(f.src)->data, 0x5a, 4096);
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS);

	h.pe = f.pe;
	pthread_create(&t, NULL, hold_runner, &h);
	pthread_mutex_lock(&h.lock);
	while (h.phase != 1)
		pthread_cond_wait(&h.cond, &h.lock);
	pthread_mutex_unlock(&h.lock);

	cr_assert_eq(doca_pe_progress(f.pe), 0, "refused while another thread runs the PE");
	uint32_t n = 7;

	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_ERROR_IN_USE);
	cr_assert_eq(n, 0);
	cr_assert_null(doca_pe_get_event(f.pe));
	cr_assert_eq(((uint8_t *)handle_deref(f.dst)->data)[0], 0, "the copy did not run");
	cr_assert_eq(doca_pe_destroy(f.pe), DOCA_ERROR_IN_USE);

	pthread_mutex_lock(&h.lock);
	h.phase = 2;
	pthread_cond_broadcast(&h.cond);
	pthread_mutex_unlock(&h.lock);
	pthread_join(t, NULL);

	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_SUCCESS);
	cr_assert_eq(n, 1);
	struct doca_event *ev = doca_pe_get_event(f.pe);

	cr_assert_not_null(ev);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	cr_assert_eq(memcmp(handle_deref(f.src)->data, handle_deref(f.dst)->data, 4096), 0);
	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_SUCCESS, "an idle turn is not a refusal");
	cr_assert_eq(n, 0);
	doca_event_free(ev);
	fixture_down(&f);
}

static int nested_result = -1;
static doca_error_t nested_try = DOCA_SUCCESS;
static uint32_t nested_events = 7;

static void progress_from_callback(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	nested_result = (int)doca_pe_progress(ud.ptr);
	nested_try = doca_pe_try_progress(ud.ptr, &nested_events);
}

Test(runner, progress_from_inside_a_callback_is_refused)
{
	struct fixture f;
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY };

	cr_assert_eq(doca_ctx_create(&f.ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_create(&f.pe), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_event_cb(f.ctx, progress_from_callback), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_user_data(f.ctx, (union doca_data){ .ptr = f.pe }), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("sw0", &f.dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(f.ctx, f.dev), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_create(f.ctx, 8192, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &f.mem),
		     DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(f.mem, 0, 4096, &f.src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(f.mem, 4096, 4096, &f.dst), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(f.pe, f.ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(f.ctx), DOCA_SUCCESS);
	desc.src = f.src;
	desc.dst = f.dst;
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_progress(f.pe), 1);
	cr_assert_eq(nested_result, 0);
	cr_assert_eq(nested_try, DOCA_ERROR_NOT_PERMITTED);
	cr_assert_eq(nested_events, 0);
	fixture_down(&f);
}

static void ignore_event(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
}

Test(runner, try_progress_names_each_refusal)
{
	struct fixture f;
	uint32_t n = 7;

	fixture_up_with(&f, ignore_event);
	cr_assert_eq(doca_pe_try_progress(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(n, 0);
	cr_assert_eq(doca_pe_try_progress(f.pe, NULL), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_try_progress((struct doca_pe *)f.ctx, &n), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_run_on_cpu(f.pe, -1), DOCA_SUCCESS);
	n = 7;
	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_ERROR_BAD_STATE, "a worker runs the PE");
	cr_assert_eq(n, 0);
	cr_assert_eq(doca_pe_stop_run(f.pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_try_progress(f.pe, &n), DOCA_SUCCESS);
	fixture_down(&f);
}

static void wait_phase(struct holder *h, int phase)
{
	pthread_mutex_lock(&h->lock);
	while (h->phase != phase)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
}

static void set_phase(struct holder *h, int phase)
{
	pthread_mutex_lock(&h->lock);
	h->phase = phase;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* Arming and clearing belong to the runner: refused while another thread
 * runs the PE, and the refused call neither arms, fires nor clears. */
Test(runner, notification_arm_and_clear_are_refused_while_another_thread_runs_the_pe)
{
	struct fixture f;
	struct holder h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY };
	pthread_t t;
	int fd;

	fixture_up(&f);
	cr_assert_eq(doca_pe_get_notification_handle(f.pe, &fd), DOCA_SUCCESS);
	desc.src = f.src;
	desc.dst = f.dst;
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS); /* pending work */

	h.pe = f.pe;
	pthread_create(&t, NULL, hold_runner, &h);
	wait_phase(&h, 1);
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_ERROR_IN_USE);
	cr_assert_eq(atomic_load(&handle_deref(f.pe)->armed), PE_DISARMED, "the refused arm armed nothing");
	cr_assert(!fd_readable(fd), "the refused arm fired nothing");
	set_phase(&h, 2);
	pthread_join(t, NULL);

	/* Armed by the runner with work pending: fires at once. */
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	cr_assert(fd_readable(fd));
	h.phase = 0;
	pthread_create(&t, NULL, hold_runner, &h);
	wait_phase(&h, 1);
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_ERROR_IN_USE);
	cr_assert(fd_readable(fd), "the refused clear drained nothing");
	cr_assert_eq(atomic_load(&handle_deref(f.pe)->armed), PE_FIRED, "the refused clear disarmed nothing");
	set_phase(&h, 2);
	pthread_join(t, NULL);
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_SUCCESS);
	cr_assert(!fd_readable(fd));

	cr_assert_eq(doca_pe_progress(f.pe), 1);
	struct doca_event *ev = doca_pe_get_event(f.pe);

	cr_assert_not_null(ev);
	doca_event_free(ev);
	fixture_down(&f);
}

static void *free_event(void *ev)
{
	doca_event_free(ev);
	return NULL;
}

static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/*
 * A free on a thread that cannot take the guard (a submit holds it briefly)
 * is not refused: the credit travels through the run's mailbox and is back
 * after the next turn, not before, while the buffers' pins are dropped at
 * once. A second free of the same event is then refused, logged and
 * counted, and changes nothing.
 */
Test(runner, a_free_off_the_pe_thread_returns_through_the_mailbox, .init = cr_redirect_stderr)
{
	struct fixture f;
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY };
	char log[4096];
	pthread_t t;

	setenv("DOCA_LOG_LEVEL", "error", 1);
	fixture_up(&f);
	desc.src = f.src;
	desc.dst = f.dst;
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_progress(f.pe), 1);
	struct doca_event *ev = doca_pe_get_event(f.pe);
	struct ctx_run *run = handle_deref(f.ctx)->run;
	uint64_t stale = doca_stale_handle_count();

	cr_assert_not_null(ev);
	/* held briefly by a CAS, as another thread's submit holds it, not as
	 * our own parked guard's brief section: an outside free waits out
	 * the parked owner's brief sections (engine/event.c, "The owner's
	 * plain claim"), which never wait for another thread, as this one
	 * would in its join */
	runner_unpark_for_others(&handle_deref(f.pe)->runner);
	cr_assert_eq(runner_enter_brief(&handle_deref(f.pe)->runner), RUNNER_ENTERED);
	pthread_create(&t, NULL, free_event, ev);
	pthread_join(t, NULL);
	runner_exit(&handle_deref(f.pe)->runner);
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size - 1, "not back before a turn");
	cr_assert(!mailbox_idle(&run->mbox), "the credit waits in the mailbox");
	cr_assert_eq(buf_users_outstanding(handle_deref(f.src)) + buf_guarded_outstanding(handle_deref(f.src)), 0,
		     "source pins dropped by the free");
	cr_assert_eq(buf_users_outstanding(handle_deref(f.dst)) + buf_guarded_outstanding(handle_deref(f.dst)), 0,
		     "destination pins dropped by the free");

	doca_event_free(ev);
	read_redirected_stderr(log, sizeof(log));
	cr_assert_eq(count_of(log, "doca_event_free: event already freed (a stale or double free)"), 1,
		     "log: \"%s\"", log);
	cr_assert_eq(doca_stale_handle_count(), stale + 1);
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size - 1, "the refusal changed nothing");

	cr_assert_eq(doca_pe_progress(f.pe), 0, "a returned credit is no event");
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size, "credits: %u of %u",
		     task_pool_free(&run->pool), run->pool.size);
	/* the turn that took the credit back did not drop the pins again */
	cr_assert_eq(buf_users_outstanding(handle_deref(f.src)), 0, "source pins");
	cr_assert_eq(buf_users_outstanding(handle_deref(f.dst)), 0, "destination pins");
	cr_assert_eq(buf_guarded_outstanding(handle_deref(f.src)), 0, "source guarded pins");
	cr_assert_eq(buf_guarded_outstanding(handle_deref(f.dst)), 0, "destination guarded pins");

	/* The pool still bounds what is outstanding: size tasks, then AGAIN. */
	for (uint32_t i = 0; i < run->pool.size; i++)
		cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS, "task %u", i);
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_ERROR_AGAIN);
	for (uint32_t done = 0; done < run->pool.size;) {
		doca_pe_progress(f.pe);
		while ((ev = doca_pe_get_event(f.pe)) != NULL) {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
			doca_event_free(ev);
			done++;
		}
	}
	fixture_down(&f);
}

struct destroyer {
	struct doca_pe *pe;
	doca_error_t rc;
};

static void *destroy_pe_trapped(void *arg)
{
	struct destroyer *d = arg;

	trap_arm(TRAP_YIELD, TRAP_THIS_THREAD);
	d->rc = doca_pe_destroy(d->pe);
	return NULL;
}

/*
 * Two threads destroy one PE. The second is parked inside the guard's wait,
 * past the handle check made before the guard, while the first destroys the
 * PE; then it takes the guard and must find the PE dead (a read-side section
 * here keeps the memory, as any reader's would). It is refused: one destroy,
 * one deferred free, each fd closed once.
 */
Test(runner, two_threads_destroying_one_pe_destroy_it_once)
{
	struct destroyer d = { .rc = DOCA_ERROR_UNKNOWN };
	pthread_t t;

	cr_assert_eq(doca_pe_create(&d.pe), DOCA_SUCCESS);
	cr_assert_eq(runner_enter_brief(&handle_deref(d.pe)->runner), RUNNER_ENTERED);
	pthread_create(&t, NULL, destroy_pe_trapped, &d);
	trap_wait_parked(TRAP_YIELD);
	runner_exit(&handle_deref(d.pe)->runner);
	doca_rcu_read_lock();
	cr_assert_eq(doca_pe_destroy(d.pe), DOCA_SUCCESS);
	trap_release(TRAP_YIELD);
	pthread_join(t, NULL);
	doca_rcu_read_unlock();
	cr_assert_eq(d.rc, DOCA_ERROR_INVALID_VALUE, "the second destroy returned %s",
		     doca_error_get_name(d.rc));
}

/* ---- parking (actors/runner.h): the loop's thread keeps the guard ---- */

static const void *owner_word(struct doca_pe *pe)
{
	return atomic_load(&handle_deref(pe)->runner.owner);
}

/* Submit one copy, run the turn that completes it, take its event. */
static struct doca_event *one_event(struct fixture *f)
{
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY, .src = f->src, .dst = f->dst };

	desc.user_data.u64 = 77;
	cr_assert_eq(doca_task_submit(f->ctx, &desc), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_progress(f->pe), 1);
	struct doca_event *ev = doca_pe_get_event(f->pe);

	cr_assert_not_null(ev);
	return ev;
}

static void copy_once(struct fixture *f)
{
	struct doca_event *ev = one_event(f);

	cr_assert_eq(doca_event_get_user_data(ev).u64, 77);
	cr_assert_eq(doca_event_get_bytes(ev), 4096);
	doca_event_free(ev);
}

/* A progress call parks the guard for its thread; that thread's submit,
 * progress, get and free then enter and leave it without replacing the
 * parked word (no CAS, no new parking), and leave its count at 0. */
Test(runner, the_loop_thread_keeps_its_guard_parked)
{
	struct fixture f;

	fixture_up(&f);
	cr_assert_null(owner_word(f.pe), "nobody holds a new PE's guard");
	cr_assert_eq(doca_pe_progress(f.pe), 0);
	const void *w = owner_word(f.pe);

	cr_assert(runner_parked_by(w, runner_self()), "parked for us: %p", w);
	for (int i = 0; i < 3; i++)
		copy_once(&f);
	cr_assert_eq(owner_word(f.pe), w, "the same parked word after three copies");
	cr_assert_eq(runner_me->depth, 0, "outside every parked section");
	cr_assert_null(atomic_load(&runner_me->in[0]));
	fixture_down(&f);
}

static struct runner_thread *cb_owner_way = (struct runner_thread *)1;
static uint32_t cb_depth = 99;

static void note_owner_way(struct doca_event *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
	cb_owner_way = runner_me_owner_way;
	cb_depth = runner_me->depth;
}

/* The owner ways find the flag, the record and depth 0 in one word,
 * runner_me_owner_way (runner_depth_set): the record at depth 0 with the
 * flag, its twin inside a parked section, such as the progress's around
 * its callbacks, whose calls then never take a way made for depth 0 (a
 * twin is no thread's identity: runner_owner_enter fails on it). */
Test(runner, the_owner_ways_word_is_a_twin_inside_a_parked_section)
{
	struct fixture f;
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY };

	fixture_up_with(&f, note_owner_way);
	desc.src = f.src;
	desc.dst = f.dst;
	cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert(runner_parked_by(owner_word(f.pe), runner_self()), "parked for us");
	struct runner_thread *way = runner_owner_way ? runner_me : runner_twin(runner_me);

	cr_assert_eq(runner_me_owner_way, way, "at depth 0: the record if the flag holds");
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_progress(f.pe), 1);
	cr_assert_eq(cb_depth, 1, "the callback runs inside the progress's parked section");
	cr_assert_eq(cb_owner_way, runner_twin(runner_me), "inside a parked section: %p", (void *)cb_owner_way);
	cr_assert_eq(runner_me->depth, 0);
	cr_assert_eq(runner_me_owner_way, way, "back at depth 0");
	fixture_down(&f);
}

struct other_progress {
	struct doca_pe *pe;
	const void *before, *after; /* the owner word around the call */
	bool parked_for_it;         /* after: parked for that thread */
	doca_error_t rc;
	uint32_t events;
};

static void *progress_elsewhere(void *arg)
{
	struct other_progress *o = arg;

	o->before = owner_word(o->pe);
	o->rc = doca_pe_try_progress(o->pe, &o->events);
	o->after = owner_word(o->pe);
	o->parked_for_it = runner_parked_by(o->after, runner_self());
	return NULL;
}

/* Another thread's progress revokes a guard parked by a thread that is
 * outside, runs the turn and parks the guard for itself; the first thread
 * takes it back the same way, even once that other thread has exited. */
Test(runner, another_thread_revokes_a_parked_guard_and_parks_it_for_itself)
{
	struct fixture f;
	struct other_progress o = { 0 };
	pthread_t t;

	fixture_up(&f);
	cr_assert_eq(doca_pe_progress(f.pe), 0);
	const void *w = owner_word(f.pe);

	o.pe = f.pe;
	pthread_create(&t, NULL, progress_elsewhere, &o);
	pthread_join(t, NULL);
	cr_assert_eq(o.rc, DOCA_SUCCESS);
	cr_assert_eq(o.events, 0);
	cr_assert_eq(o.before, w);
	cr_assert(o.parked_for_it, "parked for the other thread: %p", o.after);
	cr_assert(!runner_parked_by(o.after, runner_self()));
	copy_once(&f); /* revokes the exited thread's parking */
	cr_assert(runner_parked_by(owner_word(f.pe), runner_self()));
	cr_assert_neq(owner_word(f.pe), w, "a new parking, a new generation");
	fixture_down(&f);
}

static struct other_progress cb_try;

static void try_progress_elsewhere_cb(struct doca_event *ev, union doca_data ud)
{
	pthread_t t;

	(void)ev; /* released by the PE when we return */
	(void)ud;
	pthread_create(&t, NULL, progress_elsewhere, &cb_try);
	pthread_join(t, NULL);
}

/* While the parked owner is inside (here: in an event callback of its
 * turn), another thread's progress is refused (IN_USE, no events) and
 * leaves only its mark on the owner word; the owner's exit looks at
 * nothing (the word stays marked), and the next call from the other
 * thread finds the owner outside and takes the guard. */
Test(runner, a_revocation_while_the_owner_is_inside_is_refused_and_changes_nothing)
{
	struct fixture f;
	struct doca_task_desc desc = { .type = DOCA_TASK_COPY };
	struct other_progress o = { 0 };
	pthread_t t;

	fixture_up_with(&f, try_progress_elsewhere_cb);
	desc.src = f.src;
	desc.dst = f.dst;
	cr_assert_eq(doca_pe_progress(f.pe), 0); /* parks */
	const void *w = owner_word(f.pe);

	cb_try = (struct other_progress){ .pe = f.pe };
	cr_assert_eq(doca_task_submit(f.ctx, &desc), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_progress(f.pe), 1); /* the callback runs in a parked entry */
	cr_assert_eq(cb_try.rc, DOCA_ERROR_IN_USE);
	cr_assert_eq(cb_try.events, 0);
	cr_assert_eq(cb_try.before, w);
	cr_assert_eq(cb_try.after, runner_tagged(w, RUNNER_REVOKING_TAG), "the refused revocation only marked W");
	cr_assert_eq(owner_word(f.pe), runner_tagged(w, RUNNER_REVOKING_TAG), "the owner's exit left the mark");
	o.pe = f.pe;
	pthread_create(&t, NULL, progress_elsewhere, &o);
	pthread_join(t, NULL);
	cr_assert_eq(o.rc, DOCA_SUCCESS);
	cr_assert(o.parked_for_it);
	fixture_down(&f);
}

/* A free on another thread never takes a guard parked for the loop's
 * thread: its credit comes back through the mailbox at that thread's next
 * turn, and the parked word stays. */
Test(runner, a_free_elsewhere_leaves_a_parked_guard_alone)
{
	struct fixture f;
	pthread_t t;

	fixture_up(&f);
	struct doca_event *ev = one_event(&f);
	const void *w = owner_word(f.pe);
	struct ctx_run *run = handle_deref(f.ctx)->run;

	pthread_create(&t, NULL, free_event, ev);
	pthread_join(t, NULL);
	cr_assert_eq(owner_word(f.pe), w);
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size - 1, "not back before a turn");
	cr_assert_eq(doca_pe_progress(f.pe), 0);
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size, "back after it");
	cr_assert_eq(owner_word(f.pe), w);
	fixture_down(&f);
}

static _Atomic bool about_to_progress;

static void *progress_elsewhere_flagged(void *arg)
{
	atomic_store(&about_to_progress, true);
	return progress_elsewhere(arg);
}

/* A brief hold of a parked guard (here runner_enter_brief, as a submit
 * posting straight to the device takes it) makes another thread's
 * progress wait for its end, not refuse: that call then succeeds. */
Test(runner, a_revocation_waits_for_a_brief_hold_of_the_parked_guard)
{
	struct fixture f;
	struct other_progress o = { 0 };
	pthread_t t;

	fixture_up(&f);
	cr_assert_eq(doca_pe_progress(f.pe), 0); /* parks */
	const void *w = owner_word(f.pe);

	cr_assert_eq(runner_enter_brief(&handle_deref(f.pe)->runner), RUNNER_ENTERED);
	cr_assert_eq(owner_word(f.pe), w, "a brief hold of a parked guard keeps the word");
	o.pe = f.pe;
	atomic_store(&about_to_progress, false);
	pthread_create(&t, NULL, progress_elsewhere_flagged, &o);
	while (!atomic_load(&about_to_progress))
		sched_yield();
	sleep_ms(20); /* most likely inside its wait now; either way it must not be refused */
	runner_exit(&handle_deref(f.pe)->runner);
	pthread_join(t, NULL);
	cr_assert_eq(o.rc, DOCA_SUCCESS, "waited, not refused: %s", doca_error_get_name(o.rc));
	cr_assert(o.parked_for_it);
	fixture_down(&f);
}

/* A revoker paused between its look at the owner's list and its CAS
 * while the owner enters and parks 65 536 times (the 16-bit generation
 * would come round to the word the revoker marked): a parking with a
 * revoker in flight gives the guard up, so the word never comes back, the
 * owner's next entry is a CAS, and the paused revoker's CAS fails while
 * the owner is inside. (With parkings that ignore the count, the word
 * comes round unmarked, the owner enters it without a trace, a second
 * revoker marks it, and the paused CAS makes a second holder; a review
 * found that case in an earlier protocol.) */
Test(runner, a_paused_revoker_cannot_take_the_guard_when_the_generation_comes_round)
{
	struct runner r = { .owner = NULL };
	const void *other = runner_tagged(&r, 0); /* any word that is not the owner's */

	cr_assert_eq(runner_enter(&r), RUNNER_ENTERED);
	runner_exit_park(&r);
	const void *w = atomic_load(&r.owner);
	const void *marked = w;

	cr_assert(runner_parked_by(w, runner_self()));
	runner_revoke_count(&r);
	cr_assert(runner_revoke_mark(&r, &marked)); /* then looked: the owner was outside */
	marked = runner_tagged(w, RUNNER_REVOKING_TAG);
	for (uint32_t i = 0; i < 65536u; i++) {
		runner_unpark_for_others(&r); /* as event mode's arm does */
		cr_assert_eq(runner_enter(&r), RUNNER_ENTERED);
		runner_exit_park(&r);
	}
	cr_assert_eq(runner_enter(&r), RUNNER_ENTERED);
	const void *now = atomic_load(&r.owner);

	if (runner_parked_by(now, runner_self())) /* (the broken variant: W again) */
		cr_assert(runner_revoke_mark(&r, &now), "a second revoker marks the word");
	const void *expected = marked;

	cr_assert(!atomic_compare_exchange_strong(&r.owner, &expected, other),
		  "the paused revoker's CAS fails while the owner is inside");
	runner_exit(&r);
	runner_revoke_withdraw(&r);
	cr_assert_eq(atomic_load(&r.revoke), 0u, "nothing left counted");
	cr_assert_eq(runner_enter(&r), RUNNER_ENTERED);
	runner_exit_park(&r);
	cr_assert(runner_parked_by(atomic_load(&r.owner), runner_self()), "parked again, no revoker in flight");
}

/* runner_parked_by compares the low 32 bits of the owner word: exact
 * because every record comes from one array (two records differ in those
 * bits, none is 0 there) and a token's low six bits are never a record's.
 * Records of threads alive at once, the main thread's among them, lie in
 * one array's span; a parked word is its own record's only. (With each
 * record allocated where the heap puts it, the main thread's in the main
 * heap and the others' in their arenas, the span was 0x612c740: checked.) */
#define RECORD_THREADS 6

struct record_thread {
	pthread_barrier_t *all_made;
	const void *me;
	const void *token;
	const void *way_before; /* runner_me_owner_way before the record */
};

static void *record_thread_run(void *arg)
{
	struct record_thread *rt = arg;

	rt->way_before = runner_me_owner_way;
	rt->me = runner_self();
	rt->token = runner_self_tokens + RUNNER_TOKEN_AT;
	pthread_barrier_wait(rt->all_made); /* alive until every record is made */
	return NULL;
}

Test(runner, records_are_told_apart_by_their_low_32_bits)
{
	pthread_barrier_t all_made;
	pthread_t th[RECORD_THREADS];
	struct record_thread rt[RECORD_THREADS + 1];

	/* the main thread's first: all seven alive at once, seven records */
	rt[RECORD_THREADS] = (struct record_thread){ .me = runner_self(), .token = runner_self_tokens + RUNNER_TOKEN_AT };
	cr_assert_eq(pthread_barrier_init(&all_made, NULL, RECORD_THREADS), 0);
	for (int i = 0; i < RECORD_THREADS; i++) {
		rt[i] = (struct record_thread){ .all_made = &all_made };
		cr_assert_eq(pthread_create(&th[i], NULL, record_thread_run, &rt[i]), 0);
	}
	for (int i = 0; i < RECORD_THREADS; i++)
		cr_assert_eq(pthread_join(th[i], NULL), 0);
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	for (int i = 0; i <= RECORD_THREADS; i++) {
		uintptr_t a = (uintptr_t)rt[i].me;

		cr_assert_eq(a % 64u, 0u, "thread %d has a record (64-aligned)", i);
		cr_assert_neq((uint32_t)a, 0u, "no record's low 32 bits are NULL's");
		cr_assert_eq((uintptr_t)rt[i].token % 64u, RUNNER_TOKEN_AT, "a token's low six bits are 8");
		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
	}
	cr_assert_lt(hi - lo, (uintptr_t)RUNNER_RECORDS_MAX * sizeof(struct runner_thread),
		     "the records lie in one array (span %#lx)", (unsigned long)(hi - lo));
	for (int i = 0; i <= RECORD_THREADS; i++) {
		const void *w = (const void *)((uintptr_t)0xbeefu << RUNNER_GEN_SHIFT |
					       (uintptr_t)runner_tagged(rt[i].me, RUNNER_PARKED_TAG));

		cr_assert(runner_parked_by(w, rt[i].me), "its own parked word, any generation");
		cr_assert(!runner_parked_by(runner_tagged(w, RUNNER_REVOKING_TAG), rt[i].me), "marked: not W");
		cr_assert(runner_parked_by(runner_unmarked(runner_tagged(w, RUNNER_REVOKING_TAG)), rt[i].me));
		cr_assert(!runner_parked_by(rt[i].me, rt[i].me), "held, not parked");
		cr_assert(!runner_parked_by(runner_tagged(rt[i].me, RUNNER_BRIEF_TAG), rt[i].me));
		cr_assert(!runner_parked_by(w, NULL), "never a record-less caller's");
		for (int j = 0; j <= RECORD_THREADS; j++) {
			cr_assert(!runner_parked_by(w, rt[j].token), "never a token's");
			cr_assert(!runner_parked_by(w, runner_twin((struct runner_thread *)rt[j].me)),
				  "never a twin's");
			if (j != i)
				cr_assert(!runner_parked_by(w, rt[j].me), "never another record's");
			if (j < RECORD_THREADS) { /* the twin of the threads without a record */
				cr_assert_not_null(rt[j].way_before);
				cr_assert(!runner_parked_by(w, rt[j].way_before), "never the shared twin's");
			}
		}
	}
	pthread_barrier_destroy(&all_made);
}

/* The owner ways' entry (runner_owner_enter: push, light half, one look)
 * enters its own parked word, unmarked, and only that: a marked word, a
 * held one, another thread's and a twin's entry leave the list as it was
 * and the owner word unchanged. */
Test(runner, the_owner_ways_entry_takes_only_its_own_unmarked_word)
{
	struct runner r = { .owner = NULL };
	struct runner_thread *t = (struct runner_thread *)runner_self();
	const void *cur = NULL;

	cr_assert_not_null(t);
	cr_assert_eq(t->depth, 0u);
	cr_assert(!runner_owner_enter(&r, t, false, false, &cur), "free: not ours");
	cr_assert_null(atomic_load(&t->in[0]), "the list as it was");
	cr_assert_eq(runner_enter(&r), RUNNER_ENTERED);
	cr_assert(!runner_owner_enter(&r, t, true, true, &cur), "held by a CAS: not parked");
	cr_assert_null(atomic_load(&t->in[0]));
	runner_exit_park(&r);
	const void *w = atomic_load(&r.owner);

	cr_assert(runner_owner_enter(&r, t, true, true, &cur), "our parked word");
	cr_assert_eq(cur, w, "the word loaded");
	cr_assert_eq(atomic_load(&t->in[0]), runner_entry_of(&r, true), "our entry, brief");
	runner_exit_unparked_first(&r, cur, t);
	cr_assert_null(atomic_load(&t->in[0]), "popped");
	cr_assert_eq(atomic_load(&r.owner), w, "still parked");
	cr_assert(runner_owner_enter(&r, t, false, false, &cur), "compared where it is");
	cr_assert(runner_parked_by(cur, t) && runner_parked_thread(cur) == t, "a parked word of ours: %p", cur);
	cr_assert_eq(atomic_load(&t->in[0]), runner_entry_of(&r, false), "our entry");
	runner_exit_unparked_first(&r, cur, runner_parked_thread(cur));
	cr_assert_null(atomic_load(&t->in[0]), "popped");
	cr_assert_eq(atomic_load(&r.owner), w, "still parked");
	cr_assert(!runner_owner_enter(&r, runner_twin(t), false, false, &cur), "a twin never enters");
	cr_assert_eq(atomic_load(&t->in[0]), NULL, "our list untouched");
	cr_assert_null(atomic_load(&runner_twin(t)->in[0]), "the twin's restored");
	const void *marked = w;

	runner_revoke_count(&r);
	cr_assert(runner_revoke_mark(&r, &marked));
	cr_assert(!runner_owner_enter(&r, t, false, false, &cur), "marked by a revoker: the slow way");
	cr_assert_null(atomic_load(&t->in[0]));
	cr_assert_eq(atomic_load(&r.owner), runner_tagged(w, RUNNER_REVOKING_TAG), "the mark stays");
	runner_revoke_withdraw(&r);
	cr_assert_eq(runner_enter(&r), RUNNER_ENTERED, "the slow way's CAS from the marked word");
	runner_exit(&r);
	cr_assert_null(atomic_load(&r.owner));
}

/* The owner ways' flag (both of its flags tested as one) is fixed before
 * an application's constructor can call the library, as the flags it is
 * made of are: a call there sees the value every later call sees. */
Test(runner, owner_way_flag_is_set_before_an_application_constructor)
{
	cr_assert_eq(runner_owner_way, asym_fence_kernel && !hb_watching());
	cr_assert_eq(owner_way_at_ctor, owner_way_due_at_ctor,
		     "a default-priority constructor found runner_owner_way %d, due %d", owner_way_at_ctor,
		     owner_way_due_at_ctor);
}
