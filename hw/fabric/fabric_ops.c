/*
 * hw/fabric/fabric_ops.c — the fabric backend's ops table (module
 * libdoca-core-fabric.so, device fab0). Event mode uses the queue pair's
 * epoll set of CQ wait fds (notify_fd/arm/ack); hw_qp_attr.wake is called
 * for the completions a doorbell makes itself (local copies, refusals).
 */
#include "hw/fabric/fabric_internal.h"

const struct hw_ops hw_fabric_ops = {
	.name = "fabric",
	.probe = fab_probe,
	.open = fab_open,
	.close = fab_close,
	.mem_register = fab_mem_register,
	.mem_deregister = fab_mem_deregister,
	.mem_export = fab_mem_export,
	.mem_import = fab_mem_import,
	.qp_create = fab_qp_create,
	.qp_destroy = fab_qp_destroy,
	.notify_fd = fab_notify_fd,
	.notify_arm = fab_notify_arm,
	.notify_ack = fab_notify_ack,
	.post = fab_post,
	.doorbell = fab_doorbell,
	.kick = fab_kick,
	.poll = fab_poll,
	.pending = fab_pending,
	.flush = fab_flush,
};
