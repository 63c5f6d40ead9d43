/*
 * stress/stress_faults.c — fault injection and queue exhaustion under load.
 *
 * Five contexts on sw0 devices that fail and half-copy descriptors
 * ("sw0:engines=1,fail_every=7,partial_every=11", "sw0:fail_every=5,
 * partial_every=3" inline), delay them ("sw0:delay_us=50" inline,
 * "sw0:engines=2,delay_us=50,partial_every=4") or neither ("sw0"), each
 * with a tiny task pool (1..8) so DOCA_ERROR_AGAIN is frequent; 30% of the
 * slots have a short dst and are sent with DOCA_TASK_FLAG_ALLOW_PARTIAL;
 * 5% of submissions are invalid on purpose. Checks: an injected failure is
 * FAILURE/IO_FAILED only on a failing device; an injected partial is
 * PARTIAL/IO_FAILED with fewer bytes, exactly those written; a short dst
 * gives PARTIAL/TOO_BIG with exactly dst bytes; AGAIN and invalid
 * submissions get no event; counters balance; everything tears down.
 *
 *   stress_faults [--seconds S] [--seed N] [--sabotage lost|dup|data]
 *
 * --sabotage: the world's harness faults (stress_world.c), each of which
 * must be reported.
 */
#include "stress_common.h"

static const struct pe_spec pes[] = {
	{ PE_POLL, false },
	{ PE_EVENT, true },
	{ PE_WORKER, true },
	{ PE_EVENT, false },
};

static const char *const devs[] = {
	"sw0:engines=1,fail_every=7,partial_every=11",
	"sw0:delay_us=50",
	"sw0",
	"sw0:fail_every=5,partial_every=3",
	"sw0:engines=2,delay_us=50,partial_every=4",
};

static const struct stress_cfg cfg = {
	.name = "stress_faults",
	.submitters = 3,
	.units = 5,
	.slots = 3,
	.len = 128,
	.pes = pes,
	.npes = 4,
	.devs = devs,
	.ndevs = 5,
	.max_tasks_lo = 1,
	.max_tasks_hi = 8,
	.partial_pct = 30,
	.misuse_pct = 5,
	.cb_stop_permille = 1,
	.cb_resubmit_pct = 50,
	.worker_cycle_ms = 50,
	.intruder = true,
	.lifecycle = false,
};

/* One step: now and then stop or restart a context. */
static void controller(struct stress *s, struct rng *r)
{
	stress_sleep_us(2000 + rng_below(r, 8000));
	unit_toggle(stress_unit(s, rng_below(r, stress_units(s))));
}

int main(int argc, char **argv)
{
	struct stress_opts o;

	stress_parse_kinds(argc, argv, &o, STRESS_WORLD_KINDS);
	return stress_run(stress_create(&cfg, &o), controller);
}
