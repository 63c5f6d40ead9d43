/* tests/outside/outside.c — built outside meson, against the uninstalled
 * pkg-config file: the seed's first and last step. */
#include <doca_core.h>
#include <stdio.h>

int main(void)
{
	struct doca_ctx *ctx;

	if (doca_ctx_create(&ctx) != DOCA_SUCCESS || doca_ctx_destroy(ctx) != DOCA_SUCCESS)
		return 1;
	printf("built against doca-core through pkg-config: %s\n", doca_error_get_name(DOCA_SUCCESS));
	return 0;
}
