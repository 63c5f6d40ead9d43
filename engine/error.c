/* engine/error.c — names and descriptions of the doca_error_t codes. */
#include "doca_error.h"

#include <stddef.h>

static const struct {
	const char *name;
	const char *descr;
} error_text[DOCA_ERROR_COUNT] = {
	[DOCA_SUCCESS] = { "DOCA_SUCCESS", "Success" },
	[DOCA_ERROR_UNKNOWN] = { "DOCA_ERROR_UNKNOWN", "Unknown error" },
	[DOCA_ERROR_NOT_PERMITTED] = { "DOCA_ERROR_NOT_PERMITTED", "Operation not permitted" },
	[DOCA_ERROR_IN_USE] = { "DOCA_ERROR_IN_USE", "Resource is still in use" },
	[DOCA_ERROR_NOT_SUPPORTED] = { "DOCA_ERROR_NOT_SUPPORTED", "Operation not supported" },
	[DOCA_ERROR_AGAIN] = { "DOCA_ERROR_AGAIN", "Resource temporarily unavailable, try again" },
	[DOCA_ERROR_INVALID_VALUE] = { "DOCA_ERROR_INVALID_VALUE", "Invalid input value" },
	[DOCA_ERROR_NO_MEMORY] = { "DOCA_ERROR_NO_MEMORY", "Memory allocation failed" },
	[DOCA_ERROR_INITIALIZATION] = { "DOCA_ERROR_INITIALIZATION", "Initialization failed" },
	[DOCA_ERROR_TIME_OUT] = { "DOCA_ERROR_TIME_OUT", "Timed out" },
	[DOCA_ERROR_SHUTDOWN] = { "DOCA_ERROR_SHUTDOWN", "Flushed because the context stopped" },
	[DOCA_ERROR_CONNECTION_RESET] = { "DOCA_ERROR_CONNECTION_RESET", "Connection reset" },
	[DOCA_ERROR_CONNECTION_ABORTED] = { "DOCA_ERROR_CONNECTION_ABORTED", "Connection aborted" },
	[DOCA_ERROR_CONNECTION_INPROGRESS] = { "DOCA_ERROR_CONNECTION_INPROGRESS", "Connection in progress" },
	[DOCA_ERROR_NOT_CONNECTED] = { "DOCA_ERROR_NOT_CONNECTED", "A required object is not attached" },
	[DOCA_ERROR_NO_LOCK] = { "DOCA_ERROR_NO_LOCK", "Unable to acquire a lock" },
	[DOCA_ERROR_NOT_FOUND] = { "DOCA_ERROR_NOT_FOUND", "Not found" },
	[DOCA_ERROR_IO_FAILED] = { "DOCA_ERROR_IO_FAILED", "Input/output operation failed" },
	[DOCA_ERROR_BAD_STATE] = { "DOCA_ERROR_BAD_STATE", "Object is in the wrong state for this call" },
	[DOCA_ERROR_UNSUPPORTED_VERSION] = { "DOCA_ERROR_UNSUPPORTED_VERSION", "Unsupported version" },
	[DOCA_ERROR_OPERATING_SYSTEM] = { "DOCA_ERROR_OPERATING_SYSTEM", "Operating system call failure" },
	[DOCA_ERROR_DRIVER] = { "DOCA_ERROR_DRIVER", "Device driver failure" },
	[DOCA_ERROR_UNEXPECTED] = { "DOCA_ERROR_UNEXPECTED", "Unexpected condition" },
	[DOCA_ERROR_ALREADY_EXIST] = { "DOCA_ERROR_ALREADY_EXIST", "Already exists" },
	[DOCA_ERROR_FULL] = { "DOCA_ERROR_FULL", "No more space" },
	[DOCA_ERROR_EMPTY] = { "DOCA_ERROR_EMPTY", "Nothing there" },
	[DOCA_ERROR_IN_PROGRESS] = { "DOCA_ERROR_IN_PROGRESS", "Operation started, not yet finished" },
	[DOCA_ERROR_TOO_BIG] = { "DOCA_ERROR_TOO_BIG", "Larger than the destination" },
	[DOCA_ERROR_AUTHENTICATION] = { "DOCA_ERROR_AUTHENTICATION", "Authentication failed" },
	[DOCA_ERROR_BAD_CONFIG] = { "DOCA_ERROR_BAD_CONFIG", "Bad configuration" },
	[DOCA_ERROR_SKIPPED] = { "DOCA_ERROR_SKIPPED", "Skipped" },
	[DOCA_ERROR_DEVICE_FATAL_ERROR] = { "DOCA_ERROR_DEVICE_FATAL_ERROR", "Device entered a fatal state" },
};

static int error_known(doca_error_t error)
{
	return (unsigned)error < DOCA_ERROR_COUNT;
}

const char *doca_error_get_name(doca_error_t error)
{
	return error_known(error) ? error_text[error].name : "DOCA_ERROR_UNRECOGNIZED";
}

const char *doca_error_get_descr(doca_error_t error)
{
	return error_known(error) ? error_text[error].descr : "Unrecognized error code";
}
