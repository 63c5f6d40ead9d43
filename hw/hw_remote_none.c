/* hw/hw_remote_none.c — mem_export / mem_import of a backend that has no
 * remote memory (sw): both refused. Modules define their own: they link
 * nothing of the library. */
#include "hw.h"

doca_error_t hw_mem_export_none(struct hw_mr *mr, uint32_t access, const void **desc, size_t *len)
{
	(void)mr;
	(void)access;
	(void)desc;
	(void)len;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t hw_mem_import_none(struct hw_dev *dev, const void *desc, size_t len, struct hw_mr **mr)
{
	(void)dev;
	(void)desc;
	(void)len;
	(void)mr;
	return DOCA_ERROR_NOT_SUPPORTED;
}
