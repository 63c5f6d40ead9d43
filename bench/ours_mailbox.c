/*
 * ours_mailbox.c — foreign submitters: N threads on the other CPUs submit
 * 64 B copies into one context (through its mailbox) while the application
 * thread progresses the PE on the inline "sw0" and reaps. Counts tasks
 * completed per second.
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
};

static const char *mailbox_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct ours_mailbox *o = c->priv;
	struct ours_rig_conf conf = { .dev_open = "sw0", .slots = bc->threads };

	if (bc->threads > BENCH_MAX_THREADS)
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

static void mailbox_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
			struct bench_measure *m)
{
	struct ours_mailbox *o = c->priv;
	uint64_t t0, t1, deadline, done = 0, counted, total = 0;
	unsigned turn = 0;

	bench_crew_start(&o->crew, bc->threads, bench_other_cpu, submitter, o);
	bench_crew_go(&o->crew);
	t0 = bench_now_ns();
	deadline = t0 + (uint64_t)(seconds * 1e9);
	do {
		done += ours_progress_and_reap(o->rig.pe);
	} while (++turn % 64 || bench_now_ns() < deadline);
	t1 = bench_now_ns();
	counted = done;
	bench_crew_stop(&o->crew);
	for (unsigned i = 0; i < bc->threads; i++)
		total += o->count[i].submitted;
	while (done < total)
		done += ours_progress_and_reap(o->rig.pe);
	m->tasks = counted;
	m->bytes = counted * bc->size;
	m->ns = t1 - t0;
}

static const struct bench_contender_ops mailbox_ops = { mailbox_setup, mailbox_run, mailbox_teardown };

void ours_mailbox_contender(struct bench_contender *c)
{
	struct ours_mailbox *o = bench_alloc_aligned(sizeof(*o));

	*c = (struct bench_contender){ .name = "doca", .ops = &mailbox_ops, .priv = o };
}
