/*
 * hw/sw/sw_dev.c — the software device: probe, open, close, memory
 * registration, and the backend's ops table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/sw/sw.h"

#define SW_DEVICE_NAME "sw0"

static doca_error_t sw_probe(struct hw_dev_desc *descs, size_t cap, size_t *count)
{
	if (cap > 0) {
		snprintf(descs[0].name, sizeof(descs[0].name), "%s", SW_DEVICE_NAME);
		snprintf(descs[0].caps, sizeof(descs[0].caps),
			 "copy,inline,engines<=%u,fault_injection,event", SW_ENGINES_MAX);
	}
	*count = 1;
	return DOCA_SUCCESS;
}

static doca_error_t sw_open(const char *name, const char *params, struct hw_dev **out)
{
	struct sw_params p;
	doca_error_t err;

	if (strcmp(name, SW_DEVICE_NAME) != 0)
		return DOCA_ERROR_NOT_FOUND;
	err = sw_params_parse(params, &p);
	if (err != DOCA_SUCCESS)
		return err;
	struct sw_dev *dev = calloc(1, sizeof(*dev));

	if (dev == NULL)
		return DOCA_ERROR_NO_MEMORY;
	dev->base.ops = &hw_sw_ops;
	dev->params = p;
	err = sw_engines_start(dev);
	if (err != DOCA_SUCCESS) {
		free(dev);
		return err;
	}
	*out = &dev->base;
	return DOCA_SUCCESS;
}

static void sw_close(struct hw_dev *hw)
{
	struct sw_dev *dev = (struct sw_dev *)hw;

	sw_engines_stop(dev);
	free(dev);
}

static doca_error_t sw_mem_register(struct hw_dev *hw, void *addr, size_t len, uint32_t access,
				    struct hw_mr **out)
{
	struct hw_mr *mr = malloc(sizeof(*mr));

	(void)hw;
	if (mr == NULL)
		return DOCA_ERROR_NO_MEMORY;
	*mr = (struct hw_mr){ .addr = addr, .len = len, .access = access };
	*out = mr;
	return DOCA_SUCCESS;
}

static void sw_mem_deregister(struct hw_mr *mr)
{
	free(mr);
}

const struct hw_ops hw_sw_ops = {
	.name = "sw",
	.probe = sw_probe,
	.open = sw_open,
	.close = sw_close,
	.mem_register = sw_mem_register,
	.mem_deregister = sw_mem_deregister,
	.mem_export = hw_mem_export_none,
	.mem_import = hw_mem_import_none,
	.qp_create = sw_qp_create,
	.qp_destroy = sw_qp_destroy,
	.notify_fd = sw_qp_notify_fd,
	.notify_arm = sw_qp_notify_arm,
	.notify_ack = sw_qp_notify_ack,
	.post = sw_qp_post,
	.post_chain = sw_qp_post_chain,
	.doorbell = hw_doorbell_none,
	.kick = sw_qp_kick,
	.poll = sw_qp_poll,
	.reap = sw_qp_reap,
	.execute = sw_qp_execute,
	.pending = sw_qp_pending,
	.flush = sw_qp_flush,
};
