/**
 * @file doca_event.h
 * @brief Events: the result. One per accepted task; must be freed, or the
 *        context's task pool runs dry and submissions get DOCA_ERROR_AGAIN.
 *
 * The getters take a valid event (from doca_pe_get_event or an event
 * callback); on NULL they return the neutral value named on each.
 */
#ifndef DOCA_EVENT_H
#define DOCA_EVENT_H

#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief The outcome of the task.
 * @param ev The event.
 * @return SUCCESS, FAILURE or PARTIAL (DOCA_EVENT_STATUS_FAILURE for NULL).
 *
 * Thread safety: the thread running the event's progress engine.
 */
enum doca_event_status doca_event_get_status(const struct doca_event *ev);

/**
 * @brief The task's error code.
 * @param ev The event.
 * @return DOCA_SUCCESS for a successful task; otherwise why: DOCA_ERROR_SHUTDOWN
 *        (flushed by a stop), DOCA_ERROR_IO_FAILED (device failure or partial),
 *        DOCA_ERROR_TOO_BIG (partial allowed by DOCA_TASK_FLAG_ALLOW_PARTIAL),
 *        or the device's error. DOCA_ERROR_INVALID_VALUE for NULL.
 *
 * Thread safety: the thread running the event's progress engine.
 */
doca_error_t doca_event_get_error(const struct doca_event *ev);

/**
 * @brief Number of bytes actually processed (the first ones of the source).
 * @param ev The event.
 * @return The byte count; 0 for NULL.
 *
 * Thread safety: the thread running the event's progress engine.
 */
size_t doca_event_get_bytes(const struct doca_event *ev);

/**
 * @brief The user_data of the task's descriptor.
 * @param ev The event.
 * @return The user data; 0 for NULL.
 *
 * Thread safety: the thread running the event's progress engine.
 */
union doca_data doca_event_get_user_data(const struct doca_event *ev);

/**
 * @brief The task's type.
 * @param ev The event.
 * @return The type; 0 for NULL.
 *
 * Thread safety: the thread running the event's progress engine.
 */
enum doca_task_type doca_event_get_type(const struct doca_event *ev);

/**
 * @brief The context the task was submitted to.
 * @param ev The event.
 * @return The context; NULL for NULL.
 *
 * Thread safety: the thread running the event's progress engine.
 */
struct doca_ctx *doca_event_get_ctx(const struct doca_event *ev);

/**
 * @brief Free an event from doca_pe_get_event: its credit returns to the
 *        context's task pool and its buffers stop being in use. NULL is ignored.
 *        Events handed to an event callback are freed by the engine; freeing
 *        one of those, or one twice, is refused with a log line and changes
 *        nothing. Of two threads freeing the same event at once, exactly one
 *        frees it and the other is refused.
 * @param ev The event, or NULL.
 *
 * Thread safety: the thread running the event's progress engine; waits
 *         while a submit holds the PE briefly (doca_pe.h, "When a PE call
 *         waits").
 */
void doca_event_free(struct doca_event *ev);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_EVENT_H */
