/*
 * tests/api/header_c11.c — the umbrella header compiles as strict ISO C11
 * (-std=c11 -pedantic-errors, no GNU extensions) and its symbols link.
 * Exit status 0 is the test's pass.
 */
#include <doca_core.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
	struct doca_ctx *ctx = NULL;
	struct doca_task_desc desc = { DOCA_TASK_COPY, NULL, NULL, { NULL }, DOCA_TASK_FLAG_ALLOW_PARTIAL };
	union doca_data ud;
	enum doca_ctx_state st = DOCA_CTX_STATE_STOPPING;

	ud.u64 = 1;
	(void)ud;
	if (strcmp(doca_error_get_name(DOCA_ERROR_BAD_STATE), "DOCA_ERROR_BAD_STATE") != 0) {
		fprintf(stderr, "doca_error_get_name\n");
		return 1;
	}
	if (doca_task_submit(NULL, &desc) != DOCA_ERROR_INVALID_VALUE) {
		fprintf(stderr, "doca_task_submit(NULL)\n");
		return 1;
	}
	if (doca_ctx_create(&ctx) != DOCA_SUCCESS || doca_ctx_get_state(ctx, &st) != DOCA_SUCCESS ||
	    st != DOCA_CTX_STATE_IDLE || doca_ctx_destroy(ctx) != DOCA_SUCCESS) {
		fprintf(stderr, "ctx create/get_state/destroy\n");
		return 1;
	}
	return 0;
}
