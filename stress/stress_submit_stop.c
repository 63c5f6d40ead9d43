/*
 * stress/stress_submit_stop.c — submitters racing doca_ctx_stop/start.
 *
 * Four submitter threads pour copies into six contexts spread over four PEs
 * (a polled PE with doca_pe_get_event, a polled PE with callbacks that an
 * intruder thread also tries to progress, an event-mode PE, a worker PE),
 * on inline and engine-thread sw0 devices, while the controller stops and
 * restarts random contexts and event callbacks stop their own context now
 * and then and resubmit their slot. Checks: a submission racing a stop is
 * either accepted with exactly one event or refused with BAD_STATE and gets
 * none; flushed tasks (FAILURE/SHUTDOWN) left their dst untouched; every
 * successful copy is byte-exact; state reports are in order and balance;
 * every object is destroyed with DOCA_SUCCESS at the end.
 *
 *   stress_submit_stop [--seconds S] [--seed N] [--sabotage lost|dup|data]
 *
 * --sabotage: the world's harness faults (stress_world.c), each of which
 * must be reported.
 */
#include "stress_common.h"

static const struct pe_spec pes[] = {
	{ PE_POLL, false },
	{ PE_POLL, true },
	{ PE_EVENT, false },
	{ PE_WORKER, true },
};

static const char *const devs[] = { "sw0", "sw0:engines=1", "sw0", "sw0:engines=2" };

static const struct stress_cfg cfg = {
	.name = "stress_submit_stop",
	.submitters = 4,
	.units = 6,
	.slots = 4,
	.len = 256,
	.pes = pes,
	.npes = 4,
	.devs = devs,
	.ndevs = 4,
	.max_tasks_lo = 16,
	.max_tasks_hi = 64,
	.partial_pct = 10,
	.misuse_pct = 2,
	.cb_stop_permille = 2,
	.cb_resubmit_pct = 30,
	.worker_cycle_ms = 0,
	.intruder = true,
	.lifecycle = false,
};

/* One step: wait a little, then stop a running ctx or start an idle one. */
static void controller(struct stress *s, struct rng *r)
{
	stress_sleep_us(rng_below(r, 3000));
	unit_toggle(stress_unit(s, rng_below(r, stress_units(s))));
}

int main(int argc, char **argv)
{
	struct stress_opts o;

	stress_parse_kinds(argc, argv, &o, STRESS_WORLD_KINDS);
	return stress_run(stress_create(&cfg, &o), controller);
}
