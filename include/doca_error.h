/**
 * @file doca_error.h
 * @brief The one error convention of doca-core: every public call returns a
 *        doca_error_t; objects come back through out-parameters.
 *
 * The numeric values match the DOCA SDK's, so code written against DOCA keeps
 * its meaning here.
 */
#ifndef DOCA_ERROR_H
#define DOCA_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Result of every doca-core call. DOCA_SUCCESS is 0. */
typedef enum doca_error {
	DOCA_SUCCESS = 0,                      /**< Success. */
	DOCA_ERROR_UNKNOWN = 1,                /**< Unknown error. */
	DOCA_ERROR_NOT_PERMITTED = 2,          /**< Operation not permitted (access rights, second binding). */
	DOCA_ERROR_IN_USE = 3,                 /**< The object still has users (children, in-flight tasks). */
	DOCA_ERROR_NOT_SUPPORTED = 4,          /**< Not supported by this device. */
	DOCA_ERROR_AGAIN = 5,                  /**< Resource temporarily exhausted (task pool full); retry later. */
	DOCA_ERROR_INVALID_VALUE = 6,          /**< NULL, wrong-type handle, or an argument out of range. */
	DOCA_ERROR_NO_MEMORY = 7,              /**< Memory allocation failed. */
	DOCA_ERROR_INITIALIZATION = 8,         /**< Initialization failed. */
	DOCA_ERROR_TIME_OUT = 9,               /**< Timed out. */
	DOCA_ERROR_SHUTDOWN = 10,              /**< The task was flushed because its context stopped. */
	DOCA_ERROR_CONNECTION_RESET = 11,      /**< Connection reset. */
	DOCA_ERROR_CONNECTION_ABORTED = 12,    /**< Connection aborted. */
	DOCA_ERROR_CONNECTION_INPROGRESS = 13, /**< Connection in progress. */
	DOCA_ERROR_NOT_CONNECTED = 14,         /**< A required object (device, progress engine) is not attached. */
	DOCA_ERROR_NO_LOCK = 15,               /**< A lock could not be taken. */
	DOCA_ERROR_NOT_FOUND = 16,             /**< No such object (unknown device name). */
	DOCA_ERROR_IO_FAILED = 17,             /**< The device failed the operation. */
	DOCA_ERROR_BAD_STATE = 18,             /**< The object is in the wrong state for this call; also every
						    call on a live handle a fork() child inherited from its
						    parent (README "fork"), whatever the call documents. */
	DOCA_ERROR_UNSUPPORTED_VERSION = 19,   /**< Unsupported version. */
	DOCA_ERROR_OPERATING_SYSTEM = 20,      /**< An operating-system call failed. */
	DOCA_ERROR_DRIVER = 21,                /**< The device driver failed. */
	DOCA_ERROR_UNEXPECTED = 22,            /**< Unexpected condition. */
	DOCA_ERROR_ALREADY_EXIST = 23,         /**< Already exists. */
	DOCA_ERROR_FULL = 24,                  /**< Full. */
	DOCA_ERROR_EMPTY = 25,                 /**< Empty. */
	DOCA_ERROR_IN_PROGRESS = 26,           /**< Started, not finished (asynchronous stop). */
	DOCA_ERROR_TOO_BIG = 27,               /**< Larger than the destination (partial copy). */
	DOCA_ERROR_AUTHENTICATION = 28,        /**< Authentication failed. */
	DOCA_ERROR_BAD_CONFIG = 29,            /**< Bad configuration. */
	DOCA_ERROR_SKIPPED = 30,               /**< Skipped. */
	DOCA_ERROR_DEVICE_FATAL_ERROR = 31,    /**< The device entered a fatal state. */
} doca_error_t;

/** @brief Number of distinct values of doca_error_t (DOCA_SUCCESS included). */
#define DOCA_ERROR_COUNT 32

/**
 * @brief The identifier of an error code, e.g. "DOCA_ERROR_BAD_STATE".
 * @param error Any value; values outside the enum give "DOCA_ERROR_UNRECOGNIZED".
 * @return A static string, never NULL.
 *
 * Thread safety: any thread.
 */
const char *doca_error_get_name(doca_error_t error);

/**
 * @brief A one-sentence English description of an error code.
 * @param error Any value; values outside the enum give "Unrecognized error code".
 * @return A static string, never NULL.
 *
 * Thread safety: any thread.
 */
const char *doca_error_get_descr(doca_error_t error);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ERROR_H */
