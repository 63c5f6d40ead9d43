/*
 * bench_runner.c — runs the contenders of one case interleaved and keeps the
 * medians.
 *
 * Every contender is set up first (so no setup cost lands in a measurement),
 * then each repetition runs every contender once, in an order that reverses
 * from one repetition to the next (ABC CBA ABC ...), so slow drifts of the
 * machine (the cross-core latency of these vCPUs jumps every few seconds)
 * hit ours and the peers alike. The ratio ours/peer is taken per repetition
 * (neighbours in time) and its median is reported.
 */
#include "bench.h"

#include <math.h>
#include <string.h>

#define MAX_RESULTS 512

static struct bench_result results[MAX_RESULTS];
static size_t n_results;

static struct bench_result *new_result(const struct bench_case *bc, const char *contender)
{
	struct bench_result *r;

	if (n_results == MAX_RESULTS)
		bench_fail("more than %d results", MAX_RESULTS);
	r = &results[n_results++];
	memset(r, 0, sizeof(*r));
	r->bc = *bc;
	snprintf(r->contender, sizeof(r->contender), "%s", contender);
	r->tasks_per_s = r->gb_per_s = r->spread = r->ratio = NAN;
	r->p50_ns = r->p99_ns = r->p999_ns = r->alloc_per_task = NAN;
	r->wakeups_per_task = r->empty_share = r->bytes_per_ctx = NAN;
	return r;
}

/** Record a row that was not measured (a missing peer, too few CPUs). */
void bench_add_note(const char *scenario, const char *contender, const char *why)
{
	struct bench_case bc = { .scenario = scenario };
	struct bench_result *r = new_result(&bc, contender);

	snprintf(r->skip, sizeof(r->skip), "%s", why);
}

/* Per contender, per repetition. */
struct samples {
	double tps[BENCH_MAX_REPS], gbps[BENCH_MAX_REPS], alloc[BENCH_MAX_REPS];
	double p50[BENCH_MAX_REPS], p99[BENCH_MAX_REPS], p999[BENCH_MAX_REPS];
	double wakes[BENCH_MAX_REPS], empty[BENCH_MAX_REPS]; /* per task, share; NAN: not event mode */
	double ctx_bytes[BENCH_MAX_REPS]; /* RSS per idle context; NAN: not measured */
};

static void measure_once(const struct bench_opts *o, const struct bench_case *bc,
			 struct bench_contender *c, struct samples *s, unsigned rep)
{
	struct bench_measure m = { .alloc_bytes = -1 };
	double sec;

	bench_progress("[%s %zu B batch %u thr %u] %-16s rep %u/%u", bc->scenario, bc->size, bc->batch,
		       bc->threads, c->name, rep + 1, o->reps);
	c->ops->run(c, bc, o->duration, &m);
	sec = (double)(m.ns ? m.ns : 1) / 1e9;
	s->tps[rep] = (double)m.tasks / sec;
	s->gbps[rep] = (double)m.bytes / sec / 1e9;
	s->alloc[rep] = m.alloc_bytes >= 0 && m.tasks ? m.alloc_bytes / (double)m.tasks : NAN;
	s->p50[rep] = bench_percentile(m.lat_ns, m.n_lat, 50.0);
	s->p99[rep] = bench_percentile(m.lat_ns, m.n_lat, 99.0);
	s->p999[rep] = bench_percentile(m.lat_ns, m.n_lat, 99.9);
	s->wakes[rep] = m.wakeups && m.tasks ? (double)m.wakeups / (double)m.tasks : NAN;
	s->empty[rep] = m.wakeups ? (double)m.empty_wakeups / (double)m.wakeups : NAN;
	s->ctx_bytes[rep] = m.bytes_per_ctx > 0 ? m.bytes_per_ctx : NAN;
}

static double median_of(const double *v, unsigned n)
{
	double tmp[BENCH_MAX_REPS];

	memcpy(tmp, v, n * sizeof(*v));
	return bench_median(tmp, n);
}

static void summarize(const struct bench_opts *o, struct bench_result *r, const struct samples *s,
		      const struct samples *ours, bool latency)
{
	double ratio[BENCH_MAX_REPS], lo = INFINITY, hi = 0;

	r->reps = o->reps;
	r->tasks_per_s = median_of(s->tps, o->reps);
	r->gb_per_s = median_of(s->gbps, o->reps);
	r->p50_ns = median_of(s->p50, o->reps);
	r->p99_ns = median_of(s->p99, o->reps);
	r->p999_ns = median_of(s->p999, o->reps);
	r->alloc_per_task = median_of(s->alloc, o->reps);
	r->wakeups_per_task = median_of(s->wakes, o->reps);
	r->empty_share = median_of(s->empty, o->reps);
	r->bytes_per_ctx = median_of(s->ctx_bytes, o->reps);
	for (unsigned i = 0; i < o->reps; i++) {
		lo = fmin(lo, s->tps[i]);
		hi = fmax(hi, s->tps[i]);
	}
	r->spread = r->tasks_per_s > 0 ? (hi - lo) / r->tasks_per_s : NAN;
	memcpy(r->tps_reps, s->tps, o->reps * sizeof(*s->tps));
	if (s == ours || !ours)
		return;
	for (unsigned i = 0; i < o->reps; i++)
		ratio[i] = latency ? ours->p50[i] / s->p50[i] : ours->tps[i] / s->tps[i];
	r->ratio = bench_median(ratio, o->reps);
}

void bench_run_case(const struct bench_opts *o, const struct bench_case *bc,
		    struct bench_contender *cs, size_t n)
{
	static struct samples s[BENCH_MAX_CONTENDERS];
	const char *skip[BENCH_MAX_CONTENDERS];
	bool latency = !strcmp(bc->scenario, "latency") || !strcmp(bc->scenario, "remote-lat");

	if (n > BENCH_MAX_CONTENDERS)
		bench_fail("too many contenders (%zu)", n);
	for (size_t i = 0; i < n; i++) {
		bench_progress("[%s %zu B] setting up %s", bc->scenario, bc->size, cs[i].name);
		skip[i] = cs[i].ops->setup(&cs[i], bc);
	}
	for (unsigned rep = 0; rep < o->reps; rep++) {
		bool reverse = (rep + (unsigned)o->seed) % 2;

		for (size_t k = 0; k < n; k++) {
			size_t i = reverse ? n - 1 - k : k;

			if (!skip[i])
				measure_once(o, bc, &cs[i], &s[i], rep);
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct bench_result *r = new_result(bc, cs[i].name);

		if (skip[i]) {
			snprintf(r->skip, sizeof(r->skip), "%s", skip[i]);
			continue;
		}
		cs[i].ops->teardown(&cs[i]);
		summarize(o, r, &s[i], skip[0] ? NULL : &s[0], latency);
	}
}

double bench_pair_ratio(const struct bench_result *a, const struct bench_result *b)
{
	double ratio[BENCH_MAX_REPS];

	if (!a || !b || a->skip[0] || b->skip[0] || !a->reps || a->reps != b->reps)
		return NAN;
	for (unsigned i = 0; i < a->reps; i++)
		ratio[i] = a->tps_reps[i] / b->tps_reps[i];
	return bench_median(ratio, a->reps);
}

/* The row of @p contender in the case of the last result, or NULL. */
static struct bench_result *last_case_row(const char *contender)
{
	const struct bench_case *last = n_results ? &results[n_results - 1].bc : NULL;

	for (size_t i = n_results; i > 0; i--) {
		struct bench_result *r = &results[i - 1];

		if (strcmp(r->bc.scenario, last->scenario) || r->bc.size != last->size ||
		    r->bc.batch != last->batch || r->bc.threads != last->threads)
			return NULL;
		if (!strcmp(r->contender, contender))
			return r;
	}
	return NULL;
}

void bench_note_ratio(const char *a, const char *b)
{
	struct bench_result *ra = last_case_row(a);
	struct bench_result *rb = last_case_row(b);
	double ratio = bench_pair_ratio(ra, rb);

	if (ra && !isnan(ratio))
		snprintf(ra->note, sizeof(ra->note), "%s/%s = %.2f", a, b, ratio);
}

const struct bench_result *bench_results(size_t *n)
{
	*n = n_results;
	return results;
}

/** The row of @p contender on a case; size/batch/threads 0 match anything. */
const struct bench_result *bench_find(const char *scenario, size_t size, unsigned batch,
				      unsigned threads, const char *contender)
{
	for (size_t i = 0; i < n_results; i++) {
		const struct bench_result *r = &results[i];

		if (strcmp(r->bc.scenario, scenario) || strcmp(r->contender, contender))
			continue;
		if ((size && r->bc.size != size) || (batch && r->bc.batch != batch) ||
		    (threads && r->bc.threads != threads))
			continue;
		return r;
	}
	return NULL;
}
