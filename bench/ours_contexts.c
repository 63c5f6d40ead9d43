/*
 * ours_contexts.c — what idle contexts cost (the "contexts" scenario): one
 * PE with N started contexts on one device, N-1 of them idle at the default
 * max_tasks. Two measures: empty doca_pe_progress calls per second (nothing
 * submitted anywhere) and the tasks per second of the one active context
 * (the pump loop of the inline and offload scenarios); plus the resident
 * memory each idle started context adds, measured by `doca_bench ctxmem` in
 * a fresh process (RSS before and after making them, divided by their
 * number): in this one the library reuses the memory of earlier cases'
 * contexts (engine/cells.c), which would hide it.
 */
#include "ours_rig.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

struct ours_contexts {
	struct ours_rig rig;        /* the device, the PE and the active context */
	const char *dev_open;
	unsigned nctx;              /* contexts on the PE, the active one included */
	bool busy;                  /* measure the active context, else empty progress calls */
	struct doca_dev *idle_dev;  /* the idle contexts' handle of the same device */
	struct doca_ctx **idle;     /* nctx - 1 of them */
	double bytes_per_ctx;       /* RSS added per idle started context; NAN below 1000 */
	size_t slot;
	uint64_t tag;
};

static double rss_bytes(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");
	int got = f ? fscanf(f, "%lu %lu", &size, &resident) : 0;

	if (f)
		fclose(f);
	return got == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) : NAN;
}

/* Make n idle started contexts on pe (device handle dev) into ctxs. */
static void make_idle(struct doca_pe *pe, struct doca_dev *dev, struct doca_ctx **ctxs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		ours_check(doca_ctx_create(&ctxs[i]), "doca_ctx_create");
		ours_check(doca_ctx_set_dev(ctxs[i], dev), "doca_ctx_set_dev");
		ours_check(doca_pe_connect_ctx(pe, ctxs[i]), "doca_pe_connect_ctx");
		ours_check(doca_ctx_start(ctxs[i]), "doca_ctx_start");
	}
}

/* Stop and destroy them (dev is closed here: that unbinds them). */
static void drop_idle(struct doca_dev *dev, struct doca_ctx **ctxs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ours_check(doca_ctx_stop(ctxs[i]), "doca_ctx_stop");
	ours_check(doca_dev_close(dev), "doca_dev_close");
	for (unsigned i = 0; i < n; i++)
		ours_check(doca_ctx_destroy(ctxs[i]), "doca_ctx_destroy");
}

int ours_ctxmem(const struct bench_opts *o)
{
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_ctx **ctxs = calloc(o->contexts, sizeof(*ctxs));
	double rss0;

	if (!ctxs)
		bench_fail("out of memory");
	ours_check(doca_dev_open(o->dev, &dev), "doca_dev_open");
	ours_check(doca_pe_create(&pe), "doca_pe_create");
	doca_pe_progress(pe);
	rss0 = rss_bytes();
	make_idle(pe, dev, ctxs, o->contexts);
	doca_pe_progress(pe); /* whatever a first visit sets up is counted too */
	printf("%.0f\n", (rss_bytes() - rss0) / o->contexts);
	drop_idle(dev, ctxs, o->contexts);
	ours_check(doca_pe_destroy(pe), "doca_pe_destroy");
	free(ctxs);
	return 0;
}

/* ctxmem in a fresh process; NAN if it fails. */
static double ctxmem_spawn(const char *dev, unsigned n)
{
	char cmd[8192];
	double v = NAN;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' ctxmem --contexts %u --dev '%s'", bench_self_path(), n, dev);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%lf", &v) != 1)
		v = NAN;
	if (p)
		pclose(p);
	return v;
}

static void contexts_submit_burst(void *q, unsigned n)
{
	struct ours_contexts *o = q;
	struct doca_task_desc descs[64];
	uint32_t accepted;

	while (n > 0) {
		unsigned k = n < 64 ? n : 64;

		ours_rig_descs(&o->rig, descs, k, &o->slot, &o->tag);
		ours_check(doca_task_submit_batch(o->rig.ctx, descs, k, &accepted), "doca_task_submit_batch");
		n -= k;
	}
}

static uint64_t contexts_reap(void *q, unsigned max)
{
	struct ours_contexts *o = q;

	(void)max;
	return ours_progress_and_reap(o->rig.pe);
}

static const char *contexts_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct ours_contexts *o = c->priv;
	struct ours_rig_conf conf = { .dev_open = o->dev_open, .slots = bench_slots(bc->size, bc->depth) };
	const char *why = ours_rig_open(&o->rig, bc->size, &conf);

	if (why)
		return why;
	o->slot = 0;
	o->idle = calloc(o->nctx, sizeof(*o->idle));
	if (!o->idle)
		bench_fail("out of memory");
	ours_check(doca_dev_open(o->dev_open, &o->idle_dev), "doca_dev_open");
	make_idle(o->rig.pe, o->idle_dev, o->idle, o->nctx - 1);
	doca_pe_progress(o->rig.pe);
	o->bytes_per_ctx = o->nctx >= 1000 && !o->busy ? ctxmem_spawn(o->dev_open, o->nctx) : NAN;
	return NULL;
}

static void contexts_teardown(struct bench_contender *c)
{
	struct ours_contexts *o = c->priv;

	drop_idle(o->idle_dev, o->idle, o->nctx - 1);
	free(o->idle);
	o->idle = NULL;
	if (!o->busy) { /* copy every slot once: ours_rig_close checks them */
		const struct bench_queue q = { contexts_submit_burst, contexts_reap, o };

		bench_pump(&q, 1, 1, o->rig.slots, 0, 1);
	}
	ours_rig_close(&o->rig);
}

static void contexts_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
			 struct bench_measure *m)
{
	struct ours_contexts *o = c->priv;
	uint64_t t0 = bench_now_ns(), deadline = t0 + (uint64_t)(seconds * 1e9);

	m->bytes_per_ctx = o->bytes_per_ctx;
	if (o->busy) {
		const struct bench_queue q = { contexts_submit_burst, contexts_reap, o };

		m->tasks = bench_pump(&q, bc->batch, bc->depth, UINT64_MAX, deadline, bench_clock_every(bc));
		m->bytes = m->tasks * bc->size;
	} else {
		uint64_t calls = 0;

		do {
			for (unsigned i = 0; i < 256; i++)
				doca_pe_progress(o->rig.pe);
			calls += 256;
		} while (bench_now_ns() < deadline);
		m->tasks = calls;
	}
	m->ns = bench_now_ns() - t0;
}

static const struct bench_contender_ops contexts_ops = { contexts_setup, contexts_run, contexts_teardown };

void ours_contexts_contender(struct bench_contender *c, const char *dev_open, unsigned nctx, bool busy)
{
	struct ours_contexts *o = calloc(1, sizeof(*o));
	static char names[BENCH_MAX_CONTENDERS][32];
	static unsigned next_name;
	char *name = names[next_name++ % BENCH_MAX_CONTENDERS];

	if (!o)
		bench_fail("out of memory");
	o->dev_open = dev_open;
	o->nctx = nctx;
	o->busy = busy;
	snprintf(name, sizeof(names[0]), "ctxs=%u", nctx);
	*c = (struct bench_contender){ .name = name, .ops = &contexts_ops, .priv = o };
}
