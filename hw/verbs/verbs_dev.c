/*
 * hw/verbs/verbs_dev.c — verbs devices: probe (the NICs libibverbs lists),
 * open (ibv_open_device + ibv_query_device + ibv_alloc_pd) and close.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/verbs/verbs_internal.h"

/**
 * List the verbs devices. A machine without an RDMA stack (the call fails
 * with ENOSYS or any error but ENOMEM) has no device: *list = NULL, *num = 0
 * and DOCA_SUCCESS. A list that is returned must be freed with
 * verbs_calls->free_device_list.
 */
static doca_error_t verbs_device_list(struct ibv_device ***list, int *num)
{
	*num = 0;
	errno = 0;
	*list = verbs_calls->get_device_list(num);
	if (*list)
		return DOCA_SUCCESS;
	*num = 0;
	return errno == ENOMEM ? DOCA_ERROR_NO_MEMORY : DOCA_SUCCESS;
}

static const char *verbs_device_name(struct ibv_device *device)
{
	const char *name = verbs_calls->get_device_name(device);

	return name ? name : "";
}

doca_error_t verbs_probe(struct hw_dev_desc *descs, size_t cap, size_t *count)
{
	struct ibv_device **list;
	int num;
	doca_error_t err = verbs_device_list(&list, &num);

	*count = 0;
	if (err != DOCA_SUCCESS)
		return err;
	for (int i = 0; i < num && (size_t)i < cap; i++) {
		snprintf(descs[i].name, sizeof(descs[i].name), "%s", verbs_device_name(list[i]));
		snprintf(descs[i].caps, sizeof(descs[i].caps), "%s", VERBS_CAPS);
	}
	*count = (size_t)num;
	if (list)
		verbs_calls->free_device_list(list);
	return DOCA_SUCCESS;
}

static void verbs_close_context(struct ibv_context *ctx)
{
	int rc = verbs_calls->close_device(ctx);

	if (rc)
		verbs_warn("ibv_close_device", verbs_rc_errno(rc));
}

/**
 * Open the context, read the limits the queue pairs need and allocate the
 * protection domain. On failure everything made here is released.
 */
static doca_error_t verbs_dev_init(struct verbs_dev *dev, struct ibv_device *device)
{
	struct ibv_device_attr attr;
	int rc;

	dev->ctx = verbs_calls->open_device(device);
	if (!dev->ctx)
		return verbs_errno_to_doca(errno);
	memset(&attr, 0, sizeof(attr));
	rc = verbs_calls->query_device(dev->ctx, &attr);
	if (rc) {
		rc = verbs_rc_errno(rc);
		goto close;
	}
	dev->max_qp_wr = attr.max_qp_wr > 0 ? (uint32_t)attr.max_qp_wr : 0;
	dev->max_cqe = attr.max_cqe > 0 ? (uint32_t)attr.max_cqe : 0;
	dev->pd = verbs_calls->alloc_pd(dev->ctx);
	if (!dev->pd) {
		rc = errno;
		goto close;
	}
	return DOCA_SUCCESS;
close:
	verbs_close_context(dev->ctx);
	dev->ctx = NULL;
	return verbs_errno_to_doca(rc);
}

/*
 * Open string: the device name exactly as the NIC reports it. The verbs
 * backend defines no parameters: any non-empty text after ':' is
 * DOCA_ERROR_INVALID_VALUE (checked after the name, so another backend's
 * device is still DOCA_ERROR_NOT_FOUND here).
 */
doca_error_t verbs_open(const char *name, const char *params, struct hw_dev **out)
{
	struct ibv_device **list;
	struct ibv_device *device = NULL;
	struct verbs_dev *dev = NULL;
	int num;
	doca_error_t err = verbs_device_list(&list, &num);

	if (err != DOCA_SUCCESS)
		return err;
	for (int i = 0; i < num && !device; i++)
		if (strcmp(verbs_device_name(list[i]), name) == 0)
			device = list[i];
	if (!device)
		err = DOCA_ERROR_NOT_FOUND;
	else if (params && *params) {
		hw_diag("the verbs backend takes no parameters ('%s' given)", params);
		err = DOCA_ERROR_INVALID_VALUE;
	}
	else if (!(dev = calloc(1, sizeof(*dev))))
		err = DOCA_ERROR_NO_MEMORY;
	else if ((err = verbs_dev_init(dev, device)) != DOCA_SUCCESS)
		free(dev);
	/* Opened contexts outlive the list (libibverbs guarantees it). */
	if (list)
		verbs_calls->free_device_list(list);
	if (err != DOCA_SUCCESS)
		return err;
	dev->hw.ops = &hw_verbs_ops;
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	*out = &dev->hw;
	return DOCA_SUCCESS;
}

void verbs_close(struct hw_dev *hw)
{
	struct verbs_dev *dev = verbs_dev_of(hw);
	int rc = verbs_calls->dealloc_pd(dev->pd);

	if (rc)
		verbs_warn("ibv_dealloc_pd", verbs_rc_errno(rc));
	verbs_close_context(dev->ctx);
	free(dev);
}
