/**
 * @file doca_pe.h
 * @brief Progress engines: the progress. A PE is an actor: one thread at a
 *        time runs it (doca_pe_progress, doca_pe_get_event(s),
 *        doca_pe_get_events_ok, the callbacks; doca_event_free from any
 *        thread, doca_event.h); it drains its contexts' mailboxes, posts tasks to
 *        the device, polls completion queues and turns completions into events.
 *
 * Polling mode: loop on doca_pe_progress and doca_pe_get_event.
 * Event mode: wait on the fd from doca_pe_get_notification_handle (epoll,
 * poll); doca_pe_request_notification arms it before sleeping, it becomes
 * readable when an event is ready or when work arrives that needs a progress
 * call, doca_pe_clear_notification resets it after waking. The loop, with
 * epfd an epoll set holding that fd (EPOLLIN):
 *
 * @code
 * for (;;) {
 *         doca_pe_progress(pe);
 *         while ((ev = doca_pe_get_event(pe)) != NULL) {
 *                 handle(ev);                   // may submit further tasks
 *                 doca_event_free(ev);
 *         }
 *         if (finished)
 *                 break;
 *         doca_pe_request_notification(pe);     // arm: after draining, before sleeping
 *         epoll_wait(epfd, &out, 1, -1);        // any other fds of the loop may sit here too
 *         doca_pe_clear_notification(pe);       // disarm: after waking, before progress
 * }
 * @endcode
 *
 * It wakes at most once per burst of completions: arming posts the tasks
 * already queued for the device, a task submitted from another thread
 * while the PE is armed goes straight to the device (doca_task.h), and a
 * device's completion thread wakes the PE only while a completion is
 * unread. Arming with an event still ready makes the fd readable at once
 * (a wake-up that finds that event). A readable fd means a progress call
 * has work: a finished task becomes an event only in doca_pe_progress (a
 * device's completion is not yet an event), so after waking call it
 * before doca_pe_get_event, as the loop does. Progressing while armed is
 * allowed; the fd stays armed (each such progress call arms the device's
 * completion channels again; if a device refuses, the fd becomes readable
 * instead, and the next doca_pe_request_notification returns its error).
 * Worker mode: doca_pe_run_on_cpu hands the PE to a worker thread pinned to
 * one CPU that progresses it, delivers events through the context callbacks,
 * and sleeps on the notification fd when idle.
 *
 * When a PE call waits: a doca_task_submit may post straight to the device
 * (doca_task.h), holding the PE for at most 32 descriptors and a doorbell:
 * made on the thread that ran the PE's last turn, or, in event mode, on
 * any thread while the PE is armed. While it does, doca_pe_progress,
 * doca_pe_get_event, doca_event_free, doca_pe_request_notification,
 * doca_pe_clear_notification, doca_pe_destroy and a worker's turns called
 * from any other thread wait for it (spinning, yielding the CPU) instead of
 * being refused; if that thread is preempted while holding the PE, they
 * wait until it runs again, so they are not lock-free then. A PE used from
 * one thread, or driven by its worker, never waits so. doca_ctx_stop of a
 * context of the PE (when nothing is in flight) and doca_buf_destroy of a
 * buffer of such a context also wait, the same way, while the thread that
 * keeps the PE between its calls is inside a submit, get or free of it
 * (each a few dozen instructions unless that thread is preempted), as
 * they would wait for a read-side grace period.
 */
#ifndef DOCA_PE_H
#define DOCA_PE_H

#include <stdbool.h> /* doca_pe_get_events_ok's has_error */

#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Create a progress engine with no contexts.
 * @param[out] pe The new progress engine.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE if pe is NULL;
 *         DOCA_ERROR_NO_MEMORY; DOCA_ERROR_OPERATING_SYSTEM if the
 *         notification fd cannot be made.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_pe_create(struct doca_pe **pe);

/**
 * @brief Connect an IDLE context to this PE. A context has at most one PE;
 *        a PE serves any number of contexts.
 * @param pe The progress engine.
 * @param ctx The context to connect.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or wrong-type handles,
 *         or one destroyed before or during the call (a stale handle:
 *         logged and counted by doca_stale_handle_count), nothing changed;
 *         DOCA_ERROR_BAD_STATE if the context is not IDLE (checked after the
 *         handles, before the rest);
 *         DOCA_ERROR_NOT_PERMITTED if the context is already connected (to
 *         this PE or another); DOCA_ERROR_NO_MEMORY.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);

/**
 * @brief One turn of the actor: drain mailboxes (a bounded batch per shard),
 *        post to the device, poll completions, deliver events (callbacks run
 *        here), finish stops.
 * @param pe The progress engine.
 * @return The number of events made ready or delivered in this turn; 0 also
 *         when refused: NULL or wrong-type handle, another thread is running
 *         this PE, called from inside one of its callbacks or a state
 *         callback (doca_ctx_state_cb_t), or the PE is
 *         handed to a worker (each of these refusals is logged in debug
 *         builds, a stale handle in every build; NULL and a wrong-type
 *         handle are not logged);
 *         doca_pe_try_progress tells a refusal from an idle turn.
 *
 * Thread safety: one thread at a time per PE; a concurrent second caller is
 *         refused, never allowed to corrupt state. A doca_task_submit
 *         posting straight to the device (see doca_task.h) holds the PE
 *         for a moment; this call, doca_pe_get_event and doca_event_free
 *         wait for it to finish rather than being refused, however long
 *         its thread is preempted (see "When a PE call waits" above). The
 *         thread whose call ran last keeps the PE between its calls, so its
 *         next submit, progress, get and free take no atomic
 *         read-modify-write; another thread's call takes the PE over at the
 *         cost of one membarrier(2) system call while that thread is
 *         outside every call on the PE, and is refused (IN_USE) while it is
 *         inside one.
 */
uint32_t doca_pe_progress(struct doca_pe *pe);

/**
 * @brief doca_pe_progress that says why it did nothing.
 * @param pe The progress engine.
 * @param[out] events The number of events made ready or delivered; 0 when
 *             the call is refused.
 * @return DOCA_SUCCESS (the turn ran, perhaps finding nothing);
 *         DOCA_ERROR_INVALID_VALUE for NULL arguments or a wrong-type handle;
 *         DOCA_ERROR_BAD_STATE when a worker thread runs the PE
 *         (doca_pe_run_on_cpu) or the PE was inherited across fork();
 *         DOCA_ERROR_NOT_PERMITTED from inside one of the PE's callbacks
 *         or any context's state callback (doca_ctx_state_cb_t, also one
 *         reported inside doca_ctx_start or doca_ctx_stop);
 *         DOCA_ERROR_IN_USE while another thread runs the PE. A refused call
 *         changes nothing.
 *
 * Thread safety: as doca_pe_progress.
 */
doca_error_t doca_pe_try_progress(struct doca_pe *pe, uint32_t *events);

/**
 * @brief Take the oldest ready event (of contexts without an event callback).
 *
 * "Oldest" is in the PE's visit order: the order in which its turns
 * visited the contexts and took their completions. Within one context,
 * one submitting thread's tasks reach the device in its submission order
 * and, on sw0 (which completes in order), their events come in it. Across
 * contexts no order is promised: a task submitted to context A before
 * another to context B, by the same thread, may complete and come out
 * after it (B was already in line for a visit, or A's ring is watched and
 * joins the visit order only at a turn's look).
 * @param pe The progress engine.
 * @return The event, to be freed with doca_event_free; NULL when none is
 *         ready, for NULL or a wrong-type handle, when another thread is
 *         running the PE, and on any thread but the worker's while a worker
 *         runs the PE (doca_pe_run_on_cpu: its events go to callbacks).
 *
 * Thread safety: the thread running the PE; waits while a submit holds the
 *         PE briefly (see "When a PE call waits" above).
 */
struct doca_event *doca_pe_get_event(struct doca_pe *pe);

/**
 * @brief Take up to @p max ready events, oldest first: doca_pe_get_event
 *        for a burst (free them with doca_event_free_bulk). Oldest in the
 *        PE's visit order, as doca_pe_get_event: per context in each
 *        submitting thread's order, across contexts no order promised.
 * @param pe The progress engine.
 * @param[out] evs Receives the events.
 * @param max Room in @p evs.
 * @return The number of events stored; 0 in every case where
 *         doca_pe_get_event returns NULL, and for NULL @p evs or @p max 0.
 *
 * Thread safety: as doca_pe_get_event.
 */
uint32_t doca_pe_get_events(struct doca_pe *pe, struct doca_event **evs, uint32_t max);

/**
 * @brief doca_pe_get_events that hands out only events that succeeded and
 *        says when it stopped at one that did not: a DPDK
 *        rte_dma_completed for the PE, so a reaping loop needs no
 *        doca_event_get_status per event.
 *
 * Takes ready events oldest first, as doca_pe_get_events does, but stops
 * before the first one whose status (doca_event_get_status) is not
 * DOCA_EVENT_STATUS_SUCCESS (a FAILURE or a PARTIAL) and then sets
 * @p *has_error to true. That event is not taken: it stays first in
 * line, and the next doca_pe_get_event, doca_pe_get_events or
 * doca_pe_get_events_ok call on the PE looks at it first (this one
 * returns 0 for it with @p *has_error true again), so an application
 * takes it with doca_pe_get_event or doca_pe_get_events and reads its
 * error.
 * @param pe The progress engine.
 * @param[out] evs Receives the events (each succeeded; free them with
 *             doca_event_free_bulk).
 * @param max Room in @p evs.
 * @param[out] has_error Set on every call with a non-NULL @p has_error:
 *             true when the call stopped before a ready event that did
 *             not succeed (it is then the PE's oldest ready event), false
 *             otherwise (refused calls and @p max 0 included). Must not
 *             be NULL.
 * @return The number of events stored: those ready before the first one
 *         that did not succeed, at most @p max (0, @p *has_error true,
 *         when the oldest ready event did not succeed); 0, nothing taken
 *         and @p *has_error false, in every case where doca_pe_get_events
 *         returns 0 without taking anything (NULL or a wrong-type or stale
 *         handle, another thread running the PE, a worker running it,
 *         NULL @p evs, @p max 0). A NULL @p has_error is refused the same
 *         way: 0, nothing taken. A refused call changes nothing.
 *
 * Thread safety: as doca_pe_get_event.
 */
uint32_t doca_pe_get_events_ok(struct doca_pe *pe, struct doca_event **evs, uint32_t max, bool *has_error);

/**
 * @brief The PE's notification fd: constant for the PE's life, pollable with
 *        epoll/poll/select, owned by the PE (do not close it).
 * @param pe The progress engine.
 * @param[out] fd The file descriptor.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL arguments or a wrong-type handle.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_pe_get_notification_handle(struct doca_pe *pe, int *fd);

/**
 * @brief Arm the fd once: it becomes readable when an event is ready or work
 *        arrives that needs doca_pe_progress (at once if that is already so).
 *        On an inline device with delay_us, a posted task waiting for its
 *        delay needs no progress call until it is due: the fd becomes
 *        readable when the first such task is due (a timer the device
 *        sets at each arming), so an event loop sleeps through the delay.
 *        A task another thread submits while the PE is armed wakes it
 *        once at its submission too (its arming set no timer for it).
 * @param pe The progress engine.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_IN_USE, nothing changed, while another thread runs the PE;
 *         DOCA_ERROR_BAD_STATE, nothing changed, while a worker thread runs
 *         it (doca_pe_run_on_cpu: the worker arms and clears the fd itself);
 *         the device's error, nothing changed, if a device cannot arm its
 *         completion channel: the PE stays as armed as it was before the
 *         call (not armed, or armed by an earlier successful call), so
 *         progress it rather than sleep on the fd; call again to retry.
 *         A channel of another context that did arm in the same call
 *         stays armed, and another thread may have woken the PE
 *         meanwhile: at most one spurious wake-up (the fd readable with
 *         nothing new to do). A progress call made while armed
 *         that the device refuses to arm again makes the fd readable
 *         (a wake-up, so that a sleeper does not sleep on a channel that
 *         can no longer wake it); the call after it returns the error.
 *
 * Thread safety: the thread running the PE (or a callback of it); a
 *         concurrent caller on another thread is refused, as by
 *         doca_pe_progress.
 */
doca_error_t doca_pe_request_notification(struct doca_pe *pe);

/**
 * @brief Reset the fd to not readable and disarm it; call after waking.
 * @param pe The progress engine.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_IN_USE, nothing changed, while another thread runs the PE;
 *         DOCA_ERROR_BAD_STATE, nothing changed, while a worker thread runs
 *         it (clearing would leave the sleeping worker unwoken for good).
 *
 * Thread safety: the thread running the PE (or a callback of it); a
 *         concurrent caller on another thread is refused, as by
 *         doca_pe_progress.
 */
doca_error_t doca_pe_clear_notification(struct doca_pe *pe);

/**
 * @brief Hand the PE to a new worker thread pinned to @p cpu. The worker
 *        progresses it, spins a bounded number of empty turns, then sleeps on
 *        the notification fd (while a device refuses to arm it, it keeps
 *        progressing instead and retries the arming when next idle).
 *        Events are delivered only through the contexts' event callbacks:
 *        connect contexts that have one. The thread is named "doca-worker"
 *        and blocks every asynchronous signal, whatever the caller's mask
 *        (README "The library's threads"): a signal sent to the process is
 *        never handled on it, and the callbacks run with those signals
 *        blocked (a write to a closed pipe or socket there fails with
 *        EPIPE, no SIGPIPE).
 * @param pe The progress engine.
 * @param cpu An online CPU number, or -1 for no pinning: the worker may run
 *        on every CPU of the process, whatever the calling thread's own
 *        affinity (it does not inherit the caller's pinning).
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL, a wrong-type handle,
 *         a destroyed one (a stale handle, also when the destroy wins
 *         during this call: logged and counted by doca_stale_handle_count)
 *         or a CPU no thread of this process may run on (it does not
 *         exist, is offline, or is outside the process's cpuset; the
 *         calling thread's own affinity does not matter), nothing changed;
 *         DOCA_ERROR_BAD_STATE if a worker already runs it or is being
 *         stopped (doca_pe_stop_run under way), so also from a callback of
 *         its worker; DOCA_ERROR_NOT_PERMITTED from a callback of a
 *         doca_pe_progress call on it (the caller runs the PE);
 *         DOCA_ERROR_NOT_PERMITTED, nothing changed, if a connected context
 *         that is not IDLE has no event callback (its events would reach
 *         nobody; doca_ctx_start likewise refuses such a context while a
 *         worker runs its PE); DOCA_ERROR_OPERATING_SYSTEM if the thread
 *         cannot start. A start that fails is never seen by other threads:
 *         their calls on the PE meanwhile behave as without a worker.
 *
 * Thread safety: any thread except the PE's own callbacks; a callback of
 *         another PE's worker may call it.
 */
doca_error_t doca_pe_run_on_cpu(struct doca_pe *pe, int cpu);

/**
 * @brief Stop the PE's worker (STOP → STOPPED handshake, then join). The PE
 *        can then be progressed by the application again. No lock is held
 *        while this call waits for the worker, so the worker's callbacks may
 *        meanwhile start or stop other PEs' workers. Two workers' callbacks
 *        that stop each other's PEs at the same time wait for each other
 *        for ever (each join waits for the other callback): do not. A
 *        worker thread the scheduler has not run yet is not waited for: it
 *        is abandoned (it will never touch the PE) and joined later, by a
 *        later doca_pe_run_on_cpu or doca_pe_stop_run if it has ended by
 *        then, at the latest by doca_pe_destroy.
 * @param pe The progress engine.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL, a wrong-type
 *         handle or a destroyed one (a stale handle, also when the destroy
 *         wins during this call: logged and counted by
 *         doca_stale_handle_count);
 *         DOCA_ERROR_BAD_STATE if no worker runs it;
 *         DOCA_ERROR_IN_PROGRESS, at once and changing nothing, while another
 *         thread's doca_pe_stop_run of this PE is under way (the worker has
 *         stopped when that call returns);
 *         DOCA_ERROR_NOT_PERMITTED when called from the worker itself (a callback)
 *         or from any context's state callback (doca_ctx_state_cb_t: its
 *         thread holds a lock the worker may be waiting for).
 *
 * Thread safety: any thread except the PE's own callbacks and state
 *         callbacks; an event callback of another PE's worker may call it.
 */
doca_error_t doca_pe_stop_run(struct doca_pe *pe);

/**
 * @brief Destroy a PE with no connected contexts and no worker. Its
 *        notification fd is closed together with its memory, after an RCU
 *        grace period: a thread still waking the PE (a stop handing over, a
 *        device's completion thread) writes into the PE's own fd, never into
 *        one the application opened since. Until then the fd number stays
 *        taken.
 * @param pe The progress engine.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL, a wrong-type
 *         handle or one already destroyed (a stale handle: logged and
 *         counted by doca_stale_handle_count; the loser of two concurrent
 *         destroys gets it, or DOCA_ERROR_IN_USE uncounted while the winner
 *         holds the PE, and changes nothing); DOCA_ERROR_IN_USE while a context is
 *         connected (destroying a context disconnects it), a worker runs it
 *         or is being stopped, another thread is progressing it, or the
 *         caller is inside one of its callbacks (its own progress call still
 *         runs it: destroy it after that call returns);
 *         DOCA_ERROR_BAD_STATE for a PE inherited across fork().
 *
 * Thread safety: any thread; waits while a submit holds the PE briefly
 *         (see "When a PE call waits" above), and for worker threads that
 *         doca_pe_stop_run abandoned before they ran to end.
 */
doca_error_t doca_pe_destroy(struct doca_pe *pe);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PE_H */
