/* hw/hw_notify_none.c — the no-op optional ops: of a backend without a
 * completion channel, and the doorbell of one whose posts are visible at
 * once (sw: the kick wakes its engine thread). Modules define their own:
 * they link nothing of the library. */
#include "hw.h"

int hw_notify_fd_none(struct hw_qp *qp)
{
	(void)qp;
	return -1;
}

doca_error_t hw_notify_arm_none(struct hw_qp *qp)
{
	(void)qp;
	return DOCA_SUCCESS;
}

void hw_notify_ack_none(struct hw_qp *qp)
{
	(void)qp;
}

void hw_doorbell_none(struct hw_qp *qp)
{
	(void)qp;
}
