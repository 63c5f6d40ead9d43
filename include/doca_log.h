/**
 * @file doca_log.h
 * @brief The library's log: one line per message, on stderr by default;
 *        an application may raise or lower the threshold, or route every
 *        line to its own handler (or silence them).
 *
 * A message repeated from one place of the library (a refused call in a
 * loop) is rate-limited: the first DOCA_LOG_BURST of each second are
 * passed, the rest counted, and the next one after that second is preceded
 * by "(N similar messages suppressed: ...)".
 *
 * The initial threshold comes from the environment variable DOCA_LOG_LEVEL
 * (none, error, warn, info, debug; default warn).
 */
#ifndef DOCA_LOG_H
#define DOCA_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdint.h>

#include "doca_error.h"

/** Messages passed per second from one place of the library before the rest are counted. */
#define DOCA_LOG_BURST 5

/** @brief Severity of a message; a threshold passes the messages at or below it. */
enum doca_log_level {
	DOCA_LOG_NONE = -1, /**< As a threshold: no message at all. */
	DOCA_LOG_ERROR = 0, /**< A call failed or an invariant broke. */
	DOCA_LOG_WARN = 1,  /**< A call was refused; the default threshold. */
	DOCA_LOG_INFO = 2,  /**< Lifecycle information. */
	DOCA_LOG_DEBUG = 3, /**< Everything. */
};

/**
 * @brief Receives one finished message.
 * @param level The message's severity.
 * @param message The text, without a trailing newline; valid during the call.
 * @param user The pointer given to doca_log_set_handler.
 *
 * Thread safety: called from any thread of the library or the application,
 *         one call at a time; it must not call doca-core functions, nor
 *         fork() (the library holds its log lock across a fork).
 */
typedef void (*doca_log_handler_t)(enum doca_log_level level, const char *message, void *user);

/**
 * @brief Set the threshold: messages above it are dropped before they are
 *        formatted.
 * @param level DOCA_LOG_NONE … DOCA_LOG_DEBUG.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for any other value (the
 *         threshold is unchanged).
 *
 * Thread safety: any thread.
 */
doca_error_t doca_log_set_level(enum doca_log_level level);

/**
 * @brief The current threshold.
 * @return The level set last, or the one DOCA_LOG_LEVEL gave.
 *
 * Thread safety: any thread.
 */
enum doca_log_level doca_log_get_level(void);

/**
 * @brief Route every message to `handler`; NULL restores stderr.
 * @param handler The receiver, or NULL.
 * @param user Passed to every call of the handler.
 * @return DOCA_SUCCESS.
 *
 * Thread safety: any thread; a message being written while the handler
 *         changes goes to the old or the new one, never both.
 */
doca_error_t doca_log_set_handler(doca_log_handler_t handler, void *user);

/**
 * @brief How many calls this process made with a stale handle: an event
 *        freed twice or freed after its slot was reused, a buffer, memory,
 *        context, device or progress engine destroyed twice or used after
 *        its destroy. Each such call was refused (with a log line) and
 *        changed nothing.
 * @return The count since the process started.
 *
 * Thread safety: any thread.
 */
uint64_t doca_stale_handle_count(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_LOG_H */
