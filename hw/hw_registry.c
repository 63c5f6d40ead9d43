/* hw/hw_registry.c — the one explicit list of backends, in lookup order. */
#include "hw.h"

extern const struct hw_ops hw_sw_ops;
#ifdef DOCA_HAVE_VERBS
extern const struct hw_ops hw_verbs_ops;
#endif

const struct hw_ops *const hw_backends[] = {
	&hw_sw_ops,
#ifdef DOCA_HAVE_VERBS
	&hw_verbs_ops,
#endif
};

const size_t hw_backend_count = sizeof(hw_backends) / sizeof(hw_backends[0]);
