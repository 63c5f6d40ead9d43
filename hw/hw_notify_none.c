/* hw/hw_notify_none.c — the optional ops of a backend without a completion channel. */
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
