/*
 * hw/verbs/verbs_calls.c — the table of slow-path libibverbs calls, filled
 * with the real library. Tests replace `verbs_calls` with a fake table.
 *
 * ibv_query_port and ibv_reg_mr are macros over static inline functions in
 * <infiniband/verbs.h>, so they get thin wrappers here; every other entry is
 * the library function itself.
 */
#include "hw/verbs/verbs_internal.h"

static int verbs_real_query_port(struct ibv_context *context, uint8_t port_num,
				 struct ibv_port_attr *attr)
{
	return ibv_query_port(context, port_num, attr);
}

static struct ibv_mr *verbs_real_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr(pd, addr, length, access);
}

const struct verbs_calls verbs_calls_real = {
	.get_device_list = ibv_get_device_list,
	.free_device_list = ibv_free_device_list,
	.get_device_name = ibv_get_device_name,
	.open_device = ibv_open_device,
	.close_device = ibv_close_device,
	.query_device = ibv_query_device,
	.query_port = verbs_real_query_port,
	.query_gid = ibv_query_gid,
	.alloc_pd = ibv_alloc_pd,
	.dealloc_pd = ibv_dealloc_pd,
	.reg_mr = verbs_real_reg_mr,
	.dereg_mr = ibv_dereg_mr,
	.create_comp_channel = ibv_create_comp_channel,
	.destroy_comp_channel = ibv_destroy_comp_channel,
	.create_cq = ibv_create_cq,
	.destroy_cq = ibv_destroy_cq,
	.create_qp = ibv_create_qp,
	.destroy_qp = ibv_destroy_qp,
	.modify_qp = ibv_modify_qp,
	.get_cq_event = ibv_get_cq_event,
	.ack_cq_events = ibv_ack_cq_events,
};

const struct verbs_calls *verbs_calls = &verbs_calls_real;
