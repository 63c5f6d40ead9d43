/* hw/hw_notify_none.c — the no-op optional ops: of a backend without a
 * completion channel, and the doorbell or kick of one that needs only the
 * other (sw: posts are visible at once, the kick wakes its engine thread;
 * verbs: the doorbell reaches the NIC, nothing to kick). */
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

void hw_kick_none(struct hw_qp *qp)
{
	(void)qp;
}
