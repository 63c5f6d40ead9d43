/**
 * @file doca_types.h
 * @brief Types shared by every part of the doca-core API: the opaque handles,
 *        user data, access flags, task and event enums, context states.
 */
#ifndef DOCA_TYPES_H
#define DOCA_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;   /**< One application instance; the root of every other object. */
struct doca_dev;   /**< An opened device ("sw0", "mlx5_0"). */
struct doca_mem;   /**< A device-visible memory region, registered once. */
struct doca_buf;   /**< An (offset, length) window into one doca_mem. */
struct doca_pe;    /**< A progress engine: drives tasks, delivers events. */
struct doca_event; /**< The completion of one task. */

/** @brief Opaque user data carried through tasks and callbacks. */
union doca_data {
	void *ptr;    /**< As a pointer. */
	uint64_t u64; /**< As a number. */
};

/** @brief Access a memory region grants to the device. */
enum doca_access_flag {
	DOCA_ACCESS_FLAG_READ = 1u << 0,  /**< The device may read it: copy source. */
	DOCA_ACCESS_FLAG_WRITE = 1u << 1, /**< The device may write it: copy destination. */
};

/** @brief Kinds of task a context can run. */
enum doca_task_type {
	DOCA_TASK_COPY = 1, /**< Copy src's bytes into dst. */
};

/** @brief Flags of one task (doca_task_desc.flags). */
enum doca_task_flag {
	/** A dst shorter than src is accepted: min(src, dst) bytes are copied and
	 *  the event is PARTIAL with error DOCA_ERROR_TOO_BIG. */
	DOCA_TASK_FLAG_ALLOW_PARTIAL = 1u << 0,
};

/** @brief Outcome carried by an event. */
enum doca_event_status {
	DOCA_EVENT_STATUS_SUCCESS = 0, /**< Every byte was processed. */
	DOCA_EVENT_STATUS_FAILURE = 1, /**< The task failed or was flushed; see doca_event_get_error. */
	DOCA_EVENT_STATUS_PARTIAL = 2, /**< Only the first doca_event_get_bytes bytes were processed. */
};

/** @brief States of a context (see doca_ctx.h for the transitions). */
enum doca_ctx_state {
	DOCA_CTX_STATE_IDLE = 0,     /**< Configurable; no task can be submitted. */
	DOCA_CTX_STATE_STARTING = 1, /**< Inside doca_ctx_start; becomes RUNNING. */
	DOCA_CTX_STATE_RUNNING = 2,  /**< Accepts tasks. */
	DOCA_CTX_STATE_STOPPING = 3, /**< Refuses tasks; flushing until every event is freed. */
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TYPES_H */
