/*
 * stress/stress_common.c — options, seeded randomness, time, the violation
 * log, the watchdog, state reports, task patterns and the one-context rig
 * shared by the stress programs (the world is in stress_world.c).
 */
#include "stress_common.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PRINTED_VIOLATIONS 25
#define WATCHDOG_GRACE_S 180u

static atomic_ulong violations;

/* By enum sabotage. */
static const char *const sabotage_names[] = { "none", "lost", "dup", "data", "order" };

static _Noreturn void usage(const char *prog, unsigned kinds)
{
	const char *sep = "";

	fprintf(stderr, "usage: %s [--seconds S] [--seed N] [--sabotage ", prog);
	for (unsigned i = SABOTAGE_LOST; i <= SABOTAGE_ORDER; i++)
		if (kinds & STRESS_KIND(i)) {
			fprintf(stderr, "%s%s", sep, sabotage_names[i]);
			sep = "|";
		}
	fprintf(stderr, "]\n");
	exit(2);
}

/* One of @p kinds (or none), *end past it; else *end NULL. */
static enum sabotage parse_sabotage(const char *arg, unsigned kinds, char **end)
{
	for (unsigned i = SABOTAGE_NONE; i <= SABOTAGE_ORDER; i++)
		if (strcmp(arg, sabotage_names[i]) == 0 && (i == SABOTAGE_NONE || (kinds & STRESS_KIND(i)))) {
			*end = (char *)arg + strlen(arg);
			return (enum sabotage)i;
		}
	*end = NULL;
	return SABOTAGE_NONE;
}

static uint64_t seed_from_clock(void)
{
	return stress_now_ns() ^ ((uint64_t)clock() << 32);
}

void stress_parse_kinds(int argc, char **argv, struct stress_opts *o, unsigned kinds)
{
	/* refused progress calls are logged as warnings: keep only errors */
	setenv("DOCA_LOG_LEVEL", "error", 0);
	o->seconds = 5;
	o->sabotage = SABOTAGE_NONE;
	o->seed = seed_from_clock() % 1000000007u;
	for (int i = 1; i < argc; i++) {
		char *end = NULL;

		if (i + 1 >= argc)
			usage(argv[0], kinds);
		errno = 0;
		if (strcmp(argv[i], "--seconds") == 0)
			o->seconds = strtod(argv[++i], &end);
		else if (strcmp(argv[i], "--seed") == 0)
			o->seed = strtoull(argv[++i], &end, 0);
		else if (strcmp(argv[i], "--sabotage") == 0)
			o->sabotage = parse_sabotage(argv[++i], kinds, &end);
		else
			usage(argv[0], kinds);
		if (errno != 0 || end == NULL || *end != '\0' || o->seconds < 0)
			usage(argv[0], kinds);
	}
	printf("%s: seed %llu, %.1f s\n", argv[0], (unsigned long long)o->seed, o->seconds);
	printf("replay: %s --seconds %g --seed %llu%s\n", argv[0], o->seconds,
	       (unsigned long long)o->seed, o->sabotage ? " --sabotage ..." : "");
	if (o->sabotage)
		printf("SABOTAGE: a deliberate harness fault; this run must FAIL\n");
	fflush(stdout);
}

/* splitmix64: turns (seed, stream) into well-spread xorshift states. */
static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void rng_init(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);

	r->s = splitmix(&x) | 1u;
}

uint64_t rng_next(struct rng *r)
{
	/* xorshift64* */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)((rng_next(r) >> 32) % n);
}

bool rng_pct(struct rng *r, unsigned pct)
{
	return rng_below(r, 100) < pct;
}

uint64_t stress_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void stress_sleep_us(unsigned us)
{
	struct timespec ts = { .tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void stress_violation(const char *fmt, ...)
{
	unsigned long n = atomic_fetch_add(&violations, 1) + 1;
	va_list ap;

	if (n > MAX_PRINTED_VIOLATIONS) {
		if (n == MAX_PRINTED_VIOLATIONS + 1)
			fprintf(stderr, "VIOLATION: (more violations not printed)\n");
		return;
	}
	va_start(ap, fmt);
	fputs("VIOLATION: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

unsigned long stress_violation_count(void)
{
	return atomic_load(&violations);
}

void stress_fatal(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fputs("FATAL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fprintf(stderr, "FAIL (%lu violations before)\n", stress_violation_count());
	fflush(stderr);
	/* _exit: a world that cannot be torn down still has threads and
	 * objects alive by construction; exit-time leak and thread-leak
	 * reports would only bury the verdict above. */
	_exit(1);
}

bool stress_expect_in(doca_error_t got, const char *what, int n, ...)
{
	va_list ap;
	bool ok = false;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		if (va_arg(ap, int) == (int)got)
			ok = true;
	va_end(ap);
	if (!ok)
		stress_violation("%s returned %s (%s)", what, doca_error_get_name(got),
				 doca_error_get_descr(got));
	return ok;
}

static void watchdog(int sig)
{
	static const char msg[] = "FATAL: watchdog: the run hangs (deadline passed)\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

void stress_watchdog(double seconds)
{
	signal(SIGALRM, watchdog);
	alarm((unsigned)seconds + WATCHDOG_GRACE_S);
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

void stress_pattern(uint64_t tag, uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = mix64(tag * 0x9e3779b97f4a7c15ull + i);
		size_t n = len - i < 8 ? len - i : 8;

		memcpy(out + i, &w, n);
	}
}

bool stress_all_poison(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != STRESS_POISON)
			return false;
	return true;
}

const char *const stress_state_names[4] = { "IDLE", "STARTING", "RUNNING", "STOPPING" };

void stress_reports_reset(struct stress_reports *r)
{
	atomic_store(&r->last, DOCA_CTX_STATE_IDLE);
}

void stress_reports_started(struct stress_reports *r)
{
	atomic_fetch_add(&r->starts, 1);
}

void stress_report(struct stress_reports *r, const char *who, enum doca_ctx_state prev,
		   enum doca_ctx_state next)
{
	int last = atomic_exchange(&r->last, (int)next);

	if (last != (int)prev)
		stress_violation("%s: reported %s → %s, but the last report ended in %s", who,
				 stress_state_names[prev & 3], stress_state_names[next & 3],
				 stress_state_names[last & 3]);
	if (next == DOCA_CTX_STATE_RUNNING)
		atomic_fetch_add(&r->to_running, 1);
	else if (next == DOCA_CTX_STATE_STOPPING)
		atomic_fetch_add(&r->to_stopping, 1);
	else if (next == DOCA_CTX_STATE_IDLE)
		atomic_fetch_add(&r->to_idle, 1);
	if (prev == DOCA_CTX_STATE_STOPPING && next == DOCA_CTX_STATE_IDLE)
		atomic_fetch_add(&r->stopping_to_idle, 1);
}

void stress_reports_check(struct stress_reports *r, const char *who)
{
	unsigned long st = atomic_load(&r->starts), run = atomic_load(&r->to_running),
		      idle = atomic_load(&r->to_idle), stopping = atomic_load(&r->to_stopping),
		      s2i = atomic_load(&r->stopping_to_idle);

	if (st != run || idle != run || stopping != s2i)
		stress_violation("%s: %lu starts, reports: %lu →RUNNING, %lu →IDLE, %lu →STOPPING, "
				 "%lu STOPPING→IDLE", who, st, run, idle, stopping, s2i);
}

void stress_rig_up(struct stress_rig *r, uint32_t max_tasks, unsigned pairs, size_t len)
{
	void *addr = NULL;

	memset(r, 0, sizeof(*r));
	if (pairs == 0 || pairs > STRESS_RIG_PAIRS_MAX)
		stress_fatal("a rig holds 1..%u buffer pairs, not %u", STRESS_RIG_PAIRS_MAX, pairs);
	r->len = len;
	r->pairs = pairs;
	if (!STRESS_OK(doca_ctx_create(&r->ctx)) || !STRESS_OK(doca_dev_open("sw0", &r->dev)))
		stress_fatal("no context or device for the round");
	STRESS_OK(doca_ctx_set_dev(r->ctx, r->dev));
	STRESS_OK(doca_ctx_set_max_tasks(r->ctx, max_tasks));
	if (!STRESS_OK(doca_mem_create(r->ctx, 2 * len * pairs, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE,
				       &r->mem)) ||
	    !STRESS_OK(doca_mem_get_addr(r->mem, &addr)))
		stress_fatal("no memory for the round");
	r->bytes = addr;
	for (unsigned i = 0; i < pairs; i++) {
		STRESS_OK(doca_buf_create(r->mem, 2 * len * i, len, &r->src[i]));
		STRESS_OK(doca_buf_create(r->mem, 2 * len * i + len, len, &r->dst[i]));
	}
	if (!STRESS_OK(doca_pe_create(&r->pe)))
		stress_fatal("no PE for the round");
	STRESS_OK(doca_pe_connect_ctx(r->pe, r->ctx));
	STRESS_OK(doca_ctx_start(r->ctx));
	(void)doca_pe_progress(r->pe); /* this thread runs the PE: its guard parked */
}

void stress_rig_down(struct stress_rig *r)
{
	STRESS_OK(doca_ctx_stop(r->ctx));
	for (unsigned i = 0; i < r->pairs; i++) {
		STRESS_OK(doca_buf_destroy(r->src[i]));
		STRESS_OK(doca_buf_destroy(r->dst[i]));
	}
	STRESS_OK(doca_mem_destroy(r->mem));
	STRESS_OK(doca_dev_close(r->dev));
	STRESS_OK(doca_ctx_destroy(r->ctx));
	STRESS_OK(doca_pe_destroy(r->pe));
}

void stress_spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

unsigned long stress_await_go(atomic_ulong *go, unsigned long seen, atomic_bool *quit)
{
	unsigned long g;

	while ((g = atomic_load(go)) == seen && !atomic_load(quit))
		;
	return g;
}

void stress_overlap_enter(struct stress_overlap *o, unsigned long round)
{
	/* relaxed: a read-modify-write reads the counter's latest value
	 * whatever its order, and the harness adds no ordering of its own
	 * around the library's racing calls (on weakly ordered hardware; an
	 * x86 locked instruction is a full fence anyway) */
	if (atomic_fetch_add_explicit(&o->inside, 1, memory_order_relaxed) != 0)
		atomic_store_explicit(&o->overlapped, round, memory_order_relaxed);
}

void stress_overlap_exit(struct stress_overlap *o)
{
	atomic_fetch_sub_explicit(&o->inside, 1, memory_order_relaxed);
}

bool stress_overlap_seen(struct stress_overlap *o, unsigned long round)
{
	return atomic_load_explicit(&o->overlapped, memory_order_relaxed) == round;
}

void stress_overlap_report(const char *prog, unsigned long overlapped, unsigned long rounds)
{
	if (overlapped * 10u >= rounds)
		return;
	printf("WARNING: %s: the racing threads overlapped in %lu of %lu rounds (under 10 %%): this run "
	       "tested its race little (a loaded machine?); not a failure\n",
	       prog, overlapped, rounds);
	fflush(stdout);
}
