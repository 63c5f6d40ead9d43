/**
 * @file doca_event.h
 * @brief Events: the result. One per accepted task; must be freed, or the
 *        context's task pool runs dry and submissions get DOCA_ERROR_AGAIN.
 *
 * The getters take a valid event (from doca_pe_get_event or an event
 * callback); on NULL, and on a handle that is not such an event (one
 * freed already, or inherited across fork()), they return the neutral
 * value named on each.
 */
#ifndef DOCA_EVENT_H
#define DOCA_EVENT_H

#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief The outcome of the task. Every event doca_pe_get_events_ok hands
 *        out is SUCCESS: a loop reaping with it needs no call of this per
 *        event.
 * @param ev The event.
 * @return SUCCESS, FAILURE or PARTIAL (DOCA_EVENT_STATUS_FAILURE for NULL).
 *
 * Thread safety: the thread holding the event (the one it was handed to,
 *         or one it was passed to with the application's own synchronisation).
 */
enum doca_event_status doca_event_get_status(const struct doca_event *ev);

/**
 * @brief The task's error code.
 * @param ev The event.
 * @return DOCA_SUCCESS for a successful task; otherwise why: DOCA_ERROR_SHUTDOWN
 *        (flushed by a stop), DOCA_ERROR_IO_FAILED (device failure or partial),
 *        DOCA_ERROR_TOO_BIG (partial allowed by DOCA_TASK_FLAG_ALLOW_PARTIAL),
 *        DOCA_ERROR_NOT_SUPPORTED (longer than the device moves in one
 *        transfer: a verbs port's max_msg_sz, fab0's provider max_msg_size;
 *        sw0 has no such limit), or the device's error (DOCA_ERROR_DRIVER
 *        when a verbs completion queue failed: the NIC is stopped at once,
 *        but a transfer it had started may still land in the destination
 *        shortly after the event).
 *        DOCA_ERROR_INVALID_VALUE for NULL.
 *
 * Thread safety: the thread holding the event (the one it was handed to,
 *         or one it was passed to with the application's own synchronisation).
 */
doca_error_t doca_event_get_error(const struct doca_event *ev);

/**
 * @brief Number of bytes actually processed (the first ones of the source).
 * @param ev The event.
 * @return The byte count; 0 for NULL.
 *
 * Thread safety: the thread holding the event (the one it was handed to,
 *         or one it was passed to with the application's own synchronisation).
 */
size_t doca_event_get_bytes(const struct doca_event *ev);

/**
 * @brief The user_data of the task's descriptor.
 * @param ev The event.
 * @return The user data; 0 for NULL.
 *
 * Thread safety: the thread holding the event (the one it was handed to,
 *         or one it was passed to with the application's own synchronisation).
 */
union doca_data doca_event_get_user_data(const struct doca_event *ev);

/**
 * @brief The task's type.
 * @param ev The event.
 * @return The type; 0 for NULL.
 *
 * Thread safety: the thread holding the event (the one it was handed to,
 *         or one it was passed to with the application's own synchronisation).
 */
enum doca_task_type doca_event_get_type(const struct doca_event *ev);

/**
 * @brief The context the task was submitted to.
 * @param ev The event.
 * @return The context; NULL for NULL.
 *
 * Thread safety: the thread holding the event (the one it was handed to,
 *         or one it was passed to with the application's own synchronisation).
 */
struct doca_ctx *doca_event_get_ctx(const struct doca_event *ev);

/**
 * @brief Free an event from doca_pe_get_event(s): its credit returns to the
 *        context's task pool and its buffers stop being in use (at once,
 *        on every thread: a doca_buf_destroy after the free returns
 *        succeeds if no other task names the buffer). NULL is ignored.
 *        Never refused for an event the application holds, from any
 *        thread: on the thread running the PE (the one whose
 *        doca_pe_progress ran last: it keeps the PE's runner guard between
 *        calls) the credit is back at once; from another thread it returns
 *        through a lock-free path the PE drains on its next turn (the PE is
 *        woken if it sleeps) — or, if that thread is preempted in the middle
 *        of its own next push into the same context's mailbox, or another
 *        thread is preempted in the middle of marking the same context ready
 *        for its PE (a submitter, another freer, an engine thread), on the
 *        first turn after that push or mark completes.
 *        Refused, with a log line and changing nothing: an event handed to
 *        an event callback (the engine frees those), and a stale handle —
 *        an event already freed, even if its slot now holds a newer event
 *        (handles carry a generation; doca_stale_handle_count counts these;
 *        the one exception, after a multiple of 2^22 reuses of the slot:
 *        doca_core.h). In a fork child every event inherited from the
 *        parent is refused; one the parent had freed before the fork is
 *        stale there too, and counted.
 *        Of two threads freeing the same event at once, exactly one frees it.
 * @param ev The event, or NULL.
 *
 * Thread safety: any thread; wait-free but for one exception. On the
 *         thread running the PE, outside an event callback, the claim is a
 *         plain load and store, then plain stores — until the exception
 *         below has happened once in the PE's life; from then on, and in an
 *         event callback, the claim is one CAS. On any other thread the
 *         claim is one CAS, then one CAS on the PE's runner guard when
 *         nobody holds it, else one mailbox push. The exception: the first
 *         free of one of a PE's events by another thread while a thread
 *         runs the PE (or the first by each of several threads that do so
 *         at the same moment) runs a membarrier system call, then waits
 *         until it sees the PE's thread outside any free or submit. That
 *         wait is bounded by the PE's thread's own loop: it can span several
 *         back-to-back frees and submits of that thread, plus however long
 *         the thread is preempted in one of them.
 */
void doca_event_free(struct doca_event *ev);

/**
 * @brief doca_event_free for @p n events at once (for example those of one
 *        doca_pe_get_events call): one guard check and one wake for each
 *        run of consecutive entries of one PE (so one for the events of one
 *        doca_pe_get_events call; an array ordered A, B, A pays three)
 *        instead of one per event. NULL entries are skipped;
 *        each entry is freed or refused exactly as by doca_event_free.
 * @param evs The events; NULL is ignored.
 * @param n The number of entries.
 *
 * Thread safety: as doca_event_free.
 */
void doca_event_free_bulk(struct doca_event **evs, uint32_t n);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_EVENT_H */
