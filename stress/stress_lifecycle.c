/*
 * stress/stress_lifecycle.c — objects destroyed and rebuilt while others run.
 *
 * Three submitters keep four contexts busy (a polled PE, an event-mode PE
 * and two worker PEs whose manager threads take the PE back with
 * doca_pe_stop_run, progress it themselves a while and hand it to a new
 * worker with doca_pe_run_on_cpu). Meanwhile the controller stops and starts
 * contexts and rebuilds units at random depth: buffers; + memories (with a
 * new task pool size); + the device (closed and reopened, maybe with another
 * open string, so shared sw devices are opened and closed concurrently);
 * + the context itself (destroyed, recreated, reconnected to its PE).
 * Checks, besides everything stress_submit_stop checks: the reverse-order
 * rules (mem with buffers, dev with memories, live ctx → refused), every
 * destroy of a quiesced object succeeds (no buffer is still "in use" once
 * its ctx is IDLE), worker hand-over keeps every event exactly once.
 *
 *   stress_lifecycle [--seconds S] [--seed N] [--sabotage lost|dup|data]
 *
 * --sabotage: the world's harness faults (stress_world.c), each of which
 * must be reported.
 */
#include "stress_common.h"

static const struct pe_spec pes[] = {
	{ PE_POLL, false },
	{ PE_WORKER, true },
	{ PE_EVENT, false },
	{ PE_WORKER, true },
};

static const char *const devs[] = { "sw0", "sw0:engines=1", "sw0:engines=1", "sw0:delay_us=20" };

static const struct stress_cfg cfg = {
	.name = "stress_lifecycle",
	.submitters = 3,
	.units = 4,
	.slots = 4,
	.len = 192,
	.pes = pes,
	.npes = 4,
	.devs = devs,
	.ndevs = 4,
	.max_tasks_lo = 8,
	.max_tasks_hi = 48,
	.partial_pct = 10,
	.misuse_pct = 2,
	.cb_stop_permille = 1,
	.cb_resubmit_pct = 20,
	.worker_cycle_ms = 20,
	.intruder = false,
	.lifecycle = true,
};

/* One step: toggle a unit, or rebuild part or all of it. */
static void controller(struct stress *s, struct rng *r)
{
	struct unit *u = stress_unit(s, rng_below(r, stress_units(s)));

	stress_sleep_us(rng_below(r, 5000));
	if (rng_pct(r, 55))
		unit_toggle(u);
	else
		unit_rebuild(u, r, rng_below(r, 4));
}

int main(int argc, char **argv)
{
	struct stress_opts o;

	stress_parse_kinds(argc, argv, &o, STRESS_WORLD_KINDS);
	return stress_run(stress_create(&cfg, &o), controller);
}
