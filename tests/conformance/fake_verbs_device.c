/*
 * tests/conformance/fake_verbs_device.c — linked only into
 * conformance_fake_verbs: every process of that program (the runner and each
 * Criterion test process) starts with the fake RC loopback NIC of
 * tests/verbs installed as the verbs backend's device "fake_mlx5_0", driven
 * by a background NIC thread. So the device-independent suite also runs the
 * engine on the verbs backend — post/doorbell, completion channel wake-ups,
 * flush through QP error state — where no RDMA hardware exists. The
 * backend is this program's own copy of the verbs module's objects, standing
 * in for the module (hw_module_preload), so the fake is the one it calls.
 */
#include <stdio.h>
#include <unistd.h>

#include "hw/hw_module.h"
#include "hw/verbs/verbs_internal.h"
#include "tests/verbs/fake_verbs.h"

__attribute__((constructor)) static void conf_fake_verbs_install(void)
{
	hw_module_preload("verbs", &hw_verbs_ops); /* this program's copy, which has the fake */
	fake_verbs_install();
	fake_verbs_add_device("fake_mlx5_0", NULL);
	fake_verbs_nic_thread(true);
}

/* A broken verbs rule (destroy order, CQ overrun, unacked events…) fails the process. */
__attribute__((destructor)) static void conf_fake_verbs_check(void)
{
	if (fake_verbs_violations()) {
		fprintf(stderr, "fake_mlx5_0: verbs rules broken: %s\n", fake_verbs_violation_text());
		_exit(70);
	}
}
