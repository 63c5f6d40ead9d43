/**
 * @file doca_buf.h
 * @brief Buffers: the data. An (offset, length) window into one memory,
 *        named by tasks. A buffer must be destroyed before its memory.
 */
#ifndef DOCA_BUF_H
#define DOCA_BUF_H

#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Create a window [offset, offset + len) of @p mem.
 * @param mem The memory the window is carved from.
 * @param offset Offset of the window's first byte in @p mem.
 * @param len May be 0 (such a buffer can be neither a copy's source nor its
 *        destination: submit refuses it).
 * @param[out] buf The new buffer.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or wrong-type
 *         handles, a destroyed memory (a stale handle, also when its
 *         destroy wins during this call: logged and counted by
 *         doca_stale_handle_count), or when offset + len overflows or
 *         exceeds the memory's length; DOCA_ERROR_NO_MEMORY.
 *
 * Thread safety: any thread; races with doca_mem_destroy of the memory
 *         resolve to one winner (the destroy then fails with
 *         DOCA_ERROR_IN_USE).
 */
doca_error_t doca_buf_create(struct doca_mem *mem, size_t offset, size_t len, struct doca_buf **buf);

/**
 * @brief Address of the buffer's first byte (memory start + offset).
 * @param buf The buffer.
 * @param[out] data The address.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_NOT_SUPPORTED for a buffer of a remote memory
 *         (doca_mem_import): its bytes are in another process.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data);

/**
 * @brief Length of the buffer in bytes.
 * @param buf The buffer.
 * @param[out] len The length.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len);

/**
 * @brief Destroy a buffer no task uses any more. Inside the event callback
 *        of a task naming it, when no other task uses it, the destroy is
 *        allowed: the handle is dead at once and the buffer goes when the
 *        event does (its memory counts it until then), so buffers made per
 *        task can be destroyed by their own callback.
 * @param buf The buffer.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL, a wrong-type handle
 *         or a buffer already destroyed (also by a concurrent destroy: of two,
 *         one succeeds and the other gets this; a stale handle: logged and
 *         counted by doca_stale_handle_count); DOCA_ERROR_IN_USE while the
 *         event of another task naming it is not freed (nothing is
 *         changed; once doca_event_free returns, on any thread, that event
 *         no longer counts).
 *
 * Thread safety: any thread; a race with a submission naming it has at most
 *         one winner: the destroy (the submission then fails with
 *         DOCA_ERROR_INVALID_VALUE) or the submission (the destroy then fails
 *         with DOCA_ERROR_IN_USE). When the submission pins the buffer
 *         between the destroy's two looks, both fail that way and nothing
 *         is changed: retry the destroy once the task's event is freed.
 */
doca_error_t doca_buf_destroy(struct doca_buf *buf);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_H */
