/*
 * hw/hw_errno.h — a driver's errno on a slow-path call (open, registration,
 * queue creation) → doca_error_t, shared by the backends (inline: a module
 * links nothing of the library):
 *
 *   errno                            doca_error_t
 *   -------------------------------  -------------------------------
 *   ENOMEM                           DOCA_ERROR_NO_MEMORY
 *   EPERM, EACCES                    DOCA_ERROR_NOT_PERMITTED
 *   EOPNOTSUPP, ENOSYS               DOCA_ERROR_NOT_SUPPORTED
 *   anything else (EINVAL, EIO, 0…)  DOCA_ERROR_DRIVER
 */
#ifndef DOCA_HW_ERRNO_H
#define DOCA_HW_ERRNO_H

#include <errno.h>

#include "doca_error.h"

static inline doca_error_t hw_driver_errno_to_doca(int err)
{
	switch (err) {
	case ENOMEM:
		return DOCA_ERROR_NO_MEMORY;
	case EPERM:
	case EACCES:
		return DOCA_ERROR_NOT_PERMITTED;
	case EOPNOTSUPP:
	case ENOSYS:
		return DOCA_ERROR_NOT_SUPPORTED;
	default:
		return DOCA_ERROR_DRIVER;
	}
}

#endif /* DOCA_HW_ERRNO_H */
