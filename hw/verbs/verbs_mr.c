/*
 * hw/verbs/verbs_mr.c — memory registration: one ibv_mr per hw_mr, with the
 * least access the copy needs (mapping table in verbs_map.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "hw/verbs/verbs_internal.h"

doca_error_t verbs_mem_register(struct hw_dev *hw, void *addr, size_t len, uint32_t access,
				struct hw_mr **out)
{
	struct verbs_dev *dev = verbs_dev_of(hw);
	struct verbs_mr *mr;
	int err;

	if (access & ~(uint32_t)(HW_ACCESS_READ | HW_ACCESS_WRITE))
		return DOCA_ERROR_INVALID_VALUE;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return DOCA_ERROR_NO_MEMORY;
	mr->mr = verbs_calls->reg_mr(dev->pd, addr, len, verbs_access_flags(access));
	if (!mr->mr) {
		err = errno;
		free(mr);
		return verbs_errno_to_doca(err);
	}
	mr->hw.addr = addr;
	mr->hw.len = len;
	mr->hw.access = access;
	*out = &mr->hw;
	return DOCA_SUCCESS;
}

void verbs_mem_deregister(struct hw_mr *hw)
{
	struct verbs_mr *mr = verbs_mr_of(hw);
	int rc = verbs_calls->dereg_mr(mr->mr);

	if (rc)
		verbs_warn("ibv_dereg_mr", verbs_rc_errno(rc));
	free(mr);
}
