/*
 * hw/verbs/verbs_ops.c — the verbs backend's ops table, registered in
 * hw/hw_registry.c. Every op is implemented; event mode uses the
 * completion channel (notify_fd/arm/ack), so hw_qp_attr.wake is not called.
 */
#include "hw/verbs/verbs_internal.h"

/* The doorbell reaches the NIC: nothing to kick. Defined here, not taken
 * from the core (hw_kick_none): a module links nothing of the library. */
static void verbs_kick(struct hw_qp *qp)
{
	(void)qp;
}

/* No remote memory on verbs (the fabric backend's verbs;ofi_rxm has it).
 * Defined here for the same reason as verbs_kick. */
static doca_error_t verbs_mem_export(struct hw_mr *mr, uint32_t access, const void **desc,
				     size_t *len)
{
	(void)mr;
	(void)access;
	(void)desc;
	(void)len;
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t verbs_mem_import(struct hw_dev *dev, const void *desc, size_t len,
				     struct hw_mr **mr)
{
	(void)dev;
	(void)desc;
	(void)len;
	(void)mr;
	return DOCA_ERROR_NOT_SUPPORTED;
}

const struct hw_ops hw_verbs_ops = {
	.name = "verbs",
	.probe = verbs_probe,
	.open = verbs_open,
	.close = verbs_close,
	.mem_register = verbs_mem_register,
	.mem_deregister = verbs_mem_deregister,
	.mem_export = verbs_mem_export,
	.mem_import = verbs_mem_import,
	.qp_create = verbs_qp_create,
	.qp_destroy = verbs_qp_destroy,
	.notify_fd = verbs_notify_fd,
	.notify_arm = verbs_notify_arm,
	.notify_ack = verbs_notify_ack,
	.post = verbs_post,
	.doorbell = verbs_doorbell,
	.kick = verbs_kick,
	.poll = verbs_poll,
	.pending = verbs_pending,
	.flush = verbs_flush,
};
