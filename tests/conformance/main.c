/*
 * tests/conformance/main.c — entry point of the conformance suite: picks the
 * device under test and runs every Criterion test against it.
 *
 *   conformance --dev NAME [criterion options]   one device ("sw0", "mlx5_0")
 *   DOCA_CONFORMANCE_DEV=NAME conformance ...    the same
 *   conformance --all-verbs [criterion options]  every verbs device found
 *                                                now, one run each; none →
 *                                                "SKIP: verbs: ..." and exit 0
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#ifdef DOCA_HAVE_VERBS
#include <infiniband/verbs.h>
#endif

#include "tests/conformance/conformance.h"

extern char **environ;

#define CONF_MAX_DEVICES 32

/** Why there is no verbs device, as "ibv_get_device_list: ENOSYS". */
static void no_verbs_reason(char *buf, size_t len)
{
#ifdef DOCA_HAVE_VERBS
	int num = 0;
	struct ibv_device **list;

	errno = 0;
	list = ibv_get_device_list(&num);
	if (list) {
		snprintf(buf, len, "ibv_get_device_list: %d devices", num);
		ibv_free_device_list(list);
		return;
	}
	snprintf(buf, len, "ibv_get_device_list: %s",
		 strerrorname_np(errno) ? strerrorname_np(errno) : strerror(errno));
#else
	snprintf(buf, len, "the library was built without libibverbs");
#endif
}

/** Run this program once per verbs device (--dev NAME + @p args); SKIP if none. */
static int run_all_verbs(char *self, int argc, char *argv[])
{
	struct doca_dev_info infos[CONF_MAX_DEVICES];
	size_t count = 0, ran = 0;
	int failed = 0;
	char reason[128] = "";

	if (doca_dev_list(infos, CONF_MAX_DEVICES, &count) != DOCA_SUCCESS) {
		fprintf(stderr, "conformance: doca_dev_list failed\n");
		return 1;
	}
	for (size_t i = 0; i < count && i < CONF_MAX_DEVICES; i++) {
		char dev_arg[96];
		char **args;
		int status;
		pid_t pid;

		if (strcmp(infos[i].backend, "verbs") != 0)
			continue;
		if (strncmp(infos[i].caps, "unavailable: ", 13) == 0) { /* the module is not loaded */
			snprintf(reason, sizeof(reason), "%s", infos[i].caps);
			continue;
		}
		args = calloc((size_t)argc + 3, sizeof(*args));
		if (!args)
			return 1;
		snprintf(dev_arg, sizeof(dev_arg), "--dev=%s", infos[i].name);
		args[0] = self;
		args[1] = dev_arg;
		for (int a = 0; a < argc; a++)
			args[a + 2] = argv[a];
		args[argc + 2] = NULL;
		printf("conformance: verbs device %s\n", infos[i].name);
		fflush(stdout);
		if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) != 0 ||
		    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			printf("conformance: FAILED on %s\n", infos[i].name);
			failed = 1;
		}
		free(args);
		ran++;
	}
	if (ran == 0 && reason[0] != '\0') {
		printf("SKIP: verbs: the backend is %s\n", reason);
	} else if (ran == 0) {
		no_verbs_reason(reason, sizeof(reason));
		printf("SKIP: verbs: no RDMA device (%s)\n", reason);
	}
	return failed;
}

/** Take "--dev NAME" / "--dev=NAME" / "--all-verbs" out of argv. */
static void take_own_args(int *argc, char *argv[], const char **dev, bool *all_verbs)
{
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--dev") == 0 && i + 1 < *argc)
			*dev = argv[++i];
		else if (strncmp(argv[i], "--dev=", 6) == 0)
			*dev = argv[i] + 6;
		else if (strcmp(argv[i], "--all-verbs") == 0)
			*all_verbs = true;
		else
			argv[out++] = argv[i];
	}
	argv[out] = NULL;
	*argc = out;
}

int main(int argc, char *argv[])
{
	const char *dev = getenv(CONF_DEV_ENV);
	bool all_verbs = false;
	struct criterion_test_set *tests;
	int result = 0;

	take_own_args(&argc, argv, &dev, &all_verbs);
	if (all_verbs)
		return run_all_verbs(argv[0], argc - 1, argv + 1);
	if (!dev || !*dev) {
		fprintf(stderr, "usage: %s --dev NAME | --all-verbs [criterion options]\n"
				"       (or set " CONF_DEV_ENV ")\n", argv[0]);
		return 2;
	}
	/* Test processes read the device from the environment. */
	setenv(CONF_DEV_ENV, dev, 1);
	printf("conformance: device \"%s\"\n", dev);
	fflush(stdout);
	tests = criterion_initialize();
	if (criterion_handle_args(argc, argv, true))
		result = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return result;
}
