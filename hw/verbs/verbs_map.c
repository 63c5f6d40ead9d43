/*
 * hw/verbs/verbs_map.c — the verbs backend's translation tables: errno of a
 * failed verbs call → doca_error_t, HW_ACCESS_* → IBV_ACCESS_*, and work
 * completion status → struct hw_cqe. The README copies these tables.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hw/hw_errno.h"
#include "hw/verbs/verbs_internal.h"

/*
 * errno of a failed slow-path verbs call → doca_error_t (hw/hw_errno.h)
 *
 *   errno                            doca_error_t
 *   -------------------------------  -------------------------------
 *   ENOMEM                           DOCA_ERROR_NO_MEMORY
 *   EPERM, EACCES                    DOCA_ERROR_NOT_PERMITTED
 *   EOPNOTSUPP, ENOSYS               DOCA_ERROR_NOT_SUPPORTED
 *   anything else (EINVAL, EIO, 0…)  DOCA_ERROR_DRIVER
 *
 * (ibv_get_device_list failing for a reason other than ENOMEM means "no
 * RDMA stack": probe lists no device and open answers NOT_FOUND.)
 */
doca_error_t verbs_errno_to_doca(int err)
{
	return hw_driver_errno_to_doca(err);
}

int verbs_rc_errno(int rc)
{
	return rc > 0 ? rc : errno;
}

/*
 * HW_ACCESS_* → IBV_ACCESS_* (least privilege for a loopback RDMA WRITE)
 *
 *   HW_ACCESS_*   IBV_ACCESS_*                 why
 *   -----------   --------------------------   ---------------------------------
 *   READ          0 (local read is implied)    copy source: the HCA only reads it
 *                                              through the lkey of the WRITE's
 *                                              sge; LOCAL_WRITE is not needed
 *   WRITE         LOCAL_WRITE | REMOTE_WRITE   copy destination: the target of
 *                                              the RDMA WRITE through its rkey
 *                                              (verbs requires LOCAL_WRITE with
 *                                              REMOTE_WRITE)
 *   READ|WRITE    LOCAL_WRITE | REMOTE_WRITE   both roles
 *
 * REMOTE_READ, REMOTE_ATOMIC, MW_BIND and the rest are never granted.
 */
int verbs_access_flags(uint32_t hw_access)
{
	int flags = 0;

	if (hw_access & HW_ACCESS_WRITE)
		flags |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	return flags;
}

/*
 * ibv_wc.status → struct hw_cqe (status, error, fatal)
 *
 *   ibv_wc_status                   hw_cqe.status    error                     fatal
 *   ------------------------------  ---------------  ------------------------  -----
 *   IBV_WC_SUCCESS                  HW_CQE_OK        DOCA_SUCCESS              no
 *   IBV_WC_WR_FLUSH_ERR             HW_CQE_FLUSHED   DOCA_ERROR_SHUTDOWN       no (*)
 *   IBV_WC_REM_ACCESS_ERR,
 *   IBV_WC_LOC_PROT_ERR,
 *   IBV_WC_LOC_ACCESS_ERR           HW_CQE_FAILED    DOCA_ERROR_NOT_PERMITTED  yes
 *   IBV_WC_RETRY_EXC_ERR            HW_CQE_FAILED    DOCA_ERROR_IO_FAILED      yes
 *   any other status                HW_CQE_FAILED    DOCA_ERROR_DRIVER         yes
 *
 * Every error completion but a flush leaves the QP in the error state, so
 * no later descriptor can succeed: fatal. (*) A flush the backend did not
 * cause (no flush() and no earlier error completion: the QP died on an
 * asynchronous event) is made fatal by the caller, verbs_poll.
 */
void verbs_wc_status_to_cqe(enum ibv_wc_status status, struct hw_cqe *cqe)
{
	cqe->fatal = true;
	cqe->status = HW_CQE_FAILED;
	switch (status) {
	case IBV_WC_SUCCESS:
		cqe->status = HW_CQE_OK;
		cqe->error = DOCA_SUCCESS;
		cqe->fatal = false;
		break;
	case IBV_WC_WR_FLUSH_ERR:
		cqe->status = HW_CQE_FLUSHED;
		cqe->error = DOCA_ERROR_SHUTDOWN;
		cqe->fatal = false;
		break;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
		cqe->error = DOCA_ERROR_NOT_PERMITTED;
		break;
	case IBV_WC_RETRY_EXC_ERR:
		cqe->error = DOCA_ERROR_IO_FAILED;
		break;
	default:
		cqe->error = DOCA_ERROR_DRIVER;
		break;
	}
}

void verbs_warn(const char *what, int err)
{
	fprintf(stderr, "doca-core verbs: %s failed: %s\n", what, strerror(err));
}
