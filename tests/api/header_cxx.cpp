/*
 * tests/api/header_cxx.cpp — the umbrella header is usable from C++17 with
 * warnings as errors: extern "C" linkage, no C-only constructs.
 */
#include <doca_core.h>

#include <cstdio>
#include <cstring>

int main()
{
	doca_ctx *ctx = nullptr;
	doca_ctx_state st = DOCA_CTX_STATE_STOPPING;
	doca_task_desc desc{};

	desc.type = DOCA_TASK_COPY;
	desc.flags = DOCA_TASK_FLAG_ALLOW_PARTIAL;
	desc.user_data.u64 = 7;
	if (std::strcmp(doca_error_get_name(DOCA_ERROR_AGAIN), "DOCA_ERROR_AGAIN") != 0) {
		std::fprintf(stderr, "doca_error_get_name\n");
		return 1;
	}
	if (doca_task_submit(nullptr, &desc) != DOCA_ERROR_INVALID_VALUE) {
		std::fprintf(stderr, "doca_task_submit(nullptr)\n");
		return 1;
	}
	if (doca_ctx_create(&ctx) != DOCA_SUCCESS || doca_ctx_get_state(ctx, &st) != DOCA_SUCCESS ||
	    st != DOCA_CTX_STATE_IDLE || doca_ctx_destroy(ctx) != DOCA_SUCCESS) {
		std::fprintf(stderr, "ctx create/get_state/destroy\n");
		return 1;
	}
	return 0;
}
