/**
 * @file doca_ctx.h
 * @brief Contexts: the boundary. The root object that owns its device
 *        binding, memories and task pool, and whose state machine orders the
 *        whole lifecycle.
 *
 * States and transitions:
 * - IDLE → (doca_ctx_start) → RUNNING. STARTING is visible only to other
 *   threads while doca_ctx_start runs.
 * - RUNNING → (doca_ctx_stop) → IDLE when no task is in flight and no event
 *   is unreaped as the stop begins and the stop flushes nothing; otherwise
 *   → STOPPING. Tasks the device already took complete normally; tasks
 *   still queued are flushed (FAILURE, DOCA_ERROR_SHUTDOWN). This holds in
 *   every mode: a PE run by another thread or by its worker keeps running
 *   during the call, and a stop whose tasks it finishes or flushes
 *   meanwhile still reports STOPPING.
 * - STOPPING → IDLE inside doca_pe_progress once every event of the context
 *   has been freed.
 *
 * Every accepted task gets exactly one event. Transitions made by a call are
 * reported to the state-changed callback inside that call, on the calling
 * thread, after the change; STOPPING → IDLE is reported inside
 * doca_pe_progress. One exception: a doca_ctx_stop made inside a PE's turn
 * (an event or state callback run by doca_pe_progress or a worker) or inside
 * any state callback, while another thread is reporting a transition of
 * that context, does not wait for that report (it could wait for ever: the
 * report may be waiting for this very turn, in a doca_task_submit_wait, or
 * for a report of the caller's context). It moves the context to STOPPING
 * at once and returns DOCA_ERROR_IN_PROGRESS; RUNNING → STOPPING is then
 * reported inside doca_pe_progress of the context's PE, after the report
 * under way, and STOPPING → IDLE follows as usual.
 */
#ifndef DOCA_CTX_H
#define DOCA_CTX_H

#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Default task pool size of a context (tasks in flight + unreaped events). */
#define DOCA_CTX_DEFAULT_MAX_TASKS 1024u
/** @brief Largest accepted doca_ctx_set_max_tasks value. */
#define DOCA_CTX_MAX_TASKS_LIMIT (1u << 20)

/**
 * @brief Called inside doca_pe_progress for each completed task of a context
 *        that has one; the event is freed when the callback returns.
 * The callback may submit tasks, call doca_ctx_stop, destroy the buffers
 * its task names (doca_buf_destroy), and free nothing else; it must not
 * call doca_pe_progress (refused) nor doca_event_free on @p ev. It must
 * return normally, not leave by pthread_exit or longjmp: the PE's guard
 * is held while it runs, and a callback that never returns leaves the
 * guard held for good.
 * @param ev The completed task's event.
 * @param ctx_user_data The context's value from doca_ctx_set_user_data.
 *
 * Thread safety: called on the thread running the context's PE (inside
 *         its doca_pe_progress, or on its worker: doca_pe_run_on_cpu),
 *         one call at a time per PE.
 */
typedef void (*doca_event_cb_t)(struct doca_event *ev, union doca_data ctx_user_data);

/**
 * @brief Called after each state transition, with the context already in @p next.
 * From the callback reporting RUNNING the application may submit; from the
 * one reporting IDLE it may destroy the context's buffers and memories, close
 * its device and destroy the context itself. It must not stop a PE's worker:
 * doca_pe_stop_run refuses there (DOCA_ERROR_NOT_PERMITTED), as the worker
 * could be waiting, in an event callback's doca_ctx_stop, for this report
 * to end. Nor may it progress a PE: doca_pe_progress and
 * doca_pe_try_progress refuse there (DOCA_ERROR_NOT_PERMITTED, no turn
 * run), also in a report made inside doca_ctx_start or doca_ctx_stop.
 * @param ctx The context.
 * @param ctx_user_data The context's value from doca_ctx_set_user_data.
 * @param prev The state before the transition.
 * @param next The state after it (the current one).
 *
 * Thread safety: called on the thread whose call made the transition
 *         (doca_ctx_start, doca_ctx_stop, from a callback too), and for
 *         STOPPING → IDLE, and RUNNING → STOPPING of a stop put off (see
 *         the top of this file), on the thread running the PE
 *         (doca_pe_progress or its worker); the reports of one context
 *         never overlap and come in the order of its transitions (a
 *         report under way when a stop is put off may find the context
 *         STOPPING already).
 */
typedef void (*doca_ctx_state_cb_t)(struct doca_ctx *ctx, union doca_data ctx_user_data,
				    enum doca_ctx_state prev, enum doca_ctx_state next);

/**
 * @brief Create a context, IDLE, with no device and no progress engine.
 * @param[out] ctx The new context.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE if ctx is NULL; DOCA_ERROR_NO_MEMORY.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_ctx_create(struct doca_ctx **ctx);

/**
 * @brief Bind a device to an IDLE context. Many contexts may bind one device.
 *
 * A binding ends only with doca_dev_close of the handle, which unbinds
 * every context bound to it (and needs them all IDLE); a context is
 * destroyed only once unbound. So contexts whose lives end one at a time
 * each open the device themselves: doca_dev_open of the same string again
 * gives another handle on the same device.
 * @param ctx The context.
 * @param dev The device to bind.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or wrong-type handles;
 *         DOCA_ERROR_BAD_STATE if the context is not IDLE (checked after the
 *         handles, before the rest);
 *         DOCA_ERROR_NOT_PERMITTED if the context already has a device.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_ctx_set_dev(struct doca_ctx *ctx, struct doca_dev *dev);

/**
 * @brief Set the size of the context's task pool: the bound on tasks in
 *        flight plus events not yet freed.
 * @param ctx The context.
 * @param n 1 .. DOCA_CTX_MAX_TASKS_LIMIT.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL, a wrong-type handle
 *         or n out of range (checked in that order, before the state);
 *         DOCA_ERROR_BAD_STATE if the context is not IDLE.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_ctx_set_max_tasks(struct doca_ctx *ctx, uint32_t n);

/**
 * @brief Read the size of the task pool.
 * @param ctx The context.
 * @param[out] n The size of the task pool.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_ctx_get_max_tasks(const struct doca_ctx *ctx, uint32_t *n);

/**
 * @brief Set the value handed to both callbacks.
 * @param ctx The context.
 * @param ctx_user_data The value.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_BAD_STATE if the context is not IDLE.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data ctx_user_data);

/**
 * @brief Deliver this context's events through @p cb instead of
 *        doca_pe_get_event. NULL restores doca_pe_get_event.
 * @param ctx The context.
 * @param cb The event callback, or NULL.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_BAD_STATE if the context is not IDLE.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_ctx_set_event_cb(struct doca_ctx *ctx, doca_event_cb_t cb);

/**
 * @brief Report each state transition to @p cb (NULL: no reports).
 * @param ctx The context.
 * @param cb The state callback, or NULL.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_BAD_STATE if the context is not IDLE.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_cb_t cb);

/**
 * @brief Start an IDLE context: allocate its task pool and queues; it becomes RUNNING.
 * @param ctx The context.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_BAD_STATE if the context is not IDLE;
 *         DOCA_ERROR_NOT_CONNECTED without a device or a progress engine;
 *         DOCA_ERROR_NOT_PERMITTED without an event callback while a worker
 *         runs its progress engine (doca_pe_run_on_cpu);
 *         DOCA_ERROR_NO_MEMORY; DOCA_ERROR_OPERATING_SYSTEM when a file
 *         descriptor of the run (the device's completion channel, the PE's
 *         watch of it) cannot be made; or the device's
 *         error making the context's queue pair: DOCA_ERROR_DRIVER, on
 *         a verbs device also DOCA_ERROR_NOT_CONNECTED (its port is not
 *         ACTIVE), and on a verbs device or fab0 DOCA_ERROR_NOT_PERMITTED
 *         or DOCA_ERROR_NOT_SUPPORTED as its driver answers (doca_dev_open).
 *         On each of these errors the context stays IDLE and nothing is
 *         reported. When the device gives a reason for its refusal, the
 *         log says it: "doca_ctx_start: REASON (ERROR)", a warning for
 *         DOCA_ERROR_AGAIN, an error otherwise.
 *
 * Thread safety: any thread, also while other threads submit.
 */
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

/**
 * @brief Stop a RUNNING context. New submissions are refused at once.
 * @param ctx The context.
 * @return DOCA_SUCCESS when nothing was in flight or unreaped as the call
 *         began and it flushed nothing: the context is IDLE (reported
 *         RUNNING → IDLE). An event freed on another thread than the
 *         PE's counts as unreaped until the PE's next turn takes its
 *         credit back (doca_event_free), so a stop right after such frees
 *         may return DOCA_ERROR_IN_PROGRESS: progress the PE until IDLE;
 *         DOCA_ERROR_IN_PROGRESS when it is STOPPING (reported RUNNING →
 *         STOPPING; STOPPING → IDLE follows once every event is freed), also
 *         for a second stop while the first has not finished (after a
 *         put-off stop, perhaps before its RUNNING → STOPPING report is
 *         made), and for a
 *         stop put off (made inside a PE turn or a state callback while
 *         another thread reports a transition of the context, even with
 *         nothing in flight: STOPPING, its report made later by
 *         doca_pe_progress; see the top of this file);
 *         DOCA_ERROR_BAD_STATE when it is IDLE (also for a second stop
 *         made after a PE turn on another thread finished the first);
 *         DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle.
 *
 * Thread safety: any thread, also from the context's callbacks and while
 *         other threads submit: a racing submission is either accepted (and
 *         gets exactly one event) or refused with DOCA_ERROR_BAD_STATE.
 *         Two state callbacks on two threads may stop each other's
 *         contexts: each stop is put off, neither waits. (doca_ctx_start,
 *         the setters and doca_ctx_destroy do wait for a report under way:
 *         two state callbacks starting each other's contexts deadlock.)
 */
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

/**
 * @brief Read the current state.
 * @param ctx The context.
 * @param[out] state The state.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle.
 *
 * Thread safety: any thread (the value may change right after).
 */
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_state *state);

/**
 * @brief Destroy an IDLE context that has no memories and no device; it is
 *        disconnected from its progress engine. Its memory is freed after an
 *        RCU grace period.
 * @param ctx The context.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL, a wrong-type
 *         handle or one already destroyed, the loser of two concurrent
 *         destroys included (a stale handle: logged and counted by
 *         doca_stale_handle_count);
 *         DOCA_ERROR_BAD_STATE if RUNNING, STARTING or STOPPING;
 *         DOCA_ERROR_IN_USE while memories exist or a device is bound.
 *         On error nothing is changed.
 *
 * Thread safety: any thread, also from its IDLE state callback.
 */
doca_error_t doca_ctx_destroy(struct doca_ctx *ctx);

/**
 * @brief The context's credit notification fd: pollable with epoll, poll or
 *        libuv's uv_poll_t, constant for the context's life and owned by it
 *        (do not close it; it is closed with the context). Made on the first
 *        call of this function or doca_ctx_request_credit_notification.
 *
 * Back-pressure without spinning: a producer that got DOCA_ERROR_AGAIN arms
 * the fd (doca_ctx_request_credit_notification), waits for it to become
 * readable, clears it (doca_ctx_clear_credit_notification) and submits
 * again. Threads that may block use doca_task_submit_wait instead.
 * @param ctx The context.
 * @param[out] fd The file descriptor.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL arguments or a
 *         wrong-type handle; DOCA_ERROR_BAD_STATE for a context inherited
 *         across fork(); DOCA_ERROR_OPERATING_SYSTEM if the fd cannot be made.
 *
 * Thread safety: any thread; concurrent first calls make one fd.
 */
doca_error_t doca_ctx_get_credit_notification_handle(struct doca_ctx *ctx, int *fd);

/**
 * @brief Arm the credit notification fd once: it becomes readable when a
 *        credit returns to the task pool (an event is freed) or the context
 *        leaves RUNNING — at once if either is already so. Arming an armed
 *        or fired fd changes nothing. No wake is lost: a credit returned
 *        while this call runs either is seen by it or fires the fd.
 *
 * Readable means "submit again", not "a submit will succeed": another
 * thread may take the credit first. Rarely the fd is readable although
 * nothing is due (a clear racing a firing): the submit then returns
 * DOCA_ERROR_AGAIN and the application arms again.
 * @param ctx The context.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type
 *         handle; DOCA_ERROR_BAD_STATE for a context inherited across
 *         fork(); DOCA_ERROR_OPERATING_SYSTEM if the fd cannot be made.
 *         On error nothing is armed.
 *
 * Thread safety: any thread, also while others submit and the PE runs.
 *         The fd is one signal: one armer consumes one firing.
 */
doca_error_t doca_ctx_request_credit_notification(struct doca_ctx *ctx);

/**
 * @brief Disarm the credit notification fd and make it not readable; call
 *        after it woke you, before submitting again.
 * @param ctx The context.
 * @return DOCA_SUCCESS (also when the fd was never made or armed);
 *         DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_BAD_STATE for a context inherited across fork().
 *
 * Thread safety: any thread.
 */
doca_error_t doca_ctx_clear_credit_notification(struct doca_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H */
