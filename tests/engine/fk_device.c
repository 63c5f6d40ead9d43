/* tests/engine/fk_device.c — see fk_device.h. */
#include <string.h>

#include "hw/hw_module.h"
#include "hw/sw/sw.h"
#include "tests/engine/fk_device.h"

struct hw_ops fk_ops;

static doca_error_t fk_open(const char *name, const char *params, struct hw_dev **out)
{
	if (strcmp(name, "fk0") != 0)
		return DOCA_ERROR_NOT_FOUND;
	return hw_sw_ops.open("sw0", params, out);
}

static doca_error_t fk_qp_create(struct hw_dev *dev, const struct hw_qp_attr *attr, struct hw_qp **qp)
{
	doca_error_t err = hw_sw_ops.qp_create(dev, attr, qp);

	if (err == DOCA_SUCCESS) {
		(*qp)->ops = &fk_ops;
		(*qp)->reaps_whole = false; /* polled, as verbs's are: fk_ops.poll is what a test changes */
	}
	return err;
}

void fk_install(void)
{
	fk_ops = hw_sw_ops;
	fk_ops.name = "verbs";
	fk_ops.open = fk_open;
	fk_ops.qp_create = fk_qp_create;
	hw_module_preload("verbs", &fk_ops);
}
