/*
 * stress/stress_common.h — the shared harness of the self-checking stress
 * programs (rcutorture style: plain main(), run for --seconds, check every
 * invariant at the end, print a summary, exit 0 only if all of them hold).
 *
 * The harness builds a "world": PEs (polled, event-driven or on a worker
 * thread), units (one context each with its device, memories and buffers)
 * and submitter threads. Every task copies a unique pattern into its own
 * destination region; its user data names its slot and generation, so the
 * event handler can prove that every accepted task gets exactly one event,
 * that refused tasks get none, and that the bytes are right. Public API only.
 */
#ifndef STRESS_COMMON_H
#define STRESS_COMMON_H

#include <doca_core.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- options, randomness, reporting ---- */

/* Deliberate harness faults that prove the invariant checks can fail. */
enum sabotage {
	SABOTAGE_NONE,
	SABOTAGE_LOST, /* ignore one event: as if it never came */
	SABOTAGE_DUP,  /* handle one event twice: as if it came twice */
	SABOTAGE_DATA, /* flip one destination byte before it is checked */
	SABOTAGE_ORDER, /* expect a wrong next task once: as if one came out of order */
};

/* A set of sabotage kinds, for stress_parse_kinds. */
#define STRESS_KIND(k) (1u << (k))

struct stress_opts {
	double seconds;
	uint64_t seed;
	enum sabotage sabotage;
};

/* Parse --seconds, --seed and --sabotage KIND, KIND one of @p kinds (a
 * set of STRESS_KIND(SABOTAGE_...)): the kinds the program implements.
 * Any other option or kind prints the usage and exits 2, so a sabotage
 * run never passes because the program ignored its kind. Prints the seed
 * and the command to replay. */
void stress_parse_kinds(int argc, char **argv, struct stress_opts *o, unsigned kinds);

struct rng {
	uint64_t s;
};

/* An independent stream of the run's seed. */
void rng_init(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, n), n > 0. */
uint32_t rng_below(struct rng *r, uint32_t n);
/* True with probability pct / 100. */
bool rng_pct(struct rng *r, unsigned pct);

uint64_t stress_now_ns(void);
void stress_sleep_us(unsigned us);

/* Record a broken invariant (printed, counted; the run will fail). */
__attribute__((format(printf, 1, 2))) void stress_violation(const char *fmt, ...);
unsigned long stress_violation_count(void);
/* Print and exit(1) at once: the run cannot continue. */
__attribute__((format(printf, 1, 2))) _Noreturn void stress_fatal(const char *fmt, ...);

/* A violation unless @p got is one of the codes listed (a 0-terminated list
 * would collide with DOCA_SUCCESS, so the count is explicit). */
bool stress_expect_in(doca_error_t got, const char *what, int n, ...);
#define STRESS_OK(call) stress_expect_in((call), #call, 1, DOCA_SUCCESS)

/* Arm a watchdog: the process exits 1 with a FATAL line if it is still
 * running @p seconds + 180 s from now (a hang must fail, not stall). */
void stress_watchdog(double seconds);

/* ---- state reports ---- */

extern const char *const stress_state_names[4]; /* by enum doca_ctx_state */

/* The state reports of one context, checked for order and balance. */
struct stress_reports {
	atomic_int last; /* the last reported state */
	atomic_ulong starts, to_running, to_idle, to_stopping, stopping_to_idle;
};

/* A new context: IDLE, nothing reported yet (starts are kept). */
void stress_reports_reset(struct stress_reports *r);
/* Count a start that returned DOCA_SUCCESS. */
void stress_reports_started(struct stress_reports *r);
/* From the state callback: a violation if @p prev is not the last report's end. */
void stress_report(struct stress_reports *r, const char *who, enum doca_ctx_state prev,
		   enum doca_ctx_state next);
/* At the end: a violation unless the reports balance the starts. */
void stress_reports_check(struct stress_reports *r, const char *who);

/* ---- task data ---- */

/* The byte a destination is filled with before its task is submitted. */
#define STRESS_POISON 0xa5

/* The bytes a task with @p tag copies: distinct per task and per offset. */
void stress_pattern(uint64_t tag, uint8_t *out, size_t len);
/* True if all @p len bytes at @p p are STRESS_POISON. */
bool stress_all_poison(const uint8_t *p, size_t len);

/* ---- a one-context rig (a new context and PE per round) ---- */

/* Buffer pairs a rig can hold. */
#define STRESS_RIG_PAIRS_MAX 64u

/* A started context of @p max_tasks credits (its own "sw0" device) on a
 * new PE that the calling thread runs, and @p pairs source/destination
 * buffer pairs of len bytes in one memory: pair i's source at
 * bytes + 2 * len * i, its destination right after it. */
struct stress_rig {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_mem *mem;
	struct doca_buf *src[STRESS_RIG_PAIRS_MAX], *dst[STRESS_RIG_PAIRS_MAX];
	uint8_t *bytes;
	size_t len;
	unsigned pairs;
};

/* Build and start it, then one turn on this thread (its guard parked
 * here); stress_fatal if there is no context, device or PE. */
void stress_rig_up(struct stress_rig *r, uint32_t max_tasks, unsigned pairs, size_t len);
/* Stop and destroy everything, each call checked (every event freed first). */
void stress_rig_down(struct stress_rig *r);

static inline uint8_t *stress_rig_src(const struct stress_rig *r, unsigned pair)
{
	return r->bytes + 2 * r->len * pair;
}

static inline uint8_t *stress_rig_dst(const struct stress_rig *r, unsigned pair)
{
	return stress_rig_src(r, pair) + r->len;
}

/* Busy-wait about @p n loop iterations (a race's random offset). */
void stress_spin(unsigned n);

/* A helper thread's wait for its next round: spin until @p go differs
 * from @p seen and return it, or return @p seen once @p quit is set. */
unsigned long stress_await_go(atomic_ulong *go, unsigned long seen, atomic_bool *quit);

/*
 * Did a round's race happen? Under load the racing threads of a round may
 * run one after the other, and the round then tests nothing. Each racing
 * thread marks its window: stress_overlap_enter just before a racing call
 * (or the first of a sequence), stress_overlap_exit just after it (after
 * the last). Two windows overlapped — at one moment both threads had
 * begun their call and neither had returned from it — exactly when the
 * later of the two enters finds the other thread inside: all enters and
 * exits are read-modify-writes of one counter, so they have one order
 * (its modification order) and each reads the value just before it.
 */
struct stress_overlap {
	atomic_uint inside;       /* threads between their enter and their exit */
	atomic_ulong overlapped;  /* the last round in which an enter found another thread inside */
};

void stress_overlap_enter(struct stress_overlap *o, unsigned long round);
void stress_overlap_exit(struct stress_overlap *o);
/* True if @p round's windows overlapped; ask once every thread of the
 * round made its exit (and its exit happens before the call). */
bool stress_overlap_seen(struct stress_overlap *o, unsigned long round);
/* A "WARNING:" line on stdout (not a failure) when fewer than 10 % of
 * @p rounds overlapped: the run passed without testing its race much. */
void stress_overlap_report(const char *prog, unsigned long overlapped, unsigned long rounds);

/* ---- the world ---- */

enum pe_mode {
	PE_POLL,   /* an application thread loops on doca_pe_progress */
	PE_EVENT,  /* an application thread sleeps on the notification fd */
	PE_WORKER, /* doca_pe_run_on_cpu; a manager thread takes it back now and then */
};

struct pe_spec {
	enum pe_mode mode;
	bool callbacks; /* its contexts deliver through an event callback */
};

struct stress_cfg {
	const char *name;
	unsigned submitters;
	unsigned units;
	unsigned slots;              /* per submitter and unit */
	size_t len;                  /* bytes per copy */
	const struct pe_spec *pes;
	unsigned npes;
	const char *const *devs;     /* open strings; unit i starts on devs[i % ndevs] */
	unsigned ndevs;
	uint32_t max_tasks_lo;       /* task pool size, random in [lo, hi] per ctx */
	uint32_t max_tasks_hi;
	unsigned partial_pct;        /* slots with a short dst, sent with ALLOW_PARTIAL */
	unsigned misuse_pct;         /* submissions made invalid on purpose */
	unsigned cb_stop_permille;   /* event callbacks that stop their context */
	unsigned cb_resubmit_pct;    /* event callbacks that resubmit their slot */
	unsigned worker_cycle_ms;    /* mean time between doca_pe_stop_run cycles (0: never) */
	bool intruder;               /* a thread that tries to progress others' PEs */
	bool lifecycle;              /* units are torn down and rebuilt while running */
};

struct stress;
struct unit;

/* The sabotage kinds the world implements (stress_world.c, sabotage()):
 * a program built on it passes them to stress_parse_kinds. */
#define STRESS_WORLD_KINDS (STRESS_KIND(SABOTAGE_LOST) | STRESS_KIND(SABOTAGE_DUP) | STRESS_KIND(SABOTAGE_DATA))

/* Build the world: PEs running, units started, nothing submitted yet. */
struct stress *stress_create(const struct stress_cfg *cfg, const struct stress_opts *o);
/* Start the submitters (and the intruder), call @p controller on this
 * thread again and again until --seconds have passed (each call is one short
 * step), stop everything, check every invariant, print the summary, tear
 * down. Returns the exit status: 0 only if every invariant held. */
int stress_run(struct stress *s, void (*controller)(struct stress *s, struct rng *r));

bool stress_running(const struct stress *s);
unsigned stress_units(const struct stress *s);
struct unit *stress_unit(struct stress *s, unsigned i);

/* Controller actions on one unit (only the controller calls them). */
/* RUNNING → stop; IDLE → start; STOPPING → nothing. Checks each result. */
void unit_toggle(struct unit *u);
/* Stop and wait until IDLE; false (with a violation) if it never gets there. */
bool unit_quiesce(struct unit *u);
/* Quiesce, then destroy and recreate what @p depth says, then start again:
 * 0 buffers, 1 + memories, 2 + device (reopened, maybe another open string),
 * 3 + context. */
void unit_rebuild(struct unit *u, struct rng *r, unsigned depth);

#endif /* STRESS_COMMON_H */
