/*
 * stress/stress_shared_shards.c — more submitting threads than mailbox
 * shards.
 *
 * Forty submitter threads (alive together, so at least two and a half per
 * shard of each context's 16-shard mailbox) pour copies into three
 * contexts on one polled PE and one worker PE, inline and with an engine
 * thread, with small task pools (8..32) so DOCA_ERROR_AGAIN is frequent,
 * while the controller stops a context, waits for IDLE and restarts it,
 * again and again. Checks, as stress_submit_stop does: every accepted task
 * gets exactly one event and a refused one none, flushed tasks left their
 * dst untouched, successful copies are byte-exact, state reports are in
 * order, every stopped context reaches IDLE, everything tears down.
 *
 *   stress_shared_shards [--seconds S] [--seed N] [--sabotage lost|dup|data]
 *
 * --sabotage: the world's harness faults (stress_world.c), each of which
 * must be reported.
 */
#include "stress_common.h"

static const struct pe_spec pes[] = {
	{ PE_POLL, false },
	{ PE_WORKER, true },
};

static const char *const devs[] = { "sw0", "sw0:engines=1", "sw0" };

static const struct stress_cfg cfg = {
	.name = "stress_shared_shards",
	.submitters = 40,
	.units = 3,
	.slots = 2,
	.len = 64,
	.pes = pes,
	.npes = 2,
	.devs = devs,
	.ndevs = 3,
	.max_tasks_lo = 8,
	.max_tasks_hi = 32,
	.partial_pct = 0,
	.misuse_pct = 1,
	.cb_stop_permille = 1,
	.cb_resubmit_pct = 20,
	.worker_cycle_ms = 0,
	.intruder = false,
	.lifecycle = false,
};

/* One step: let the storm run, then take one context all the way to IDLE
 * under it (every task queued behind a preempted producer must still get
 * its event for that to happen) and start it again. */
static void controller(struct stress *s, struct rng *r)
{
	struct unit *u = stress_unit(s, rng_below(r, stress_units(s)));

	stress_sleep_us(5000 + rng_below(r, 10000));
	if (unit_quiesce(u))
		unit_toggle(u);
}

int main(int argc, char **argv)
{
	struct stress_opts o;

	stress_parse_kinds(argc, argv, &o, STRESS_WORLD_KINDS);
	return stress_run(stress_create(&cfg, &o), controller);
}
