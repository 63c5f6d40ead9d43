/*
 * ours_mailbox.c — foreign submitters: N threads on the other CPUs submit
 * 64 B copies into one context (through its mailbox) while the application
 * thread progresses the PE on the inline "sw0" and reaps. Counts tasks
 * completed per second. Two baselines for issue 12's targets run the same
 * PE loop: `doca-self` (no foreign submitter: the PE's thread submits to
 * itself, one doca_task_submit at a time until the credits run out, then
 * one progress-and-reap turn) and `doca-1sub` (one foreign submitter,
 * whatever the case's thread count).
 */
#include "bench_threads.h"
#include "ours_rig.h"

#include <stdlib.h>

struct submitter_count {
	_Alignas(64) uint64_t submitted; /* written by its thread, read after join */
};

struct ours_mailbox {
	struct ours_rig rig;
	struct bench_crew crew;
	struct submitter_count count[BENCH_MAX_THREADS];
	int submitters; /* -1: the case's thread count; 0: the PE's thread submits; n: n threads */
};

static unsigned submitters_of(const struct ours_mailbox *o, const struct bench_case *bc)
{
	return o->submitters < 0 ? bc->threads : (unsigned)o->submitters;
}

static const char *mailbox_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct ours_mailbox *o = c->priv;
	unsigned n = submitters_of(o, bc);
	struct ours_rig_conf conf = { .dev_open = "sw0", .slots = n ? n : 1 };

	if (n > BENCH_MAX_THREADS)
		return "too many submitters";
	return ours_rig_open(&o->rig, bc->size, &conf);
}

static void mailbox_teardown(struct bench_contender *c)
{
	struct ours_mailbox *o = c->priv;

	ours_rig_close(&o->rig);
}

/* A foreign submitter: submit as fast as credits allow until told to stop. */
static void submitter(struct bench_crew *crew, unsigned id)
{
	struct ours_mailbox *o = crew->arg;
	uint64_t n = 0;

	while (!bench_crew_stopping(crew)) {
		doca_error_t err = ours_rig_submit(&o->rig, id, n);

		if (err == DOCA_SUCCESS)
			n++;
		else if (err != DOCA_ERROR_AGAIN)
			ours_check(err, "doca_task_submit");
	}
	o->count[id].submitted = n;
}

/* No foreign submitter: each turn submits until the credits run out, then
 * progresses and reaps, as the PE loop of mailbox_run does. */
static void self_run(struct ours_mailbox *o, const struct bench_case *bc, double seconds,
		     struct bench_measure *m)
{
	uint64_t t0 = bench_now_ns(), t1, deadline = t0 + (uint64_t)(seconds * 1e9);
	uint64_t submitted = 0, done = 0, counted;
	unsigned turn = 0;
	doca_error_t err;

	do {
		while ((err = ours_rig_submit(&o->rig, 0, submitted)) == DOCA_SUCCESS)
			submitted++;
		if (err != DOCA_ERROR_AGAIN)
			ours_check(err, "doca_task_submit");
		done += ours_progress_and_reap(o->rig.pe);
	} while (++turn % 64 || bench_now_ns() < deadline);
	t1 = bench_now_ns();
	counted = done;
	while (done < submitted)
		done += ours_progress_and_reap(o->rig.pe);
	m->tasks = counted;
	m->bytes = counted * bc->size;
	m->ns = t1 - t0;
}

static void mailbox_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
			struct bench_measure *m)
{
	struct ours_mailbox *o = c->priv;
	uint64_t t0, t1, deadline, done = 0, counted, total = 0;
	unsigned turn = 0, n = submitters_of(o, bc);

	if (n == 0) {
		self_run(o, bc, seconds, m);
		return;
	}
	bench_crew_start(&o->crew, n, bench_other_cpu, submitter, o);
	bench_crew_go(&o->crew);
	t0 = bench_now_ns();
	deadline = t0 + (uint64_t)(seconds * 1e9);
	do {
		done += ours_progress_and_reap(o->rig.pe);
	} while (++turn % 64 || bench_now_ns() < deadline);
	t1 = bench_now_ns();
	counted = done;
	bench_crew_stop(&o->crew);
	for (unsigned i = 0; i < n; i++) {
		/* its slot would never be copied: say why, not that it differs */
		if (o->count[i].submitted == 0)
			bench_fail("doca: foreign submitter %u submitted no task (did the host never run it?)", i);
		total += o->count[i].submitted;
	}
	while (done < total)
		done += ours_progress_and_reap(o->rig.pe);
	m->tasks = counted;
	m->bytes = counted * bc->size;
	m->ns = t1 - t0;
}

static const struct bench_contender_ops mailbox_ops = { mailbox_setup, mailbox_run, mailbox_teardown };

static void init(struct bench_contender *c, const char *name, int submitters)
{
	struct ours_mailbox *o = bench_alloc_aligned(sizeof(*o));

	o->submitters = submitters;
	*c = (struct bench_contender){ .name = name, .ops = &mailbox_ops, .priv = o };
}

void ours_mailbox_contender(struct bench_contender *c)
{
	init(c, "doca", -1);
}

/** The baselines: @p submitters 0 is `doca-self`, 1 is `doca-1sub`. */
void ours_mailbox_baseline_contender(struct bench_contender *c, unsigned submitters)
{
	if (submitters > 1)
		bench_fail("no mailbox baseline with %u submitters", submitters);
	init(c, submitters ? "doca-1sub" : "doca-self", (int)submitters);
}
