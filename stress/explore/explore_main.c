/*
 * stress/explore/explore_main.c — doca_explore: runs scenarios under the
 * PCT scheduler, one forked process per schedule, and reports verdicts.
 *
 *   doca_explore --list
 *   doca_explore --scenario NAME|all [--schedules N] [--seed-base B]
 *                [--depth D] [--steps K] [--expect VERDICT] [--seconds S]
 *   doca_explore --scenario NAME --seed S [--trace] [--twice]
 *
 * k (PCT's step count) is measured first, as the most steps of ten
 * calibration schedules (seeds 0-9, no change point), unless --steps gives
 * it; schedule i then uses seed B + i. A schedule is a function of
 * (scenario, seed, depth, k) and of DOCA_EXPLORE_REVERT: the replay line
 * printed with every finding runs it again exactly (--twice checks that:
 * two runs, one schedule hash). A schedule's verdict is its first line
 * starting "VERDICT: " (a fork child's report, printed first, has its own
 * prefix).
 *
 * --expect VERDICT (a prefix of the VERDICT line, or several joined by "|": "deadlock", "fd touched",
 * "invariant: credits", default "clean"): with "clean", every schedule must
 * be clean; otherwise the run passes at the first schedule with that
 * verdict, fails if none within the budget, and fails at once on a
 * different non-clean verdict. --seconds S runs a campaign instead (every
 * scenario with "all", schedules until S seconds have passed, findings
 * counted, the first of each kind printed); it exits 1 if any schedule was
 * not clean.
 */
#include "scenario.h"

#include "actors/explore_revert.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MAX_HOOKS 200000u
#define OUTPUT_MAX (1u << 20)
#define MAX_KINDS 16u
#define CALIBRATION 10u

const struct scenario explore_scenarios[] = {
	{ "submit_stop", "two submitters race for credits while a third thread stops the ctx (event mode, engine thread)",
	  scenario_submit_stop },
	{ "destroy_refused", "another thread destroys PE, memory, device and ctx while they are in use",
	  scenario_destroy_refused },
	{ "pe_destroy_after_stop", "doca_pe_destroy right after a stop another thread handed to the armed PE",
	  scenario_pe_destroy_after_stop },
	{ "pe_destroy_engine_wake", "doca_pe_destroy right after a task an engine thread completed and woke the armed PE for",
	  scenario_pe_destroy_engine_wake },
	{ "stop_run_from_callback", "doca_pe_stop_run(A) while A's event callback calls doca_pe_run_on_cpu(B)",
	  scenario_stop_run_from_callback },
	{ "run_on_cpu_stop_run", "two threads stop a worker at once while tasks complete through callbacks",
	  scenario_run_on_cpu_stop_run },
	{ "stop_run_recycled_id", "doca_pe_stop_run from a thread with a joined worker's id while a new worker starts",
	  scenario_stop_run_recycled_id },
	{ "event_double_free", "two threads free the same event at once; credits checked after",
	  scenario_event_double_free },
	{ "event_wrap_free", "the PE's thread and another free one event at the generation's wrap; its next handle and credits checked",
	  scenario_event_wrap_free },
	{ "owner_claim_revoke", "the PE's parked owner frees an event while another thread revokes the guard, parks it and frees the same event",
	  scenario_owner_claim_revoke },
	{ "owner_claim_revoke_bulk", "owner_claim_revoke, the owner freeing by doca_event_free_bulk",
	  scenario_owner_claim_revoke_bulk },
	{ "owner_claim_set", "another thread sets the PE's claim flag by a free, then it and the parked owner free the same event",
	  scenario_owner_claim_set },
	{ "two_pe_cross", "two PEs, each parked by its own thread; each thread frees both PEs' events by doca_event_free_bulk",
	  scenario_two_pe_cross },
	{ "two_pe_cross_single", "two_pe_cross, each thread freeing the two events by two doca_event_free calls",
	  scenario_two_pe_cross_single },
	{ "owner_claim_two_outside", "the PE's parked owner frees an event while two other threads free one each, one the owner's",
	  scenario_owner_claim_two_outside },
	{ "runner_handoff", "two threads take turns running one PE: its guard parked, revoked, parked again",
	  scenario_runner_handoff },
	{ "runner_revoke", "the guard alone: its owner parks it and enters it again while another thread revokes and takes it",
	  scenario_runner_revoke },
	{ "owner_way_revoke", "the guard alone: its owner enters it by the owner ways' entry while another thread revokes and takes it",
	  scenario_owner_way_revoke },
	{ "pool_share", "an owner's plain credit updates while a foreign submitter turns the pool shared",
	  scenario_pool_share },
	{ "pool_share_bulk", "pool_share, the owner getting and freeing its events in bursts (doca_event_free_bulk's owner route)",
	  scenario_pool_share_bulk },
	{ "pool_share_submit", "pool_share, the owner's single submits (no busy flag) racing a foreign submitter's first take",
	  scenario_pool_share_submit },
	{ "pool_share_burst", "pool_share_submit, the owner's submits one burst longer than the pool's stack (its fill pops counted by the stack's depth)",
	  scenario_pool_share_burst },
	{ "pool_share_chunk", "pool_share_submit, the owner's submit making a chunk inside its brief section",
	  scenario_pool_share_chunk },
	{ "pool_revoke", "two runners revoking each other, a foreign submitter and a foreign freer on one pool",
	  scenario_pool_revoke },
	{ "pool_share_again", "the exact AGAIN while a foreign submitter turns the pool shared and a freer frees around the owner's guard",
	  scenario_pool_share_again },
	{ "quiesce_again_buf", "the exact AGAIN at the owner while another thread destroys unused buffers of its context",
	  scenario_quiesce_again_buf },
	{ "quiesce_again_stop", "the exact AGAIN at the owner while another thread stops and starts an idle context of its PE",
	  scenario_quiesce_again_stop },
	{ "credit_wake", "a blocked submit_wait and a credit notification armed while the credit comes back",
	  scenario_credit_wake },
	{ "credit_watch_start", "a context's first credit waiter racing its start; the credit back must fire the fd",
	  scenario_credit_watch_start },
	{ "credit_many", "two blocked submit_waits (one timed), a credit fd armed, two credits back in one foreign free",
	  scenario_credit_many },
	{ "wait_restart", "a submit_wait refused in one run while the context is stopped and started again",
	  scenario_wait_restart },
	{ "wait_destroy", "a submit_wait asleep while its context is stopped and destroyed",
	  scenario_wait_destroy },
	{ "wait_destroy_race", "a submit_wait racing the stop and destroy of its context",
	  scenario_wait_destroy_race },
	{ "stop_deferred", "an event callback stops its ctx while the RUNNING report waits for that turn; a third thread stops too",
	  scenario_stop_deferred },
	{ "stop_deferred_armed", "stop_deferred, the PE in event mode (armed, asleep) and its tasks on a sw engine thread",
	  scenario_stop_deferred_armed },
	{ "restart_turn", "a context stopped and started again while another thread runs its PE's turns",
	  scenario_restart_turn },
	{ "stale_stop", "a stop on a handle racing its destroy and a new context that reuses its memory",
	  scenario_stale_stop },
	{ "stale_connect", "a connect on a context handle racing its destroy and a new context that reuses its memory",
	  scenario_stale_connect },
	{ "stale_configure", "a setter and a start on a context handle racing its destroy and a new context in its cell",
	  scenario_stale_configure },
	{ "stale_ctx_destroy", "two destroys of one context racing", scenario_stale_ctx_destroy },
	{ "stale_pe_destroy", "two destroys of one progress engine racing", scenario_stale_pe_destroy },
	{ "stale_buf_destroy", "two destroys of one buffer racing", scenario_stale_buf_destroy },
	{ "stale_mem_destroy", "two destroys of one memory racing, and a new memory that reuses its cell",
	  scenario_stale_mem_destroy },
	{ "stale_mem_create", "memories created on a context handle racing its destroy and a new context in its cell",
	  scenario_stale_mem_create },
	{ "stale_buf_create", "a buffer created on a memory racing its destroy", scenario_stale_buf_create },
	{ "stale_notify", "a notification clear on a PE handle racing its destroy and a new PE, on a worker, in its cell",
	  scenario_stale_notify },
	{ "stale_progress", "a progress on a PE handle racing its destroy and a new PE in its cell, progressed by the main thread",
	  scenario_stale_progress },
	{ "stale_get", "a PE's parked owner getting events while the PE is destroyed and a new PE in its cell is progressed by the main thread",
	  scenario_stale_get },
	{ "stale_worker", "a worker stop and start on a PE handle racing its destroy and a new PE in its cell",
	  scenario_stale_worker },
	{ "free_destroy", "a free off the PE's thread, a destroy of its buffers and a guarded submit naming them",
	  scenario_free_destroy },
	{ "cb_destroy", "a destroy in the callback of a task naming the buffer, racing a foreign destroy and submit", scenario_cb_destroy },
	{ "cb_destroy_shared", "cb_destroy, the callback's task pinned from another thread", scenario_cb_destroy_shared },
	{ "cb_destroy_stop", "buffers destroyed in their callback, the ctx stopped and the memory destroyed on another thread", scenario_cb_destroy_stop },
	{ "submit_order", "two submitters' tasks complete in the order each submitted them (event mode, engine thread)",
	  scenario_submit_order },
	{ "ring_wrap", "a foreign submitter's SP ring of capacity 2 goes round four times while a stop races",
	  scenario_ring_wrap },
	{ "ring_sp_mp_sp", "a foreign submitter's SP ring of capacity 1 sends it to MP and back: its tasks in order",
	  scenario_ring_sp_mp_sp },
	{ "ring_batch", "a foreign submitter's SP ring holds more than the feed's batch (lowered to 2): every task taken",
	  scenario_ring_batch },
	{ "ring_mp_two", "two foreign submitters on the MP ring (no exclusive slot): each one's tasks in order",
	  scenario_ring_mp_two },
	{ "ring_watch_idle", "a foreign submitter with gaps: the PE watches its SP ring, stops after an empty look, watches again",
	  scenario_ring_watch_idle },
	{ "ring_watch_released", "ring_watch_idle with WATCH_IDLE 3: the context leaves the ready set before the unwatch",
	  scenario_ring_watch_released },
	{ "ring_unwatch_release",
	  "a foreign submitter with gaps against the event loop (a turn while armed): unwatch, release, arming",
	  scenario_ring_unwatch_release },
	{ "ring_watch_arm", "ring_unwatch_release with WATCH_IDLE 3: a ring still watched when the loop arms",
	  scenario_ring_watch_arm },
	{ "ring_watch_engine", "ring_watch_arm on sw0:engines=1: an armed turn feeds a task whose submitter left the wake-up to a completion",
	  scenario_ring_watch_engine },
	{ "ring_batch_armed", "ring_batch against the event loop: what a feed leaves is brought by the flags alone",
	  scenario_ring_batch_armed },
	{ "pool_reload_stale_t", "two takers of the split credits, 1 of 2 out at most: never AGAIN",
	  scenario_pool_reload_stale_t },
	{ "pool_chunk_prefix", "a split take with a stale returned makes every chunk below the credits out, and none above",
	  scenario_pool_chunk_prefix },
	{ "pool_steal_fresh", "a foreign credit and a guard holder's take at a chunk's end: the feed's fresh slot for the foreign one is made",
	  scenario_pool_steal_fresh },
	{ "pool_again_look", "a foreign look at a pool of 2 across a return and a take, 1 out all along: never all out",
	  scenario_pool_again_look },
	{ "pool_batch_again", "a foreign batch of 2 into a pool of 2 with 1 out, returned meanwhile: AGAIN only with 2 out",
	  scenario_pool_batch_again },
	{ "pool_owner_cover", "the owner's fast take of a stacked slot with a foreign credit out at chunk 0's end: chunks cover",
	  scenario_pool_owner_cover },
	{ "pool_switch_chunk", "a guard holder's busy take that makes a chunk while a foreign taker switches the pool",
	  scenario_pool_switch_chunk },
	{ "pool_switch_in_callback", "the owner resubmits from its callback while a foreign submitter turns the pool shared",
	  scenario_pool_switch_in_callback },
	{ "pool_split_again", "a foreign submitter fills a pool of 2, the PE frees one: its next submit is accepted",
	  scenario_pool_split_again },
	{ "owner_free_stop", "the PE's parked owner frees its last event (no read-side section) while another thread stops the ctx",
	  scenario_owner_free_stop },
	{ "owner_free_bulk_stop", "owner_free_stop, the event freed by doca_event_free_bulk (its route takes no read-side section)",
	  scenario_owner_free_bulk_stop },
	{ "owner_free_close", "the PE's parked owner frees its last event while another thread stops, progresses and destroys everything",
	  scenario_owner_free_close },
	{ "owner_free_bulk_close", "owner_free_close, the event freed by doca_event_free_bulk",
	  scenario_owner_free_bulk_close },
	{ "owner_free_wait", "the PE's parked owner frees the one credit's event while another thread's submit_wait is the first to wait",
	  scenario_owner_free_wait },
	{ "owner_free_bulk_wait", "owner_free_wait, the event freed by doca_event_free_bulk",
	  scenario_owner_free_bulk_wait },
	{ "owner_submit_destroy", "the PE's parked owner submits (no read-side section) while one thread destroys its source and another stops the ctx",
	  scenario_owner_submit_destroy },
	{ "stop_recount", "the PE's parked owner submits while another thread stops the ctx: a stop that counted 0 and waited it out counts its credit",
	  scenario_stop_recount },
	{ "stop_recount_path", "stop_recount, ending 'invariant: path' unless the stop waited out the submit that took its credit (pinned seed)",
	  scenario_stop_recount_path },
	{ "event_wake", "two submitters meet an event-mode PE armed, arming and running; events freed at once (engine thread)",
	  scenario_event_wake },
	{ "fork_in_flight", "fork with a task on an engine thread and a worker running; the child uses the same device",
	  scenario_fork_in_flight },
};
const unsigned explore_nscenarios = sizeof(explore_scenarios) / sizeof(explore_scenarios[0]);

struct args {
	const char *scenario;
	uint64_t schedules;
	uint64_t seed_base;
	bool one_seed;
	unsigned depth;
	uint64_t steps; /* 0: calibrate */
	uint64_t max_hooks;
	const char *expect;
	double seconds; /* 0: no campaign */
	bool trace, twice;
};

/* What one schedule ended with. */
struct outcome {
	char verdict[256]; /* the VERDICT line's text, or what killed it */
	char schedule[256]; /* the "schedule:" summary line */
	uint64_t steps;
	char *output;       /* everything it printed */
};

static _Noreturn void usage(void)
{
	fprintf(stderr, "usage: doca_explore --list\n"
			"       doca_explore --scenario NAME|all [--schedules N] [--seed-base B] [--depth D]\n"
			"                    [--steps K] [--max-hooks M] [--expect VERDICT] [--seconds S]\n"
			"       doca_explore --scenario NAME --seed S [--trace] [--twice]\n");
	exit(2);
}

static uint64_t parse_u64(const char *s)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);

	if (errno != 0 || *end != '\0' || end == s)
		usage();
	return v;
}

static void parse(int argc, char **argv, struct args *a)
{
	*a = (struct args){ .schedules = 100, .seed_base = 1, .depth = 3,
			    .max_hooks = DEFAULT_MAX_HOOKS, .expect = "clean" };
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i];

		if (strcmp(opt, "--list") == 0) {
			for (unsigned s = 0; s < explore_nscenarios; s++)
				printf("%-24s %s\n", explore_scenarios[s].name, explore_scenarios[s].what);
			exit(0);
		}
		if (strcmp(opt, "--trace") == 0) {
			a->trace = true;
			continue;
		}
		if (strcmp(opt, "--twice") == 0) {
			a->twice = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];

		if (strcmp(opt, "--scenario") == 0)
			a->scenario = v;
		else if (strcmp(opt, "--schedules") == 0)
			a->schedules = parse_u64(v);
		else if (strcmp(opt, "--seed-base") == 0)
			a->seed_base = parse_u64(v);
		else if (strcmp(opt, "--seed") == 0)
			a->seed_base = parse_u64(v), a->one_seed = true;
		else if (strcmp(opt, "--depth") == 0)
			a->depth = (unsigned)parse_u64(v);
		else if (strcmp(opt, "--steps") == 0)
			a->steps = parse_u64(v);
		else if (strcmp(opt, "--max-hooks") == 0)
			a->max_hooks = parse_u64(v);
		else if (strcmp(opt, "--expect") == 0)
			a->expect = v;
		else if (strcmp(opt, "--seconds") == 0)
			a->seconds = strtod(v, NULL);
		else
			usage();
	}
	if (a->scenario == NULL || a->depth < 1 || a->depth > EXPLORE_MAX_DEPTH || a->schedules == 0 ||
	    ((a->trace || a->twice) && !a->one_seed) ||
	    (a->one_seed && strcmp(a->scenario, "all") == 0))
		usage();
}

/* The first line of @p text that starts with @p prefix (a fork child's
 * report lines start with "fork child " and are not the schedule's). */
static const char *line_starting(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *line = text; *line != '\0'; line += strcspn(line, "\n") + 1) {
		if (strncmp(line, prefix, n) == 0)
			return line;
		if (line[strcspn(line, "\n")] == '\0')
			break;
	}
	return NULL;
}

/* Run one schedule in a child process; its stdout and stderr go to a memfd. */
static void run_schedule(const struct scenario *sc, const struct explore_opts *o, struct outcome *out)
{
	int fd = memfd_create("explore", MFD_CLOEXEC);
	int status;

	if (fd < 0) {
		perror("memfd_create");
		exit(2);
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
		explore_start(o);
		sc->run();
		explore_finish();
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	off_t len = lseek(fd, 0, SEEK_END);

	if (len > (off_t)OUTPUT_MAX)
		len = OUTPUT_MAX;
	out->output = calloc(1, (size_t)len + 1);
	if (out->output == NULL || pread(fd, out->output, (size_t)len, 0) < 0) {
		perror("reading a schedule's output");
		exit(2);
	}
	close(fd);
	out->verdict[0] = out->schedule[0] = '\0';
	out->steps = 0;
	const char *v = line_starting(out->output, "VERDICT: ");
	const char *s = line_starting(out->output, "schedule: ");

	if (v != NULL)
		snprintf(out->verdict, sizeof(out->verdict), "%.*s", (int)strcspn(v + 9, "\n"), v + 9);
	if (s != NULL) {
		snprintf(out->schedule, sizeof(out->schedule), "%.*s", (int)strcspn(s, "\n"), s);
		const char *st = strstr(s, " steps,");

		while (st != NULL && st > s && st[-1] >= '0' && st[-1] <= '9')
			st--;
		out->steps = st ? strtoull(st, NULL, 10) : 0;
	}
	if (WIFSIGNALED(status))
		snprintf(out->verdict, sizeof(out->verdict), "crash: killed by signal %d", WTERMSIG(status));
	else if (v == NULL)
		snprintf(out->verdict, sizeof(out->verdict), "harness: exit %d without a verdict",
			 WEXITSTATUS(status));
}

/* prefix: one verdict prefix, or several separated by '|' (a defect that
 * shows as either, depending on the schedule that finds it first). */
static bool verdict_is(const struct outcome *o, const char *prefix)
{
	for (;;) {
		const char *bar = strchr(prefix, '|');
		size_t n = bar != NULL ? (size_t)(bar - prefix) : strlen(prefix);

		if (strncmp(o->verdict, prefix, n) == 0)
			return true;
		if (bar == NULL)
			return false;
		prefix = bar + 1;
	}
}

static const char *program; /* argv[0], for replay lines */

static void print_finding(const struct scenario *sc, const struct explore_opts *o,
			  const struct outcome *out)
{
	const char *revert = getenv("DOCA_EXPLORE_REVERT");

	if (revert != NULL && revert[0] == '\0')
		revert = NULL;
	printf("--- %s, seed %llu: %s\n", sc->name, (unsigned long long)o->seed, out->verdict);
	for (const char *line = out->output; *line != '\0';) {
		size_t n = strcspn(line, "\n");

		printf("    | %.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
	printf("    replay: %s%s%s%s --scenario %s --seed %llu --depth %u --steps %llu\n",
	       revert ? "DOCA_EXPLORE_REVERT=" : "", revert ? revert : "", revert ? " " : "", program,
	       sc->name, (unsigned long long)o->seed, o->depth, (unsigned long long)o->steps);
}

/* PCT's k: the most steps among CALIBRATION schedules with random
 * priorities and no change point (seeds 0, 1, ...; deterministic). */
static uint64_t calibrate(const struct args *a, const struct scenario *sc)
{
	struct explore_opts o = { .depth = 1, .steps = 1, .max_hooks = a->max_hooks };
	uint64_t k = 1;
	unsigned clean = 0;

	if (a->steps != 0)
		return a->steps;
	for (o.seed = 0; o.seed < CALIBRATION; o.seed++) {
		struct outcome out;

		run_schedule(sc, &o, &out);
		k = out.steps > k ? out.steps : k;
		clean += verdict_is(&out, "clean");
		free(out.output);
	}
	printf("explore: %s: k = %llu steps (the most of %u calibration schedules, %u clean)\n",
	       sc->name, (unsigned long long)k, CALIBRATION, clean);
	return k;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --seed S: one schedule, printed in full (twice with --twice: the same). */
static int run_one(const struct args *a, const struct scenario *sc)
{
	struct explore_opts o = { .seed = a->seed_base, .depth = a->depth, .max_hooks = a->max_hooks,
				  .trace = a->trace };
	struct outcome first, second;

	o.steps = calibrate(a, sc);
	run_schedule(sc, &o, &first);
	fputs(first.output, stdout);
	if (!a->twice)
		return verdict_is(&first, a->expect) ? 0 : 1;
	run_schedule(sc, &o, &second);
	bool same = strcmp(first.schedule, second.schedule) == 0 &&
		    strcmp(first.verdict, second.verdict) == 0;

	printf("explore: replay %s: \"%s\" / \"%s\"\n", same ? "identical" : "DIFFERS", first.schedule,
	       second.schedule);
	return same && first.schedule[0] != '\0' && verdict_is(&first, a->expect) ? 0 : 1;
}

/* A bounded run (--schedules) or a campaign (--seconds) of one scenario.
 * Returns 0 if it ended as --expect asks. */
static int run_many(const struct args *a, const struct scenario *sc, double seconds)
{
	struct explore_opts o = { .depth = a->depth, .max_hooks = a->max_hooks };
	bool want_clean = strcmp(a->expect, "clean") == 0;
	bool campaign = seconds > 0;
	char kinds[MAX_KINDS][64];
	uint64_t counts[MAX_KINDS] = { 0 }, clean = 0, ran = 0;
	unsigned nkinds = 0;
	double t0 = now_s();
	int rc = want_clean ? 0 : 1;

	o.steps = calibrate(a, sc);
	for (uint64_t i = 0; campaign ? now_s() - t0 < seconds : i < a->schedules; i++) {
		struct outcome out;

		o.seed = a->seed_base + i;
		run_schedule(sc, &o, &out);
		ran++;
		if (verdict_is(&out, "clean")) {
			clean++;
			free(out.output);
			continue;
		}
		/* count it by its kind: the verdict up to the second ':' */
		char kind[64];
		const char *colon = strchr(out.verdict, ':');

		colon = colon && verdict_is(&out, "invariant") ? strchr(colon + 1, ':') : colon;
		snprintf(kind, sizeof(kind), "%.*s", colon ? (int)(colon - out.verdict) : 63, out.verdict);
		unsigned k = 0;

		while (k < nkinds && strcmp(kinds[k], kind) != 0)
			k++;
		if (k == nkinds && nkinds < MAX_KINDS)
			snprintf(kinds[nkinds++], sizeof(kinds[0]), "%s", kind);
		if (k < MAX_KINDS && counts[k]++ == 0)
			print_finding(sc, &o, &out);
		bool expected = !want_clean && verdict_is(&out, a->expect);

		free(out.output);
		if (campaign) {
			rc = 1;
			continue;
		}
		if (expected) {
			printf("explore: %s: found '%s' at schedule %llu of %llu (seed %llu)\n", sc->name,
			       a->expect, (unsigned long long)i + 1, (unsigned long long)a->schedules,
			       (unsigned long long)o.seed);
			return 0;
		}
		printf("explore: %s: schedule %llu (seed %llu) ended '%s', not '%s'\n", sc->name,
		       (unsigned long long)i + 1, (unsigned long long)o.seed, kind, a->expect);
		return 1;
	}
	printf("explore: %s: %llu schedules (seeds %llu..%llu, depth %u, k %llu) in %.1f s: %llu clean",
	       sc->name, (unsigned long long)ran, (unsigned long long)a->seed_base,
	       (unsigned long long)(a->seed_base + ran - 1), a->depth, (unsigned long long)o.steps,
	       now_s() - t0, (unsigned long long)clean);
	for (unsigned k = 0; k < nkinds; k++)
		printf(", %llu %s", (unsigned long long)counts[k], kinds[k]);
	printf("\n");
	if (!campaign && !want_clean)
		printf("explore: %s: '%s' NOT found within %llu schedules\n", sc->name, a->expect,
		       (unsigned long long)a->schedules);
	return rc;
}

/* The fixes that keep their old code behind DOCA_REVERTED(name): a new
 * DOCA_REVERTED switch gets its name here too. */
static const char *const revertible[] = {
	"pe_fd_close_early",             /* doca_pe_destroy closes its fds at once */
	"worker_lock_join",              /* doca_pe_stop_run joins under worker_lock */
	"worker_self_by_id", /* worker_is_self compares the thread id the starter's pthread_create stores */
	"event_claim_load_store", /* doca_event_free claims the event with a load and a store, not a CAS */
	"event_claim_no_carry", /* a claim's next generation drops the carry from the gs's low 6 bits to its top 16 */
	"owner_claim_before_entry", /* the owner's doca_event_free claims (plainly) before it enters its parked guard */
	"holder_ignores_claims", /* the parked owner claims plainly even once a claimer outside the guard set the PE's claim flag */
	"foreign_claim_no_wait", /* a claimer outside the guard sets the PE's claim flag but runs no fence and waits for no owner section */
	"claims_setting_as_set", /* a claimer outside the guard that finds the PE's claim flag SETTING (another stored it) claims at once, as if SET */
	"fork_no_atfork",                /* nothing is done at fork */
	"engine_signal_no_wake", /* a post that queued its qp on a sw engine thread never wakes it */
	"push_wake_skipped",             /* a mailbox push never wakes (nor feeds for) an armed PE */
	"push_wake_own_queue", /* a push that queued its context wakes the PE as if another had queued it */
	"pool_depth_ignores_fresh", /* a burst's pop counts the stack's depth as the free slots, fresh ones included */
	"pool_share_no_wait", /* a pool turned shared does not wait for the plain update under way */
	"pool_share_no_quiesce", /* a pool turned shared does not wait out the parked owner's brief sections (its submits store no busy) */
	"pool_share_counts_revoke", /* a pool turned shared counts itself in the guard's revoke while it waits out the owner's brief sections */
	"ctx_hold_outside_section", /* a handle is checked, then its context held, outside a read-side section */
	"handle_lookup_outside_section", /* a memory's handle is checked, then its count used, outside a section */
	"credit_arm_before_count", /* a credit notification request arms the fd before it is counted in waiters */
	"credit_watch_before_publish", /* a start looks at the context's `used` before it publishes the run it marks */
	"wait_refusal_uncounted", /* submit_wait's "destroyed before it held the context" is not logged nor counted stale */
	"ctx_refusal_uncounted", /* a ctx setter, start or losing destroy finding its ctx destroyed under the lock is not counted stale */
	"pe_destroy_refusal_uncounted", /* the loser of two doca_pe_destroy calls finding the PE destroyed under the lock is not counted stale */
	"worker_refusal_uncounted", /* doca_pe_run_on_cpu / _stop_run finding the PE destroyed under the lock do not count it stale */
	"buf_destroy_refusal_uncounted", /* the loser of two doca_buf_destroy calls, finding the buffer killed, is not counted stale */
	"mem_destroy_refusal_uncounted", /* the loser of two doca_mem_destroy calls, finding the count closed, is not counted stale */
	"mem_register_refusal_uncounted", /* a memory's create finding its ctx destroyed under the lock does not count it stale */
	"buf_create_refusal_uncounted", /* doca_buf_create finding its memory's count closed by its destroy does not count it stale */
	"connect_refusal_uncounted", /* doca_pe_connect_ctx looks its ctx up outside its section; "destroyed since" not counted stale */
	"wait_destroyed_stale", /* a submit_wait sleeper whose context was destroyed looks its handle up: stale */
	"wait_run_after_grace", /* submit_wait waits in the run current after its first-use grace period, not the one at its start */
	"doomed_after_credit", /* buffers destroyed in their callback still counted by their memory after the credit is back */
	"turn_stop_from_ctx_state", /* a turn flushes the run it loads when the state it loaded earlier was STOPPING */
	"pe_refusal_unchecked", /* a PE call refuses for a worker or a busy guard read from a cell its handle left */
	"pe_enter_outside_section", /* a PE call checks its handle and takes the PE's guard outside a read-side section */
	"pe_get_any_entry_outside_section", /* a getter skips the read-side section on every entry, not only its own parked guard's */
	"progress_any_entry_outside_section", /* doca_pe_try_progress skips the read-side section on every entry, not only its own parked guard's */
	"stop_ignores_owner_frees", /* a stop retires the run without waiting out the parked owner's brief sections (its frees take no read-side section) */
	"stop_counts_revoke", /* a stop counts itself in its PE guard's revoke from before its wait to its retirement (the first version) */
	"stop_no_recount", /* a stop that counted no credit out, then waited out the owner's brief sections, retires without counting again */
	"buf_destroy_no_quiesce", /* a buffer's destroy finishes without waiting out its PE owner's brief sections (its submits take no read-side section) */
	"buf_destroy_withdraw_before_kill", /* a buffer's destroy waits out its PE owner's brief sections before it kills the handle (counted: withdraws its count before) */
	"buf_destroy_counts_revoke", /* a buffer's destroy counts itself in its PE guard's revoke while it waits out the owner's brief sections */
	"owner_submit_no_recheck", /* the owner's submit does not look at the state and the handle again under its guard */
	"stop_in_turn_waits", /* a doca_ctx_stop inside a PE turn waits for the report lock, not put off */
	"engine_wake_before_publish", /* an engine thread calls the wake before publishing its pass's last, partly filled CQ slot */
	"unpark_ignores_mark", /* a parked owner's entry takes its word marked by a revoker as its own (runner.h) */
	"owner_way_looks_before_push", /* the owner ways look at the owner word before their push, not after (runner.h) */
	"ring_ready_before_fields", /* a ring entry's head is stored READY before its fields (engine/ring.h) */
	"ring_mp_before_sp", /* the ring feed takes the MP ring before the SP rings (rule 1.6.6 undone) */
	"ring_no_mp_stickiness", /* a producer diverted to MP goes back to SP while MP holds its tasks (D7) */
	"ring_flush_skips_rings", /* a stop's flush takes the mailbox's frees but not the rings' tasks */
	"ring_look_before_flags", /* the feed looks at the rings before it takes the mailbox's flags */
	"ring_limit_drops_flags", /* a feed that stops at its batch with an SP entry READY does not keep the flags */
	"ring_mp_no_second_look", /* the feed takes MP items without its second look at the SP rings (rule 1.6.6) */
	"direct_post_ignores_rings", /* a direct post under the guard does not look for tasks waiting in the rings */
	"ring_unwatch_no_relook", /* a turn's look that stopped watching a ring is followed by no relook */
	"ring_relook_no_signal", /* the relook that finds a READY head flags its shard but does not signal the context */
	"ring_relook_no_flags", /* the relook that finds a READY head signals the context but flags no shard */
	"ring_watch_unlisted", /* a visit that sets a watch bit does not put its context on the watch list */
	"ring_arm_keeps_watch", /* arming leaves the rings watched */
	"ring_watch_while_armed", /* a turn's visit sets watch bits while the PE is armed */
	"again_unsigned", /* the split credits' look compares taken and a returned read after it unsigned (D5) */
	"chunk_only_last", /* a split take makes only the chunk its bound falls in, not every one below it (D4) */
	"again_on_cached_returned", /* the split credits' look answers AGAIN from its cached returned, no reload */
	"chunks_on_cached_returned", /* a foreign take makes its chunks by its cached returned, no reload (F1) */
	"guarded_cas_take_no_chunks", /* a guard holder's CAS take makes no chunk for its credits (F2) */
	"again_look_returned_first", /* the look without a take loads returned before taken (F3) */
	"batch_take_once", /* a foreign partial take answers AGAIN for the rest with no new look (second review, A) */
	"owner_fast_no_cover", /* the owner's fast ways bounded by size, not fresh_from: no chunk cover (second review, B) */
	"chunk_take_no_mode_look", /* a busy-flag take that made a chunk goes on plainly, no new mode look (second review, C) */
	"owner_take_after_plain_end", /* the owner's plain store of taken after its busy flag's release */
};

/* Print the fixes DOCA_EXPLORE_REVERT undoes; a name no fix has is an
 * error (a sabotage run that undoes nothing would prove nothing). */
static void check_reverted(const char *list)
{
	unsigned known = 0, named = 0;

	for (const char *p = list; *p != '\0';) {
		size_t n = strcspn(p, ",");

		named += n != 0;
		p += n + (p[n] == ',');
	}
	for (unsigned i = 0; i < sizeof(revertible) / sizeof(revertible[0]); i++) {
		if (!doca_explore_reverted(revertible[i]))
			continue;
		printf("explore: fix undone (DOCA_EXPLORE_REVERT): %s\n", revertible[i]);
		known++;
	}
	if (known != named) {
		fprintf(stderr, "doca_explore: DOCA_EXPLORE_REVERT=%s names a fix that does not exist\n",
			list);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct args a;
	const char *revert = getenv("DOCA_EXPLORE_REVERT");
	int rc = 0;

	program = argv[0];
	parse(argc, argv, &a);
	setenv("DOCA_LOG_LEVEL", "error", 0);
	if (revert != NULL)
		check_reverted(revert);
	fflush(stdout);
	bool all = strcmp(a.scenario, "all") == 0;
	unsigned matched = 0;

	for (unsigned s = 0; s < explore_nscenarios; s++) {
		const struct scenario *sc = &explore_scenarios[s];

		if (!all && strcmp(sc->name, a.scenario) != 0)
			continue;
		matched++;
		if (a.one_seed)
			return run_one(&a, sc);
		rc |= run_many(&a, sc, a.seconds > 0 ? a.seconds / (all ? explore_nscenarios : 1) : 0);
	}
	if (matched == 0)
		usage();
	return rc;
}
