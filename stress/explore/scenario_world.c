/*
 * stress/explore/scenario_world.c — the world the scenarios share and the
 * checks they end with (scenario.h).
 *
 * "Exactly one event per accepted task": a task's tag is counted in
 * accepted[tag] before it is submitted (and uncounted if refused), so an
 * event can never be seen before its task is counted; an event beyond the
 * count, or a count without its event at the end, is a violation. Each task
 * copies its own pattern into its own destination, checked byte for byte.
 */
#include "scenario.h"

#include <sched.h>
#include <string.h>
#include <sys/epoll.h>

#include "engine/engine.h"

#define ACCESS_RW (DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE)

static uint8_t pattern_byte(unsigned tag, unsigned i)
{
	return (uint8_t)(0x11u * (tag + 1u) + i);
}

void world_open(struct world *w, const char *dev, uint32_t max_tasks, doca_event_cb_t cb)
{
	EXPECT_OK(doca_pe_create(&w->pe));
	EXPECT_OK(doca_dev_open(dev, &w->dev));
	EXPECT_OK(doca_ctx_create(&w->ctx));
	EXPECT_OK(doca_ctx_set_dev(w->ctx, w->dev));
	EXPECT_OK(doca_ctx_set_max_tasks(w->ctx, max_tasks));
	if (cb != NULL) {
		EXPECT_OK(doca_ctx_set_user_data(w->ctx, (union doca_data){ .ptr = w }));
		EXPECT_OK(doca_ctx_set_event_cb(w->ctx, cb));
	}
	EXPECT_OK(doca_pe_connect_ctx(w->pe, w->ctx));
	EXPECT_OK(doca_mem_create(w->ctx, 2 * WORLD_TASKS * WORLD_LEN, ACCESS_RW, &w->mem));
	EXPECT_OK(doca_mem_get_addr(w->mem, (void **)&w->data));
	for (unsigned t = 0; t < WORLD_TASKS; t++) {
		for (unsigned i = 0; i < WORLD_LEN; i++)
			w->data[t * WORLD_LEN + i] = pattern_byte(t, i);
		EXPECT_OK(doca_buf_create(w->mem, t * WORLD_LEN, WORLD_LEN, &w->src[t]));
		EXPECT_OK(doca_buf_create(w->mem, (WORLD_TASKS + t) * WORLD_LEN, WORLD_LEN, &w->dst[t]));
	}
	EXPECT_OK(doca_ctx_start(w->ctx));
}

static void *world_stopper(void *arg)
{
	struct world *w = arg;

	explore_name("stopper");
	w->stop_result = doca_ctx_stop(w->ctx);
	return NULL;
}

void world_stop_start(struct world *w, pthread_t *t)
{
	if (pthread_create(t, NULL, world_stopper, w) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
}

void world_stop_join(struct world *w, pthread_t t)
{
	pthread_join(t, NULL);
	EXPECT_IN(w->stop_result, 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
}

/* Submit slot @p tag, blocking for a credit when @p wait (timeout_ms). */
static doca_error_t world_submit_as(struct world *w, unsigned tag, bool wait, int timeout_ms)
{
	struct doca_task_desc d = {
		.type = DOCA_TASK_COPY,
		.src = w->src[tag],
		.dst = w->dst[tag],
		.user_data = { .u64 = tag },
	};

	atomic_fetch_add(&w->accepted[tag], 1);
	doca_error_t err = wait ? doca_task_submit_wait(w->ctx, &d, timeout_ms) : doca_task_submit(w->ctx, &d);

	if (err == DOCA_SUCCESS)
		atomic_fetch_add(&w->accepted_total, 1);
	else
		atomic_fetch_sub(&w->accepted[tag], 1);
	return err;
}

doca_error_t world_submit(struct world *w, unsigned tag)
{
	return world_submit_as(w, tag, false, 0);
}

doca_error_t world_submit_wait(struct world *w, unsigned tag, int timeout_ms)
{
	return world_submit_as(w, tag, true, timeout_ms);
}

void world_event(struct world *w, struct doca_event *ev)
{
	uint64_t tag = doca_event_get_user_data(ev).u64;

	if (tag >= WORLD_TASKS)
		explore_end(VERDICT_INVARIANT, "events: an event with user data %llu, no such task",
			    (unsigned long long)tag);
	unsigned n = atomic_fetch_add(&w->events[tag], 1) + 1;
	unsigned accepted = atomic_load(&w->accepted[tag]);

	if (n > accepted)
		explore_end(VERDICT_INVARIANT, "events: task %llu has had %u events, %u accepted",
			    (unsigned long long)tag, n, accepted);
	enum doca_event_status st = doca_event_get_status(ev);
	doca_error_t err = doca_event_get_error(ev);
	const uint8_t *dst = w->data + (WORLD_TASKS + tag) * WORLD_LEN;

	if (st == DOCA_EVENT_STATUS_SUCCESS) {
		if (doca_event_get_bytes(ev) != WORLD_LEN ||
		    memcmp(dst, w->data + tag * WORLD_LEN, WORLD_LEN) != 0)
			explore_end(VERDICT_INVARIANT, "data: task %llu succeeded with %zu bytes, not its copy",
				    (unsigned long long)tag, doca_event_get_bytes(ev));
	} else if (st != DOCA_EVENT_STATUS_FAILURE || err != DOCA_ERROR_SHUTDOWN ||
		   doca_event_get_bytes(ev) != 0) {
		explore_end(VERDICT_INVARIANT, "events: task %llu ended with status %d, %s, %zu bytes",
			    (unsigned long long)tag, (int)st, doca_error_get_name(err),
			    doca_event_get_bytes(ev));
	}
	atomic_fetch_add(&w->events_total, 1);
}

void world_event_cb(struct doca_event *ev, union doca_data ctx_user_data)
{
	world_event(ctx_user_data.ptr, ev);
}

unsigned world_progress(struct world *w)
{
	struct doca_event *ev;
	unsigned n = doca_pe_progress(w->pe);

	while ((ev = doca_pe_get_event(w->pe)) != NULL) {
		world_event(w, ev);
		doca_event_free(ev);
		n++;
	}
	return n;
}

struct doca_event *world_take_event(struct world *w)
{
	struct doca_event *ev;

	while (doca_pe_progress(w->pe) == 0)
		sched_yield();
	ev = doca_pe_get_event(w->pe);
	if (ev == NULL)
		explore_end(VERDICT_INVARIANT, "events: progress made one ready, get_event returned none");
	world_event(w, ev);
	return ev;
}

enum doca_ctx_state world_state(const struct world *w)
{
	enum doca_ctx_state st;

	EXPECT_OK(doca_ctx_get_state(w->ctx, &st));
	return st;
}

void world_progress_until_idle(struct world *w)
{
	for (;;) {
		unsigned n = world_progress(w);

		if (world_state(w) == DOCA_CTX_STATE_IDLE)
			return;
		if (n == 0)
			sched_yield();
	}
}

void world_until_blocked(pthread_t t, enum explore_block why, const char *if_finished)
{
	const struct explore_thread *r = explore_thread_of(t);

	while (r->state != THREAD_BLOCKED || r->why != why) {
		if (r->state == THREAD_FINISHED)
			explore_end(VERDICT_INVARIANT, "%s", if_finished);
		sched_yield();
	}
}

void *world_armer(void *arg)
{
	struct world_armer *a = arg;

	explore_name("armer");
	a->result = doca_ctx_request_credit_notification(a->w->ctx);
	return NULL;
}

void world_until_asleep(pthread_t t)
{
	world_until_blocked(t, BLOCK_FUTEX, "result: submit_wait returned with no credit free");
}

static atomic_bool section_in, section_go;

static void *section_holder(void *unused)
{
	(void)unused;
	explore_name("reader");
	doca_rcu_read_lock();
	atomic_store(&section_in, true);
	while (!atomic_load(&section_go))
		sched_yield();
	doca_rcu_read_unlock();
	return NULL;
}

pthread_t world_section_hold(void)
{
	pthread_t t;

	atomic_store(&section_in, false);
	atomic_store(&section_go, false);
	if (pthread_create(&t, NULL, section_holder, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	while (!atomic_load(&section_in))
		sched_yield();
	return t;
}

void world_section_let_go(void)
{
	atomic_store(&section_go, true);
}

void expect_current_or_stale(const char *call, doca_error_t result, doca_error_t current, uint64_t stale_before)
{
	uint64_t counted = doca_stale_handle_count() - stale_before;

	if (!(result == current && counted == 0) && !(result == DOCA_ERROR_INVALID_VALUE && counted == 1))
		explore_end(VERDICT_INVARIANT, "result: %s racing a destroy returned %s with %llu stale handles counted",
			    call, doca_error_get_name(result), (unsigned long long)counted);
}

void expect_one_destroyed(const char *call, doca_error_t mine, doca_error_t theirs, doca_error_t busy,
			  uint64_t stale_before)
{
	if ((mine == DOCA_SUCCESS) == (theirs == DOCA_SUCCESS))
		explore_end(VERDICT_INVARIANT, "result: two racing %s returned %s and %s", call,
			    doca_error_get_name(mine), doca_error_get_name(theirs));
	expect_current_or_stale(call, mine == DOCA_SUCCESS ? theirs : mine, busy, stale_before);
}

struct destroy_race {
	doca_error_t (*destroy)(void *h);
	void *h;
	doca_error_t result;
};

static void *racing_destroyer(void *arg)
{
	struct destroy_race *r = arg;

	explore_name("destroyer");
	r->result = r->destroy(r->h);
	return NULL;
}

void world_destroy_twice(const char *call, doca_error_t (*destroy)(void *h), void *h, doca_error_t busy)
{
	struct destroy_race r = { .destroy = destroy, .h = h, .result = DOCA_SUCCESS };
	uint64_t stale = doca_stale_handle_count();
	pthread_t t;

	if (pthread_create(&t, NULL, racing_destroyer, &r) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	doca_error_t mine = destroy(h);

	pthread_join(t, NULL);
	expect_one_destroyed(call, mine, r.result, busy, stale);
	explore_rcu_barrier();
	explore_guards_check();
}

void world_close(struct world *w)
{
	for (unsigned t = 0; t < WORLD_TASKS; t++) {
		EXPECT_OK(doca_buf_destroy(w->src[t]));
		EXPECT_OK(doca_buf_destroy(w->dst[t]));
	}
	EXPECT_OK(doca_mem_destroy(w->mem));
	EXPECT_OK(doca_dev_close(w->dev));
	EXPECT_OK(doca_ctx_destroy(w->ctx));
	EXPECT_OK(doca_pe_destroy(w->pe));
	/* the application goes on and opens fds of its own */
	explore_guards_open(4);
}

void world_finish(struct world *w)
{
	explore_rcu_barrier();
	explore_guards_check();
	for (unsigned t = 0; t < WORLD_TASKS; t++) {
		unsigned accepted = atomic_load(&w->accepted[t]), events = atomic_load(&w->events[t]);

		if (events != accepted)
			explore_end(VERDICT_INVARIANT, "events: task %u accepted %u times, %u events", t,
				    accepted, events);
	}
}

void world_end_with_exact_credits(struct world *w, unsigned max_tasks)
{
	for (unsigned tag = 0; tag < max_tasks; tag++)
		EXPECT_OK(world_submit(w, tag % WORLD_TASKS));
	doca_error_t err = world_submit(w, max_tasks % WORLD_TASKS);

	if (err != DOCA_ERROR_AGAIN)
		explore_end(VERDICT_INVARIANT, "credits: submit %u of %u every event freed: %s, not AGAIN",
			    max_tasks + 1u, max_tasks, doca_error_get_name(err));
	EXPECT_IN(doca_ctx_stop(w->ctx), 2, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS);
	world_progress_until_idle(w);
	world_close(w);
	world_finish(w);
}

void world_wait_notification(struct world *w, int epfd)
{
	struct epoll_event ev;
	bool due = atomic_load(&w->accepted_total) > atomic_load(&w->events_total);

	EXPECT_OK(doca_pe_request_notification(w->pe));
	(void)epoll_wait(epfd, &ev, 1, due ? -1 : 1);
	EXPECT_OK(doca_pe_clear_notification(w->pe));
}

void world_event_loop(struct world *w, int epfd, atomic_uint *done, unsigned threads,
		      void (*look)(const struct doca_event *ev, void *arg), void *arg)
{
	for (;;) {
		struct doca_event *ev;
		uint32_t n = doca_pe_progress(w->pe);

		while ((ev = doca_pe_get_event(w->pe)) != NULL) {
			if (look != NULL)
				look(ev, arg);
			world_event(w, ev);
			doca_event_free(ev);
		}
		if (atomic_load(done) == threads && atomic_load(&w->events_total) == atomic_load(&w->accepted_total))
			return;
		if (n == 0)
			world_wait_notification(w, epfd);
	}
}

struct doca_pe *world_pe_reused_under(struct doca_pe **old, void *(*stale)(void *), pthread_t *t)
{
	struct doca_pe *pe;

	EXPECT_OK(doca_pe_create(old));
	if (pthread_create(t, NULL, stale, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (doca_error_t rc; (rc = doca_pe_destroy(*old)) != DOCA_SUCCESS; sched_yield())
		if (rc != DOCA_ERROR_IN_USE)
			explore_end(VERDICT_INVARIANT, "result: doca_pe_destroy(old) returned %s",
				    doca_error_get_name(rc));
	explore_rcu_barrier(); /* its cell is free: the next PE's (cells.c hands it out first) */
	EXPECT_OK(doca_pe_create(&pe));
	return pe;
}

void world_pe_progress_alone(struct doca_pe *pe, int times, bool get)
{
	uint32_t n;

	for (int i = 0; i < times; i++) {
		doca_error_t rc = doca_pe_try_progress(pe, &n);

		if (rc != DOCA_SUCCESS)
			explore_end(VERDICT_INVARIANT,
				    "result: doca_pe_try_progress on the new PE (run by this thread only) returned %s",
				    doca_error_get_name(rc));
		if (get && doca_pe_get_event(pe) != NULL)
			explore_end(VERDICT_INVARIANT, "result: an event from a PE without contexts");
	}
}

void world_pe_stale_end(struct doca_pe *pe, pthread_t t, const char *what, const doca_error_t *rc)
{
	uint32_t n;

	pthread_join(t, NULL);
	if (*rc != DOCA_SUCCESS && *rc != DOCA_ERROR_IN_USE && *rc != DOCA_ERROR_INVALID_VALUE)
		explore_end(VERDICT_INVARIANT, "result: %s on a destroyed PE's handle returned %s", what,
			    doca_error_get_name(*rc));
	EXPECT_OK(doca_pe_try_progress(pe, &n));
	EXPECT_OK(doca_pe_destroy(pe));
	explore_rcu_barrier();
}

void world_ctx_destroyed_under(struct doca_ctx **old, void *(*stale)(void *), pthread_t *t)
{
	EXPECT_OK(doca_ctx_create(old));
	if (pthread_create(t, NULL, stale, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	EXPECT_OK(doca_ctx_destroy(*old));
	explore_rcu_barrier(); /* its cell is free (unless the call holds it): the next context's */
}
