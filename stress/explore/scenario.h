/*
 * stress/explore/scenario.h — what a scenario is, and the small world the
 * scenarios share: one context on one device and one PE, tasks named by a
 * tag (their slot of src/dst buffers), and the checks every scenario ends
 * with. A scenario runs on the schedule's first thread, creates its own
 * threads with pthread_create, and returns when it has checked everything
 * (the explorer then reports it clean); any broken invariant ends the
 * schedule at once with its verdict. Return codes are checked exactly with
 * the stress programs' stress_expect_in.
 */
#ifndef DOCA_EXPLORE_SCENARIO_H
#define DOCA_EXPLORE_SCENARIO_H

#include <doca_core.h>

#include <stdatomic.h>

#include "explore.h"
#include "stress_common.h"

struct scenario {
	const char *name;
	const char *what; /* one line for --list */
	void (*run)(void);
};

extern const struct scenario explore_scenarios[];
extern const unsigned explore_nscenarios;

/* The scenarios, one per file. */
void scenario_submit_stop(void);
void scenario_pe_destroy_after_stop(void);
void scenario_pe_destroy_engine_wake(void);
void scenario_stop_run_from_callback(void);
void scenario_run_on_cpu_stop_run(void);
void scenario_stop_run_recycled_id(void);
void scenario_event_double_free(void);
void scenario_event_wrap_free(void);
void scenario_owner_claim_revoke(void);
void scenario_owner_claim_revoke_bulk(void);
void scenario_owner_claim_set(void);
void scenario_two_pe_cross(void);
void scenario_two_pe_cross_single(void);
void scenario_owner_claim_two_outside(void);
void scenario_fork_in_flight(void);
void scenario_destroy_refused(void);
void scenario_event_wake(void);
void scenario_runner_handoff(void);
void scenario_runner_revoke(void);
void scenario_owner_way_revoke(void);
/* runner_revoke's guard, its count, and its run with another owner
 * (scenario_runner_handoff.c) */
struct runner;
struct runner *runner_guard(void);
void runner_guard_add(void);
void runner_guard_run(void *(*owner)(void *));
void scenario_pool_share(void);
void scenario_pool_share_bulk(void);
void scenario_pool_share_submit(void);
void scenario_pool_share_burst(void);
void scenario_pool_share_chunk(void);
void scenario_pool_revoke(void);
void scenario_pool_share_again(void);
void scenario_quiesce_again_buf(void);
void scenario_quiesce_again_stop(void);
void scenario_stale_stop(void);
void scenario_stale_connect(void);
void scenario_stale_configure(void);
void scenario_stale_ctx_destroy(void);
void scenario_stale_pe_destroy(void);
void scenario_stale_buf_destroy(void);
void scenario_stale_mem_destroy(void);
void scenario_stale_mem_create(void);
void scenario_stale_buf_create(void);
void scenario_stale_notify(void);
void scenario_stale_progress(void);
void scenario_stale_get(void);
void scenario_stale_worker(void);
void scenario_free_destroy(void);
void scenario_cb_destroy(void);
void scenario_cb_destroy_shared(void);
void scenario_cb_destroy_stop(void);
void scenario_credit_wake(void);
void scenario_credit_watch_start(void);
void scenario_restart_turn(void);
void scenario_stop_deferred(void);
void scenario_stop_deferred_armed(void);
void scenario_wait_restart(void);
void scenario_wait_destroy(void);
void scenario_wait_destroy_race(void);
void scenario_credit_many(void);
void scenario_submit_order(void);
void scenario_ring_wrap(void);
void scenario_ring_sp_mp_sp(void);
void scenario_ring_batch(void);
void scenario_ring_mp_two(void);
void scenario_ring_watch_idle(void);
void scenario_ring_watch_released(void);
void scenario_ring_unwatch_release(void);
void scenario_ring_batch_armed(void);
void scenario_ring_watch_arm(void);
void scenario_ring_watch_engine(void);
void scenario_pool_reload_stale_t(void);
void scenario_pool_chunk_prefix(void);
void scenario_pool_steal_fresh(void);
void scenario_pool_again_look(void);
void scenario_pool_batch_again(void);
void scenario_pool_owner_cover(void);
void scenario_pool_switch_chunk(void);
void scenario_pool_switch_in_callback(void);
void scenario_pool_split_again(void);
void scenario_owner_free_stop(void);
void scenario_owner_free_bulk_stop(void);
void scenario_owner_free_close(void);
void scenario_owner_free_bulk_close(void);
void scenario_owner_free_wait(void);
void scenario_owner_free_bulk_wait(void);
void scenario_owner_submit_destroy(void);
void scenario_stop_recount(void);
void scenario_stop_recount_path(void);

/* End the schedule unless @p call returned one of the @p n codes listed. */
#define EXPECT_IN(call, n, ...)                                                      \
	do {                                                                         \
		if (!stress_expect_in((call), #call, (n), __VA_ARGS__))              \
			explore_end(VERDICT_INVARIANT, "result: %s", #call);         \
	} while (0)
#define EXPECT_OK(call) EXPECT_IN(call, 1, DOCA_SUCCESS)

#define WORLD_TASKS 8u
#define WORLD_LEN 64u

struct world {
	struct doca_pe *pe;
	struct doca_dev *dev;
	struct doca_ctx *ctx;
	struct doca_mem *mem;
	struct doca_buf *src[WORLD_TASKS], *dst[WORLD_TASKS];
	uint8_t *data; /* the memory: src regions, then dst regions */
	atomic_uint accepted[WORLD_TASKS];
	atomic_uint events[WORLD_TASKS];
	atomic_uint accepted_total, events_total;
	doca_error_t stop_result; /* world_stop_start's stop */
};

/* Open dev, make a RUNNING ctx of @p max_tasks on a new PE; @p cb NULL:
 * events are taken with doca_pe_get_event. */
void world_open(struct world *w, const char *dev, uint32_t max_tasks, doca_event_cb_t cb);
/* Start a thread ("stopper") that stops w's context once (doca_ctx_stop). */
void world_stop_start(struct world *w, pthread_t *t);
/* Join it: its stop must have returned DOCA_SUCCESS or DOCA_ERROR_IN_PROGRESS. */
void world_stop_join(struct world *w, pthread_t t);
/* Submit the copy of slot @p tag; counts it if accepted. */
doca_error_t world_submit(struct world *w, unsigned tag);
/* The same with doca_task_submit_wait (blocks for a credit). */
doca_error_t world_submit_wait(struct world *w, unsigned tag, int timeout_ms);
/* Check an event (status, bytes, data) and count it for its tag. */
void world_event(struct world *w, struct doca_event *ev);
/* Event callback for a world's ctx (user data: the world). */
void world_event_cb(struct doca_event *ev, union doca_data ctx_user_data);
/* One progress call and every ready event taken: counted, freed. Returns
 * how many events the call made ready and were taken (0: nothing to do). */
unsigned world_progress(struct world *w);
/* Progress until the ctx is IDLE, yielding only when there was nothing to
 * do (an application's polling loop). */
void world_progress_until_idle(struct world *w);
/* Event mode: arm, sleep on the notification fd @p epfd (for ever when a
 * completion is due: it must wake us; else until nothing else can run),
 * clear. */
void world_wait_notification(struct world *w, int epfd);
/* The application's event-mode loop: progress, take every ready event
 * (@p look at it first, when not NULL, then world_event and free it), and
 * sleep on @p epfd when a call found nothing, until *@p done reaches
 * @p threads and every accepted task has its event. */
void world_event_loop(struct world *w, int epfd, atomic_uint *done, unsigned threads,
		      void (*look)(const struct doca_event *ev, void *arg), void *arg);
/* Every event freed: exactly @p max_tasks submits are accepted and the
 * next is refused with DOCA_ERROR_AGAIN (the credits are exact; their
 * tags modulo WORLD_TASKS); then stop, progress until IDLE, close and
 * finish. */
void world_end_with_exact_credits(struct world *w, unsigned max_tasks);
/* Progress until an event is ready, take it and check it (world_event):
 * the application holds it, not freed. */
struct doca_event *world_take_event(struct world *w);
enum doca_ctx_state world_state(const struct world *w);
/* Yield until thread @p t sleeps on a futex (a blocked submit_wait's
 * sleep); an invariant violation if it returns instead. */
void world_until_asleep(pthread_t t);
/* Until thread t blocks for @p why; the scenario ends with @p if_finished
 * (an invariant) if it finishes instead. */
void world_until_blocked(pthread_t t, enum explore_block why, const char *if_finished);
/* A thread (named "armer") that arms the credit notification of its
 * world's context and keeps the answer: pthread_create(.., world_armer,
 * &a), then a.result after the join. */
struct world_armer {
	struct world *w;
	doca_error_t result;
};
void *world_armer(void *arg);
/* A thread holding a read-side section: a grace period begun meanwhile
 * waits until world_section_let_go (then the caller joins it). One at a
 * time. */
pthread_t world_section_hold(void);
void world_section_let_go(void);
/* A call racing the destroy of its handle's object returned @p result:
 * @p current with no stale handle counted since @p stale_before (the
 * handle was current when the call looked), or INVALID_VALUE counted
 * once (it was not: refused as every stale handle is). */
void expect_current_or_stale(const char *call, doca_error_t result, doca_error_t current, uint64_t stale_before);
/* Two destroys of one object raced and returned @p mine and @p theirs:
 * exactly one DOCA_SUCCESS; the other INVALID_VALUE counted once since
 * @p stale_before (the handle was destroyed when it looked again: refused
 * as every stale handle is), or @p busy with nothing counted
 * (DOCA_SUCCESS: the loser has no such answer). */
void expect_one_destroyed(const char *call, doca_error_t mine, doca_error_t theirs, doca_error_t busy,
			  uint64_t stale_before);
/* Race @p destroy(@p h) on a new thread against the same call on this one,
 * check the outcome (expect_one_destroyed), let every deferred free run
 * and check the runner guards. */
void world_destroy_twice(const char *call, doca_error_t (*destroy)(void *h), void *h, doca_error_t busy);
/* The ctx is IDLE: destroy everything, each call must succeed. */
void world_close(struct world *w);
/* The end of every scenario: the application opens fds of its own after
 * teardown, every deferred free runs, then nothing may have been written
 * into those fds and every accepted task must have had exactly one event. */
void world_finish(struct world *w);
/* A PE destroyed under a stale call: create *old, start @p stale (which
 * uses it) on *t, destroy *old (refused only IN_USE, while the call holds
 * its guard), let its cell go free, and return the new PE that reuses it. */
struct doca_pe *world_pe_reused_under(struct doca_pe **old, void *(*stale)(void *), pthread_t *t);
/* The new PE's own thread progresses it @p times: each call must succeed
 * (no other thread runs it); with @p get, a get after each must find no
 * event (it has no context). */
void world_pe_progress_alone(struct doca_pe *pe, int times, bool get);
/* The end of a stale PE call's scenario: join *t; the stale call's
 * result *rc (read after the join), by @p what (e.g. "a progress"), must
 * be SUCCESS (it came first), IN_USE (the destroy held the guard) or
 * INVALID_VALUE (stale); then the new PE still progresses on this thread
 * and is destroyed, and its cell goes free. */
void world_pe_stale_end(struct doca_pe *pe, pthread_t t, const char *what, const doca_error_t *rc);
/* A context destroyed under a stale call: create *old (IDLE, nothing
 * bound), start @p stale (which uses it) on *t, destroy *old and let its
 * cell go free: the next context created reuses it. */
void world_ctx_destroyed_under(struct doca_ctx **old, void *(*stale)(void *), pthread_t *t);

#endif /* DOCA_EXPLORE_SCENARIO_H */
