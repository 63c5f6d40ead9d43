/* tests/install/list_devices.c — a program built outside the project that
 * prints doca_dev_list, one device per line: "NAME BACKEND CAPS". The
 * install checks read it to see where the library finds its modules (a
 * backend whose module cannot be loaded shows "unavailable: REASON"). */
#include <doca_core.h>

#include <stdio.h>

int main(void)
{
	struct doca_dev_info infos[32];
	size_t count = 0;
	doca_error_t err = doca_dev_list(infos, 32, &count);

	if (err != DOCA_SUCCESS) {
		fprintf(stderr, "list_devices: doca_dev_list: %s\n", doca_error_get_name(err));
		return 1;
	}
	for (size_t i = 0; i < count && i < 32; i++)
		printf("%s %s %s\n", infos[i].name, infos[i].backend, infos[i].caps);
	return 0;
}
